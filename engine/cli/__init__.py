"""Headless subcommands of ``routedeck``.

Each module here defines ``register(subparsers)``, which adds its subcommand(s) with
``set_defaults(func=run)``; ``run(args)`` returns the process exit status. The entry point
(``tui.cli``) adds the screen commands and imports Textual only for those.

To add a command: write a module and list it in ``MODULES``.
"""

from __future__ import annotations

import importlib

MODULES: list[str] = [
    "engine.cli.replay",
    "engine.cli.watch",
    "engine.cli.check",
    "engine.cli.convert",
    "engine.cli.cron",
    "engine.cli.route",
    "engine.cli.queue",
    "engine.cli.demo",
    "engine.cli.routerq",
    "engine.cli.routerhistory",
    "engine.cli.hook",
    "engine.cli.record",
    "engine.cli.why",
    "engine.cli.fleet",
    # filled in by each feature: "engine.cli.queue", "engine.cli.cron", …
]


def register_all(subparsers) -> None:
    for name in MODULES:
        importlib.import_module(name).register(subparsers)
