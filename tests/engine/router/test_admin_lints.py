"""Lints an admin needs (issue 29) that the routing table alone cannot tell: a route knob defined
twice (the config reader keeps the last definition silently, htcondor.md §6 "config reader"), and
an HTCondor-CE whose routes run with HTCondor's default limits because the CE's defaults
(``01-ce-router-defaults.conf``: 10000 / 2000, tests/data/config/ce-head, copied from
shared/data/real/htcondor__htcondor-ce) are not loaded."""

from __future__ import annotations

from engine.lang.config import Config
from engine.router.loader import load_routing_table

from tests.helpers.real_configs import DATA

ROUTE = """JOB_ROUTER_ROUTE_NAMES = A B
JOB_ROUTER_ROUTE_A @=end
  REQUIREMENTS TARGET.Owner == "alice"
@end
JOB_ROUTER_ROUTE_B @=end
  REQUIREMENTS TARGET.Owner == "carol"
@end
"""


def _warnings(cfg: Config) -> list[str]:
    return [d.message for d in load_routing_table(cfg).diagnostics if d.level == "warning"]


def test_a_route_defined_twice_is_named_with_both_places(tmp_path):
    first = tmp_path / "10-routes.conf"
    first.write_text(ROUTE)
    later = tmp_path / "20-local.conf"
    later.write_text("JOB_ROUTER_ROUTE_A @=end\n  REQUIREMENTS TARGET.Owner == \"bob\"\n@end\n")
    cfg = Config.load([str(first), str(later)])
    twice = [m for m in _warnings(cfg) if "defined more than once" in m]
    assert len(twice) == 1
    assert "route A" in twice[0] and f"{first}:2" in twice[0] and "last definition only" in twice[0]
    table = load_routing_table(cfg)
    assert 'bob' in next(r for r in table.routes if r.name == "A").requirements  # the later one is in force


def test_a_knob_that_extends_itself_is_not_defined_twice(tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text(ROUTE + "JOB_ROUTER_ROUTE_NAMES = $(JOB_ROUTER_ROUTE_NAMES)\nX = 1\nX = 1\n")
    assert not [m for m in _warnings(Config.load([str(conf)])) if "defined more than once" in m]


def test_a_ce_without_its_router_defaults_runs_routes_at_htcondors_limits(tmp_path):
    """HTCondor-CE's own files (CONDORCE_* knobs) with a route of HTCondor's defaults: the CE's
    defaults file sets 10000 / 2000; without it the routes get 100 / 50 and the lint says so."""
    routes = tmp_path / "90-routes.conf"
    routes.write_text(ROUTE)
    ce = DATA / "ce-head"
    without = Config.load([str(ce / "01-ce-router.conf"), str(routes)])
    found = [m for m in _warnings(without) if "HTCondor's default limits" in m]
    assert len(found) == 1 and "routes A, B" in found[0] and "10000 / 2000" in found[0]
    with_defaults = Config.load([str(ce / "01-ce-router-defaults.conf"), str(ce / "01-ce-router.conf"), str(routes)])
    assert not [m for m in _warnings(with_defaults) if "HTCondor's default limits" in m]
    plain = Config.load([str(routes)])  # not a CE: HTCondor's defaults are the defaults
    assert not [m for m in _warnings(plain) if "HTCondor's default limits" in m]
