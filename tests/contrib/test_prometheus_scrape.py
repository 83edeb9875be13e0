"""A real Prometheus (Debian's ``prometheus`` package) on loopback scrapes two ``routedeck watch
--metrics`` processes over two recordings, and its per-route copies (routed, running, held)
equal ``routedeck replay --at end --json`` of each recording (issue 28 "Real parts and tests").
The setup (recordings, temporary config and storage, free loopback ports, every process stopped
by its own handle, bounded waits) is tests/helpers/real_prometheus.py.
"""

from __future__ import annotations

import pytest

from tests.helpers.real_prometheus import query, wait_for


@pytest.mark.slow
@pytest.mark.xdist_group("prometheus")
def test_prometheus_scrapes_two_watchers(prometheus_fleet):
    fleet = prometheus_fleet  # the session's (tests/conftest.py): only queried here
    prom_port, server = fleet.port, fleet.server
    # each target with its routes' series after its log was read whole
    want = fleet.want
    for name, routes in want.items():
        def routed(name=name):
            got = query(prom_port, f'sum by (route) (routedeck_route_jobs{{schedd="{name}"}})')
            return {r["metric"]["route"]: float(r["value"][1]) for r in got} or None
        got = wait_for(server, routed, 60, f"{name}'s route series")
        assert got == {n: float(r["routed"]) for n, r in routes.items()}, name
        assert sum(got.values()) > 0
        for state in ("running", "held"):
            res = query(prom_port, f'routedeck_route_jobs{{schedd="{name}",state="{state}"}}')
            assert {r["metric"]["route"]: float(r["value"][1]) for r in res} == {
                n: float(r[state]) for n, r in routes.items()}
        # (whether a route accepts is not compared: watch is live, its clock goes on past the
        # log's last commit and closes the open 600 s window, re-evaluating the throttle, while
        # replay's "end" is the moment of that commit)
        res = query(prom_port, f'routedeck_route_accepting{{schedd="{name}"}}')
        assert {r["metric"]["route"] for r in res} == set(routes)
