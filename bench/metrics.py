"""Benchmark: the cost of ``--metrics`` (issue 28).

1. Scrape cost at 50 and 500 routes: a snapshot built from the engine's real types (the demo's
   RouteViews at one virtual hour, copied under new names until there are N; its crondor jobs),
   then REPEAT GETs of /metrics over HTTP on loopback from another process (median and p99,
   milliseconds): before,
   prometheus_client's own server rendering at every scrape; after, the RouteDeck server serving
   the bytes rendered once per published snapshot, idle and while a new snapshot is published
   every 0.25 s (with the same routes, or one route changed each time), GETs back to back for
   BUSY seconds. Plain text (no Accept header) and what Prometheus asks (OpenMetrics, gzip).
   Target: ≤ 5 ms at 500 routes.
   Also the render thread's work per published snapshot: the first, one with the same routes,
   one with a route changed (Exposition.render in process, best of REPEAT // 5).
2. Demo speed with and without ``--metrics``: the headless ``--max-speed`` loop
   (engine.cli.demo.snapshots_fast, one snapshot per 600 virtual seconds) for HOURS virtual
   hours, without metrics, then with them (idle-unrouted counted at each snapshot, the server up
   and scraped every 0.1 s by a thread: far more often than any Prometheus). Prints virtual
   seconds per real second, the time the unrouted count took per snapshot, and how many of the
   published snapshots were rendered (the render thread's cap, MAX_RENDERS_PER_SECOND).

Run: ``python bench/metrics.py [HOURS] [REPEAT]``. Prints figures only; not a test.
"""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prometheus_client.exposition import generate_latest, start_http_server

from engine.cli.demo import snapshots_fast
from engine.feeds.demo import build_demo
from engine.metrics.collector import Latest, snapshot_parts
from engine.metrics.server import MAX_RENDERS_PER_SECOND, Exposition, MetricsServer, registry_of

REPO = Path(__file__).resolve().parent.parent
HOURS = float(sys.argv[1]) if len(sys.argv) > 1 else 6.0
REPEAT = int(sys.argv[2]) if len(sys.argv) > 2 else 50
BUSY = 4.0  # seconds of scrapes while snapshots are published


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


PROMETHEUS = {"Accept": "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
              "Accept-Encoding": "gzip"}  # what a Prometheus server sends


CLIENT = """
import json, sys, time, urllib.request
port, headers, n, seconds = int(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers=headers)
urllib.request.urlopen(req, timeout=30).read()  # the first (which may render) is not counted
sys.stdout.write("go\\n"); sys.stdout.flush(); sys.stdin.readline()
out, end = [], time.perf_counter() + seconds
while len(out) < n or time.perf_counter() < end:
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=30) as r:
        r.read()
    out.append(time.perf_counter() - t0)
print(json.dumps(out))
"""


class Client:
    """GETs of /metrics from another process (the scraper's Python is not in the server's GIL):
    started, it makes its first GET and waits; ``run()`` makes the counted ones."""

    def __init__(self, port: int, headers: dict, n: int, seconds: float = 0.0) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", CLIENT, str(port), json.dumps(headers), str(n), str(seconds)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "go"

    def run(self) -> list[float]:
        out, _ = self.proc.communicate("\n", timeout=600)
        return json.loads(out)


def figures(times: list[float]) -> str:
    times = sorted(times)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return f"median {statistics.median(times) * 1e3:7.2f} ms, p99 {p99 * 1e3:7.2f} ms"


class OldServer:
    """Before: prometheus_client's own server over the collector, rendering at every scrape."""

    def __init__(self, source) -> None:
        self.httpd, self.thread = start_http_server(0, addr="127.0.0.1", registry=registry_of(source, "ce.example.org"))
        self.port = self.httpd.server_port

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


def scrapes(port: int, headers: dict, n: int) -> list[float]:
    return Client(port, headers, n).run()


def publishing(srv, latest, versions, headers) -> tuple[list[float], int]:
    """GETs back to back for BUSY seconds while a thread puts a new snapshot every 0.25 s."""
    stop = threading.Event()

    def publish() -> None:
        k = 0
        while not stop.wait(0.25):
            k += 1
            latest.put(versions[k % len(versions)])

    pub = threading.Thread(target=publish, daemon=True)
    client = Client(srv.port, headers, 0, BUSY)
    renders0 = srv.exposition.renders
    pub.start()
    try:
        times = client.run()
    finally:
        stop.set()
        pub.join(5)
    return times, srv.exposition.renders - renders0


