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


def address(text: str) -> str:
    """``--metrics``: HOST:PORT (argparse type; the text is returned unchanged)."""
    # the server module pulls in prometheus_client and http.server: only for a command given --metrics
    from engine.metrics.server import AddressError, parse_address  # noqa: PLC0415 - kept off every command's start-up

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


