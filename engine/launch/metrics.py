"""The ``--metrics`` server of a launched mode (README "Monitoring"): :func:`server` builds the
:class:`engine.metrics.server.MetricsServer` over a snapshot source, or None without ``--metrics``;
:func:`started` starts it. The ``schedd`` label is ``--name``, else the name the mode found (the
config's ``SCHEDD_NAME``, the demo's). One the server cannot listen on (a port in use, an address
not of this machine) is a usage error when the server starts; the options themselves are the
CLI's (engine.cli.metrics_opt)."""

from __future__ import annotations

import sys
from typing import Any, Callable

from engine.metrics.server import MetricsServer, parse_address


class MetricsError(OSError):
    """The server cannot listen (a usage error: 2, one line)."""


def server(address: str | None, name: str | None, source: Callable[[], Any], default_name: str,
           listeners: list | None = None, families_of: Callable | None = None) -> MetricsServer | None:
    """The metrics server on ``address`` (HOST:PORT; not started) labelled ``name`` or else
    ``default_name``, or None without an address. ``listeners`` (a runtime's, a ``Latest``'s) get
    its ``published``: each new state is rendered once, when published; ``families_of`` turns a
    state into metric families (the snapshot collector's by default)."""
    if not address:
        return None
    srv = MetricsServer(parse_address(address), source, name or default_name, families_of)
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


def serve(runtime: Any, address: str | None, name: str | None, default_name: str) -> MetricsServer | None:
    """The server of :func:`server` over ``runtime.latest``, started (listening before the screen
    opens) and one of the runtime's services (stopped with it); None without an address.
    Raises :class:`MetricsError` when it cannot listen."""
    srv = server(address, name, runtime.latest, default_name, runtime.listeners)
    if srv is None:
        return None
    if why := started(srv):
        raise MetricsError(why)
    runtime.services.append(srv)
    return srv
