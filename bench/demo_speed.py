"""Benchmark: how fast the embedded demo runs with N extra jobs waiting in the queue (issue 14).

The sample demo (sample_configs/demo: its routes, sites and workload) plus ``--queue`` idle jobs
that no route takes (``RequestMemory = 64000``; submitted in clusters of 1,000 before the clock starts),
so every router poll, schedd cycle and snapshot sees a queue of that size. After ``--warm``
virtual seconds it steps ``--virtual`` more seconds as fast as it can and prints the speed
reached (virtual seconds per wall second, i.e. the ×N the demo could sustain), the commits
(transactions written to job_queue.log) per wall second, and the time in fdatasync.

    python bench/demo_speed.py [--queue 10000 100000] [--virtual 1800] [--no-fsync] [--profile]

Each run prints its CPU as a multiple of ``bench/anchor.py``'s loop measured in the same run, so a figure
from one machine can be set against another's (issue 30: every figure beside its anchor).

Targets (issue 14 item 1): ×3600 with 10,000 jobs, ×600 with 100,000, durable commits. The commits
are HTCondor's own transactions (one per router claim / submit / status push / finalize / yield,
one per schedd phase of a step), each fdatasync'ed: the time in fdatasync is printed apart, with
the speed the run would reach without it, because on a shared disk it alone can exceed the
×3600 budget (600 virtual s in 0.17 s). Of the syncs, those made by a ``barrier()`` (issue 30: what is
pending is synced before a history line, a hook or a snapshot shows a commit) are counted apart: in the
grouped mode nearly all of them are (one per reap that writes history), not the 50 ms grouping's.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from anchor import anchor_cpu  # bench/ is on sys.path as the script's directory

import engine.queue.writer as W
from engine.feeds.demo import build_demo
from engine.runtime import MAX_SPEED

PARKED = {"Owner": '"parked"', "VO": '"parked"', "JobUniverse": "5", "Cmd": '"/bin/sleep"',
          "RequestCpus": "1", "RequestMemory": "64000"}  # more memory than any sample route allows


def parked_demo(queue: int, warm: float, durable: bool):
    """The sample demo with ``queue`` parked jobs (submitted in clusters of 1,000 before the clock
    starts), stepped ``warm`` virtual seconds (also used by bench/scaling.py)."""
    state = Path(tempfile.mkdtemp(prefix="routedeck-bench-speed-"))
    engine = build_demo(seed=1, state_dir=state, durable=durable)
    template = SimpleNamespace(name="parked", attrs=PARKED, runtime=None, site=None)
    left = queue
    while left > 0:
        n = min(1000, left)
        engine.schedd.submit(template, n, engine.now)
        left -= n
    engine.step(engine.now + warm)
    return engine


def run(queue: int, virtual: float, warm: float, durable: bool, profile: bool, grouped: bool = False) -> None:
    engine = parked_demo(queue, warm, durable)
    if grouped:  # issue 30: faster than real time, at most one fdatasync per GROUP_SYNC s of wall time
        engine.sync_log(MAX_SPEED, time.monotonic)  # as the runtime and the headless --max-speed run set it
    syncs = [0, 0.0]
    name = "_datasync" if hasattr(W, "_datasync") else "fsync"  # before issue 14: os.fsync
    owner = W if name == "_datasync" else os
    real_sync = getattr(owner, name)

    barrier_syncs = [0, 0.0]  # of them, those a barrier() made (before a history line, a hook, a snapshot)

    def timed_sync(fd: int) -> None:
        t = time.perf_counter()
        real_sync(fd)
        took = time.perf_counter() - t
        syncs[0] += 1
        syncs[1] += took
        if sys._getframe(2).f_code.co_name == "barrier":  # QueueLogWriter.barrier -> _sync -> here
            barrier_syncs[0] += 1
            barrier_syncs[1] += took

    setattr(owner, name, timed_sync)
    commits = [0]
    real_write = W.QueueLogWriter.write_transaction

    def counted(self, *a, **k):
        commits[0] += 1
        return real_write(self, *a, **k)

    W.QueueLogWriter.write_transaction = counted
    prof = cProfile.Profile() if profile else None
    t0, c0 = time.perf_counter(), time.process_time()
    if prof:
        prof.enable()
    engine.step(engine.now + virtual)
    if prof:
        prof.disable()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    setattr(owner, name, real_sync)
    W.QueueLogWriter.write_transaction = real_write
    print(f"queue {len(engine.queue):>7,} ads ({queue:,} parked jobs)  "
          f"{('grouped' if grouped else 'sync-each') if durable else 'no fsync'}: {virtual:.0f} virtual s in {wall:.2f} s wall "
          f"({cpu:.2f} s CPU) = x{virtual / wall:,.0f} (x{virtual / max(cpu, 1e-9):,.0f} by CPU); "
          f"{commits[0]} commits ({commits[0] / wall:,.0f}/s), {syncs[0]} fdatasyncs taking {syncs[1]:.2f} s "
          f"({barrier_syncs[0]} of them by barriers, {barrier_syncs[1]:.2f} s) "
          f"(x{virtual / max(wall - syncs[1], 1e-9):,.0f} without them); {engine.ticks} polls so far; "
          f"{getattr(engine.schedd, 'policy_evaluations', 0):,} periodic-policy evaluations in all; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    anchor = anchor_cpu(best_of=3)
    print(f"  anchor (summing 3,000,000 squares in this process, best of 3) CPU {anchor:.3f} s: the {virtual:.0f} virtual s "
          f"took {cpu / anchor:.2f}x the anchor's CPU (x3,600 = {virtual / 3600 / anchor:.2f}x the anchor on this machine)")
    if prof:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(18)
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:6000])
    engine.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queue", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--virtual", type=float, default=1800.0)
    ap.add_argument("--warm", type=float, default=600.0)
    ap.add_argument("--no-fsync", action="store_true")
    ap.add_argument("--modes", nargs="+", choices=["each", "grouped", "none"], default=None,
                    help="issue 30: sync-each vs grouped vs no fsync (default: each, or none with --no-fsync)")
    ap.add_argument("--profile", action="store_true", help="print cProfile's top entries (by own time)")
    a = ap.parse_args()
    modes = a.modes or (["none"] if a.no_fsync else ["each"])
    for n in a.queue:
        for m in modes:
            run(n, a.virtual, a.warm, m != "none", a.profile, grouped=m == "grouped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
