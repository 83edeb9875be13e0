"""Recorder bench (issue 27): catch-up speed, archive size, seek cost of ``replay DIR``.

Uses the shipped 3-hour recording (sample_configs/recordings/demo-3h.job_queue.log), repeated
``--days``×8 times end to end with its times shifted (each copy as one more generation: the
copies start from an empty queue, so each is recorded as a gap, which costs one state diff).
Prints:

- catch-up: transactions archived per second by one ``--once`` pass over the uncompacted log;
- following: the same log cut into generations (compacted every 20 min of its time, as
  ``TruncateClassAdLog`` does, htcondor.md §3.4) and polled 1,000 transactions at a time;
- archive size against the uncompacted log (target ≤ 0.15×), and peak memory of the recorder
  (tracemalloc) against the archive's length;
- ``state_near`` (one checkpoint + one segment) at random transactions, ``replay DIR --at T
  --json`` at random moments (a window of the archive), and with ``--whole`` ``open_archive``
  (the whole archive as one log: the dashboard and ``--reroute``).

    python bench/record.py [--days N] [--segment-mb M] [--memory] [--whole]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from engine.feeds.replay.archive import open_archive, state_near, summarize
from engine.record.archive import Archive
from engine.record.recorder import READ_CHUNK, Recorder
from tests.helpers.compaction import ScheddLog
from tests.helpers.demo_days import long_log
from tui.cli import main as replay_main

DEMO = Path(__file__).resolve().parent.parent / "sample_configs" / "recordings" / "demo-3h.job_queue.log"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=float, default=1.0)
    ap.add_argument("--segment-mb", type=float, default=8)
    ap.add_argument("--memory", action="store_true", help="also measure peak memory (a second, slower pass)")
    ap.add_argument("--whole", action="store_true", help="also time open_archive (the whole archive)")
    a = ap.parse_args()
    copies = max(1, round(a.days * 8))
    data = long_log(copies)
    txns = data.count(b"\n106 ")
    print(f"log: demo-3h x{copies} ({a.days:g} days): {len(data) / 1e6:.1f} MB, {txns:,} transactions")
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        log = d / "job_queue.log"
        log.write_bytes(data)
        t0, c0 = time.perf_counter(), time.process_time()
        rec = Recorder(log, d / "arch", tz="UTC", segment_bytes=int(a.segment_mb * (1 << 20)))
        rep = rec.poll(0, flush=True)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        size = sum(f.stat().st_size for f in (d / "arch").iterdir())
        # wall and CPU: on the shared 2-core machine the wall figure is mostly the other processes'
        # (print it with the load average); CPU time is the recorder's own cost
        print(f"catch-up (--once): {rep.archived:,} transactions in {dt:.2f} s = {rep.archived / dt:,.0f} /s"
              f" (target >= 50,000/s); CPU {cpu:.2f} s = {rep.archived / cpu:,.0f} /s of CPU;"
              f" load average {os.getloadavg()[0]:.2f}")
        print(f"archive: {size / 1e6:.2f} MB = {size / len(data):.3f} x the log (target <= 0.15); "
              f"{len(Archive.open(d / 'arch').segments())} segments")
        if a.memory:
            tracemalloc.start()
            rec2 = Recorder(log, d / "arch2", tz="UTC", segment_bytes=int(a.segment_mb * (1 << 20)))
            rec2.poll(0, flush=True)
            after, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            print(f"recorder peak memory {peak / 1e6:.0f} MB (tracemalloc; the log is {len(data) / 1e6:.0f} MB, "
                  f"read {READ_CHUNK >> 20} MiB at a time; state after catch-up {after / 1e6:.1f} MB)")

        rng = random.Random(1)
        times = []
        for _ in range(20):
            n = rng.randrange(rec.archive.meta.next_txn)
            t = time.perf_counter()
            state_near(d / "arch", n)
            times.append(time.perf_counter() - t)
        print(f"state_near (one checkpoint + one segment): median {statistics.median(times) * 1e3:.0f} ms, "
              f"max {max(times) * 1e3:.0f} ms")
        times = []
        s = summarize(d / "arch", "UTC")
        for _ in range(10):  # what `replay DIR --at T --json` costs: a window, a player, the snapshot
            at = rng.uniform(s.start, s.end)
            t = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                replay_main(["replay", str(d / "arch"), "--at", f"{at:.3f}", "--tz", "UTC", "--json"])
            times.append(time.perf_counter() - t)
        print(f"replay DIR --at T --json (a window of the archive): median {statistics.median(times):.2f} s, "
              f"max {max(times):.2f} s (target <= 1 s)")
        if a.whole:
            t = time.perf_counter()
            arch = open_archive(d / "arch", tz="UTC")
            print(f"open_archive (whole archive as one log: the dashboard, --reroute): "
                  f"{time.perf_counter() - t:.2f} s, {arch.index.steps:,} steps")

    if copies == 1:  # following with compactions (the demo alone)
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            schedd = ScheddLog(d / "job_queue.log", DEMO.read_bytes())
            rec = Recorder(schedd.path, d / "arch", tz="UTC")
            spent = 0.0
            polls = 0
            step_times = _step_times()
            next_clean = step_times[0] + 1200
            while not schedd.finished:
                schedd.advance(1000)
                if step_times[schedd.done - 1] >= next_clean:
                    schedd.compact()
                    next_clean += 1200
                t = time.perf_counter()
                rec.poll(polls, flush=True)
                spent += time.perf_counter() - t
                polls += 1
            size = sum(f.stat().st_size for f in (d / "arch").iterdir())
            print(f"following ({polls} polls of 1,000 transactions, {schedd.seq - 1} compactions): "
                  f"{schedd.done / spent:,.0f} transactions/s, {spent / polls * 1e3:.0f} ms per poll; archive "
                  f"{size / DEMO.stat().st_size:.3f} x the uncompacted log")


def _step_times():
    from engine.feeds.replay.index import build_index

    return build_index(str(DEMO), tz="UTC").times


if __name__ == "__main__":
    main()
