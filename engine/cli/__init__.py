"""Headless subcommands of ``routedeck``.

Each module here defines ``register(subparsers)``, which adds its subcommand with
``set_defaults(func=run)``; ``run(args)`` returns the process exit status. The entry point
(``tui.cli``) adds the screen commands and imports Textual only for those.

To add a command: write a module and list it in ``COMMANDS`` under the name it registers.

A run names its command first (``routedeck replay …``): the entry point then imports and registers
that command's module alone (:func:`register_all` with ``only``), so one command's start-up does
not pay for every other command's imports and parser (issue 27: ``replay DIR --at T --json`` in a
new process). ``--help``, no command and an unknown one build every command's parser.
"""

from __future__ import annotations

import importlib

# the command each module registers (tests/engine/cli/test_startup_imports.py checks the pairs)
COMMANDS: dict[str, str] = {
    "replay": "engine.cli.replay",
    "watch": "engine.cli.watch",
    "check": "engine.cli.check",
    "convert": "engine.cli.convert",
    "cron": "engine.cli.cron",
    "route": "engine.cli.route",
    "queue": "engine.cli.queue",
    "demo": "engine.cli.demo",
    "router-q": "engine.cli.routerq",
    "router-history": "engine.cli.routerhistory",
    "hook": "engine.cli.hook",
    "record": "engine.cli.record",
    "why": "engine.cli.why",
    "fleet": "engine.cli.fleet",
}
MODULES: list[str] = list(COMMANDS.values())


def register_all(subparsers, only: str | None = None) -> None:
    """Every command's parser; ``only``: that command's alone (a name of ``COMMANDS``)."""
    for name in MODULES if only is None else [COMMANDS[only]]:
        importlib.import_module(name).register(subparsers)
