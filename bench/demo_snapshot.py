"""Benchmark: what a demo snapshot costs the engine thread (issue 26: a snapshot only reads).

The sample demo with ``--jobs`` parked jobs (bench/demo_speed.py's ``parked_demo``), warmed
600 virtual seconds. ``--repeat`` times: step to the next queue change (untimed), then time the
runtime's publish path — ``advance()`` (the change events taken into the jobs table and the
rest of the view) then ``snapshot()`` — and, apart, a second ``snapshot()`` of the same moment
(a read of what the advance settled). Prints best and median per part.

    python bench/demo_snapshot.py [--jobs 10000] [--repeat 30]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from demo_speed import parked_demo  # bench/ is on sys.path as the script's directory


def _fmt(xs: list[float]) -> str:
    return f"best {min(xs) * 1000:7.2f} ms  median {statistics.median(xs) * 1000:7.2f} ms"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=30)
    a = ap.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the start (a shared machine: figures vary)")
    eng = parked_demo(a.jobs, 600, durable=False)
    eng.advance()
    eng.snapshot(0)
    publish, again = [], []
    for i in range(a.repeat):
        before = eng.jobs_version
        eng.step(eng.now + 5)
        while eng.jobs_version == before:  # a quiet step: go on to the next change
            eng.step(eng.now + 5)
        gc.collect()
        t = time.perf_counter()
        eng.advance()
        eng.snapshot(1 + 2 * i)
        publish.append(time.perf_counter() - t)
        t = time.perf_counter()
        eng.snapshot(2 + 2 * i)
        again.append(time.perf_counter() - t)
    print(f"{len(eng.store.status):>8,} jobs: advance + snapshot after a change {_fmt(publish)}")
    print(f"{'':>14} a second snapshot, no change   {_fmt(again)}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    eng.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
