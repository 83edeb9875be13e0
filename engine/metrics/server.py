"""``--metrics HOST:PORT``: the ``/metrics`` endpoint, its exposition rendered once per published snapshot.

The exposition (the Prometheus text format, and OpenMetrics when asked) is prometheus_client's
(``choose_encoder`` picks the encoder from the Accept header as its own server does, and the
encoder writes the text); nothing here writes it by hand. What changed (issue 28, a scrape at
500 routes cost 40–60 ms of formatting, about 7 µs per sample): the bytes are made once per
snapshot, not once per scrape.

Decisions:

- :class:`Exposition` keeps the rendered bytes of one snapshot, keyed by its identity (snapshots
  are immutable), one body per variant asked for (content type × gzip). A snapshot is rendered
  in parts (engine.metrics.collector.snapshot_parts): a route family, nearly all of the text, is
  encoded again only when its samples changed; the parts' texts are joined as the encoder
  joins families (its text of no family, OpenMetrics's ``# EOF``, once at the end), which the
  tests check against prometheus_client's own server byte for byte (once unzipped: gzip at
  level 1 here). Its render thread makes
  them when a snapshot is published (:meth:`Exposition.published`: a runtime's ``listeners``, a
  :class:`~engine.metrics.collector.Latest`'s); publishing only replaces a one-slot reference and
  sets an event, so the engine thread never waits for a render, and snapshots published during
  a render are skipped but the newest (at most one render per published snapshot).
- At most ``max_rate`` renders a second (MAX_RENDERS_PER_SECOND): at a high demo speed the
  runtime publishes many snapshots a second and rendering each one at 500 routes would keep a
  core busy for figures no scrape reads. The render thread renders a published snapshot at once
  when the last render is 1/max_rate seconds old, else waits until it is and renders the newest
  snapshot published by then (the ones in between are never rendered). A scrape that finds the
  kept bytes older than the newest snapshot wakes it (the same cap): a scrape every 15 s always
  gets a snapshot at most 1/max_rate seconds (and a render) older than the newest. Waiting is on
  the server's own thread (:meth:`Exposition.render_due`, timed by ``clock``: a monotonic one,
  a manual one in the tests), never the engine's.
- A scrape serves the kept bytes. While the newest snapshot is still being rendered it serves
  the previous one's (one render behind, tens of milliseconds): the cost of a scrape is then
  copying bytes, never formatting. Only the first scrape of a variant, or the first after the
  first snapshot, renders on the scrape's thread (once: the render lock).
- A variant a scrape asked for is rendered for every later snapshot (Prometheus asks for
  OpenMetrics with gzip; curl for plain text): a handful at most.
- Anything but a plain ``GET`` (OPTIONS, other methods, ``/favicon.ico``, ``?name[]=`` filters)
  goes to prometheus_client's own WSGI app over a registry of the same source, rendered per
  request as before.
- The server has its own registry (not the process-wide default, so two servers in one process,
  as in the tests, do not mix), runs on daemon threads, and :meth:`MetricsServer.stop` shuts it
  down, closes its socket and ends the render thread.
"""

from __future__ import annotations

import gzip
import socket
import threading
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import Metric
from prometheus_client.exposition import ThreadingWSGIServer, choose_encoder, generate_latest, gzip_accepted

from engine.clock import stopwatch
from engine.contract.snapshot import Snapshot
from engine.metrics.collector import SnapshotCollector, snapshot_parts


MAX_RENDERS_PER_SECOND = 2.0  # the render thread's cap (module docstring)


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


class _Families:
    """The metric families of one state, as the collector prometheus_client's encoders read."""

    def __init__(self, fams: list[Metric]) -> None:
        self._fams = fams

    def collect(self) -> Iterable[Metric]:
        return self._fams


Variant = tuple[str, bool]  # (content type, gzip)


Part = tuple[Any, Callable[[], list[Metric]]]  # (key: equal keys give equal families, None: always built; build)


