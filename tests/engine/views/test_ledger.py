"""The routing ledger (engine.views.ledger) with HTCondor-CE's real shipped configuration.

Sources: htcondor.md §1.4 (GetCandidateJobs umbrella, ChooseRoute: first accepting route whose
REQUIREMENTS match), §8 "Route acceptance" (JobRoute::AcceptingMoreJobs: throttle, MaxIdleJobs,
MaxJobs), §8 on the CE's SYSTEM_PERIODIC_HOLD (``$(JobStatus != 3)`` is not a macro, the policy
does not parse and user_job_policy.cpp never fires it); tests/data/config/ce-head (HTCondor-CE HEAD).
"""

import math

from engine.lang.config import Config
from engine.router.loader import load_routing_table
from engine.router.throttle import RouteStats
from engine.views.ledger import ledger
from tests.helpers.real_configs import DATA, HEAD

ECS = 1_000_000
CE = HEAD + [DATA / "ce-head" / "02-ce-condor-defaults.conf"]


def _job(**kw):
    ad = {"ClusterId": "1", "ProcId": "0", "JobStatus": "1", "JobUniverse": "5", "EnteredCurrentStatus": str(ECS),
          "QDate": str(ECS), "Owner": '"alice"'}
    ad.update({k: str(v) for k, v in kw.items()})
    return ad


def _load(tmp_path, corrected: bool, extra: str = ""):
    paths = [str(p) for p in CE]
    if corrected or extra:
        text = (DATA / "ce-head" / "01-ce-router-defaults.conf").read_text()
        if corrected:
            assert "$(JobStatus != 3)" in text
            text = text.replace("$(JobStatus != 3)", "(JobStatus != 3)")
        fixed = tmp_path / "01-ce-router-defaults.conf"
        fixed.write_text(text)
        paths[0] = str(fixed)
    if extra:
        more = tmp_path / "99-extra.conf"
        more.write_text(extra)
        paths.append(str(more))
    cfg = Config.load(paths)
    return cfg, load_routing_table(cfg)


def test_shipped_hold_policy_never_fires_and_corrected_fires_at_1800s(tmp_path):
    """A grid-universe (9) job: not a candidate (source constraint: universe 5 or 1), so the
    router never takes it. With the CE's policy as shipped: no hold (it does not parse). With
    ``(JobStatus != 3)``: HOLD_CLAUSE_2 (idle for over 1800 s) holds it at the first 60-s tick
    after ``time() - EnteredCurrentStatus > 1800`` turns true (time() is an integer: ECS+1801)."""
    ads = {"1.0": _job(JobUniverse=9, RoutedBy='"x"')}
    cfg, table = _load(tmp_path, corrected=False)
    [e] = ledger(table, ads, ECS + 100.0, get=cfg.get)
    assert e.verdict == "not_candidate" and "JobUniverse" in e.detail
    assert e.hold is None
    cfg, table = _load(tmp_path, corrected=True)
    [e] = ledger(table, ads, ECS + 100.0, get=cfg.get)
    assert e.hold is not None
    assert e.hold["at"] == math.ceil((ECS + 1801) / 60) * 60
    assert e.hold["in"] == e.hold["at"] - (ECS + 100)
    assert e.hold["policy"] == "SYSTEM_PERIODIC_HOLD"
    assert "no matching routes" in e.hold["reason"]


def test_matched_job_gets_no_hold(tmp_path):
    """ChooseRoute picks Condor_Pool (no REQUIREMENTS) for a vanilla job: the router takes it at
    its next poll, so no hold prediction even with the corrected policy."""
    cfg, table = _load(tmp_path, corrected=True)
    [e] = ledger(table, {"1.0": _job()}, ECS + 100.0, get=cfg.get)
    assert e.verdict == "matched" and e.detail == "route Condor_Pool"
    assert e.routes[0]["route"] == "Condor_Pool" and e.routes[0]["verdict"] == "matched"
    assert e.hold is None


def _copy(n, status=1):
    return {"ClusterId": str(100 + n), "ProcId": "0", "JobStatus": str(status), "RouteName": '"Condor_Pool"',
            "RoutedFromJobId": f'"{900 + n}.0"', "JobUniverse": "5"}


def test_route_full_at_max_idle_and_max_jobs(tmp_path):
    """AcceptingMoreJobs: MaxIdleJobs reached, then MaxJobs reached; set small in an extra file
    on top of the CE's defaults (JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE / ..._MAX_JOBS_...)."""
    for extra, word in (("JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE = 2\n", "idle limit"),
                        ("JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE = 2\n", "full")):
        cfg, table = _load(tmp_path, corrected=True, extra=extra)
        limits = (table.routes[0].max_jobs, table.routes[0].max_idle_jobs)
        assert 2 in limits, limits
        ads = {"1.0": _job(), "101.0": _copy(1), "102.0": _copy(2)}
        [e] = ledger(table, ads, ECS + 100.0, get=cfg.get)
        assert e.verdict == "route_full", e
        assert e.routes[0]["verdict"] == "route_full" and word in e.routes[0]["detail"]
        assert e.hold is not None  # waiting: the corrected policy holds it after 1800 s


