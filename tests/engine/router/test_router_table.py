"""Routing table from transform-syntax config (engine/router/table.py, loader.py, lints.py).

Sources: htcondor.md §1.3 (knobs, route macros, NAME vs suffix, missing REQUIREMENTS, pre/post
transforms), §1.4 (matching: job is MY, no TARGET; EditJobInPlace & co: not-true is false),
HTCondor's ``JobRouter::config`` / ``SetRoutingTable`` log messages quoted there.
"""

from __future__ import annotations

from engine import classad as C
from engine.lang.config import Config
from engine.router.loader import load_routing_table
from engine.router.table import Diagnostic


def load(text: str, **kw):
    return load_routing_table(Config.from_text(text, "routes.conf"), **kw)


def msgs(table, level=None):
    return [str(d) for d in table.diagnostics if level is None or d.level == level]


def job(**attrs):
    """A job ad; str values are old-syntax texts (quote string literals), others Python values."""
    return C.make_ad({k: v if isinstance(v, str) else C.format_value(v) for k, v in attrs.items()})


BASE = """
JOB_ROUTER_ROUTE_NAMES = Fast, Slow
JOB_ROUTER_ROUTE_Fast @=rt
  REQUIREMENTS Cpus > 1
  MaxJobs = 7
  MaxIdleJobs = 3
  FailureRateThreshold = 0.5
  GridResource = "batch slurm"
  JobFailureTest = ExitCode =!= 0
@rt
JOB_ROUTER_ROUTE_Slow @=rt
  UNIVERSE vanilla
  REQUIREMENTS true
@rt
"""


def test_route_names_order_and_route_macros():
    # htcondor.md §1.3: order of JOB_ROUTER_ROUTE_NAMES (comma or space separated), route macros
    # MaxJobs/MaxIdleJobs/FailureRateThreshold/GridResource (read unquoted) and their defaults.
    t = load(BASE)
    assert [r.name for r in t.routes] == ["Fast", "Slow"]
    fast, slow = t.routes
    assert (fast.max_jobs, fast.max_idle_jobs, fast.failure_rate_threshold) == (7, 3, 0.5)
    assert fast.target_universe == 9 and fast.grid_resource == "batch slurm"
    assert (slow.max_jobs, slow.max_idle_jobs, slow.failure_rate_threshold) == (100, 50, 0.03)
    assert slow.target_universe == 5 and slow.grid_resource is None
    assert fast.source_label == "JOB_ROUTER_ROUTE_Fast" and fast.location.line == 3
    assert t.route("fAST") is fast  # names are case-insensitive (CaseIgnLTStr)
    assert not msgs(t, "error")


def test_default_limit_knobs_and_router_knobs():
    # htcondor.md §1.3 table: JOB_ROUTER_DEFAULT_MAX_(IDLE_)JOBS_PER_ROUTE replace 100/50; §6 defaults.
    t = load(BASE + "JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE = 10000\nJOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE = 2000\n")
    assert (t.route("Slow").max_jobs, t.route("Slow").max_idle_jobs) == (10000, 2000)
    assert (t.route("Fast").max_jobs, t.route("Fast").max_idle_jobs) == (7, 3)
    k = load(BASE).knobs
    assert (k.name, k.max_jobs, k.round_robin, k.release_on_hold, k.polling_period) == ("jobrouter", -1, False, True, 10)
    assert (k.entries_refresh, k.max_job_mirror_update_lag, k.periodic_expr_interval) == (0, 600, 60)


def test_route_text_is_kept_unexpanded_until_a_job_is_transformed():
    # htcondor.md §1.3: param_unexpanded; $(COLLECTOR_NAME) defined AFTER the route still works.
    t = load("JOB_ROUTER_ROUTE_NAMES = R\nJOB_ROUTER_ROUTE_R @=rt\n  REQUIREMENTS true\n  SET CollHost \"$(COLLECTOR_NAME)\"\n@rt\n"
             "COLLECTOR_NAME = jira902\n")
    assert "$(COLLECTOR_NAME)" in t.routes[0].transform.text
    ad = {"JobUniverse": "5"}
    t.routes[0].transform.apply(ad, config=t.config)
    assert ad["CollHost"] == '"jira902"'