class Exposition:
    """The bytes ``/metrics`` answers, rendered once per published state (module docstring).

    ``source()`` is the last published state (a snapshot, or any immutable object) or None;
    ``parts_of(state)`` its metric families in parts (engine.metrics.collector.snapshot_parts):
    a part whose key equals the one rendered before keeps its text, so a snapshot encodes only
    the route families that changed and its few other series. ``max_rate``: renders a second at
    most (the render thread's and the scrapes'); ``clock``: seconds, monotonic (default: real)."""

    def __init__(self, source: Callable[[], Any], parts_of: Callable[[Any], list[Part]],
                 max_rate: float = MAX_RENDERS_PER_SECOND, clock: Callable[[], float] | None = None) -> None:
        self.source = source
        self.parts_of = parts_of
        self.min_interval = 1.0 / max_rate if max_rate > 0 else 0.0
        self.clock = clock if clock is not None else stopwatch()
        self._rendered_at: float | None = None  # the clock's time of the last render of a new state
        # variants asked for -> their encoder; plain text until a scrape asks for another
        enc, ctype = choose_encoder("")
        self._wanted: dict[Variant, Callable] = {(ctype, False): enc}
        self._kept: tuple[Any, dict[Variant, bytes]] | None = None  # (state, bodies), replaced whole
        self._parts: list[tuple[Any, dict[str, bytes]]] = []  # the last render's parts: (key, text by type)
        self._pending: Any = None
        self._render_lock = threading.RLock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.renders = 0  # states rendered (the bench and the tests count them)
        self.parts_rendered = 0  # parts encoded (not kept from the state before)

    def families(self, state: Any) -> list[Metric]:
        return [] if state is None else [f for _key, build in self.parts_of(state) for f in build()]

    # ------------------------------------------------------------------ publishing side
    def published(self, state: Any) -> None:
        """A new state is published: render it on the render thread (never waits)."""
        self._pending = state
        self._wake.set()

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="routedeck-metrics-render", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._thread = None

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if self._stop.is_set():
                return
            wait = self.render_due()
            if wait > 0:  # the cap: the wake stays set, the newest pending is rendered after the wait
                self._stop.wait(wait)
                continue
            self._wake.clear()
            self.render_pending()

    def render_due(self) -> float:
        """Seconds until the cap lets the next render start (0: now)."""
        if self._rendered_at is None or self.min_interval <= 0:
            return 0.0
        return max(0.0, self._rendered_at + self.min_interval - self.clock())

    def render_pending(self) -> None:
        """Render the newest published state (the render thread's step, once the cap allows)."""
        with self._render_lock:  # the newest pending, read under the lock a scrape renders with
            state = self._pending
            try:
                if state is not None:
                    self.render(state)
            except Exception:  # noqa: BLE001 - the scrape's to report: with nothing kept it renders again and fails (500)
                self._kept = None
                self._parts = []

    def render(self, state: Any) -> dict[Variant, bytes]:
        """The bodies of ``state`` in every wanted variant (rendered once: kept until a newer one)."""
        with self._render_lock:
            kept = self._kept
            have = kept[1] if kept is not None and kept[0] is state else {}
            wanted = dict(self._wanted)
            if all(v in have for v in wanted):
                return have
            encoders = {ctype: enc for (ctype, _gz), enc in wanted.items()}
            parts = self.parts_of(state) if state is not None else []
            before = self._parts
            now: list[tuple[Any, dict[str, bytes]]] = []
            for i, (key, build) in enumerate(parts):
                old = before[i] if i < len(before) else None
                texts = dict(old[1]) if key is not None and old is not None and (old[0] is key or old[0] == key) else {}
                fams = None
                for ctype, enc in encoders.items():
                    if ctype not in texts:
                        fams = build() if fams is None else fams
                        texts[ctype] = enc(_Families(fams))
                        self.parts_rendered += 1
                now.append((key, texts))
            out = dict(have)
            for (ctype, gz), enc in wanted.items():
                if (ctype, gz) in out:
                    continue
                # the encoder's text of no family: nothing, or OpenMetrics's "# EOF" (once, at the end)
                end = enc(_Families([]))
                body = b"".join(texts[ctype].removesuffix(end) for _key, texts in now) + end
                # gzip level 1: 2 ms for 500 routes' 460 KB, against 50 ms at prometheus_client's 9
                out[(ctype, gz)] = gzip.compress(body, compresslevel=1) if gz else body
            self._parts = now
            self._kept = (state, out)
            if not have:
                self.renders += 1
                self._rendered_at = self.clock()
            return out

    # ------------------------------------------------------------------ scrape side
    def state(self) -> Any:
        """The state whose bytes a scrape gets now (None before any)."""
        kept = self._kept
        return None if kept is None else kept[0]

    def answer(self, accept: str | None, accept_encoding: str | None) -> tuple[str, bool, bytes]:
        """(content type, gzipped, body) for a scrape with these headers."""
        enc, ctype = choose_encoder(accept or "")
        variant = (ctype, gzip_accepted(accept_encoding or ""))
        if variant not in self._wanted:
            self._wanted = {**self._wanted, variant: enc}
        state = self.source()
        kept = self._kept
        if kept is not None and variant in kept[1]:
            if kept[0] is state:
                return (*variant, kept[1][variant])
            if kept[0] is not None:  # the newest is being rendered (or was not announced): serve this one
                if self._pending is not state:
                    self.published(state)
                return (*variant, kept[1][variant])
        return (*variant, self.render(state)[variant])


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No line per request."""


class MetricsServer:
    """The ``/metrics`` endpoint over ``source`` (a runtime's ``latest``, or ``Latest.get``).

    Call :meth:`published` with each new state (``runtime.listeners`` / ``Latest.listeners``);
    ``families_of(state, schedd)`` gives a state's metric families (default: a snapshot's,
    engine.metrics.collector.families; the recorder's: engine.metrics.record.record_families);
    ``max_rate``: renders a second at most (:class:`Exposition`)."""

    def __init__(self, address: tuple[str, int], source: Callable[[], Any], schedd: str,
                 families_of: Callable[[Any, str], list[Metric]] | None = None,
                 max_rate: float = MAX_RENDERS_PER_SECOND) -> None:
        self.address = address
        self.schedd = schedd
        if families_of is None:
            self.exposition = Exposition(source, lambda snap: snapshot_parts(snap, schedd), max_rate)
            self.registry = registry_of(source, schedd)
        else:
            self.exposition = Exposition(source, lambda state: [(None, lambda: families_of(state, schedd))], max_rate)
            self.registry = CollectorRegistry(auto_describe=False)
            self.registry.register(_Source(source, self.exposition.families))
        self._fallback = make_wsgi_app(self.registry)
        self._httpd: Any = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on (the one the OS chose for port 0)."""
        return int(self._httpd.server_port) if self._httpd is not None else self.address[1]

    def published(self, state: Any) -> None:
        self.exposition.published(state)

    def _app(self, environ: dict, start_response: Callable) -> list[bytes]:
        if (environ["REQUEST_METHOD"] != "GET" or environ.get("PATH_INFO") == "/favicon.ico"
                or "name[]" in parse_qs(environ.get("QUERY_STRING", ""))):
            return self._fallback(environ, start_response)
        ctype, gz, body = self.exposition.answer(environ.get("HTTP_ACCEPT"), environ.get("HTTP_ACCEPT_ENCODING"))
        headers = [("Content-Type", ctype)] + ([("Content-Encoding", "gzip")] if gz else [])
        start_response("200 OK", headers)
        return [body]

    def start(self) -> "MetricsServer":
        """Listen and serve (once: a started server is left as it is)."""
        if self._httpd is not None:
            return self
        host, port = self.address
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]

        class Server(ThreadingWSGIServer):
            address_family = family

        self._httpd = make_server(host, port, self._app, Server, handler_class=_Quiet)
        self.exposition.start()
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="routedeck-metrics", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout)
        self.exposition.stop(timeout)
        self._httpd = self._thread = None

    def __enter__(self) -> "MetricsServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Source:
    """A collector over ``families_of(source())`` (the fallback's registry for non-snapshot states)."""

    def __init__(self, source: Callable[[], Any], families_of: Callable[[Any], list[Metric]]) -> None:
        self.source, self.families_of = source, families_of

    def collect(self) -> Iterable[Metric]:
        return self.families_of(self.source())
