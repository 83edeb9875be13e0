"""``--metrics HOST:PORT`` and ``--name NAME``: the Prometheus endpoint of ``watch``, ``demo`` and ``record``.

One set of options for every command that serves metrics (README "Monitoring"):
:func:`add_arguments` adds them, :func:`server` builds the :class:`engine.metrics.server.MetricsServer`
over a snapshot source, or None without ``--metrics``. The ``schedd`` label is ``--name``, else
the name the command found (the config's ``SCHEDD_NAME``, the demo's). An address that is not
HOST:PORT is a usage error (2) before anything runs; one the server cannot listen on (a port in
use, an address not of this machine) is a usage error when the server starts (:func:`started`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from engine.metrics.server import AddressError, MetricsServer, parse_address


class MetricsError(OSError):
    """The server cannot listen (a usage error: 2, one line)."""


def address(text: str) -> str:
    """``--metrics``: HOST:PORT (argparse type; the text is returned unchanged)."""
    try:
        parse_address(text)
    except AddressError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--metrics {text!r}: ")) from None
    return text


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--metrics", metavar="HOST:PORT", type=address, default=None,
                   help="serve Prometheus metrics of the last snapshot (record: of the recorder) on http://HOST:PORT/metrics")
    p.add_argument("--name", metavar="NAME", default=None,
                   help="with --metrics: the schedd label (default: the config's SCHEDD_NAME)")


def server(args: argparse.Namespace, source: Callable[[], Any], default_name: str,
           listeners: list | None = None, families_of: Callable | None = None) -> MetricsServer | None:
    """The metrics server asked for by ``args`` (not started), or None. ``listeners`` (a runtime's,
    a ``Latest``'s) get its ``published``: each new state is rendered once, when published."""
    text = getattr(args, "metrics", None)
    if not text:
        return None
    name = getattr(args, "name", None) or default_name
    srv = MetricsServer(parse_address(text), source, name, families_of)
    if listeners is not None:
        listeners.append(srv.published)
    return srv


def started(srv: MetricsServer) -> str | None:
    """Start ``srv``; a one-line problem when it cannot listen, else None (the address on stderr)."""
    host, port = srv.address
    try:
        srv.start()
    except OSError as exc:
        return f"--metrics {host}:{port}: cannot listen: {exc.strerror or exc}"
    shown = f"[{host}]" if ":" in host else host
    print(f"routedeck: metrics of schedd {srv.schedd!r} on http://{shown}:{srv.port}/metrics", file=sys.stderr)
    return None
