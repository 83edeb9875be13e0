"""Replay bench: index a 1,000,000-record job_queue.log and seek to random moments.

Prints: index time, records/s, memory of the index (tracemalloc peak and retained, against
the file size), the first (cold) seeks, which build their checkpoints, the other checkpoints built as
the replay runtime does while idle (``--no-idle``: left to the seeks that need them, as before issue
30), then seek time (median, max; wall and CPU) over random steps and random times. Target
(product.md §7): any moment of a 1 M-record log ≤ 1 s.

The log is synthetic, in the shape a busy schedd with a router writes (htcondor.md §3.6):
clusters submitted, routed copies with RouteName/RoutedFromJobId, status changes, removals,
``106 # <ISO time>`` comments.

    python bench/replay.py [--records N] [--every K] [--seeks N] [--no-idle]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from datetime import datetime, timezone

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from engine.feeds.replay.index import DEFAULT_EVERY, build_index


def synth(path: str, records: int, seed: int = 1) -> int:
    rng = random.Random(seed)
    t = 1795300000.0
    lines = ["107 1 CreationTimestamp %d" % t, "101 0.0 Job Machine"]
    live: list[str] = []
    cluster = 0
    n = 0
    while n < records:
        t += rng.random() * 2
        txn = ["105 "]
        if rng.random() < 0.25 or len(live) < 50:
            cluster += 1
            c = cluster
            txn += ["103 0.0 NextClusterNum %d" % (c + 1), "101 0%d.-1 Job Machine" % c,
                    "101 %d.-2 ClusterPvt (empty)" % c, '103 0%d.-1 Owner "user%d"' % (c, c % 17),
                    "103 0%d.-1 QDate %d" % (c, t), '103 0%d.-1 Cmd "/bin/sleep"' % c]
            if rng.random() < 0.5:
                txn += ['103 0%d.-1 RouteName "Site%d"' % (c, rng.randrange(6)),
                        '103 0%d.-1 RoutedFromJobId "%d.0"' % (c, max(1, c - 1))]
            txn += ["101 %d.0 Job Machine" % c, "103 %d.0 ProcId 0" % c, "103 %d.0 JobStatus 1" % c,
                    "103 %d.0 EnteredCurrentStatus %d" % (c, t)]
            live.append("%d.0" % c)
        for _ in range(rng.randrange(1, 4)):
            key = rng.choice(live)
            txn += ["103 %s JobStatus %d" % (key, rng.choice([1, 2, 2, 4, 5])),
                    "103 %s EnteredCurrentStatus %d" % (key, t)]
        if len(live) > 20000 or rng.random() < 0.1:
            key = live.pop(rng.randrange(len(live)))
            c = key.split(".")[0]
            txn += ["102 %s" % key, "102 0%s.-1" % c, "102 %s.-2" % c]
        stamp = datetime.fromtimestamp(t, timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds")
        txn.append("106 # " + stamp)
        lines += txn
        n += len(txn) - 2
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--every", type=int, default=DEFAULT_EVERY)
    ap.add_argument("--seeks", type=int, default=40)
    ap.add_argument("--no-idle", action="store_true",
                    help="leave the checkpoints to the seeks that need them (before issue 30)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "job_queue.log")
        n = synth(path, args.records)
        size = os.path.getsize(path)
        print(f"log: {n:,} state records, {size / 1e6:.1f} MB")
        tracemalloc.start()
        t0 = time.perf_counter()
        ix = build_index(path, every=args.every, tz="UTC")
        dt = time.perf_counter() - t0
        retained, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"index: {dt:.2f} s ({ix.records / dt / 1e6:.2f} M records/s), {ix.steps:,} steps, "
              f"{len(ix.plan) - 1} checkpoints planned every {args.every:,} records (built by seeks)")
        print(f"memory: retained {retained / 1e6:.0f} MB ({retained / size:.1f} x file), "
              f"peak {peak / 1e6:.0f} MB ({peak / size:.1f} x file)  [tracemalloc, slows the index ~2x]")
        walls, cpus = [], []
        for _ in range(3):
            t0, c0 = time.perf_counter(), time.process_time()
            ix = build_index(path, every=args.every, tz="UTC")
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        print(f"index without tracemalloc, best of 3: {min(walls):.2f} s wall, {min(cpus):.2f} s CPU "
              f"({ix.records / min(cpus) / 1e6:.2f} M records/s CPU)")
        t0 = time.perf_counter()
        ix.state_at(ix.steps - 1)
        print(f"first seek to the end (cold: its checkpoint read by the fast loader): "
              f"{(time.perf_counter() - t0) * 1000:.0f} ms")
        t0 = time.perf_counter()
        ix.state_at(ix.steps // 2)
        print(f"first seek to the middle (cold): {(time.perf_counter() - t0) * 1000:.0f} ms")
        if not args.no_idle:
            t0, c0, n = time.perf_counter(), time.process_time(), 0
            while ix.build_next_checkpoint():
                n += 1
            print(f"the other {n} checkpoints, built as the replay runtime does while idle (issue 30): "
                  f"{time.perf_counter() - t0:.2f} s wall, {time.process_time() - c0:.2f} s CPU")
        rng = random.Random(2)
        seeks, seek_cpu = [], []
        for _ in range(args.seeks):
            i = rng.randrange(ix.steps)
            t0, c0 = time.perf_counter(), time.process_time()
            ix.state_at(i)
            seeks.append(time.perf_counter() - t0)
            seek_cpu.append(time.process_time() - c0)
        times = []
        for _ in range(args.seeks // 2):
            moment = rng.uniform(ix.times[0], ix.times[-1])
            t0 = time.perf_counter()
            ix.state_at(ix.step_at_time(moment))
            times.append(time.perf_counter() - t0)
        print(f"seek to a random transaction: median {statistics.median(seeks) * 1000:.0f} ms, "
              f"max {max(seeks) * 1000:.0f} ms over {len(seeks)} (CPU: median {statistics.median(seek_cpu) * 1000:.0f} ms, "
              f"max {max(seek_cpu) * 1000:.0f} ms)")
        print(f"seek to a random time:        median {statistics.median(times) * 1000:.0f} ms, "
              f"max {max(times) * 1000:.0f} ms over {len(times)}")
        from engine.clock import ManualClock
        from engine.feeds.replay.player import Player

        player = Player(ix, ManualClock(0.0))
        full = []
        for _ in range(10):
            t0 = time.perf_counter()
            player.seek(time=rng.uniform(ix.times[0], ix.times[-1]))
            snap = player.snapshot()
            full.append(time.perf_counter() - t0)
        print(f"first seek + full snapshot (cold: the recording's route and crondor history is built): "
              f"{full[0] * 1000:.0f} ms")
        print(f"seek + full snapshot (routes, {snap.total_jobs:,} job rows): median "
              f"{statistics.median(full[1:]) * 1000:.0f} ms, max {max(full[1:]) * 1000:.0f} ms over {len(full) - 1}")
        print(f"queue at the end: {len(ix.state_at(ix.steps - 1).table):,} ads")


if __name__ == "__main__":
    main()