def test_throttled_by_failures(tmp_path):
    """A route whose failure throttle is reached (recent_routed ≥ throttle, throttle.py
    route_state) is throttled until its window closes."""
    cfg, table = _load(tmp_path, corrected=False)

    class Fig:
        window_start, recent_started, recent_succeeded, recent_failed, throttle = ECS, 3, 0, 3, 2.0

    [e] = ledger(table, {"1.0": _job()}, ECS + 100.0, get=cfg.get, figures={"Condor_Pool": Fig()})
    assert e.verdict == "throttled" and "window closes" in e.routes[0]["detail"]
    assert RouteStats  # the stats type the ledger builds


def test_no_match_names_the_false_clause(tmp_path):
    """The CE's route with REQUIREMENTS (none on Condor_Pool): a route added in an extra file
    whose REQUIREMENTS are false names the clause with the job's value."""
    extra = ("JOB_ROUTER_ROUTE_Only_Bob @=jrt\n  UNIVERSE VANILLA\n  REQUIREMENTS Owner == \"bob\" && JobUniverse == 5\n"
             "@jrt\nJOB_ROUTER_ROUTE_NAMES = Only_Bob\n")
    cfg, table = _load(tmp_path, corrected=False, extra=extra)
    [e] = ledger(table, {"1.0": _job()}, ECS + 100.0, get=cfg.get)
    assert e.verdict == "no_match"
    assert e.routes[0]["route"] == "Only_Bob"
    assert 'Owner == "bob"' in e.routes[0]["detail"] and '"alice"' in e.routes[0]["detail"]
    assert "JobUniverse == 5" not in e.routes[0]["detail"]


def test_router_wide_max_jobs_is_a_route_job_limit(tmp_path):
    """JOB_ROUTER_MAX_JOBS (htcondor.md §1.4 knob table: managed jobs across all routes; the global
    check ``JOB_ROUTER_MAX_JOBS < 0 || managed < JOB_ROUTER_MAX_JOBS``): with 2 routed copies and
    the limit at 2 the router takes no job although Condor_Pool accepts (route_full, the CE's
    "route job limit"); at 3 it takes the first job and the second waits."""
    ads = {"1.0": _job(), "2.0": _job(ClusterId=2), "101.0": _copy(1), "102.0": _copy(2)}
    cfg, table = _load(tmp_path, corrected=True, extra="JOB_ROUTER_MAX_JOBS = 2\n")
    a, b = ledger(table, ads, ECS + 100.0, get=cfg.get)
    assert (a.verdict, b.verdict) == ("route_full", "route_full")
    assert "JOB_ROUTER_MAX_JOBS" in a.detail and "limit 2" in a.detail
    assert a.routes[0]["verdict"] == "matched"  # the route itself accepts
    assert a.hold is not None  # waiting: the corrected policy holds it after 1800 s
    cfg, table = _load(tmp_path, corrected=True, extra="JOB_ROUTER_MAX_JOBS = 3\n")
    a, b = ledger(table, ads, ECS + 100.0, get=cfg.get)
    assert (a.verdict, b.verdict) == ("matched", "route_full")


def test_a_route_no_job_seen_reaches_is_shown_over_the_jobs_seen(tmp_path):
    """Issue 29's admin lint where the route texts prove nothing: ``Multi`` (``RequestCpus >= 2 &&
    RequestMemory < 8192``) is not a clause superset of ``Small`` (``RequestMemory <= 4096``), so
    the shadowing lint is silent, yet every job seen that matches Multi matches Small first (first
    match, htcondor.md §1.4): :func:`unreached` names it, with the route that takes its jobs."""
    from engine.router.lints import lint_shadowing  # noqa: PLC0415 - this test only
    from engine.views.ledger import Unreached, unreached  # noqa: PLC0415 - this test only

    extra = ("JOB_ROUTER_ROUTE_Small @=jrt\n  UNIVERSE VANILLA\n  REQUIREMENTS RequestMemory <= 4096\n@jrt\n"
             "JOB_ROUTER_ROUTE_Multi @=jrt\n  UNIVERSE VANILLA\n"
             "  REQUIREMENTS RequestCpus >= 2 && RequestMemory < 8192\n@jrt\n"
             "JOB_ROUTER_ROUTE_NAMES = Small Multi\n")
    cfg, table = _load(tmp_path, corrected=False, extra=extra)
    assert [r.name for r in table.routes] == ["Small", "Multi"] and not lint_shadowing(table)
    ads = {"1.0": _job(RequestMemory=1000, RequestCpus=4),
           "2.0": _job(ClusterId=2, RequestMemory=1500, RequestCpus=2),
           "3.0": _job(ClusterId=3, RequestMemory=9000, RequestCpus=8)}  # matches neither
    entries = ledger(table, ads, ECS + 100.0, get=cfg.get)
    assert [e.verdict for e in entries] == ["matched", "matched", "no_match"]
    assert unreached(entries) == [Unreached("Multi", "Small", 2)]
    # a job seen that matches Multi and not Small reaches it: nothing to say
    ads["4.0"] = _job(ClusterId=4, RequestMemory=6000, RequestCpus=2)
    assert unreached(ledger(table, ads, ECS + 100.0, get=cfg.get)) == []
