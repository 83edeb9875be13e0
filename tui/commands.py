"""Screen commands of ``routedeck``: ``demo`` opens the dashboard on the embedded engine.

``routedeck demo --headless …`` is forwarded to the runtime's headless command
(``engine.commands.demo.run_headless``), so there is one ``demo`` subcommand with both forms
(product.md §5). Textual is imported only when a screen is really opened, so ``--headless``
and ``--help`` stay fast and work without a terminal.
"""

from __future__ import annotations

import argparse
import sys


def _headless_module():
    try:
        from engine.commands import demo as headless  # noqa: PLC0415
    except ImportError:
        return None
    return headless


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "demo", help="the embedded demo: sample routes, workload and simulated sites, on the dashboard",
        description="Run the embedded Job Router + crondor demo and open the dashboard on it "
                    "(--headless prints snapshots instead).")
    p.add_argument("--config-dir", help="demo configuration directory (default: sample_configs/demo)")
    p.add_argument("--state-dir", help="keep job_queue.log and history here (a recording replay can open)")
    p.add_argument("--seed", type=int, default=1, help="random seed of the workload and sites (default 1)")
    p.add_argument("--speed", type=float, default=60.0, help="virtual seconds per real second (default 60)")
    p.add_argument("--classad-routes", action="store_true", help="use the ClassAd-syntax routing table")
    p.add_argument("--readonly", action="store_true", help="refuse job commands and routing-table edits")
    p.add_argument("--headless", action="store_true", help="no screen: print snapshots (see --duration, --json)")
    headless = _headless_module()
    if headless is not None and hasattr(headless, "add_headless_arguments"):
        headless.add_headless_arguments(p)
    else:
        p.add_argument("--duration", type=float, default=600.0, help="--headless: virtual seconds to run")
        p.add_argument("--json", action="store_true", help="--headless: JSON snapshots, one per line")
    p.set_defaults(func=run_demo)


def build_runtime(args: argparse.Namespace, publish=None):
    from engine.clock import VirtualClock  # noqa: PLC0415
    from engine.demo import build_demo  # noqa: PLC0415
    from engine.runtime import Runtime  # noqa: PLC0415

    kwargs = {"config_dir": args.config_dir, "seed": args.seed, "state_dir": args.state_dir, "speed": args.speed}
    if getattr(args, "classad_routes", False):
        kwargs["classad_routes"] = True
    engine = build_demo(**kwargs)
    clock = VirtualClock(start=engine.now, speed=args.speed)
    return Runtime(engine, clock, publish=publish, snapshot_interval=0.25)


def run_demo(args: argparse.Namespace) -> int:
    if args.headless:
        headless = _headless_module()
        if headless is None or not hasattr(headless, "run_headless"):
            print("routedeck demo --headless: the headless demo is not available in this build", file=sys.stderr)
            return 2
        return int(headless.run_headless(args) or 0)
    try:
        runtime = build_runtime(args)
    except (OSError, ValueError) as exc:  # DemoError is a ValueError: a bad demo config names its file
        print(f"routedeck demo: {exc}", file=sys.stderr)
        return 2
    from tui.app import make_app  # noqa: PLC0415

    app = make_app(runtime, mode="demo", readonly=args.readonly)
    app.run()
    return app.return_code or 0
