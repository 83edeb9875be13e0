"""Benchmark: the cost of ``--metrics`` (issue 28).

1. Scrape cost at 50 and 500 routes: a snapshot built from the engine's real types (the demo's
   RouteViews at one virtual hour, copied under new names until there are N; its crondor jobs),
   then the exposition prometheus_client generates for it (best of REPEAT, milliseconds), and the
   same over HTTP from the real server on loopback (one GET of /metrics). Target: ≤ 5 ms at 500
   routes.
2. Demo speed with and without ``--metrics``: the headless ``--max-speed`` loop
   (engine.cli.demo.snapshots_fast, one snapshot per 600 virtual seconds) for HOURS virtual
   hours, without metrics, then with them (idle-unrouted counted at each snapshot, the server up
   and scraped every 0.1 s by a thread: far more often than any Prometheus). Prints virtual
   seconds per real second and the time the unrouted count took per snapshot.

Run: ``python bench/metrics.py [HOURS] [REPEAT]``. Prints figures only; not a test.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prometheus_client.exposition import generate_latest

from engine.cli.demo import snapshots_fast
from engine.feeds.demo import build_demo
from engine.metrics.collector import Latest
from engine.metrics.server import MetricsServer, registry_of

REPO = Path(__file__).resolve().parent.parent
HOURS = float(sys.argv[1]) if len(sys.argv) > 1 else 6.0
REPEAT = int(sys.argv[2]) if len(sys.argv) > 2 else 50


def demo(count_unrouted: bool):
    engine = build_demo(str(REPO / "sample_configs/demo"), seed=1, state_dir=tempfile.mkdtemp(prefix="rd-bench-"),
                        durable=False, stage=False)
    engine.count_unrouted = count_unrouted
    return engine


def with_routes(snap, n: int):
    base = snap.routes
    routes = tuple(dataclasses.replace(base[i % len(base)], name=f"{base[i % len(base)].name}_{i}", index=i + 1)
                   for i in range(n))
    return dataclasses.replace(snap, routes=routes)


def scrape_cost() -> None:
    engine = demo(True)
    engine.run_until(engine.now + 3600)
    snap = engine.snapshot(1)
    engine.close()
    print(f"scrape cost (best of {REPEAT}; {len(snap.cron_jobs)} crondor jobs):")
    for n in (50, 500):
        big = with_routes(snap, n)
        registry = registry_of(lambda: big, "ce.example.org")
        best = float("inf")
        for _ in range(REPEAT):
            t0 = time.perf_counter()
            text = generate_latest(registry)
            best = min(best, time.perf_counter() - t0)
        latest = Latest()
        latest.put(big)
        srv = MetricsServer(("127.0.0.1", 0), latest.get, "ce.example.org").start()
        try:
            http = float("inf")
            for _ in range(max(5, REPEAT // 5)):
                t0 = time.perf_counter()
                with urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/metrics", timeout=10) as r:
                    r.read()
                http = min(http, time.perf_counter() - t0)
        finally:
            srv.stop()
        samples = sum(1 for line in text.decode().splitlines() if line and not line.startswith("#"))
        print(f"  {n:4d} routes: {samples:6d} samples, {len(text) / 1024:7.1f} KiB, generate {best * 1e3:6.2f} ms, "
              f"HTTP GET {http * 1e3:6.2f} ms")


def demo_speed(metrics: bool) -> tuple[float, float, int]:
    engine = demo(metrics)
    until = engine.now + HOURS * 3600
    start_v = engine.now
    latest = Latest()
    srv = stop = scraper = None
    scrapes = [0]
    if metrics:
        srv = MetricsServer(("127.0.0.1", 0), latest.get, "routedeck-demo").start()
        stop = threading.Event()

        def scrape() -> None:
            while not stop.wait(0.1):
                with urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/metrics", timeout=10) as r:
                    r.read()
                scrapes[0] += 1

        scraper = threading.Thread(target=scrape, daemon=True)
        scraper.start()
    counted = 0.0
    snaps = 0
    t0 = time.perf_counter()
    try:
        for snap in snapshots_fast(engine, until, 600.0):
            latest.put(snap)
            snaps += 1
    finally:
        real = time.perf_counter() - t0
        if metrics:
            stop.set()
            scraper.join(5)
            srv.stop()
            # the unrouted count alone, once per snapshot time, on the final state
            from engine.router.unrouted import idle_unrouted

            t1 = time.perf_counter()
            idle_unrouted(engine.router, engine.now)
            counted = time.perf_counter() - t1
        engine.close()
    return (engine.now - start_v) / real, counted, scrapes[0]


def main() -> None:
    scrape_cost()
    print(f"demo --headless --max-speed, {HOURS:g} virtual hours, a snapshot every 600 s:")
    plain, _, _ = demo_speed(False)
    print(f"  without --metrics: x{plain:,.0f}")
    fast, counted, scrapes = demo_speed(True)
    print(f"  with --metrics:    x{fast:,.0f} ({fast / plain:.0%} of it; {scrapes} scrapes during the run; "
          f"one idle-unrouted count at the end {counted * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
