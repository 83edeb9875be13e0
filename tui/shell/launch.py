"""Screen commands of ``routedeck``: ``demo``, ``replay`` and ``watch`` open the dashboard.

Each has ONE subcommand with both forms (product.md §5): the headless forms are forwarded to the
engine's command (``engine.cli.<name>.run_headless``; their options come from the engine's
``add_arguments``/``add_headless_arguments``): ``demo --headless``; ``replay LOG`` with
``--at``/``--transaction``/``--json``/``--reroute``; ``watch`` with ``--json``/``--once``.
Registered before the engine's commands, so the engine's ``register`` leaves these names alone.
Textual is imported only when a screen is really opened, so the headless forms and ``--help``
stay fast and work without a terminal; and each command imports its engine command's module
where it is registered or run, so a run of one of them (``tui.cli`` registers only the command
named) imports no other's.
"""

from __future__ import annotations

import argparse
import sys

from engine.cli import args as argcheck


def register(subparsers, only: str | None = None) -> None:
    """The screen commands; ``only``: that one alone (a name of ``COMMANDS``)."""
    for name in COMMANDS if only is None else (only,):
        COMMANDS[name](subparsers)


def register_replay(subparsers) -> None:
    from engine.cli import replay as engine  # noqa: PLC0415 - that command's alone (engine.cli)

    p = subparsers.add_parser(
        "replay", help="replay a recorded job_queue.log on the dashboard (headless: --at/--json/--reroute)",
        description="Replay a recorded job_queue.log: the dashboard with a replay bar (space play/pause, "
                    ". , step, [ ] ±1 min, { } ±10 min, m bookmark, ' bookmarks, :seek TIME|+1h30m|#N); "
                    "--at/--transaction/--json/--reroute print instead.")
    engine.add_arguments(p)
    p.set_defaults(func=run_replay)


def register_watch(subparsers) -> None:
    from engine.cli import watch as engine  # noqa: PLC0415 - that command's alone (engine.cli)

    p = subparsers.add_parser(
        "watch", help="follow a live schedd's job_queue.log on the dashboard (headless: --json/--once)",
        description="Follow a live schedd (read-only): the dashboard, with the real router's JobRouterLog "
                    "figures beside RouteDeck's when --router-log is given; --json/--once print instead.")
    engine.add_arguments(p)
    p.set_defaults(func=run_watch)


def replay_is_headless(args: argparse.Namespace) -> bool:
    return bool(args.json or args.reroute or args.at is not None or args.transaction is not None)


