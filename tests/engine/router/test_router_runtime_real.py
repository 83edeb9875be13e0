"""The router with the real routing table and routed-copy builder, on HTCondor's own test config.

``tests/data/router/job_router_xform.run.config`` is the config of HTCondor's job_router_xform
test (see tests/data/PROVENANCE.md); the expected routing is htcondor.md §6 "Job router: facts":
16 jobs (procs 0–7 RouteMe=0, 8–15 RouteMe=1), the first matching route in
JOB_ROUTER_ROUTE_NAMES order wins, so odd procs go to Production1 and even ones to Analysis3;
copies have RouteMe deleted, RoutedJob = true, the route's Requirements, CollHost "jira902".
"""

from __future__ import annotations

from tests.helpers.paths import TESTS
from tests.helpers.router_fixtures import T0, get, submit

from engine.lang.config import Config
from engine.queue.jobqueue import JobQueue
from engine.router.router import JobRouter
from engine.router.loader import load_routing_table

DATA = TESTS / "data" / "router"


def test_job_router_xform_expected_routing():
    cfg = Config.load([DATA / "job_router_xform.run.config"], env={}, follow_locals=False)
    tbl = load_routing_table(cfg)
    assert [r.name for r in tbl.routes] == ["Production1", "Analysis3", "Production2", "Analysis4"]
    q = JobQueue()
    keys = submit(q, 16, RouteMe=lambda p: "0" if p < 8 else "1")
    r = JobRouter(tbl, q, now=T0)
    r.poll(T0 + 10)
    routed = {k: j.route_name for k, j in r.jobs.items()}
    assert routed == {keys[p]: ("Production1" if p % 2 else "Analysis3") for p in range(8, 16)}
    for p in range(8, 16):
        d = r.jobs[keys[p]].dest_key
        assert get(q, d, "RouteMe") is None
        assert get(q, d, "RoutedJob") == "true"
        assert get(q, d, "CollHost") == '"jira902"'
        assert get(q, d, "JobUniverse") == "5"  # UNIVERSE vanilla
        if p % 2:
            assert (get(q, d, "ProductionJob"), get(q, d, "ProductionRun")) == ("1", "1")
            assert get(q, d, "Requirements") == "target.slotId & 1"
        else:
            assert (get(q, d, "ProductionJob"), get(q, d, "AnalysisRun")) == ("0", "3")
        assert get(q, d, "RoutedFromJobId") == f'"{keys[p]}"'
    for p in range(8):
        assert keys[p] not in r.jobs and get(q, keys[p], "Managed") is None
    # the source keeps RouteMe and is now managed by the router
    assert get(q, keys[8], "RouteMe") == "1" and get(q, keys[8], "Managed") == '"External"'


def test_vanilla_to_grid_on_the_routed_copy():
    """htcondor.md §1.6 VanillaToGrid through the real builder: identity attributes deleted,
    counters reset, JobUniverse 9 with Remote_JobUniverse, GridResource from the route."""
    cfg = Config.from_text(
        "JOB_ROUTER_ROUTE_NAMES = Site1\n"
        "JOB_ROUTER_ROUTE_Site1 @=rt\n  REQUIREMENTS true\n  GridResource = \"batch slurm\"\n  SET Foo = 2\n@rt\n",
        env={}, follow_locals=False)
    tbl = load_routing_table(cfg)
    src = JobQueue()
    (key,) = submit(src, GlobalJobId='"sub#1.0#1"', NumRestarts="4", User='"alice@site"')
    dst = JobQueue()
    r = JobRouter(tbl, src, dst, now=T0)
    r.poll(T0 + 10)
    d = r.jobs[key].dest_key
    assert get(dst, d, "GlobalJobId") is None and get(dst, d, "User") is None
    assert get(dst, d, "NumRestarts") == "0"
    assert (get(dst, d, "JobUniverse"), get(dst, d, "Remote_JobUniverse")) == ("9", "5")
    assert get(dst, d, "GridResource") == '"batch slurm"'
    assert get(dst, d, "Foo") == "2"
    assert get(dst, d, "ClusterId") == d.split(".")[0] and get(dst, d, "ProcId") == "0"


def test_issue17_item3_an_invalid_attribute_name_fails_the_submit_of_the_routed_copy():
    """Issue 17 item 3. xform_utils.cpp ParseRulesCallback kw_SET inserts ``a-b`` as written
    (``InsertAdExpr``, no name check); the schedd then refuses the routed copy's submit
    (qmgmt.cpp SetAttribute: ``if (!IsValidAttrName(attr_name)) ... return -1``, which the
    router's submit_job.cpp reports as a failed submit), so the routing of that job fails and
    counts against the route (JobRouter.cpp FinishSubmitJob -> GracefullyRemoveJob, htcondor.md
    §1.5). Why-not predicts it before the router tries."""
    cfg = Config.from_text(
        "JOB_ROUTER_ROUTE_NAMES = Site1\n"
        "JOB_ROUTER_ROUTE_Site1 @=rt\n  REQUIREMENTS true\n  GridResource = \"batch slurm\"\n  SET a-b 1\n@rt\n",
        env={}, follow_locals=False)
    tbl = load_routing_table(cfg)
    q = JobQueue()
    (key,) = submit(q, 1)
    r = JobRouter(tbl, q, now=T0)
    why = r.why_not(key, T0 + 5)
    assert why.route is None and "a-b" in why.verdict and "submit" in why.verdict
    events = []
    r.poll(T0 + 10)
    events.extend(r.drain_events())
    assert [e for e in events if e.kind == "job-retired" and e.outcome == "failure"]
    assert any("failed to submit job" in getattr(e, "message", "") and "a-b" in e.message for e in events)
    book = {s.name: s for s in r.book}
    assert book["Site1"].recent_failed == 1
    assert not [j for j in q if get(q, j.key, "RoutedFromJobId")]
