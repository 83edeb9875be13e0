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


# -- a route no job reaches: an earlier route's REQUIREMENTS clauses are some of its own ----------


def _shadowed(cfg: Config) -> dict[str, str]:
    return {d.route: d.message for d in load_routing_table(cfg).diagnostics if "is shadowed" in d.message}


def test_a_route_whose_clauses_include_an_earlier_routes_is_shadowed(tmp_path):
    """Issue 29's admin lint, proved on the texts: an earlier route ``A`` matches every job a
    later ``A && B`` matches (ClassAd ``&&`` is true only when both sides are), so with first
    match the later route gets jobs only while the earlier one refuses them (htcondor.md §1.4).
    The real condor_tests table (Analysis3: ``RouteMe && !(ProcId & 1)``) with a route added
    after it that requires more, and one whose clauses are Analysis3's in another order."""
    extra = tmp_path / "99-more.conf"
    extra.write_text("JOB_ROUTER_ROUTE_NAMES = $(JOB_ROUTER_ROUTE_NAMES) BigMem Again Either\n"
                     "JOB_ROUTER_ROUTE_BigMem @=rt\n  GridResource = \"batch slurm\"\n"
                     "  REQUIREMENTS (RequestMemory > 4096) && RouteMe && !(ProcId & 1)\n@rt\n"
                     "JOB_ROUTER_ROUTE_Again @=rt\n  GridResource = \"batch slurm\"\n"
                     "  REQUIREMENTS !(ProcId & 1) && (RouteMe)\n@rt\n"
                     "JOB_ROUTER_ROUTE_Either @=rt\n  GridResource = \"batch slurm\"\n"
                     "  REQUIREMENTS RouteMe || !(ProcId & 1) && RequestMemory > 4096\n@rt\n")
    cfg = Config.load([str(DATA / "condor_tests" / "job_router_xform.run.config"), str(extra)])
    found = _shadowed(cfg)
    assert "Analysis3, earlier in the route order, requires only some of its clauses" in found["BigMem"]
    assert "Analysis3, earlier in the route order, has the same REQUIREMENTS clauses" in found["Again"]
    assert "Either" not in found  # a disjunction at the top: no clause of it is required
    assert set(found) == {"Production2", "Analysis4", "BigMem", "Again"}  # the table's own two as before


def test_the_clause_lint_is_info_under_round_robin():
    cfg = Config.from_text("JOB_ROUTER_ROUND_ROBIN_SELECTION = true\nJOB_ROUTER_ROUTE_NAMES = A B\n"
                           "JOB_ROUTER_ROUTE_A @=rt\n  REQUIREMENTS x == 1\n@rt\n"
                           "JOB_ROUTER_ROUTE_B @=rt\n  REQUIREMENTS x == 1 && y == 2\n@rt\n", env={})
    shadow = [d for d in load_routing_table(cfg).diagnostics if "is shadowed" in d.message]
    assert [(d.route, d.level) for d in shadow] == [("B", "info")]


def test_clauses_are_split_only_at_a_top_level_conjunction():
    """``a || b && c`` is ``a || (b && c)``: splitting it at ``&&`` (as the why-not's clause split
    did) would say that ``c`` is required."""
    from engine.router.whynot import split_and  # noqa: PLC0415 - this test only

    assert split_and("a || b && c") == ["a || b && c"]
    assert split_and("x ? y && z : w") == ["x ? y && z : w"]
    assert split_and("x =?= 1 && (y || z)") == ["x =?= 1", "(y || z)"]
