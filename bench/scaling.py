"""Benchmark: cost that grows with the work, not the queue (issue 14 item 2).

For queues of 1,000, 10,000 and 100,000 jobs (the sample demo plus parked idle jobs that no
route takes, ``RequestMemory = 64000``), after a warm-up, a fixed amount of change per step
(the next 5 virtual seconds of the demo in which the queue changed: a handful of jobs
routed, started, finished or removed), prints,
best of ``--repeat`` and median:

1. the engine step itself (router poll, schedd phases, job_queue.log commits, non-durable);
2. the snapshot built after it (``Simulation.advance`` — ``engine.views.build.settle``: routes,
   counts, the jobs table kept from the queue's events, crondor rows from the store's index —
   then ``snapshot``);
3. the jobs screen adopting that snapshot on the UI thread (``JobsScreen._adopt`` + a compositor
   refresh, no filter), in a headless app (``App.run_test``, 120x36) fed the engine's own
   snapshots;
4. watch mode's snapshot (``WatchEngine.advance`` then ``snapshot``) of a log of that many jobs (one in ten a
   routed copy) after one transaction that changes 20 jobs was written and followed.

Target: from 10k to 100k each grows <= 2x. The routing poll alone is ``bench/router.py`` part 6.

    python bench/scaling.py [--sizes 1000 10000 100000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from demo_speed import parked_demo  # bench/ is on sys.path as the script's directory

def _engine(n: int):
    eng = parked_demo(n, 600, durable=False)
    eng.advance()
    eng.snapshot(0)
    return eng


def watched_log(n: int) -> tuple:
    """A job_queue.log of ``n`` idle jobs in clusters of 1,000 and one routed copy per ten of them
    (five routes), written through an open queue: (path, queue, the jobs' ids, the time written)."""
    from engine.queue.writer import open_queue

    path = Path(tempfile.mkdtemp(prefix="routedeck-bench-scale-")) / "job_queue.log"
    now = 1_700_000_000.0
    q, _ = open_queue(path, now, durable=False)
    procs = []
    with q.transaction(now=now) as t:
        for c0 in range(0, n, 1000):
            c = t.new_cluster()
            t.set_attribute(f"0{c}.-1", "Owner", '"bench"')
            t.set_attribute(f"0{c}.-1", "JobUniverse", "5")
            for p in range(min(1000, n - c0)):
                key = "%d.%d" % t.new_proc(c)
                t.set_attribute(key, "ProcId", str(p))
                t.set_attribute(key, "JobStatus", "1")
                procs.append(key)
    with q.transaction(now=now) as t:
        for i, src in enumerate(procs[: n // 10]):
            c = t.new_cluster()
            key = "%d.%d" % t.new_proc(c)
            for name, value in (("RouteName", '"Site%d"' % (i % 5)), ("RoutedFromJobId", f'"{src}"'),
                                ("JobStatus", "1"), ("JobUniverse", "9")):
                t.set_attribute(key, name, value)
    return path, q, procs, now


def _watch_times(n: int, repeat: int) -> list[float]:
    from engine.clock import ManualClock
    from engine.feeds.watch.follow import WatchEngine
    from engine.feeds.watch.setup import WatchSetup

    path, q, procs, now = watched_log(n)
    clock = ManualClock(now)
    watch = WatchEngine(WatchSetup(queue_log=str(path)), clock)
    watch.poll()
    watch.snapshot()
    times = []
    for i in range(repeat):
        with q.transaction(now=now + i) as t:
            for key in procs[i * 20:(i + 1) * 20]:
                t.set_attribute(key, "JobStatus", "2")
        clock.set(now + i)
        watch.read(watch.follower.poll())
        t0 = time.perf_counter()
        watch.advance()  # the change events taken into the rows and counts: a snapshot only reads them
        watch.snapshot()
        times.append(time.perf_counter() - t0)
    return times


def _fmt(xs: list[float]) -> str:
    return f"best {min(xs) * 1000:7.2f} ms  median {statistics.median(xs) * 1000:7.2f} ms"


async def _screen_times(eng, repeat: int) -> tuple[list[float], list[float], list[float]]:
    from tests.helpers.tui_fixtures import FakeRuntime, wait_until

    from tui.app import make_app

    runtime = FakeRuntime(eng.snapshot(1))
    app = make_app(runtime, blink=False)
    steps, snaps, screens = [], [], []
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("j")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "JobsScreen" and app.screen.is_mounted
                         and len(app.screen.table.model.rows) == len(app.snapshot.jobs), timeout=60)
        screen = app.screen
        for i in range(repeat):
            before = eng.jobs_version
            gc.collect()
            t = time.perf_counter()
            eng.step(eng.now + 5)
            while eng.jobs_version == before:  # a quiet step: go on to the next change
                eng.step(eng.now + 5)
            steps.append(time.perf_counter() - t)
            t = time.perf_counter()
            eng.advance()  # the change events taken into the jobs table: the snapshot only reads
            snap = eng.snapshot(2 + i)
            snaps.append(time.perf_counter() - t)
            runtime.push(snap)
            app.snapshot = snap
            t = time.perf_counter()
            screen._adopt(snap)
            screen.refresh()
            screen._compositor_refresh()
            screens.append(time.perf_counter() - t)
            await pilot.pause(0.05)
    return steps, snaps, screens


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the start (a shared machine: figures vary)")
    figures: dict[str, dict[int, float]] = {"engine step": {}, "snapshot": {}, "jobs screen update": {},
                                            "watch snapshot": {}}
    for n in a.sizes:
        eng = _engine(n)
        steps, snaps, screens = asyncio.run(_screen_times(eng, a.repeat))
        print(f"{len(eng.store.status):>8,} jobs: engine step to a change {_fmt(steps)}")
        print(f"{'':>14} snapshot                {_fmt(snaps)}")
        print(f"{'':>14} jobs screen update      {_fmt(screens)}")
        watched = _watch_times(n, a.repeat)
        print(f"{'':>14} watch snapshot          {_fmt(watched)}  ({n:,} jobs + {n // 10:,} copies)")
        for name, xs in zip(figures, (steps, snaps, screens, watched)):
            figures[name][n] = statistics.median(xs)
    if 10_000 in a.sizes and 100_000 in a.sizes:
        for name, by in figures.items():
            print(f"growth 10k -> 100k, {name:20s} x{by[100_000] / max(by[10_000], 1e-9):.2f}  (target <= x2)")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
