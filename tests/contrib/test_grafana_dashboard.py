"""contrib/grafana/routedeck.json: valid JSON, a ``schedd`` variable every query filters on, only
series the exporter defines (engine.metrics.collector METRICS), and every PromQL expression
valid (checked by ``promtool check rules`` as recording rules, ``$schedd`` filled in)."""

from __future__ import annotations

import json
import re

import pytest

from engine.metrics.collector import METRICS
from tests.helpers import promtool
from tests.helpers.paths import REPO

DASHBOARD = REPO / "contrib/grafana/routedeck.json"


def exprs() -> list[str]:
    dash = json.loads(DASHBOARD.read_text())
    return [t["expr"] for p in dash["panels"] for t in p.get("targets", ())]


def test_valid_json_with_a_schedd_variable():
    dash = json.loads(DASHBOARD.read_text())
    names = {v["name"]: v for v in dash["templating"]["list"]}
    assert "schedd" in names and "label_values(routedeck_route_jobs, schedd)" in names["schedd"]["definition"]
    titles = {p["title"] for p in dash["panels"]}
    assert {"Routes: copies, limits and headroom", "Throttled routes", "Idle jobs not routed, by why they wait",
            "Next crondor runs", "Idle jobs the periodic policy holds soon", "Periodic policies that never fire"} <= titles
    assert len({p["id"] for p in dash["panels"]}) == len(dash["panels"])


def test_every_metric_name_is_the_exporters():
    used = set()
    for e in exprs():
        assert 'schedd=~"$schedd"' in e, e
        used |= set(re.findall(r"\broutedeck_[a-z_]+", e))
    assert used and used <= set(METRICS), used - set(METRICS)
    # the headroom column needs the limits and the copies
    assert {"routedeck_route_max_jobs", "routedeck_route_max_idle_jobs", "routedeck_route_jobs",
            "routedeck_route_throttled", "routedeck_idle_unrouted_jobs",
            "routedeck_cron_next_run_timestamp_seconds", "routedeck_jobs_held_soon", "routedeck_policy_parses"} <= used


def test_every_expression_is_valid_promql(tmp_path):
    promtool.promtool()
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:expr{i}", "expr": e.replace("$schedd", "ce1")} for i, e in enumerate(exprs())]}]}
    path = tmp_path / "dashboard.rules.json"  # YAML is a superset of JSON
    path.write_text(json.dumps(rules))
    res = promtool.run("check", "rules", str(path))
    if res.returncode != 0:
        pytest.fail(res.stdout + res.stderr)
    assert f"SUCCESS: {len(exprs())} rules found" in res.stdout