def test_matching_job_is_my_and_target_is_undefined():
    # htcondor.md §1.4: REQUIREMENTS evaluated with the job as MY and no TARGET; undefined/error don't match.
    t = load("JOB_ROUTER_ROUTE_NAMES = A B\nJOB_ROUTER_ROUTE_A @=rt\n  REQUIREMENTS TARGET.Cpus > 1\n@rt\n"
             "JOB_ROUTER_ROUTE_B @=rt\n  REQUIREMENTS MY.Cpus > 1\n@rt\n")
    a, b = t.routes
    assert not a.matches(job(Cpus=4)) and b.matches(job(Cpus=4)) and not b.matches(job(Memory=1))
    assert any("REQUIREMENTS uses TARGET." in m for m in msgs(t, "warning"))


def test_job_expressions_not_true_counts_as_false():
    # htcondor.md §1.4 last paragraph: any result that is not true (undefined included) is false.
    fast = load(BASE).route("Fast")
    assert fast.eval_job_expr("JobFailureTest", job(ExitCode=1))
    assert not fast.eval_job_expr("JobFailureTest", job(ExitCode=0))
    assert not fast.eval_job_expr("EditJobInPlace", job(ExitCode=1))  # not set at all
    assert fast.job_failure_test == "ExitCode =!= 0"


def test_listed_undefined_unlisted_empty_and_unparsable_are_reported_with_lines():
    # htcondor.md §1.3: "route '<n>' from JOB_ROUTER_ROUTE_NAMES not found", empty knob ignored with a
    # log line, routes not listed are disabled; a bad statement names its line in the file.
    text = ("JOB_ROUTER_ROUTE_NAMES = A B Missing\n"
            "JOB_ROUTER_ROUTE_A @=rt\n  # comment lines are dropped\n  REQUIREMENTS x == 1\n\n  FROB z\n@rt\n"
            "JOB_ROUTER_ROUTE_B =\n"
            "JOB_ROUTER_ROUTE_C @=rt\n  REQUIREMENTS true\n@rt\n")
    t = load(text)
    assert t.routes == []
    assert "routes.conf:6: error: route A (JOB_ROUTER_ROUTE_A) does not parse: FROB is not a valid transform " \
           "keyword; ignored" in msgs(t)
    assert "routes.conf:8: warning: JOB_ROUTER_ROUTE_B definition is empty, ignoring." in msgs(t)
    assert any(m.startswith("routes.conf:1: warning: route 'Missing' from JOB_ROUTER_ROUTE_NAMES not found") for m in msgs(t))
    assert any(m.startswith("routes.conf:9: warning: JOB_ROUTER_ROUTE_C is defined but not in JOB_ROUTER_ROUTE_NAMES")
               for m in msgs(t))
    assert {d.name: d.reason.split(":")[0] for d in t.disabled} == {
        "A": "does not parse", "B": "definition is empty", "C": "not in JOB_ROUTER_ROUTE_NAMES",
        "Missing": "listed in JOB_ROUTER_ROUTE_NAMES but JOB_ROUTER_ROUTE_Missing is not defined"}


def test_missing_requirements_is_an_error_unless_source_constraint_is_set():
    # htcondor.md §1.3: "Missing Requirements in job route" unless JOB_ROUTER_SOURCE_JOB_CONSTRAINT is defined.
    text = "JOB_ROUTER_ROUTE_NAMES = R\nJOB_ROUTER_ROUTE_R @=rt\n  GridResource = \"batch pbs\"\n@rt\n"
    bad = load(text)
    assert bad.routes == [] and any("Missing Requirements" in m for m in msgs(bad, "error"))
    good = load(text + "JOB_ROUTER_SOURCE_JOB_CONSTRAINT = WantJobRouter\n")
    assert [r.name for r in good.routes] == ["R"] and not msgs(good, "error")
    assert good.routes[0].matches(job(Anything=1))  # no requirements matches


