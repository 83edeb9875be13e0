"""The exposition rendered once per published snapshot and served from kept bytes (issue 28: a
scrape at 500 routes cost 40-60 ms of formatting; bench/metrics.py measures it)."""

from __future__ import annotations

import dataclasses
import gzip
import threading
import urllib.request

import pytest
from prometheus_client.exposition import start_http_server

from engine.clock import ManualClock
from engine.metrics.collector import ROUTE_SERIES, Latest, families, snapshot_parts
from engine.metrics.server import Exposition, MetricsServer, registry_of
from tests.helpers.demo_fixture import demo_engine

PROMETHEUS = {"Accept": "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
              "Accept-Encoding": "gzip"}


@pytest.fixture(scope="module")
def snaps():
    """Three snapshots: the demo's; the same routes later; a route changed."""
    eng = demo_engine()
    first = eng.snapshot(1)
    later = dataclasses.replace(first, seq=2, time=first.time + 600)
    r = first.routes[0]
    changed = dataclasses.replace(later, seq=3, routes=(dataclasses.replace(r, running=r.running + 1), *first.routes[1:]))
    return first, later, changed


def get(port: int, headers: dict) -> tuple[str | None, str | None, bytes]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers=headers)
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.headers.get("Content-Type"), r.headers.get("Content-Encoding"), r.read()


@pytest.mark.parametrize("headers", [{}, {"Accept": "text/plain"}, PROMETHEUS, {"Accept-Encoding": "gzip"}],
                         ids=["none", "text", "prometheus", "gzip"])
def test_the_same_bytes_as_prometheus_clients_own_server(snaps, headers):
    """What a scrape gets is what prometheus_client's server answered before, for every variant,
    also for snapshots rendered in part (the same routes) after the first."""
    latest = Latest()
    httpd, thread = start_http_server(0, addr="127.0.0.1", registry=registry_of(latest.get, "ce1"))
    srv = MetricsServer(("127.0.0.1", 0), latest.get, "ce1")
    latest.listeners.append(srv.published)
    srv.start()
    try:
        for snap in snaps:
            latest.put(snap)
            srv.exposition.render(snap)  # the render thread's (waits for it)
            want = get(httpd.server_port, headers)
            got = get(srv.port, headers)
            unzip = (lambda b: gzip.decompress(b)) if want[1] == "gzip" else (lambda b: b)
            assert got[:2] == want[:2]
            assert unzip(got[2]) == unzip(want[2])
    finally:
        srv.stop()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def test_only_the_parts_that_changed_are_encoded(snaps):
    latest = Latest()
    ex = Exposition(latest.get, lambda snap: snapshot_parts(snap, "ce1"))
    # the first (head, a part per route family, tail); the routes kept; a route's running copies changed
    for snap, encoded in zip(snaps, (2 + len(ROUTE_SERIES), 2, 3)):
        before = ex.parts_rendered
        ex.render(snap)
        assert ex.parts_rendered - before == encoded


def test_rendered_once_per_published_snapshot(snaps):
    calls = []

    def counted(snap):
        calls.append(snap)
        return families(snap, "ce1")

    latest = Latest()
    ex = Exposition(latest.get, lambda snap: [(None, lambda: counted(snap))])
    latest.listeners.append(ex.published)
    latest.put(snaps[0])
    bodies = {ex.answer(None, None)[2] for _ in range(5)}  # not started: the first scrape renders
    assert len(bodies) == 1 and calls == [snaps[0]]
    ex.start()
    try:
        latest.put(snaps[1])
        ex.render(snaps[1])  # waits for the render thread's render of it (the lock), renders nothing more
        for _ in range(5):
            assert ex.answer(None, None)[2] != next(iter(bodies))
        assert calls == [snaps[0], snaps[1]]
    finally:
        ex.stop()


