"""``routedeck fleet --prometheus URL``: the board of many CEs, read from Prometheus (issue 28).

``--json`` prints ``{"ces": [...]}`` (engine.fleet.board) as one line; ``--once`` prints once and
exits (a text table without ``--json``). Without either, the TUI opens the fleet screen
(tui.shell.launch registers the command first and calls :func:`run_headless` for these forms).
Exit status: 0 done; 2 usage, a bad URL, or a server that cannot be reached or answers with an
error (one line on stderr, nothing on stdout).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from engine.cli import args as argcheck
from engine.cli.jsonout import emit
from engine.clock import SystemClock
from engine.fleet import TIMEOUT

if TYPE_CHECKING:  # annotations only; the client (urllib.request) is imported when fleet runs
    from engine.fleet.promapi import Prometheus


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prometheus", metavar="URL", required=True,
                   help="the Prometheus server scraping RouteDeck's --metrics (e.g. http://127.0.0.1:9090)")
    p.add_argument("--json", action="store_true", help="print the board as one JSON line")
    p.add_argument("--once", action="store_true", help="print the board once and exit")
    p.add_argument("--timeout", type=argcheck.positive, default=TIMEOUT, metavar="S",
                   help=f"seconds each HTTP request may take (default {TIMEOUT:g})")
    p.add_argument("--refresh", type=argcheck.positive, default=5.0, metavar="S",
                   help="the screen's refresh interval (default 5)")


def register(subparsers) -> None:
    argcheck.register_headless(subparsers, "fleet", "the board of many CEs, read from Prometheus (--json/--once)",
                               __doc__, add_arguments, run_headless)


def client(args: argparse.Namespace) -> Prometheus:
    """The client of ``--prometheus``; ValueError on a bad URL."""
    from engine.fleet.promapi import Prometheus  # noqa: PLC0415 - kept off every command's start-up

    return Prometheus(args.prometheus, timeout=args.timeout)


def text_table(board: dict) -> str:
    head = f"{'INSTANCE':24} {'SCHEDD':24} {'STATE':6} {'ROUTES':>6} {'IDLE':>6} {'RUN':>6} {'HELD':>6} " \
           f"{'THR':>4} {'FULL':>4}  UNROUTED"
    lines = [head]
    for c in board["ces"]:
        unrouted = " ".join(f"{k}={v}" for k, v in c["unrouted"].items() if v) or "-"
        lines.append(f"{c['instance'][:24]:24} {(c['schedd'] or '?')[:24]:24} {c['state']:6} {len(c['routes']):>6} "
                     f"{c['idle']:>6} {c['running']:>6} {c['held']:>6} {c['routes_throttled']:>4} "
                     f"{c['routes_full']:>4}  {unrouted}")
    return "\n".join(lines)


def run_headless(args: argparse.Namespace) -> int:
    from engine.fleet.board import fleet  # noqa: PLC0415 - kept off every command's start-up
    from engine.fleet.promapi import PromError  # noqa: PLC0415 - kept off every command's start-up

    try:
        prom = client(args)
    except ValueError as exc:
        return argcheck.usage_error("fleet", exc)
    try:
        board = fleet(prom, SystemClock().now())
    except PromError as exc:
        return argcheck.usage_error("fleet", exc)
    if args.json:
        emit(board)
    else:
        print(text_table(board))
    return 0
