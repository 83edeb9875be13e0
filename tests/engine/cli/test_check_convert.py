"""Real configs end to end: HTCondor's own test pair, the old/new twins, ``check`` and ``convert``.

Sources: htcondor.md §5 (job_router_xform / job_router_basic: 16 jobs, expected routes and copies),
§6 "Job router: facts" and "Real-config quirks", §1.3/§1.4; the configs are the copies in
tests/data/config/ (see tests/data/PROVENANCE.md).
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from tests.helpers.real_configs import BUNDLES, DATA, HEAD, V45, expected_errors
from engine import classad as C
from engine.cli import check, convert
from engine.lang.config import Config
from engine.router.convert import convert_classic_table
from engine.router.routed_copy import build_routed_ad
from engine.router.loader import load_routing_table
from engine.router.lints import lint_table

NOW = 1_700_000_000


def table_of(*paths):
    return load_routing_table(Config.load(list(paths)))


def first_match(table, attrs):
    """First matching route in order, after the source constraint (umbrella: empty MY, job TARGET,
    htcondor.md §1.4). Capacity is ignored: nothing is routed yet."""
    ad = C.make_ad(attrs)
    constraint = table.knobs.source_job_constraint
    if constraint and not C.is_true(C.evaluate(constraint, my=C.make_ad({}), target=ad)):
        return None
    return next((r for r in table.routes if r.matches(ad, now=NOW)), None)


def route_all(table, jobs):
    out = {}
    for proc, attrs in jobs.items():
        r = first_match(table, attrs)
        out[proc] = (r.name, build_routed_ad(table, r, attrs, now=NOW, source_id=(1, proc))) if r else (None, None)
    return out


def sixteen_jobs():
    """``queue 8 route_me in (0, 1)``: procs 0-7 RouteMe=0, 8-15 RouteMe=1 (htcondor.md §5)."""
    return {p: {"ClusterId": "1", "ProcId": str(p), "JobUniverse": "5", "JobStatus": "1", "Owner": '"tester"',
                "Cmd": '"/bin/sleep"', "QDate": str(NOW), "RouteMe": "1" if p >= 8 else "0",
                "Requirements": "(TARGET.Arch == \"X86_64\")", "GlobalJobId": f'"submit#1.{p}#{NOW}"'}
            for p in range(16)}


def without(ad, *names):
    """The ad minus ``names``, keys lower-cased (attribute names are case-insensitive)."""
    low = {n.lower() for n in names}
    return {k.lower(): v for k, v in ad.items() if k.lower() not in low}


@pytest.mark.parametrize("config", ["job_router_xform.run.config", "job_router_basic.run.config"])
def test_sixteen_jobs_route_as_htcondors_own_test(config):
    table = table_of(DATA / "condor_tests" / config)
    routed = route_all(table, sixteen_jobs())
    assert {p: name for p, (name, _) in routed.items()} == {
        **{p: None for p in range(8)}, **{p: ("Analysis3" if p % 2 == 0 else "Production1") for p in range(8, 16)}}
    for p in range(8, 16):
        ad = routed[p][1]
        assert not any(k.lower() in ("routeme", "managed") for k in ad)
        assert ad["RoutedJob"] == "true" and ad["Requirements"] == "target.slotId & 1"
        assert ad["RoutedFromJobId"] == f'"1.{p}"' and ad["RouteName"] == f'"{routed[p][0]}"'
        if config == "job_router_xform.run.config":
            assert ad["CollHost"] == '"jira902"'


def test_basic_and_xform_twins_give_the_same_routed_ads():
    # the only difference is the jira902 regression line the xform test added (SET CollHost)
    old = route_all(table_of(DATA / "condor_tests" / "job_router_basic.run.config"), sixteen_jobs())
    new = route_all(table_of(DATA / "condor_tests" / "job_router_xform.run.config"), sixteen_jobs())
    for p in range(16):
        assert old[p][0] == new[p][0]
        if old[p][1]:
            assert without(old[p][1]) == without(new[p][1], "CollHost")


def osg_jobs():
    base = {"ClusterId": "1", "JobUniverse": "5", "JobStatus": "1", "Owner": '"osg"', "Cmd": '"/bin/true"'}
    kinds = ['"pbs"', '"slurm"', '"condor"', None]
    return {i: dict(base, ProcId=str(i), **({"osgTestBatchSystem": k} if k else {})) for i, k in enumerate(kinds)}


def test_osg_test_old_and_new_syntax_give_the_same_routed_ads():
    old = route_all(table_of(DATA / "osg-test" / "99-osgtest.condor-ce.conf.old-syntax"), osg_jobs())
    new = route_all(table_of(DATA / "osg-test" / "99-osgtest.condor-ce.conf.new-syntax"), osg_jobs())
    names = {i: (old[i][0], new[i][0]) for i in old}
    assert names == {0: ("Local_PBS", "PBS_Cluster"), 1: ("Local_Slurm", "Slurm_Cluster"),
                     2: ("Local_Condor", "Condor_Pool"), 3: ("Local_Condor", "Condor_Pool")}
    for i in old:
        # Real difference in the files: the old table SETs the job attribute default_maxMemory
        # (set_default_maxMemory); the new one only assigns the macro default_MaxMemory, which
        # HTCondor-CE's Memory post-route transform reads as $(default_maxMemory:2000).
        assert old[i][1]["default_maxMemory"] == "128" and "default_maxMemory" not in new[i][1]
        assert without(old[i][1], "RouteName", "default_maxMemory") == without(new[i][1], "RouteName")
    assert old[0][1]["GridResource"] == '"batch pbs"' and old[2][1]["JobUniverse"] == "5"


def manual_jobs():
    base = {"ClusterId": "1", "JobUniverse": "5", "JobStatus": "1", "Owner": '"u"', "QDate": str(NOW)}
    return {0: dict(base, ProcId="0", WantJobRouter="true"), 1: dict(base, ProcId="1", WantJobRouter="false"),
            2: dict(base, ProcId="2")}


def test_manual_9_0_old_and_new_examples_give_the_same_routed_ads():
    old_t = table_of(DATA / "manual-9.0" / "job-router-old-syntax-example.conf")
    new_t = table_of(DATA / "manual-9.0" / "job-router-new-syntax-example.conf")
    old, new = route_all(old_t, manual_jobs()), route_all(new_t, manual_jobs())
    assert [old[i][0] for i in range(3)] == ["Site_1", None, None]
    assert [new[i][0] for i in range(3)] == ["Site1", None, None]
    # Real problem in the 9.0 manual's new example (htcondor.md §6): an extra ')' in
    # SET PeriodicRemove, so HTCondor skips that SET; check names it, and the copy lacks it.
    assert any("SET PeriodicRemove: the expression does not parse" in str(d) for d in new_t.warnings)
    assert "PeriodicRemove" in old[0][1] and "PeriodicRemove" not in new[0][1]
    assert without(old[0][1], "RouteName", "PeriodicRemove") == without(new[0][1], "RouteName")
    assert old[0][1]["GridResource"] == '"gt2 site1.edu/jobmanager-condor"'


@pytest.mark.parametrize("old,new,jobs", [
    ("condor_tests/job_router_basic.run.config", "condor_tests/job_router_xform.run.config", sixteen_jobs),
    ("osg-test/99-osgtest.condor-ce.conf.old-syntax", "osg-test/99-osgtest.condor-ce.conf.new-syntax", osg_jobs),
    ("manual-9.0/job-router-old-syntax-example.conf", "manual-9.0/job-router-new-syntax-example.conf", manual_jobs),
])
def test_convert_output_loads_in_check_and_routes_like_the_original(old, new, jobs):
    cfg = Config.load([DATA / old])
    text = convert_classic_table(cfg)
    converted = load_routing_table(Config.from_text(text, "converted.conf"))
    assert not converted.errors and all(r.syntax == "transform" for r in converted.routes)
    original, twin = route_all(table_of(DATA / old), jobs()), route_all(table_of(DATA / new), jobs())
    mine = route_all(converted, jobs())
    for i in original:
        assert mine[i][0] == original[i][0]
        assert (mine[i][1] is None) == (twin[i][1] is None)
        if mine[i][1] is not None:
            assert without(mine[i][1]) == without(original[i][1])  # converted = what the ClassAd table did


def test_convert_renames_routes_whose_names_cannot_be_knob_suffixes():
    # lib_job_router_local names its route "Site 1": condor_transform_ads -convert:file writes
    # JOB_ROUTER_ROUTE_Site1 (cleanStringForUseAsAttr removes the space, classad_helpers.cpp;
    # htcondor.md §8) and keeps "NAME Site 1" in the body because it differs from the tag.
    cfg = Config.load([DATA / "condor_tests" / "lib_job_router_local.run.config"])
    text = convert_classic_table(cfg)
    assert "JOB_ROUTER_ROUTE_NAMES = Site1" in text and "JOB_ROUTER_ROUTE_Site1 @=jrt" in text
    assert '# from entries:0 (route "Site 1")' in text and "  NAME Site 1\n" in text


def run_check(*paths, quiet=False):
    out = io.StringIO()
    code = check.run(argparse.Namespace(configs=[str(p) for p in paths], allow_cmd=False, quiet=quiet), out)
    return code, out.getvalue()


@pytest.mark.parametrize("files,expected", BUNDLES, ids=lambda v: v[-1].name if isinstance(v, list) and v and
                         isinstance(v[0], Path) else None)
def test_every_real_config_passes_check_and_routes_a_sample_job(files, expected):
    # Source: every config set under tests/data/config (copies of shared/data/real, tests/data/PROVENANCE.md); expected warnings: RouteDeck lints (shadowed routes) and htcondor.md §6 Real-config quirks (the 9.0 manual example's extra ")"); expected errors: HTCondor-CE's SYSTEM_PERIODIC_HOLD, which does not parse (htcondor.md §8)
    code, text = run_check(*files)
    errors = [ln for ln in text.splitlines() if ": error: " in ln]
    assert [e for e in expected_errors(files) if not any(e in ln for ln in errors)] == [], text
    assert len(errors) == len(expected_errors(files)) and code == (1 if errors else 0), text
    warnings = [ln for ln in text.splitlines() if ": warning: " in ln]
    assert len(warnings) == len(expected), text
    for snippet in expected:
        assert any(snippet in w for w in warnings), (snippet, text)
    table = table_of(*files)
    assert table.routing_enabled and table.routes
    sample = {"ClusterId": "5", "ProcId": "0", "JobUniverse": "5", "JobStatus": "1", "Owner": '"pilot"',
              "Cmd": '"/bin/pilot"', "Requirements": "true", "RequestCpus": "1", "RequestMemory": "1024",
              "RouteMe": "1", "WantJobRouter": "true", "osgTestBatchSystem": '"pbs"', "Environment": '"A=1"'}
    r = first_match(table, sample)
    assert r is not None
    ad = build_routed_ad(table, r, sample, now=NOW, source_id=(5, 0))
    assert ad["RouteName"] == f'"{r.name}"' and ad["RoutedBy"] == f'"{table.knobs.name}"'


def test_full_htcondor_ce_defaults_build_the_ce_routed_copy():
    # HTCondor-CE's own transforms (ce-head/01-ce-router-defaults.conf) on a plain pilot job.
    table = table_of(*HEAD, DATA / "ce-head" / "02-ce-condor-defaults.conf")
    src = {"ClusterId": "5", "ProcId": "0", "JobUniverse": "5", "JobStatus": "1", "Owner": '"pilot"',
           "Requirements": "true", "RequestCpus": "1", "environment": '"A=1"', "AuthTokenId": '"t"'}
    r = first_match(table, src)
    assert r.name == "Condor_Pool" and table.knobs.name == "htcondor-ce"
    ad = build_routed_ad(table, r, src, now=NOW, source_id=(5, 0))
    assert ad["RoutedJob"] == "true" and ad["JobUniverse"] == "5"
    assert ad["Requirements"] == "(RequestGpus ?: 0) >= (TARGET.Gpus ?: 0)"  # Base: requirements were "true"
    assert ad["RequestMemory"] == "2000" and ad["JobMemory"] == "RequestMemory"  # Memory: maxMemory ?: 2000
    assert ad["BatchRuntime"] == str(60 * 4320)  # BatchRuntime: ROUTED_JOB_MAX_TIME = 4320 (01-ce-router.conf)
    assert (ad["CondorCE"], ad["CERequirements"]) == ("1", '"CondorCE"')
    assert ad["orig_environment"] == '"A=1"' and ad["orig_AuthTokenId"] == '"t"' and "AuthTokenId" not in ad
    assert ad["RequestCpus"] == "1" and ad["remote_SMPGranularity"] == "1"


def test_htcondor_ce_4_5_classad_defaults_route_and_merge():
    # v4.5.0: MERGE_JOB_ROUTER_DEFAULT_ADS=True and JOB_ROUTER_DEFAULTS = $(JOB_ROUTER_DEFAULTS_GENERATED)
    table = table_of(*V45, DATA / "ce-v4.5.0" / "02-ce-slurm-defaults.conf")
    src = {"ClusterId": "5", "ProcId": "0", "JobUniverse": "5", "JobStatus": "1", "Owner": '"pilot"',
           "Requirements": "true", "environment": '"A=1"'}
    r = first_match(table, src)
    assert (r.name, r.max_jobs, r.max_idle_jobs, r.grid_resource) == ("Local_Slurm", 10000, 2000, "batch slurm")
    ad = build_routed_ad(table, r, src, now=NOW, source_id=(5, 0))
    assert ad["OriginalMemory"] == "2000" and ad["remote_queue"] == '""' and ad["GridResource"] == '"batch slurm"'
    assert "CONDORCE_COLLECTOR_HOST=" in ad["environment"] and ad["orig_environment"] == '"A=1"'


def test_ce_fragments_alone_and_missing_pilot_env_are_real_errors():
    # htcondor.md §1.3: without JOB_ROUTER_SOURCE_JOB_CONSTRAINT (set in 01-ce-router-defaults.conf)
    # a route with no REQUIREMENTS is an error; §1.2: a JOB_ROUTER_DEFAULTS parse error disables routing
    # (the 4.5.0 defaults need the $(USE_CE_HOME_DIR)... knobs of 01-pilot-env-defaults.conf).
    code, text = run_check(DATA / "ce-head" / "02-ce-pbs-defaults.conf")
    assert code == 1 and f"{DATA / 'ce-head' / '02-ce-pbs-defaults.conf'}:12: error: route PBS_Cluster" in text
    table = table_of(*V45[:2], DATA / "ce-v4.5.0" / "02-ce-condor-defaults.conf")
    assert not table.routing_enabled and any("JOB_ROUTER_DEFAULTS does not parse" in str(e) for e in table.errors)


def test_convert_command_writes_text_that_check_accepts(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    dest = tmp_path / "converted.conf"
    code = convert.run(argparse.Namespace(configs=[str(DATA / "manual-9.0" / "job-router-old-syntax-example.conf")],
                                          output=str(dest), allow_cmd=False), out, err)
    assert code == 0 and out.getvalue() == "" and "shadowed" in err.getvalue()
    code, text = run_check(dest)
    assert code == 0 and "3 route(s) in match order" in text and "[transform, JOB_ROUTER_ROUTE_Site_1]" in text


def test_osg_test_layered_on_htcondor_ce_uses_its_default_memory_macro():
    # osg-test writes its config for an HTCondor-CE: alone, the DefaultMemory transform's macro is
    # unused (an info); on top of the CE defaults, the CE's Memory post-route transform reads
    # $(default_maxMemory:2000) (macro names are case-insensitive), so RequestMemory becomes 128.
    alone = table_of(DATA / "osg-test" / "99-osgtest.condor-ce.conf.new-syntax")
    assert any("assigns the macro default_MaxMemory" in str(d) for d in alone.diagnostics if d.level == "info")
    layered = table_of(*HEAD, DATA / "osg-test" / "99-osgtest.condor-ce.conf.new-syntax")
    assert not layered.errors and not any("default_MaxMemory" in str(d) for d in layered.diagnostics)
    assert [t.name for t in layered.pre_transforms] == ["Base", "Cleanup", "OrigRequests", "DefaultMemory"]
    src = {"ClusterId": "5", "ProcId": "0", "JobUniverse": "5", "JobStatus": "1", "Owner": '"osg"',
           "Requirements": "true", "osgTestBatchSystem": '"condor"'}
    r = first_match(layered, src)
    ad = build_routed_ad(layered, r, src, now=NOW, source_id=(5, 0))
    assert (r.name, ad["RequestMemory"], ad["JobUniverse"]) == ("Condor_Pool", "128", "5")


def test_check_warns_that_route_requirements_must_name_job_attributes_unqualified(tmp_path):
    # htcondor.md §1.4: the candidate query evaluates route REQUIREMENTS with an empty ad as MY and
    # the job as TARGET (so MY.x is undefined), ChooseRoute with the job as MY and no TARGET (so
    # TARGET.x is undefined): only unqualified names reach the job in both.

    cfg = Config.from_text(
        "JOB_ROUTER_ROUTE_NAMES = A B C\n"
        "JOB_ROUTER_ROUTE_A @=jrt\n  UNIVERSE vanilla\n  REQUIREMENTS MY.WantRoute =?= true\n@jrt\n"
        "JOB_ROUTER_ROUTE_B @=jrt\n  UNIVERSE vanilla\n  REQUIREMENTS TARGET.WantRoute =?= true\n@jrt\n"
        "JOB_ROUTER_ROUTE_C @=jrt\n  UNIVERSE vanilla\n  REQUIREMENTS WantRoute =?= true\n@jrt\n",
        name="routes.conf",
    )
    diags = [d for d in lint_table(load_routing_table(cfg)) if "unqualified" in d.message]
    assert sorted((d.route, "MY." in d.message) for d in diags) == [("A", True), ("B", False)]
