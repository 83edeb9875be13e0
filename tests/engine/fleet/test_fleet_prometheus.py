"""``routedeck fleet --prometheus URL --once --json`` over a real Prometheus (Debian's
``prometheus`` package) scraping two ``watch --metrics`` over two recordings
(tests/helpers/real_prometheus.py): both CEs, up, with per-route idle/running/held equal to
``replay --at end --json`` of each recording (issue 28 "Real parts and tests")."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.helpers.paths import REPO
from tests.helpers.real_prometheus import ROUTEDECK, query, wait_for


@pytest.mark.slow
@pytest.mark.xdist_group("prometheus")
def test_fleet_over_real_prometheus(prometheus_fleet):
    fl = prometheus_fleet  # the session's (tests/conftest.py): only queried here
    want = fl.want
    # each watcher has read its log whole once its route series are there and settled
    for name, routes in want.items():
        wait_for(fl.server, lambda name=name, routes=routes: len(query(
            fl.port, f'routedeck_route_jobs{{schedd="{name}",state="running"}}')) == len(routes),
            60, f"{name}'s route series")

    def board():
        out = subprocess.run([*ROUTEDECK, "fleet", "--prometheus", fl.url, "--once", "--json"], cwd=REPO,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.count("\n") == 1
        return json.loads(out.stdout)

    def matches():
        doc = board()
        ces = {c["schedd"]: c for c in doc["ces"]}
        if set(ces) != set(want):
            return None
        got = {name: {r["name"]: (r["idle"], r["running"], r["held"]) for r in c["routes"]}
               for name, c in ces.items()}
        exp = {name: {n: (r["idle"], r["running"], r["held"]) for n, r in routes.items()}
               for name, routes in want.items()}
        if got != exp:
            return None
        # `recent_*` is PromQL's increase() over the recent window: null until two scrapes of a
        # counter are in it (the route series above can be there after one: flaky when run alone)
        if not all(any(r["recent_started"] is not None for r in c["routes"]) for c in ces.values()):
            return None
        return doc, ces

    doc, ces = wait_for(fl.server, matches, 60, "the fleet board to equal replay --at end, recent figures in")
    for name, c in ces.items():
        assert c["instance"] == fl.targets[name] and c["up"] is True and c["state"] == "up"
        assert sum(r["routed"] for r in c["routes"]) > 0
        assert {"accepting", "throttled", "full"} <= set(c["routes"][0])
        # the local board's other columns (engine.fleet.board): real PromQL, real answers
        assert all(r["failure_rate_threshold"] is not None and isinstance(r["rate_history"], list)
                   for r in c["routes"])
        assert any(r["recent_started"] is not None for r in c["routes"])
