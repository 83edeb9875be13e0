"""Watch bench: how soon does a record another process writes show up in a snapshot?

A subprocess writes a live job_queue.log with the foundation's writer (``open_queue``, one
durable transaction per job with a ``106 # <time>`` comment), one job every ``--interval``
seconds, and rotates the log (``compact``, htcondor.md §3.4) half-way. This process follows it
with watch mode's engine (the foundation's follower + ``watchfiles`` watcher, slow-poll fallback)
and, on every poll that changed something, builds a snapshot; the latency of a job is the time
from just before its transaction was written (its ``BenchWrite`` attribute) to the moment the
snapshot containing it was built. Target (product.md §7): ≤ 100 ms.

    python bench/watch.py [--jobs N] [--interval S] [--queue N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

WRITER = r"""
import sys, time
sys.path.insert(0, {root!r})
from engine.queue.writer import open_queue
path, n, interval, preload = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
q, _ = open_queue(path, time.time())
with q.transaction(now=time.time()) as t:  # a queue of some size, so snapshots cost something
    for i in range(preload):
        c = t.new_cluster()
        t.set_attribute(f"0{{c}}.-1", "Owner", '"bench"')
        t.set_attribute(f"0{{c}}.-1", "RouteName", '"Site%d"' % (i % 5))
        cp = t.new_proc(c)
        t.set_attribute(cp, "ProcId", "0")
        t.set_attribute(cp, "JobStatus", "1")
print("ready", flush=True)
sys.stdin.readline()
for i in range(n):
    if i == n // 2:
        q.writer.compact(q)
    now = time.time()
    with q.transaction(now=now) as t:
        c = t.new_cluster()
        t.set_attribute(f"0{{c}}.-1", "Owner", '"bench"')
        t.set_attribute(f"0{{c}}.-1", "RouteName", '"Site%d"' % (i % 5))
        t.set_attribute(f"0{{c}}.-1", "BenchWrite", repr(now))
        cp = t.new_proc(c)
        t.set_attribute(cp, "ProcId", "0")
        t.set_attribute(cp, "JobStatus", "1")
    time.sleep(interval)
print("done", flush=True)
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--interval", type=float, default=0.02)
    ap.add_argument("--queue", type=int, default=2000, help="jobs already in the queue")
    ap.add_argument("--step", type=int, help="override watchfiles' step (ms) used by engine.queue.filewatch")
    args = ap.parse_args()
    if args.step is not None:  # what-if for the watcher's tuning; the product uses the module's value
        import watchfiles

        original = watchfiles.watch

        def patched(*a, **kw):
            kw["step"] = args.step
            return original(*a, **kw)

        watchfiles.watch = patched
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

    from engine.clock import SystemClock
    from engine.queue.filewatch import Watcher
    from engine.feeds.watch.follow import WatchEngine
    from engine.feeds.watch.setup import WatchSetup

    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "job_queue.log")
        proc = subprocess.Popen([sys.executable, "-c", WRITER.format(root=root), log, str(args.jobs),
                                 str(args.interval), str(args.queue)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        engine = WatchEngine(WatchSetup(log), SystemClock())
        latencies: dict[str, float] = {}
        polls = [0]
        reloads = [0]
        snap_cost: list[float] = []
        done = threading.Event()

        def on_poll(result) -> None:
            polls[0] += 1
            reloads[0] += bool(getattr(result, "reloaded", False))
            if not engine.read(result):
                return
            t0 = time.perf_counter()
            engine.advance()  # the change events taken into the rows and counts: a snapshot only reads them
            engine.snapshot(with_jobs=True)
            seen = time.time()
            snap_cost.append(time.perf_counter() - t0)
            for job in engine.queue:
                if job.key in latencies:
                    continue
                w = job.get("BenchWrite")
                if w is not None:
                    latencies[job.key] = seen - float(w)
            if len(latencies) >= args.jobs:
                done.set()

        watcher = Watcher(engine.follower, on_poll, slow_poll=1.0, debounce=0.001).start()
        time.sleep(0.3)  # the watcher's first poll loads the preloaded queue
        proc.stdin.write("go\n")
        proc.stdin.flush()
        done.wait(args.jobs * args.interval + 30)
        watcher.stop()
        proc.wait(10)
        lat = sorted(latencies.values())
        if not lat:
            print("no job seen")
            return

        def q(f: float) -> float:
            return lat[min(len(lat) - 1, int(f * len(lat)))] * 1000

        print(f"jobs written {args.jobs}, seen {len(lat)} (queue of {args.queue} + new), one rotation "
              f"half-way; polls {polls[0]}, bulk reloads {reloads[0]}")
        print(f"write -> visible in a snapshot: median {statistics.median(lat) * 1000:.1f} ms, "
              f"p95 {q(0.95):.1f} ms, max {lat[-1] * 1000:.1f} ms")
        print(f"watchfiles step: {args.step if args.step is not None else 'module default'}; "
              f"snapshot build: median {statistics.median(snap_cost) * 1000:.1f} ms over {len(snap_cost)}")


if __name__ == "__main__":
    main()