def test_name_statement_differing_from_suffix_is_ignored_silently():
    # htcondor.md §1.3, §8: the route name is the knob suffix (JobRouter.cpp presets it before
    # MacroStreamXFormSource::open, which does not override it). JobRoute::ParseNext's "The Name
    # specified in JOB_ROUTER_ROUTE_<x> was ..." test reads m_name before it is ever set, so
    # HTCondor prints nothing; condor_transform_ads -convert:file writes such NAME lines itself.
    t = load("JOB_ROUTER_ROUTE_NAMES = Real\nJOB_ROUTER_ROUTE_Real @=rt\n  NAME Other\n  REQUIREMENTS true\n@rt\n")
    assert [r.name for r in t.routes] == ["Real"]
    assert not msgs(t, "warning") and not msgs(t, "error")


def test_missing_or_broken_pre_post_transform_disables_routing():
    # htcondor.md §1.3: a listed pre/post transform that is missing or fails to parse disables routing.
    t = load(BASE + "JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES = Nope\n")
    assert not t.routing_enabled
    assert any("JOB_ROUTER_TRANSFORM_Nope not found" in m for m in msgs(t, "error"))
    t2 = load(BASE + "JOB_ROUTER_POST_ROUTE_TRANSFORM_NAMES = P\nJOB_ROUTER_TRANSFORM_P @=x\n  COPY onlyone\n@x\n")
    assert not t2.routing_enabled
    assert any(m.startswith("routes.conf:17: error: JOB_ROUTER_TRANSFORM_P load error") for m in msgs(t2))
    ok = load(BASE + "JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES = P\nJOB_ROUTER_TRANSFORM_P @=x\n  SET A 1\n@x\n")
    assert ok.routing_enabled and [x.name for x in ok.pre_transforms] == ["P"]


def test_route_names_not_defined_means_no_routing():
    # htcondor.md §1.1 (25.x): "JOB_ROUTER_ROUTE_NAMES is not defined, so job routing will not take place."
    t = load("JOB_ROUTER_ROUTE_A @=rt\n  REQUIREMENTS true\n@rt\n")
    assert t.routes == [] and not t.routing_enabled
    assert any("JOB_ROUTER_ROUTE_NAMES is not defined, so job routing will not take place." in m for m in msgs(t))
    assert [d.name for d in t.disabled] == ["A"]


def test_limit_and_shadow_lints():
    # product.md §6 route editor lints; htcondor.md §1.4 first match wins / §1.5 MaxIdleJobs, MaxJobs.
    t = load("JOB_ROUTER_ROUTE_NAMES = A B C\n"
             "JOB_ROUTER_ROUTE_A @=rt\n  REQUIREMENTS Cpus > 1\n  MaxJobs = 5\n  MaxIdleJobs = 9\n@rt\n"
             "JOB_ROUTER_ROUTE_B @=rt\n  REQUIREMENTS Cpus>1\n@rt\n"
             "JOB_ROUTER_ROUTE_C @=rt\n  REQUIREMENTS Cpus > 2\n  MaxJobs = 0\n@rt\n")
    w = msgs(t, "warning")
    assert any("MaxIdleJobs (9) > MaxJobs (5)" in m for m in w)
    assert any("route B is shadowed: A" in m for m in w)
    assert not any("route C is shadowed" in m for m in w)
    assert any("MaxJobs = 0, so it never accepts a job" in m for m in w)
    rr = load("JOB_ROUTER_ROUND_ROBIN_SELECTION = true\n" + BASE.replace("REQUIREMENTS Cpus > 1", "REQUIREMENTS true"))
    assert any("shadowed" in m for m in msgs(rr, "info")) and not any("shadowed" in m for m in msgs(rr, "warning"))


