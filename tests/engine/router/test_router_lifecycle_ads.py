"""A routed job's source ad is turned into a ClassAd once and kept, not rebuilt per step (issue 30).

htcondor.md §1.6: the router keeps its own copy of the source ad (``job->src_ad`` in JobRouter.cpp)
and evaluates the periodic expressions (``EvalAllSrcJobPeriodicExprs``) and the route's
``JobFailureTest`` (``FinishFinalizeJob``) against it. RouteDeck keeps that copy's evaluation ad
per routed job and sets in it only the attributes that status mirroring, hooks and policy change;
these tests count the ads built from scratch and check the answers are those of a rebuilt ad.
"""

from __future__ import annotations

import pytest

import engine.classad as C
import engine.router.lifecycle as L
import engine.router.schedd_ops as ops
import engine.router.src_policy as P
from engine.lang.user_policy import SystemPolicy, policy_ad_of, policy_roots
from tests.helpers.router_fixtures import T0, get, make_router, outcomes, route, schedd_set, submit, table


def _count_builds(monkeypatch) -> list[int]:
    n = [0]
    real = C.make_ad

    def counted(attrs, strict=False):
        n[0] += 1
        return real(attrs, strict)

    for mod in (C, ops, L, P):
        if hasattr(mod, "make_ad"):
            monkeypatch.setattr(mod, "make_ad", counted)
    return n


def _life(r, src, dst, keys, t0=T0):
    """Every job: routed, running, a few status updates, completed, finalized, cleaned up."""
    t = t0
    r.poll(t := t + 10)
    for step, attrs in enumerate(({"JobStatus": "2"}, {"ImageSize": "100"}, {"ImageSize": "200"},
                                  {"JobStatus": "4", "ExitCode": "0", "JobFinishedHookDone": str(int(t0))})):
        for k in keys:
            schedd_set(dst, r.jobs[k].dest_key, now=t, **attrs)
        r.poll(t := t + 70)
    for _ in range(3):
        r.poll(t := t + 70)
    return t


def test_the_source_ad_is_built_once_per_routed_job(monkeypatch):
    """§1.6: four status pushes, periodic passes and the finalize of 20 jobs build one evaluation
    ad per job (before issue 30: one per change of the router's copy, and one more at finalize)."""
    tbl = table([route("A", max_jobs=100, max_idle_jobs=100, job_failure_test="ExitCode != 0")],
                periodic_expr_interval=60)
    r, src, dst = make_router(tbl)
    keys = submit(src, 20, ImageSize="10", PeriodicHold="ImageSize > 1000")
    builds = _count_builds(monkeypatch)
    routed, build = [], r._builder  # the routed copy (the transform): built once, at routing
    r._builder = lambda *a, **k: routed.append(a[2]) or build(*a, **k)
    _life(r, src, dst, keys)
    assert set(outcomes(r.drain_events()).values()) == {"success"}
    assert all(get(src, k, "JobStatus") == "4" for k in keys)
    assert builds[0] <= len(keys)
    assert len(routed) == len(keys)


@pytest.mark.parametrize("hold_at", ["150", "1000"])
def test_kept_ad_gives_the_answers_of_a_rebuilt_one(hold_at):
    """§1.6: PeriodicHold on a mirrored attribute and JobFailureTest on the mirrored ExitCode see
    the router's copy as it is after the pushes (the kept ad is updated, not stale)."""
    tbl = table([route("A", max_jobs=100, max_idle_jobs=100, job_failure_test="ImageSize >= 200")],
                periodic_expr_interval=60)
    r, src, dst = make_router(tbl)
    keys = submit(src, 3, ImageSize="10", PeriodicHold=f"ImageSize > {hold_at}")
    _life(r, src, dst, keys)
    done = outcomes(r.drain_events())
    if hold_at == "150":  # held by the router's policy once ImageSize 200 was mirrored
        assert all(get(src, k, "HoldReasonCode") == "3" for k in keys)
    else:
        assert set(done.values()) == {"failure"}  # JobFailureTest true on the mirrored ImageSize
        for k in keys:
            assert r.jobs[k].src["ImageSize"] == "200"


