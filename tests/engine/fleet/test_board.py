"""The fleet board's assembly and its HTTP client, against a fake Prometheus on loopback
(tests/helpers/fake_prometheus.py: the JSON shapes of Prometheus's /api/v1/query and
/api/v1/query_range)."""

from __future__ import annotations

import json
import socket

import pytest

from engine.cli import MODULES
from engine.cli import fleet as fleet_cli
from engine.fleet.board import fleet, route_view
from engine.fleet.promapi import Prometheus, PromError, base_url
from tests.helpers.fake_prometheus import FakePrometheus, two_ces
from tui.cli import main

NOW = 1_000_000_000.0


def test_two_ces_one_up_one_down():
    answers, ranges = two_ces()
    with FakePrometheus(answers, ranges) as fake:
        board = fleet(Prometheus(fake.url), NOW)
    ces = board["ces"]
    assert [c["instance"] for c in ces] == ["127.0.0.1:9101", "127.0.0.1:9102"]  # not Prometheus's own target
    up, down = ces
    assert (up["state"], up["up"], up["schedd"]) == ("up", True, "ce1.example.org")
    assert (down["state"], down["up"], down["routes"]) == ("down", False, [])
    b, a = up["routes"]  # in the routing table's match order (routedeck_route_match_order), not by name
    assert (a["match_order"], b["match_order"], a["window_start"], b["window_start"]) == (2, 1, 1e9 - 200, None)
    assert up["time"] == 1e9  # the CE's snapshot time, which Re-eval is counted from
    # idle counts the held copies too, as RouteView and replay --json do (collector: state=idle is not held)
    assert (a["name"], a["idle"], a["running"], a["held"], a["routed"]) == ("Site_A", 4, 5, 1, 9)
    assert (a["accepting"], a["throttled"], a["full"], a["max_jobs"], a["failure_rate"]) == (False, True, False, 100, 0.025)
    assert a["max_idle_jobs"] is None  # absent series: no limit
    # the local board's other figures, where the exporter has them (engine.fleet.board's docstring)
    assert (a["throttle"], a["failure_rate_threshold"]) == (18.6, 0.03)
    assert (a["recent_started"], a["recent_succeeded"], a["recent_failed"]) == (12, 0, 15)
    assert a["rate_history"] == [0, 0.01, 0.025] and b["rate_history"] == []
    assert b["throttle"] is None and b["recent_started"] is None  # no series: no throttle, no counter yet
    assert (b["accepting"], b["full"], b["running"]) == (True, True, 2)
    assert (up["idle"], up["running"], up["held"], up["routes_throttled"], up["routes_full"]) == (4, 7, 1, 1, 1)
    assert up["unrouted"] == {"no_match": 4, "throttled": 2}
    assert up["trend"] == [1, 4, 7] and down["trend"] == []


def test_route_view_is_a_local_board_row():
    """A fleet route as the local board's RouteView (the routes screen draws it with the local
    board's cells): limits without a series are -1 (no limit), figures without one 0."""
    answers, ranges = two_ces()
    with FakePrometheus(answers, ranges) as fake:
        b, a = fleet(Prometheus(fake.url), NOW)["ces"][0]["routes"]
    va, vb = route_view(a), route_view(b)
    # the match order and the throttle window's re-evaluation (600 s after it began, JobRouter.cpp's
    # THROTTLE_UPDATE_INTERVAL, htcondor.md §1.5); no window series: no re-evaluation
    assert (va.index, va.window_start, va.next_reevaluation) == (2, 1e9 - 200, 1e9 + 400)
    assert (vb.index, vb.window_start, vb.next_reevaluation) == (1, 0.0, 0.0)
    assert (va.name, va.state, va.routed, va.idle, va.running, va.held) == ("Site_A", "throttled", 9, 4, 5, 1)
    assert (va.max_jobs, va.max_idle, va.throttle, va.failure_rate, va.failure_threshold) == (100, -1, 18.6, 0.025, 0.03)
    assert (va.recent_started, va.recent_succeeded, va.recent_failed, va.rate_history) == (12, 0, 15, (0, 0.01, 0.025))
    assert (vb.state, vb.max_jobs, vb.throttle, vb.recent_started, vb.failure_rate) == ("full", 2, None, 0, 0.0)


def test_without_match_order_routes_go_by_name():
    """An exporter without routedeck_route_match_order (older RouteDeck): routes by name, index 0."""
    answers, ranges = two_ces()
    del answers["routedeck_route_match_order"]
    with FakePrometheus(answers, ranges) as fake:
        routes = fleet(Prometheus(fake.url), NOW)["ces"][0]["routes"]
    assert [r["name"] for r in routes] == ["Site_A", "Site_B"]
    assert [route_view(r).index for r in routes] == [0, 0]


def test_scraped_but_no_current_series_is_stale():
    answers, ranges = two_ces()
    answers["up"][1] = (answers["up"][1][0], 1)  # ce2 scraped fine, but its exporter has no snapshot now
    with FakePrometheus(answers, ranges) as fake:
        ces = fleet(Prometheus(fake.url), NOW)["ces"]
    assert [c["state"] for c in ces] == ["up", "stale"]


def test_trend_is_a_range_query_ending_now():
    answers, ranges = two_ces()
    with FakePrometheus(answers, ranges) as fake:
        fleet(Prometheus(fake.url), NOW)
    assert 'sum by (instance) (routedeck_route_jobs{state="running"})' in fake.queries


@pytest.mark.parametrize("url", ["127.0.0.1:9090", "ftp://h/", "http://", "http://h:9090/?x=1"])
def test_bad_urls(url):
    with pytest.raises(ValueError):
        base_url(url)


def test_not_prometheus_and_too_large():
    with FakePrometheus() as fake:
        fake.raw = b"<html>hello</html>"
        with pytest.raises(PromError, match="not JSON"):
            Prometheus(fake.url).query("up")
        fake.raw = json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}).encode() + b" " * 200
        with pytest.raises(PromError, match="larger than 100 bytes"):
            Prometheus(fake.url, max_bytes=100).query("up")


def test_prometheus_error_is_said():
    with FakePrometheus() as fake:
        with pytest.raises(PromError, match="not_found"):
            Prometheus(fake.url)._get("/api/v1/nothing", {})


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cli_json_once(capsys):
    answers, ranges = two_ces()
    with FakePrometheus(answers, ranges) as fake:
        assert main(["fleet", "--prometheus", fake.url, "--once", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one line (jsonout.emit)
    doc = json.loads(out)
    assert [c["schedd"] for c in doc["ces"]] == ["ce1.example.org", "ce2.example.org"]
    assert {"instance", "schedd", "up", "routes"} <= set(doc["ces"][0])
    assert {"name", "idle", "running", "held", "accepting"} <= set(doc["ces"][0]["routes"][0])


def test_cli_text_once(capsys):
    answers, ranges = two_ces()
    with FakePrometheus(answers, ranges) as fake:
        assert main(["fleet", "--prometheus", fake.url, "--once"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("INSTANCE") and "down" in lines[2] and "no_match=4" in lines[1]


@pytest.mark.parametrize("url, said", [("nonsense", "not an http(s) URL"), (None, "cannot reach")])
def test_cli_usage_errors_exit_2(capsys, url, said):
    url = url or f"http://127.0.0.1:{unused_port()}"
    assert main(["fleet", "--prometheus", url, "--once", "--json", "--timeout", "5"]) == 2
    got = capsys.readouterr()
    assert got.out == "" and got.err.count("\n") == 1 and said in got.err and got.err.startswith("routedeck fleet: ")


def test_registered_in_modules():
    assert fleet_cli.__name__ in MODULES
