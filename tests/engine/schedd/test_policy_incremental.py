"""Incremental periodic policy and AdoptOrphans (issue 14 item 1: cost follows the work).

HTCondor re-evaluates every job's periodic expressions every PERIODIC_EXPR_INTERVAL
(htcondor.md §1.3 timing knobs; src/condor_schedd.V6/schedd.cpp ``PeriodicExprHandler``,
src/condor_utils/user_job_policy.cpp for the order and reasons). RouteDeck's schedd evaluates
only changed jobs and jobs whose time() deadline came; these tests check that the jobs that act,
and when, are those of a full pass, and that an unchanged queue costs no evaluation. AdoptOrphans
(htcondor.md §1.7) reads an index of possible orphans: a copy that becomes an orphan later is
still found, and the pass does not walk parked jobs."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.helpers.router_fixtures import T0 as RT0, kinds, make_router, route, submit, table

from engine.lang.user_policy import UNBOUNDED, SystemPolicy, time_deadline
from engine.queue.jobqueue import JobQueue
from engine.schedd.queue_store import QueueStore
from engine.schedd.schedd import Schedd
from engine.schedd.store import MemoryStore
from engine.schedd.sites import RunTime, SiteSet, SiteSpec
from engine.schedd.workload import JobTemplate

T0 = 1_700_000_000.0


def _schedd(store, policy=SystemPolicy()):
    sites = SiteSet([SiteSpec("S", routes=("R",), slots=2, start_latency=(0, 0), runtime=RunTime("fixed", 100))],
                    seed=1)
    return Schedd(store, sites, system_policy=policy)


# ------------------------------------------------------------------------------ time_deadline

def _deadline(text, attrs, now, policy=SystemPolicy()):
    lower = {k.lower(): v for k, v in attrs.items()}  # attribute names are case-insensitive
    return time_deadline(lambda n: lower.get(n.lower()), [*attrs.values(), text], policy, now)


def test_deadline_of_the_demo_knob_is_qdate_plus_the_limit():
    """sample_configs/demo SYSTEM_PERIODIC_REMOVE: idle a day -> may change from QDate + 86400."""
    knob = "(JobStatus == 1) && (JobUniverse == 5) && (time() - QDate > 86400)"
    attrs = {"QDate": "1000", "JobStatus": "1"}
    pol = SystemPolicy(remove=knob)
    assert time_deadline(attrs.get, attrs.values(), pol, 2000) == 1000 + 86400 - 1
    assert time_deadline(attrs.get, attrs.values(), pol, 1000 + 86400 + 2) is None  # past: never again


def test_release_knob_counts_only_while_held_and_hold_knobs_only_while_not():
    """sample_configs/demo SYSTEM_PERIODIC_RELEASE (release after 1800 s held): AnalyzePolicy reads
    the release knobs only for a held job and the hold knobs only for one that is not
    (src/condor_utils/user_job_policy.cpp; htcondor.md §1.3), so an idle job has no deadline from
    the release knob and a held one has no deadline from a hold knob."""
    release = "(HoldReasonCode =?= 20) && (time() - EnteredCurrentStatus > 1800)"
    hold = "time() - QDate > 600"
    attrs = {"QDate": "1000", "EnteredCurrentStatus": "1000"}
    pol = SystemPolicy(release=release, hold=hold)
    assert time_deadline(attrs.get, attrs.values(), pol, 1500, status=1) == 1000 + 600 - 1
    assert time_deadline(attrs.get, attrs.values(), pol, 1500, status=5) == 1000 + 1800 - 1
    assert time_deadline(attrs.get, attrs.values(), SystemPolicy(release=release), 1500, status=1) is None
    assert time_deadline(attrs.get, attrs.values(), pol, 1500) == 1000 + 600 - 1  # no status: all knobs


@pytest.mark.parametrize("text", [
    "time() - QDate > 100", "(time() - QDate) >= 100", "CurrentTime - QDate < 100",
    "x && time() - QDate == 100 || y", "(a || (time() - QDate != 100))", "TIME() - qdate > 100",
    "(time() - QDate > 100) ? 1 : 0",
])
def test_analysed_forms(text):
    """A comparison of time() - Attr with a number, as a whole operand: its breakpoint."""
    assert _deadline(text, {"QDate": "50"}, 0) == 149


@pytest.mark.parametrize("text", [
    "time() > QDate + 100", "time() - QDate > 100 * 2", "time() - QDate > Limit", "a == time() - QDate > 1",
    "ifThenElse(time() - QDate > 100, 1, 0)", "eval(\"ti\" + \"me()\")", "random(10) > 5", "formatTime() == \"x\"",
    "time() - MY.QDate > 100", "x ? time() - QDate > 100 : 0",
])
def test_other_uses_of_time_are_unbounded(text):
    """Anything not analysed is evaluated at every interval, as HTCondor does."""
    assert _deadline(text, {"QDate": "50"}, 0) == UNBOUNDED


def test_attribute_that_is_not_a_literal_is_unbounded_and_missing_one_never_changes():
    assert _deadline("time() - Start > 5", {"Start": "QDate + 1"}, 0) == UNBOUNDED
    assert _deadline("time() - Start > 5", {}, 0) is None
    assert _deadline("JobStatus == 1", {"JobStatus": "1"}, 0) is None


# ------------------------------------------------------------------------------ equivalence

EXPRS = [
    "time() - QDate > 300", "(time() - EnteredCurrentStatus) >= 240", "time() - QDate > 100 && Slow =?= true",
    "time() > QDate + 500", "Slow =?= true", "JobStatus == 5 && time() - EnteredCurrentStatus > 120",
    "undefined", "NoSuchAttr > 3",
]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hold=st.sampled_from([None, *EXPRS]), release=st.sampled_from([None, *EXPRS]),
       remove=st.sampled_from([None, *EXPRS]), job_expr=st.sampled_from([None, *EXPRS]),
       seed=st.integers(0, 10_000))
def test_incremental_pass_acts_like_a_full_pass(hold, release, remove, job_expr, seed):
    """The incremental schedd (QueueStore tracks changes) and the full-scan one (MemoryStore)
    take the same actions at the same intervals, with qedits and holds in between
    (user_job_policy.cpp: the result is a function of the ad and time())."""
    policy = SystemPolicy(hold=hold, release=release, remove=remove)
    inc, full = _schedd(QueueStore(JobQueue()), policy), _schedd(MemoryStore(), policy)
    rng = random.Random(seed)
    for s in (inc, full):
        attrs = {"Owner": '"a"'}
        if job_expr:
            attrs["PeriodicHold"] = job_expr
        s.submit(JobTemplate("t", attrs), 4, T0)
        s.submit(JobTemplate("u", {"Owner": '"b"', "Slow": "false"}), 3, T0 + 30)
    ops = [(rng.randrange(0, 1200), rng.choice(["slow", "hold", "release"]), rng.choice(["1.0", "1.2", "2.1", "2.2"]))
           for _ in range(6)]
    for t in range(0, 1500, 60):
        for s in (inc, full):
            for when, op, job in ops:
                if t - 60 < when <= t:
                    if op == "slow":
                        s.qedit(job, "Slow", "true", T0 + when)
                    elif op == "hold":
                        s.hold(job, T0 + when)
                    else:
                        s.release(job, T0 + when)
        a, b = inc.periodic(T0 + t), full.periodic(T0 + t)
        assert a == b, t
        assert {j: inc.store.attrs(j) for j in inc.store.status} == {j: full.store.attrs(j) for j in full.store.status}, t


def test_unchanged_queue_costs_no_evaluation_until_the_deadline():
    """2,000 parked jobs under the demo's SYSTEM_PERIODIC_REMOVE: one full pass, then nothing
    until a day after QDate, when every job is removed at the first interval past it, as a full
    pass would (htcondor.md §1.3; user_job_policy.cpp system macro reason)."""
    pol = SystemPolicy(remove="(JobStatus == 1) && (JobUniverse == 5) && (time() - QDate > 86400)")
    s = _schedd(QueueStore(JobQueue()), pol)
    s.submit(JobTemplate("p", {"JobUniverse": "5"}), 2000, T0)
    assert s.periodic(T0) == 0 and s.policy_evaluations == 2000
    for t in range(60, 86400 - 60, 600):
        assert s.periodic(T0 + t) == 0
    assert s.policy_evaluations == 2000
    assert s.periodic(T0 + 86400) == 0  # int(time()) - QDate == 86400: not yet
    assert s.periodic(T0 + 86460) == 2000
    assert s.store.attrs("1.0")["JobStatus"] == "3"
    assert s.policy_evaluations < 2000 * 3 + 10


def test_a_changed_job_is_evaluated_at_the_next_interval():
    s = _schedd(QueueStore(JobQueue()))
    s.submit(JobTemplate("p", {}), 100, T0)
    s.periodic(T0)
    before = s.policy_evaluations
    s.qedit("1.7", "PeriodicRemove", "true", T0 + 10)
    assert s.periodic(T0 + 60) == 1
    assert s.store.attrs("1.7")["JobStatus"] == "3"
    assert s.policy_evaluations - before == 1


# ------------------------------------------------------------------------------ AdoptOrphans

def test_adopt_orphans_reads_only_possible_orphans_and_still_finds_late_ones():
    """htcondor.md §1.7: destination jobs with RoutedBy == name are adopted; a source claimed by
    this router with no routed copy is yielded. An orphan that appears after the first pass (a
    routed copy written later, a claim left behind) is found on the next pass (poll 6), and the
    pass never walks the 1,000 parked jobs."""
    r, src, dst = make_router(table([route("A", requirements="false")]))
    submit(src, 1000)  # parked: no route takes them
    seen: list[int] = []
    real = r._orphan_candidates

    def counting(*a, **k):
        out = real(*a, **k)
        seen.append(len(out))
        return out

    r._orphan_candidates = counting
    r.poll(RT0 + 10)  # poll 1: the full scan
    assert kinds(r) == []
    (copy,) = submit(dst, RoutedBy='"jobrouter"', RoutedFromJobId='"1.3"', RouteName='"A"', now=RT0 + 15)
    (claimed,) = submit(src, Managed='"External"', ManagedManager='"jobrouter"', now=RT0 + 15)
    seen.clear()
    for i in range(2, 7):
        r.poll(RT0 + 10 * i)  # poll 6 adopts
    got = kinds(r)
    assert got.count("orphan-adopted") == 1 and got.count("orphan-yielded") == 1
    assert r.jobs["1.3"].dest_key == copy
    assert max(seen) <= 2, seen


def test_router_periodic_policy_sees_a_change_to_its_copy_of_the_source():
    """htcondor.md §1.6 (EvalAllSrcJobPeriodicExprs on the router's copy): the evaluation ad is
    cached per job, and a change to the copy is evaluated at the next interval."""
    r, src, dst = make_router(table([route("A")]))
    (key,) = submit(src, 1)
    r.poll(RT0 + 10)
    job = r.jobs[key]
    job.src["PeriodicRemove"] = "Flag == 1"
    job.src["Flag"] = "0"
    r.eval_periodic(RT0 + 20)
    assert "policy-fired" not in kinds(r)
    job.src["Flag"] = "1"
    r.eval_periodic(RT0 + 30)
    assert "policy-fired" in kinds(r)