def run_replay(args: argparse.Namespace) -> int:
    from engine.cli import replay as engine  # noqa: PLC0415 - that command's alone (engine.cli)

    if replay_is_headless(args):
        return int(engine.run_headless(args) or 0)
    from engine.launch.replay import NothingToReplay, replay_runtime  # noqa: PLC0415

    try:
        args.log = argcheck.log_of(args, "replay")  # UsageError: a ValueError, exit 2
        runtime = replay_runtime(engine.options(args))
    except NothingToReplay as exc:  # an empty queue: said, no screen, not an error
        print(f"routedeck replay: {exc}", file=sys.stderr)
        return 0
    except OSError as exc:
        print(f"routedeck replay: cannot read {args.log}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # nothing to replay, a moment outside the log: before the screen opens
        print(f"routedeck replay: {exc}", file=sys.stderr)
        return 2
    from tui.app import make_app  # noqa: PLC0415

    return _run_dashboard(make_app(runtime, mode="replay", readonly=True))


def run_watch(args: argparse.Namespace) -> int:
    from engine.cli import watch as engine  # noqa: PLC0415 - that command's alone (engine.cli)

    if args.json or args.once:
        return int(engine.run_headless(args) or 0)
    from engine.feeds.watch.setup import WatchError  # noqa: PLC0415

    if problem := engine.checked(args):
        return argcheck.usage_error("watch", problem)
    from engine.launch.watch import watch_runtime  # noqa: PLC0415

    try:
        runtime = watch_runtime(engine.options(args))
    except (WatchError, OSError) as exc:
        return argcheck.usage_error("watch", exc)
    from tui.app import make_app  # noqa: PLC0415

    return _run_dashboard(make_app(runtime, mode="watch", readonly=True))


def _run_dashboard(app) -> int:
    """Run the dashboard ``app`` (it takes the terminal) after loading the ClassAd library, so
    that htcondor2's start-up warning is printed before the screen and not over it
    (engine.classad.load_library)."""
    from engine import classad  # noqa: PLC0415 - only when a screen opens

    classad.load_library()
    app.run()
    return app.return_code or 0


def register_demo(subparsers) -> None:
    from engine.cli import demo as demo_cli  # noqa: PLC0415 - that command's alone (engine.cli)

    p = subparsers.add_parser(
        "demo", help="the embedded demo: sample routes, workload and simulated sites, on the dashboard",
        description="Run the embedded Job Router + crondor demo and open the dashboard on it "
                    "(--headless prints snapshots instead).")
    p.add_argument("--config-dir", type=argcheck.path, help="demo configuration directory (default: sample_configs/demo)")
    p.add_argument("--state-dir", type=argcheck.path, help="keep job_queue.log and history here (a recording replay can open)")
    p.add_argument("--seed", type=int, default=1, help="random seed of the workload and sites (default 1)")
    p.add_argument("--speed", type=argcheck.positive, default=60.0, help="virtual seconds per real second (default 60)")
    p.add_argument("--classad-routes", action="store_true", help="use the ClassAd-syntax routing table")
    p.add_argument("--readonly", action="store_true", help="refuse job commands and routing-table edits")
    p.add_argument("--headless", action="store_true", help="no screen: print snapshots (see --duration, --json)")
    demo_cli.add_headless_arguments(p)
    p.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    from engine.cli import demo as demo_cli  # noqa: PLC0415 - that command's alone (engine.cli)

    if args.headless:
        return int(demo_cli.run_headless(args) or 0)
    opts = demo_cli.options(args)
    if why := demo_cli.unreadable_input(opts):
        return argcheck.usage_error("demo", why)
    from engine.launch.demo import demo_runtime  # noqa: PLC0415

    try:
        runtime = demo_runtime(opts)
    except (OSError, ValueError) as exc:  # DemoError is a ValueError: a bad demo config names its file
        return demo_cli.build_failed(exc)  # the headless rule: 2 unreadable, 1 a config with errors
    from tui.app import make_app  # noqa: PLC0415

    return _run_dashboard(make_app(runtime, mode="demo", readonly=args.readonly))


def register_fleet(subparsers) -> None:
    from engine.cli import fleet as fleet_cli  # noqa: PLC0415 - that command's alone (engine.cli)

    p = subparsers.add_parser(
        "fleet", help="the board of many CEs, read from Prometheus (headless: --json/--once)",
        description="The board of many CEs from Prometheus's HTTP API (the series of `--metrics`): one row per "
                    "CE, Enter for its routes; --json/--once print instead.")
    fleet_cli.add_arguments(p)
    p.set_defaults(func=run_fleet)


def run_fleet(args: argparse.Namespace) -> int:
    from engine.cli import fleet as fleet_cli  # noqa: PLC0415 - that command's alone (engine.cli)

    if args.json or args.once:
        return fleet_cli.run_headless(args)
    try:
        prom = fleet_cli.client(args)
    except ValueError as exc:
        return argcheck.usage_error("fleet", exc)
    from engine.clock import SystemClock  # noqa: PLC0415
    from engine.fleet.board import fleet  # noqa: PLC0415
    from tui.screens.fleet import FleetApp  # noqa: PLC0415

    clock = SystemClock()
    app = FleetApp(lambda: fleet(prom, clock.now()), prom.url, refresh=args.refresh)
    app.run()
    return app.return_code or 0


# each screen command's registration, in the order ``routedeck --help`` lists them
COMMANDS = {"demo": register_demo, "replay": register_replay, "watch": register_watch, "fleet": register_fleet}