def render_cost(big, n: int) -> None:
    """The render thread's work per published snapshot (best of REPEAT // 5, ms): the first
    (every part), one with the same routes, one with a route's running copies changed."""
    r0 = big.routes[0]
    for variant, headers in (("plain", {}), ("prometheus", PROMETHEUS)):
        figs = {}
        for kind in ("first", "same routes", "a route changed"):
            best = float("inf")
            for k in range(max(3, REPEAT // 5)):
                ex = Exposition(lambda: None, lambda snap: snapshot_parts(snap, "ce.example.org"))
                ex.answer(headers.get("Accept"), headers.get("Accept-Encoding"))  # the variant wanted
                ex.render(dataclasses.replace(big, seq=1))
                nxt = (dataclasses.replace(big, seq=2, time=big.time + 1) if kind == "same routes" else
                       dataclasses.replace(big, seq=2, routes=(dataclasses.replace(r0, running=r0.running + 1),
                                                               *big.routes[1:])))
                if kind == "first":
                    ex = Exposition(lambda: None, lambda snap: snapshot_parts(snap, "ce.example.org"))
                    ex.answer(headers.get("Accept"), headers.get("Accept-Encoding"))
                t0 = time.perf_counter()
                ex.render(nxt)
                best = min(best, time.perf_counter() - t0)
            figs[kind] = best
        print(f"    {variant:10s} render per published snapshot: " +
              ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in figs.items()))


def scrape_cost() -> None:
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    engine = demo(True)
    engine.run_until(engine.now + 3600)
    engine.advance()  # a snapshot only reads what the advance settled (issue 26)
    snap = engine.snapshot(1)
    engine.close()
    print(f"scrape cost over HTTP on loopback ({REPEAT} GETs each; {len(snap.cron_jobs)} crondor jobs); "
          f"'plain': no Accept header (curl), 'prometheus': OpenMetrics + gzip as Prometheus asks:")
    for n in (50, 500):
        big = with_routes(snap, n)
        text = generate_latest(registry_of(lambda b=big: b, "ce.example.org"))
        samples = sum(1 for line in text.decode().splitlines() if line and not line.startswith("#"))
        print(f"  {n} routes: {samples} samples, {len(text) / 1024:.1f} KiB")
        render_cost(big, n)
        latest = Latest()
        latest.put(big)
        for name, headers in (("plain", {}), ("prometheus", PROMETHEUS)):
            old = OldServer(latest.get)
            try:
                before = scrapes(old.port, headers, REPEAT)
            finally:
                old.stop()
            srv = MetricsServer(("127.0.0.1", 0), latest.get, "ce.example.org")
            latest.listeners = [srv.published]
            srv.start()
            try:
                after = scrapes(srv.port, headers, REPEAT)
                # the same while the engine publishes a new snapshot every 0.25 s (the runtime's
                # rate), each rendered on the server's render thread: the same routes (a watch
                # between two changes of the queue: only the few other series are encoded), or
                # one route changed in each (all of it encoded again)
                busy = {}
                for kind in ("same routes", "routes changed"):
                    versions = [dataclasses.replace(big, seq=k) if kind == "same routes" else
                                dataclasses.replace(big, seq=k, routes=(dataclasses.replace(
                                    big.routes[0], running=big.routes[0].running + k), *big.routes[1:]))
                                for k in range(8)]
                    busy[kind] = publishing(srv, latest, versions, headers)
            finally:
                srv.stop()
                latest.listeners = []
            print(f"    {name:10s} before (render per scrape): {figures(before)}")
            print(f"    {name:10s} after (kept bytes):         {figures(after)}")
            for kind, (times, renders) in busy.items():
                print(f"    {name:10s} after, 4 Hz, {kind:14s} {figures(times)} ({len(times)} GETs, {renders} renders)")


def demo_speed(metrics: bool) -> tuple[float, float, int, int, int]:
    engine = demo(metrics)
    until = engine.now + HOURS * 3600
    start_v = engine.now
    latest = Latest()
    srv = stop = scraper = None
    scrapes = [0]
    if metrics:
        srv = MetricsServer(("127.0.0.1", 0), latest.get, "routedeck-demo")
        latest.listeners.append(srv.published)
        srv.start()
        stop = threading.Event()

        def scrape() -> None:
            while not stop.wait(0.1):
                with urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/metrics", timeout=10) as r:
                    r.read()
                scrapes[0] += 1

        scraper = threading.Thread(target=scrape, daemon=True)
        scraper.start()
    counted = 0.0
    snaps = renders = 0
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
            renders = srv.exposition.renders
            # the unrouted count alone, once per snapshot time, on the final state
            from engine.router.unrouted import idle_unrouted

            t1 = time.perf_counter()
            idle_unrouted(engine.router, engine.now)
            counted = time.perf_counter() - t1
        engine.close()
    return (engine.now - start_v) / real, counted, scrapes[0], snaps, renders


def main() -> None:
    scrape_cost()
    print(f"demo --headless --max-speed, {HOURS:g} virtual hours, a snapshot every 600 s:")
    plain, _, _, _, _ = demo_speed(False)
    print(f"  without --metrics: x{plain:,.0f}")
    fast, counted, scrapes, snaps, renders = demo_speed(True)
    print(f"  with --metrics:    x{fast:,.0f} ({fast / plain:.0%} of it; {scrapes} scrapes during the run; "
          f"{renders} renders of {snaps} snapshots published, at most {MAX_RENDERS_PER_SECOND:g} a second; "
          f"one idle-unrouted count at the end {counted * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
