"""The ``routedeck`` command line: headless subcommands from ``engine.cli`` plus the
screen commands (``demo``, ``watch``, ``replay``), which import Textual lazily."""

from __future__ import annotations

import argparse
import sys

from engine.cli import register_all
from engine.cli.args import Parser

DESCRIPTION = """\
RouteDeck: a terminal dashboard for HTCondor's Job Router and crondor.

An embedded engine re-implements the Job Router (routing table, route matching, MaxJobs /
MaxIdleJobs / failure-rate throttling, routed copies, hooks) and crondor (cron_* schedules ->
DeferralTime). It runs on an embedded demo, follows a live schedd's job_queue.log, or replays a
recorded one."""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="routedeck", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    register_screen_commands(sub)
    register_all(sub)
    return parser


def register_screen_commands(sub) -> None:
    """Commands that open the dashboard: demo, watch, replay."""
    from tui.shell import launch  # noqa: PLC0415  (keeps `routedeck --help` from importing more than it needs)

    launch.register(sub)


def _command_names(parser: argparse.ArgumentParser) -> list[str]:
    return [name for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name in action.choices]


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:  # no command: a usage error like any other (README: one line on stderr, exit 2)
        commands = ", ".join(_command_names(parser))
        print(f"routedeck: give a command ({commands}); routedeck --help describes them", file=sys.stderr)
        return 2
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
