"""Benchmark: the recorded jobs table and its route tally, apart (issue 26 item "one jobs table").

Replay and watch keep two structures from one stream of change events
(:class:`engine.views.recorded_rows.ReplayRows`): the jobs table (``RowIndex``: a ``JobRow`` per
job, in id order) and the per-route tally (``RecordedTally``: each routed copy's route and the
status the router saw, the cron jobs, the job count). For a watched log of ``n`` jobs (one in
ten a routed copy: bench/scaling.py's ``watched_log``) this prints, best and median of ``--repeat``
takes after a transaction that changes 20 jobs: the time each part's update takes, and the
memory each keeps (tracemalloc, after a full build).

Then, over the shipped recording (sample_configs/recordings/demo-3h.job_queue.log) at twelve
moments, it derives the tally from the jobs table alone (a copy is a row of kind ``routed``; the
status the router saw is the source row's when the source points back at the copy) and says
how often that differs from the tally, and how many cron jobs the tally holds that no
``JobRow`` field can identify (a row carries no ``Cron*`` attribute).

    python bench/recorded_table.py [--sizes 10000 100000] [--repeat 9]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.clock import ManualClock
from engine.feeds.watch.follow import WatchEngine
from engine.feeds.watch.setup import WatchSetup
from engine.feeds.replay.index import build_index
from engine.feeds.replay.player import Player
from engine.views.recorded import RouteCounts
from engine.views.recorded_rows import ReplayRows
from scaling import watched_log  # bench/ is on sys.path as the script's directory

RECORDING = Path(__file__).resolve().parent.parent / "sample_configs" / "recordings" / "demo-3h.job_queue.log"


def _fmt(xs: list[float]) -> str:
    return f"best {min(xs) * 1000:7.2f} ms  median {statistics.median(xs) * 1000:7.2f} ms"


def _kept(build) -> int:
    gc.collect()
    tracemalloc.start()
    obj = build()
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del obj
    return size


def run(n: int, repeat: int) -> None:
    path, q, procs, now = watched_log(n)
    clock = ManualClock(now)
    watch = WatchEngine(WatchSetup(queue_log=str(path)), clock)
    watch.poll()
    rows: ReplayRows = watch.rows
    index, tally = rows.index, rows.tally
    t_rows, t_tally = [], []
    for i in range(repeat):
        with q.transaction(now=now + i) as t:
            for key in procs[i * 20:(i + 1) * 20]:
                t.set_attribute(key, "JobStatus", "2")
        clock.set(now + i)
        watch.read(watch.follower.poll())  # the change events reach both, nothing taken yet
        ads = rows.ads
        gc.collect()
        t0 = time.perf_counter()
        tally.update(ads)
        t1 = time.perf_counter()
        index.table()
        t2 = time.perf_counter()
        t_tally.append(t1 - t0)
        t_rows.append(t2 - t1)
        watch.advance()
    ads = rows.ads

    def table_only():
        r = ReplayRows(ads)
        r.index.table()
        return r.index

    def tally_only():
        r = ReplayRows(ads)
        r.tally.update(ads)
        return r.tally

    mem_rows, mem_tally = _kept(table_only), _kept(tally_only)
    print(f"{n:>8,} jobs + {n // 10:,} copies: jobs table update {_fmt(t_rows)}   tally update {_fmt(t_tally)}")
    print(f"{'':>24} kept: jobs table {mem_rows / 1e6:6.1f} MB   tally {mem_tally / 1e6:6.1f} MB")


def _from_rows(rows: dict) -> dict:
    """The per-route counts a tally derived from the jobs table alone would give."""
    out: dict[str, RouteCounts] = {}
    for key, row in rows.items():
        if row.kind != "routed" or row.route is None:
            continue
        src = rows.get(row.routed_from)
        status = row.status if src is None else (src.status if src.routed_to == key else None)
        out.setdefault(row.route, RouteCounts()).add(status)
    return {k: (v.routed, v.running, v.held, v.completed, v.removed) for k, v in out.items()}


def derived() -> None:
    player = Player(build_index(RECORDING), ManualClock(0))
    moments = differ = cron = 0
    for k in range(1, 13):
        player.seek(time=player.start + (player.end - player.start) * k / 12)
        tally = player.rows.tally
        want = {k: (v.routed, v.running, v.held, v.completed, v.removed) for k, v in tally.counts.items()}
        moments += 1
        differ += _from_rows(player.rows.index.rows) != want
        cron += len(tally.cron)
    print(f"demo-3h recording, {moments} moments: per-route counts derived from the rows differ from the tally at "
          f"{differ}; cron jobs the rows cannot identify: {cron} (summed over the moments)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=9)
    a = ap.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the start (a shared machine: figures vary)")
    for n in a.sizes:
        run(n, a.repeat)
    derived()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
