"""``--metrics HOST:PORT``: prometheus_client's own HTTP server over a :class:`SnapshotCollector`.

The exposition (``/metrics``, the Prometheus text format, and OpenMetrics when asked) is
prometheus_client's; nothing here writes it by hand. The server has a registry of its own (not
the process-wide default, so two servers in one process, as in the tests, do not mix), runs on
its own daemon thread, and :meth:`MetricsServer.stop` shuts it down and closes its socket.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.exposition import generate_latest

from engine.contract.snapshot import Snapshot
from engine.metrics.collector import SnapshotCollector


class AddressError(ValueError):
    """A ``--metrics`` value that is not HOST:PORT."""


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9101`` for IPv6; an empty host is every interface, 0.0.0.0)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise AddressError(f"--metrics {text!r}: expected HOST:PORT (a port 0..65535), e.g. 127.0.0.1:9101")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host or "0.0.0.0", int(port)


def registry_of(source: Callable[[], Snapshot | None], schedd: str) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=True)
    registry.register(SnapshotCollector(source, schedd))
    return registry


def exposition(source: Callable[[], Snapshot | None], schedd: str) -> str:
    """What ``/metrics`` answers for ``source``, without a server (tests, ``promtool check metrics``)."""
    return generate_latest(registry_of(source, schedd)).decode()


class MetricsServer:
    """The ``/metrics`` endpoint over ``source`` (a runtime's ``latest``, or ``Latest.get``)."""

    def __init__(self, address: tuple[str, int], source: Callable[[], Snapshot | None], schedd: str) -> None:
        self.address = address
        self.schedd = schedd
        self.registry = registry_of(source, schedd)
        self._httpd: Any = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on (the one the OS chose for port 0)."""
        return int(self._httpd.server_port) if self._httpd is not None else self.address[1]

    def start(self) -> "MetricsServer":
        """Listen and serve (once: a started server is left as it is)."""
        if self._httpd is not None:
            return self
        host, port = self.address
        self._httpd, self._thread = start_http_server(port, addr=host, registry=self.registry)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout)
        self._httpd = self._thread = None

    def __enter__(self) -> "MetricsServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
