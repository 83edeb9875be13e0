"""The ``routedeck`` command line: headless subcommands from ``engine.cli`` plus the
screen commands (``demo``, ``watch``, ``replay``), which import Textual lazily."""

from __future__ import annotations

import argparse
import sys

from engine.cli import COMMANDS, register_all
from engine.cli.args import Parser

DESCRIPTION = """\
RouteDeck: a terminal dashboard for HTCondor's Job Router and crondor.

An embedded engine re-implements the Job Router (routing table, route matching, MaxJobs /
MaxIdleJobs / failure-rate throttling, routed copies, hooks) and crondor (cron_* schedules ->
DeferralTime). It runs on an embedded demo, follows a live schedd's job_queue.log, or replays a
recorded one."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; ``command`` (a name of ``engine.cli.COMMANDS``): that command's
    alone, its module the only one imported (engine.cli's docstring)."""
    parser = Parser(
        prog="routedeck", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    register_screen_commands(sub, command)
    if command is None or sub.choices.get(command) is None:  # a screen command takes its name first
        register_all(sub, command)
    return parser


def register_screen_commands(sub, command: str | None = None) -> None:
    """Commands that open the dashboard: demo, watch, replay, fleet (``command``: that one alone,
    none when it is another)."""
    from tui.shell import launch  # noqa: PLC0415  (keeps `routedeck --help` from importing more than it needs)

    if command is None or command in launch.COMMANDS:
        launch.register(sub, command)


def _command_names(parser: argparse.ArgumentParser) -> list[str]:
    return [name for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name in action.choices]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # a run that names its command builds that command's parser alone (engine.cli's docstring)
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:  # no command: a usage error like any other (README: one line on stderr, exit 2)
        commands = ", ".join(_command_names(build_parser()))
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
