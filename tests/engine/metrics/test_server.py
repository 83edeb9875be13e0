"""``--metrics HOST:PORT``: prometheus_client's HTTP server over the last snapshot, on loopback and
an ephemeral port, every server stopped (issue 28)."""

from __future__ import annotations

import argparse
import socket
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from engine.cli import metrics_opt
from engine.cli.demo import build_runtime as demo_runtime
from engine.cli.watch import build_runtime as watch_runtime
from engine.metrics.collector import Latest
from engine.metrics.server import AddressError, MetricsServer, parse_address
from tests.helpers.paths import REPO
from tests.helpers.demo_fixture import demo_engine
import time

LOG = str(REPO / "sample_configs/recordings/demo-3h.job_queue.log")
CONFIG = str(REPO / "sample_configs/demo/condor_config")


def scrape(port: int) -> dict[str, list]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        assert resp.status == 200
        text = resp.read().decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def refused(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.parametrize("text, want", [("127.0.0.1:9101", ("127.0.0.1", 9101)), (":0", ("0.0.0.0", 0)),
                                        ("[::1]:9101", ("::1", 9101))])
def test_address(text, want):
    assert parse_address(text) == want


@pytest.mark.parametrize("text", ["9101", "host:", "host:port", "h:70000", ""])
def test_bad_address_is_a_usage_error(text):
    with pytest.raises(AddressError):
        parse_address(text)
    with pytest.raises(argparse.ArgumentTypeError):
        metrics_opt.address(text)


def test_serves_the_latest_snapshot_and_stops(demo_snapshot):
    latest = Latest()
    srv = MetricsServer(("127.0.0.1", 0), latest.get, "ce1").start()
    try:
        port = srv.port
        assert port > 0
        assert not any(n.startswith("routedeck_") for n in scrape(port))  # nothing published yet
        latest.put(demo_snapshot)
        got = scrape(port)
        jobs = got["routedeck_route_jobs"]
        assert {s.labels["route"] for s in jobs} == {r.name for r in demo_snapshot.routes}
        assert all(s.labels["schedd"] == "ce1" for s in jobs)
    finally:
        srv.stop()
    assert refused(port)


def test_a_port_in_use_is_said():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        srv = MetricsServer(("127.0.0.1", port), Latest().get, "x")
        why = metrics_opt.started(srv)
        assert why is not None and f"127.0.0.1:{port}" in why and "cannot listen" in why


@pytest.fixture(scope="module")
def demo_snapshot():
    return demo_engine().snapshot(1)


def _wait_for(runtime, pred, seconds=30.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        snap = runtime.latest()
        if snap is not None and pred(snap):
            return snap
        runtime.done.wait(0.05)  # bounded wait on the runtime's own event, no sleep
    raise AssertionError("no snapshot as wanted in time")


def test_demo_runtime_serves_its_metrics_under_its_name(tmp_path):
    args = argparse.Namespace(config_dir=None, seed=1, state_dir=str(tmp_path), speed=600.0, metrics="127.0.0.1:0",
                              name=None)
    runtime = demo_runtime(args)
    [srv] = runtime.services
    runtime.start()
    try:
        _wait_for(runtime, lambda s: s.routes)
        got = scrape(srv.port)
        assert {s.labels["schedd"] for s in got["routedeck_route_accepting"]} == {"routedeck-demo"}
        assert {s.labels["reason"] for s in got["routedeck_idle_unrouted_jobs"]} >= {"no_match", "route_full"}
    finally:
        runtime.stop()
        runtime.feed.close()
    assert refused(srv.port)


def test_watch_runtime_name_overrides(tmp_path):
    args = argparse.Namespace(queue_log=LOG, config=[CONFIG], router_log=None, tz="UTC", slow_poll=60.0,
                              metrics="127.0.0.1:0", name="ce-test.example.org")
    runtime = watch_runtime(args)
    [srv] = runtime.services
    runtime.start()
    try:
        _wait_for(runtime, lambda s: s.total_jobs > 0)
        got = scrape(srv.port)
        assert {s.labels["schedd"] for s in got["routedeck_route_jobs"]} == {"ce-test.example.org"}
        assert got["routedeck_log_lag_seconds"][0].value > 0
        assert {s.labels["reason"] for s in got["routedeck_idle_unrouted_jobs"]} >= {"no_match", "not_candidate"}
    finally:
        runtime.stop()
    assert refused(srv.port)