# htcondor.md §1.5/§1.6: FinishFinalizeJob evaluates the route's JobFailureTest against the router's
# copy of the source. RouteDeck evaluates an old-syntax test on an ad of just the attributes its text
# reaches (user_policy.policy_ad); these texts reach attributes through other attributes, through
# a scope, or in ways the analysis cannot follow (eval, a subscript: the whole copy's ad is used).
FAILURE_TESTS = ["ExitCode != 0", "ExitCode =!= 0", "MY.ExitCode > Limit", "Bad", "Bad && ImageSize >= 200",
                 "eval(\"Exit\" + \"Code\") != 0", "{1, 2}[0] == ExitCode", "Missing =?= undefined",
                 "TARGET.ExitCode == 0", "ExitCode ==", "time() > 0 && CurrentTime > 0",
                 # references classad2 cannot list (Expr.names is None): the whole copy's ad is used
                 "ExitCode != 0 || CurrentTime.x =?= 1", "ExitCode != 0 || (time() > 5).x =?= 1",
                 "ExitCode != 0 || {1}.x =?= 1", "ExitCode != 0 || unparse(Limit).x =?= 1",
                 "ExitCode != 0 || \"s\".x =?= 1", "ExitCode != 0 || isUndefined(Limit).x =?= 1",
                 "isError(ifThenElse(ExitCode != 0, 1, 0).x)", "Odd", "Odd2 && Limit > 1"]


@pytest.mark.parametrize("text", FAILURE_TESTS)
@pytest.mark.parametrize("exit_code", ["0", "3"])
def test_failure_ad_answers_as_the_whole_copy(text, exit_code):
    """§1.5: the reached-attributes ad gives JobFailureTest the answer the whole copy's ad gives."""
    tbl = table([route("A", max_jobs=100, max_idle_jobs=100, job_failure_test=text)])
    r, src, dst = make_router(tbl)
    keys = submit(src, 2, ImageSize="10", Limit="2", Bad="ExitCode > Limit || ImageSize > 150",
                  Odd="ExitCode != 0 || CurrentTime.x =?= 1", Odd2="isError(ifThenElse(ExitCode != 0, 1, 0).x)")
    r.poll(T0 + 10)
    rt = tbl.routes[0]
    for k in keys:
        job = r.jobs[k]
        job.src.update({"ExitCode": exit_code, "ImageSize": "200"})
        whole = L._truth(rt, "JobFailureTest", C.make_ad(dict(job.src)), T0)
        assert L._truth(rt, "JobFailureTest", r._failure_ad(job, rt), T0) == whole


@pytest.mark.parametrize("hold_at", ["150", "1000"])
def test_kept_lower_index_is_the_rebuilt_one(hold_at):
    """§1.6: the router's copy keeps its lower-case name index across status pushes and policy
    writes (one build, not one per push or policy evaluation); it always equals a rebuilt one,
    and the policy ad made through it equals user_policy.policy_ad_of's."""
    tbl = table([route("A", max_jobs=100, max_idle_jobs=100, job_failure_test="ImageSize >= 200")],
                periodic_expr_interval=60)
    r, src, dst = make_router(tbl)
    keys = submit(src, 3, ImageSize="10", PeriodicHold=f"ImageSize > {hold_at}", imagesize_note="x")
    _life(r, src, dst, keys)
    roots = policy_roots(SystemPolicy.from_knobs(lambda n: None))
    assert r.jobs
    for job in r.jobs.values():
        kept = job.src.lower
        assert kept is not None and kept[0] == job.src.version  # kept by the last push, still valid
        assert L._lower_index(job.src) is kept[1]
        assert kept[1] == {k.lower(): k for k in job.src}
        whole = policy_ad_of(dict(job.src), None, roots)
        assert dict(P.reached_ad(job.src, roots).items()) == dict(whole.items())
    job = next(iter(r.jobs.values()))
    job.src["imagesize"] = "5"  # a second spelling: no index, the whole ad is read
    assert L._lower_index(job.src) is None and P.reached_ad(job.src, roots) is None


def test_finalize_does_not_build_the_whole_copy(monkeypatch):
    """§1.5: a JobFailureTest that reaches a few attributes is answered without the evaluation ad
    of the whole copy (before: one AdMirror.sync of every attribute per finalized job)."""
    tbl = table([route("A", max_jobs=100, max_idle_jobs=100, job_failure_test="ExitCode != 0")])
    r, src, dst = make_router(tbl)
    keys = submit(src, 5, ImageSize="10")
    synced = []
    real = C.AdMirror.sync
    monkeypatch.setattr(C.AdMirror, "sync", lambda self, attrs: synced.append(len(attrs)) or real(self, attrs))
    _life(r, src, dst, keys)
    assert set(outcomes(r.drain_events()).values()) == {"success"}
    assert synced == []