def test_a_scrape_during_a_render_gets_the_previous_snapshot_at_once(snaps):
    """The render thread is stuck in the second snapshot: a scrape does not wait for it."""
    rendering, release = threading.Event(), threading.Event()

    def slow(snap):
        if snap is snaps[1]:
            rendering.set()
            assert release.wait(10)
        return families(snap, "ce1")

    latest = Latest()
    ex = Exposition(latest.get, lambda snap: [(None, lambda: slow(snap))])
    latest.listeners.append(ex.published)
    latest.put(snaps[0])
    first = ex.answer(None, None)[2]
    ex.start()
    try:
        latest.put(snaps[1])
        assert rendering.wait(10)
        assert ex.answer(None, None)[2] == first and ex.state() is snaps[0]
        release.set()
        ex.render(snaps[1])
        assert ex.state() is snaps[1] and ex.answer(None, None)[2] != first
    finally:
        release.set()
        ex.stop()


def test_a_failing_render_is_the_scrapes_error_and_the_render_thread_goes_on(snaps):
    failed = threading.Event()

    def failing(snap):
        if snap is snaps[1]:
            failed.set()
            raise RuntimeError("broken snapshot")
        return families(snap, "ce1")

    latest = Latest()
    ex = Exposition(latest.get, lambda snap: [(None, lambda: failing(snap))])
    latest.listeners.append(ex.published)
    ex.start()
    try:
        latest.put(snaps[0])
        ex.render(snaps[0])
        latest.put(snaps[1])
        assert failed.wait(10)
        with ex._render_lock:  # the render thread is past its failure (it holds the lock until then)
            pass
        with pytest.raises(RuntimeError):
            ex.answer(None, None)  # not the previous snapshot's bytes for ever: the error
        latest.put(snaps[2])
        ex.render(snaps[2])
        assert ex.state() is snaps[2] and ex.answer(None, None)[2]
    finally:
        ex.stop()


def test_renders_are_capped_per_second_on_a_manual_clock(snaps):
    """Issue 28: at a high demo speed snapshots are published many times a second; the render
    thread renders at most ``max_rate`` a second, each time the newest published, and a scrape in
    between gets the kept bytes at once (no render) and wakes the render thread for the newest.
    The render thread's step (``render_due``, ``render_pending``) is driven here by hand."""
    clock = ManualClock(0.0)
    calls = []

    def counted(snap):
        calls.append(snap.seq)
        return families(snap, "ce1")

    latest = Latest()
    ex = Exposition(latest.get, lambda snap: [(None, lambda: counted(snap))], max_rate=2, clock=clock.now)
    latest.listeners.append(ex.published)
    published = [dataclasses.replace(snaps[0], seq=i, time=snaps[0].time + i) for i in range(1, 37)]

    def step():  # the render thread woken by a publish: it renders only once the cap allows
        if ex.render_due() == 0:
            ex.render_pending()

    for snap in published:  # 36 snapshots in 2.25 s: 16 a second
        latest.put(snap)
        step()
        clock.advance(1 / 16)
    assert calls == [1, 9, 17, 25, 33]  # every 0.5 s, the one published then
    assert ex.render_due() == 0.25  # 33 was rendered at 2.0 s; the clock is at 2.25 s
    # a scrape now: the kept bytes of snapshot 33 at once, not a render of 36
    body = ex.answer(None, None)[2]
    assert ex.state().seq == 33 and calls[-1] == 33 and b"routedeck_route_jobs" in body
    clock.advance(0.25)
    step()  # the cap allows it now: the newest published, 36 (34 and 35 never rendered)
    assert calls == [1, 9, 17, 25, 33, 36] and ex.state().seq == 36
    assert ex.answer(None, None)[2] != body


def test_no_cap_renders_every_published_snapshot(snaps):
    clock = ManualClock(0.0)
    ex = Exposition(lambda: None, lambda snap: snapshot_parts(snap, "ce1"), max_rate=0, clock=clock.now)
    for snap in snaps:
        ex.published(snap)
        assert ex.render_due() == 0
        ex.render_pending()
    assert ex.renders == 3
