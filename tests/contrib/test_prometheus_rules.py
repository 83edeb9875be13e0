"""contrib/prometheus: the alert rules pass ``promtool check rules`` and their unit tests
(``promtool test rules``), and name only series the exporter defines (engine.metrics.collector
METRICS), among them issue 29's hold countdown and policy check."""

from __future__ import annotations

import re

from engine.metrics.collector import METRICS
from tests.helpers import promtool
from tests.helpers.paths import REPO

RULES = REPO / "contrib/prometheus/routedeck.rules.yml"
TESTS = REPO / "contrib/prometheus/tests"


def test_check_rules():
    res = promtool.run("check", "rules", str(RULES))
    assert res.returncode == 0 and "SUCCESS: 8 rules found" in res.stdout, res.stdout + res.stderr


def test_rule_unit_tests():
    files = sorted(p.name for p in TESTS.glob("*.yml"))
    assert files
    res = promtool.run("test", "rules", *files, cwd=str(TESTS))
    assert res.returncode == 0 and "SUCCESS" in res.stdout and "FAILED" not in res.stdout, res.stdout + res.stderr


def test_rules_name_only_defined_series():
    exprs = re.findall(r"^\s+expr: (\|\n(?:\s{10,}.*\n)+|.*)", RULES.read_text(), re.M)
    assert len(exprs) == 8
    used = set(re.findall(r"\brouted[a-z_]+", " ".join(exprs)))
    assert used and used <= set(METRICS), used - set(METRICS)
