"""``routedeck demo --headless``: run the embedded demo without a screen and print snapshots.

The ``demo`` subcommand itself is registered by the TUI (``tui.launch``), which forwards
``--headless`` here through :func:`add_headless_arguments` and :func:`run_headless`; when the TUI
is not installed, :func:`register` adds a headless-only ``demo`` command.

Decisions:

- ``--duration S`` is real (wall-clock) seconds: the run covers ``S × speed`` virtual seconds
  (``--duration 60 --speed 600`` shows ten virtual hours in a minute). With ``--max-speed`` there
  is no real-time pacing and ``--duration`` counts virtual seconds.
- Snapshots are taken at exact virtual times, every ``--interval`` virtual seconds (default: one
  real second's worth, i.e. ``speed``; 600 at maximum speed), so the output of a seeded run is
  the same every time, whatever the machine's speed.
- The state directory (``job_queue.log`` + ``history``) defaults to a fresh temporary directory
  whose path is printed on stderr at start.
"""

from __future__ import annotations

import argparse
import json
import math
import queue as _queue
import sys
import tempfile
from typing import Any, Iterator

from engine.cli import args as argcheck
from engine.feeds.demo import DemoError, build_demo


def add_headless_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--duration", type=float, default=60.0,
                   help="--headless: real seconds to run (S x speed virtual seconds); "
                        "with --max-speed, virtual seconds (default 60)")
    p.add_argument("--interval", type=float, default=None,
                   help="--headless: virtual seconds between snapshots (default: speed, i.e. one per real second)")
    p.add_argument("--max-speed", action="store_true",
                   help="--headless: as fast as possible (jump from one engine action to the next)")
    p.add_argument("--json", action="store_true", help="--headless: one JSON snapshot per line (Snapshot.to_json)")
    p.add_argument("--start", type=float, default=None, help="virtual start time, epoch seconds (default 2026-11-21 00:00 UTC)")


def register(subparsers) -> None:
    if "demo" in getattr(subparsers, "choices", {}):
        return  # the TUI's demo command forwards --headless here
    p = subparsers.add_parser("demo", help="the embedded demo, headless (no TUI installed)")
    p.add_argument("--config-dir", type=argcheck.path)
    p.add_argument("--state-dir", type=argcheck.path)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--speed", type=float, default=60.0)
    p.add_argument("--classad-routes", action="store_true")
    p.add_argument("--headless", action="store_true", default=True)
    add_headless_arguments(p)
    p.set_defaults(func=run_headless)


def summary_line(snap: Any) -> str:
    q = snap.queue_counts
    routes = " ".join(f"{r.name}:{r.state}:{r.routed}/{r.max_jobs}" for r in snap.routes)
    from datetime import datetime, timezone  # noqa: PLC0415

    when = datetime.fromtimestamp(snap.time, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return (f"{when}Z idle={q.get('idle', 0)} running={q.get('running', 0)} held={q.get('held', 0)} "
            f"jobs={snap.total_jobs} | {routes}")


def snapshots_fast(engine: Any, until: float, interval: float) -> Iterator[Any]:
    """Snapshots at ``start + k*interval`` up to ``until``, no threads (maximum speed)."""
    seq = 0
    t = engine.now
    seq += 1
    yield engine.snapshot(seq, speed=0.0, engine_state="running")
    while t < until:
        t = min(t + interval, until)
        engine.step(t)
        seq += 1
        yield engine.snapshot(seq, speed=0.0, engine_state="stopped" if t >= until else "running")


def snapshots_paced(engine: Any, until: float, interval: float, speed: float) -> Iterator[Any]:
    from engine.clock import VirtualClock  # noqa: PLC0415
    from engine.runtime import Runtime  # noqa: PLC0415

    out: _queue.SimpleQueue = _queue.SimpleQueue()  # unbounded: the engine never waits for us
    rt = Runtime(engine, VirtualClock(engine.now, speed), out.put, speed=speed, every_virtual=interval,
                 until=until)
    rt.start()
    try:
        while True:
            try:
                snap = out.get(timeout=0.5)
            except _queue.Empty:
                if rt.done.is_set() and out.empty():
                    return
                continue
            yield snap
            if snap.engine_state in ("stopped", "crashed"):
                return
    finally:
        rt.stop()


def run_headless(args: argparse.Namespace) -> int:
    numbers = [args.duration, args.speed or 1.0] + ([args.interval] if args.interval is not None else [])
    if not all(math.isfinite(x) for x in numbers) or args.duration < 0 or (args.interval is not None and args.interval <= 0):
        print("routedeck demo: --duration, --speed and --interval must be finite; --duration >= 0, --interval > 0",
              file=sys.stderr)
        return 2
    state_dir = args.state_dir
    if not state_dir:
        state_dir = tempfile.mkdtemp(prefix="routedeck-demo-")
    print(f"routedeck demo: state directory {state_dir}", file=sys.stderr)
    kwargs: dict[str, Any] = dict(config_dir=args.config_dir, seed=args.seed, state_dir=state_dir)
    if getattr(args, "classad_routes", False):
        kwargs["classad_routes"] = True
    if getattr(args, "start", None) is not None:
        kwargs["start"] = args.start
    try:
        engine = build_demo(**kwargs)
    except (DemoError, OSError, ValueError) as exc:
        print(f"routedeck demo: {exc}", file=sys.stderr)
        return 2
    speed = float(args.speed or 1.0)
    max_speed = bool(getattr(args, "max_speed", False)) or speed <= 0
    if speed <= 0:
        speed = 600.0
    virtual = args.duration if max_speed else args.duration * speed
    interval = args.interval or (600.0 if max_speed else speed)
    if interval <= 0 or virtual < 0:
        print("routedeck demo: --interval must be > 0 and --duration >= 0", file=sys.stderr)
        return 2
    until = engine.now + virtual
    gen = snapshots_fast(engine, until, interval) if max_speed else snapshots_paced(engine, until, interval, speed)
    crashed = False
    try:
        for snap in gen:
            if args.json:
                print(json.dumps(snap.to_json(), sort_keys=True), flush=True)
            else:
                print(summary_line(snap), flush=True)
            crashed = crashed or snap.engine_state == "crashed"
            if snap.engine_state == "crashed":
                print(f"routedeck demo: the engine crashed:\n{snap.error}", file=sys.stderr)
    finally:
        engine.close()
    return 1 if crashed else 0


def build_runtime(args: argparse.Namespace, publish=None):
    """The demo's runtime factory: the simulation on a virtual clock at ``--speed``."""
    from engine.clock import VirtualClock  # noqa: PLC0415
    from engine.feeds.demo import build_demo  # noqa: PLC0415
    from engine.runtime import Runtime  # noqa: PLC0415

    kwargs = {"config_dir": args.config_dir, "seed": args.seed, "state_dir": args.state_dir, "speed": args.speed}
    if getattr(args, "classad_routes", False):
        kwargs["classad_routes"] = True
    engine = build_demo(**kwargs)
    clock = VirtualClock(start=engine.now, speed=args.speed)
    return Runtime(engine, clock, publish=publish, snapshot_interval=0.25)