def test_bare_identifier_comparison_quirk():
    # htcondor.md §6 "Real-config quirks": UNL 99-local.conf compares with an unquoted name (undefined).
    t = load("JOB_ROUTER_ROUTE_NAMES = Gpu\nJOB_ROUTER_ROUTE_Gpu @=rt\n"
             "  REQUIREMENTS GlideinEntryName =?= HCC_US_Omaha_crane_gpu\n@rt\n")
    assert any("compares with HCC_US_Omaha_crane_gpu" in m for m in msgs(t, "warning"))
    # the quirk itself: undefined =?= undefined is true, so the GPU route catches jobs with no
    # GlideinEntryName, and misses the job that really names that entry
    assert t.routes[0].matches(job(Owner='"u"'))
    assert not t.routes[0].matches(job(GlideinEntryName='"HCC_US_Omaha_crane_gpu"'))


def test_invalid_set_expression_is_a_warning_with_its_line():
    # htcondor.md §1.3: an invalid SET expression is only logged and the transform continues.
    t = load("JOB_ROUTER_ROUTE_NAMES = R\nJOB_ROUTER_ROUTE_R @=rt\n  REQUIREMENTS true\n  SET A (1 + 2))\n  SET B 2\n@rt\n")
    assert "routes.conf:4: warning: JOB_ROUTER_ROUTE_R: SET A: the expression does not parse; HTCondor logs an " \
           "error and skips this statement when the transform runs" in msgs(t)
    ad = {"X": "1"}
    t.routes[0].transform.apply(ad, config=t.config)
    assert "A" not in ad and ad["B"] == "2"


def test_bad_table_keeps_previous_one_in_force():
    # issue 4: "a bad table keeps the last good one in force"
    # Source: product.md (a bad table keeps the last good one in force); RouteDeck behaviour, HTCondor would use the new table
    good = load(BASE)
    bad = load_routing_table(Config.from_text(BASE + "JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES = Nope\n", "routes.conf"),
                             previous=good)
    assert bad.kept_previous and bad.routing_enabled and [r.name for r in bad.routes] == ["Fast", "Slow"]
    assert any("JOB_ROUTER_TRANSFORM_Nope not found" in m for m in msgs(bad, "error"))
    same = load_routing_table(Config.from_text(BASE, "routes.conf"), previous=good)
    assert same.version == good.version and same.fingerprint == good.fingerprint
    changed = load_routing_table(Config.from_text(BASE.replace("MaxJobs = 7", "MaxJobs = 8"), "r.conf"), previous=good)
    assert changed.version == good.version + 1 and not changed.kept_previous


def test_diagnostic_text_format():
    # Source: RouteDeck output format (file:line: level: message); no HTCondor behaviour
    assert str(Diagnostic("error", "boom", "a.conf", 3)) == "a.conf:3: error: boom"
    assert str(Diagnostic("info", "hi")) == "info: hi"


def test_empty_knob_of_a_classad_entry_leaves_the_entry_and_adds_no_disabled_route():
    # HTCondor JobRouter::config (src/condor_job_router/JobRouter.cpp): JOB_ROUTER_ENTRIES are parsed
    # before the JOB_ROUTER_ROUTE_<name> knobs, and an empty knob is skipped ("definition is empty,
    # ignoring.") — so blanking the knob keeps the ClassAd route of that name, and there is no second,
    # disabled route with that name (htcondor.md §1.2 "Parse order", §1.3).
    text = ("JOB_ROUTER_ROUTE_NAMES = A B\n"
            'JOB_ROUTER_ENTRIES = [ Name = "A"; GridResource = "batch slurm"; Requirements = true; ]\n'
            "JOB_ROUTER_ROUTE_A =\n"
            "JOB_ROUTER_ROUTE_B =\n")
    t = load(text)
    assert [(r.name, r.source_label) for r in t.routes] == [("A", "entries:0")]
    assert [d.name for d in t.disabled] == ["B"]  # B has no route at all: still reported
    assert "routes.conf:3: info: JOB_ROUTER_ROUTE_A definition is empty, ignoring: route A comes from entries:0" \
        in msgs(t)
    assert [m for m in msgs(t, "warning") if "ROUTE_A" in m] == []
