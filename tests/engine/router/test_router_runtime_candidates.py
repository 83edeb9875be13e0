"""The fast candidate scan gives exactly the answers of HTCondor's umbrella (htcondor.md §1.4).

Ground truth: the exact umbrella string, evaluated by classad2 with an empty MY ad and the job as
TARGET, and each route's REQUIREMENTS with the job as MY. The jobs are built to defeat the
shortcuts: expressions instead of literals, proc ads overriding cluster attributes, attributes
defined through other attributes, Managed set on one proc, undefined values.
"""

from __future__ import annotations

import random
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import gc

from tests.helpers.router_fixtures import make_router, route, table

from engine.classad import ClassAd, evaluate, is_true
from engine.queue.jobqueue import JobQueue
from engine.router.candidates import Scanner, umbrella_text
from engine.router.lifecycle import RoutedJob, SrcAttrs
from engine.gcpause import gc_paused

ROUTES = [
    route("Mem", "RequestMemory <= 2048 && VO == \"cms\""),
    route("Derived", "Weight > 10"),
    route("Any", "true"),
]
SC = 'Owner =!= "blocked"'


def build_queue(seed=7):
    rng = random.Random(seed)
    q = JobQueue()
    for c in range(1, 41):
        with q.transaction(now=0) as t:
            cl = t.new_cluster()
            cluster = {"Owner": rng.choice(['"alice"', '"blocked"', '"bob"']), "JobUniverse": "5",
                       "VO": rng.choice(['"cms"', '"atlas"', 'strcat("c", "ms")']),
                       "RequestMemory": rng.choice(["1024", "4096", "RequestCpus * 1024"]),
                       "RequestCpus": rng.choice(["1", "2", "4"])}
            if rng.random() < 0.5:
                cluster["Weight"] = rng.choice(["5", "ProcId * 3", "RequestCpus * 6"])
            if rng.random() < 0.2:
                cluster["Managed"] = rng.choice(['"Schedd"', '"ScheddDone"'])  # in the cluster ad
            if rng.random() < 0.1:
                cluster["StageInStart"] = "10"
            for k, v in cluster.items():
                t.set_attribute((cl, -1), k, v)
            for p in range(rng.randint(1, 6)):
                _, pp = t.new_proc(cl)
                t.set_attribute((cl, pp), "ProcId", str(pp))
                t.set_attribute((cl, pp), "JobStatus", rng.choice(["1", "1", "1", "2", "(1 + 0)"]))
                r = rng.random()
                if r < 0.1:
                    t.set_attribute((cl, pp), "Managed", rng.choice(['"External"', '"Schedd"', '"ScheddDone"']))
                elif r < 0.2:
                    t.set_attribute((cl, pp), "RequestMemory", rng.choice(["512", "8192"]))
                elif r < 0.25:
                    t.set_attribute((cl, pp), "RoutedBy", '"jobrouter"')
                elif r < 0.3:
                    t.set_attribute((cl, pp), "StageInFinish", "11")
    return q


def test_scan_equals_umbrella_and_requirements_by_classad2():
    # Source: htcondor.md §1.4 (the umbrella candidate query), cross-checked with classad2
    q = build_queue()
    sc = Scanner(ROUTES, SC, "jobrouter")
    for accepting in ([True, True, True], [True, False, False], [False, True, False]):
        sc.begin_cycle(accepting, now=1000)
        text = umbrella_text(SC, [r.requirements for r, a in zip(ROUTES, accepting) if a], "jobrouter")
        checked = 0
        for job in q:
            ad = job.classad()
            expected = is_true(evaluate(text, ClassAd(), ad, now=1000))
            got = sc.scan(job)
            assert (got is not None and got.umbrella) == expected, (job.key, job.attrs)
            if got is not None:
                want = tuple(i for i, r in enumerate(ROUTES) if is_true(evaluate(r.requirements, ad, now=1000)))
                assert got.matches == want, (job.key, job.attrs)
            checked += 1
        assert checked > 100
        assert sc.signatures < checked  # grouping happened


def test_router_scan_uses_fewer_evaluations_than_jobs():
    # Source: RouteDeck performance property (no HTCondor behaviour)
    """The point of the grouping: one evaluation per signature, not per job."""
    q = JobQueue()
    with q.transaction(now=0) as t:
        c = t.new_cluster()
        t.set_attribute((c, -1), "Owner", '"alice"')
        t.set_attribute((c, -1), "VO", '"cms"')
        t.set_attribute((c, -1), "RequestMemory", "1024")
        for p in range(500):
            t.new_proc(c)
            t.set_attribute((c, p), "ProcId", str(p))
            t.set_attribute((c, p), "JobStatus", "1")
    sc = Scanner(ROUTES, SC, "jobrouter")
    sc.begin_cycle([True, True, True], now=0)
    assert all(sc.scan(j).matches == (0, 2) for j in q)
    assert sc.signatures == 1 and sc.evaluations == 1 + len(ROUTES)
    assert table(ROUTES) is not None


def _one_cluster(vo: str, procs: int = 50) -> JobQueue:
    q = JobQueue()
    with q.transaction(now=0) as t:
        c = t.new_cluster()
        t.set_attribute((c, -1), "Owner", '"alice"')
        t.set_attribute((c, -1), "VO", vo)
        t.set_attribute((c, -1), "RequestMemory", "1024")
        for p in range(procs):
            t.new_proc(c)
            t.set_attribute((c, p), "ProcId", str(p))
            t.set_attribute((c, p), "JobStatus", "1")
    return q


def test_literal_signatures_are_not_evaluated_again_on_later_cycles():
    # Source: RouteDeck performance property (issue 30: the routing cycle evaluates only what
    # changed); the answers are checked against classad2 in test_scan_equals_umbrella_across_cycles
    q = _one_cluster('"cms"')
    sc = Scanner(ROUTES, SC, "jobrouter")
    sc.begin_cycle([True, True, True], now=0)
    assert all(sc.scan(j).matches == (0, 2) for j in q)
    assert sc.evaluations == 1 + len(ROUTES)
    sc.begin_cycle([True, True, True], now=600)
    assert all(sc.scan(j).matches == (0, 2) for j in q)
    assert sc.evaluations == 0 and sc.signatures == 1
    # an expression among the texts: evaluated again on every cycle (it could read the clock)
    qx = _one_cluster('strcat("c", "ms")')
    for now in (0, 600):
        sc.begin_cycle([True, True, True], now=now)
        assert all(sc.scan(j).matches == (0, 2) for j in qx)
        assert sc.evaluations == 1 + len(ROUTES)
    # a table whose texts use the clock: evaluated again on every cycle
    timed = [route("Mem", "RequestMemory <= 2048 && time() >= 0"), route("Any", "true")]
    st = Scanner(timed, SC, "jobrouter")
    for now in (0, 600):
        st.begin_cycle([True, True], now=now)
        assert all(st.scan(j).matches == (0, 1) for j in q)
        assert st.evaluations == 1 + len(timed)


def test_scan_equals_umbrella_across_cycles():
    # Source: htcondor.md §1.4 (the umbrella candidate query), cross-checked with classad2: one
    # scanner over cycles whose accepting routes change and come back (classifications kept
    # across cycles are the ones of the same umbrella)
    q = build_queue(seed=11)
    sc = Scanner(ROUTES, SC, "jobrouter")
    evaluations = []
    for accepting in ([True, True, True], [True, False, False], [True, True, True], [True, False, False]):
        sc.begin_cycle(accepting, now=1000)
        text = umbrella_text(SC, [r.requirements for r, a in zip(ROUTES, accepting) if a], "jobrouter")
        for job in q:
            ad = job.classad()
            got = sc.scan(job)
            assert (got is not None and got.umbrella) == is_true(evaluate(text, ClassAd(), ad, now=1000))
            if got is not None:
                assert got.matches == tuple(i for i, r in enumerate(ROUTES)
                                            if is_true(evaluate(r.requirements, ad, now=1000)))
        evaluations.append(sc.evaluations)
    assert evaluations[2] < evaluations[0] and evaluations[3] < evaluations[1]


_ODD = ["0", "7", "-1", "1", "1.0", "2", "+1", "3", "(1 + 0)", "ProcId", '"1"', "undefined", "1e0"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_scan_shortcuts_equal_classad2_for_any_proc_ad_shape(data):
    # Source: htcondor.md §1.4 (the umbrella candidate query; ChooseRoute), ground truth by classad2
    """The per-shape proc-ad shortcut and the ``JobStatus == "1"`` / digits-only ``ProcId`` test
    of ``Scanner.scan`` against the umbrella evaluated by classad2, for proc ads with odd names
    (lower case, missing ProcId/JobStatus, extra looked-at attributes) and odd literal texts."""
    q = JobQueue()
    with q.transaction(now=0) as t:
        for _ in range(data.draw(st.integers(1, 3))):
            cl = t.new_cluster()
            t.set_attribute((cl, -1), "Owner", '"alice"')
            t.set_attribute((cl, -1), "VO", data.draw(st.sampled_from(['"cms"', '"atlas"'])))
            t.set_attribute((cl, -1), "RequestMemory", "1024")
            for _p in range(data.draw(st.integers(1, 4))):
                _, pp = t.new_proc(cl)
                for name in data.draw(st.lists(st.sampled_from(
                        ["ProcId", "procid", "JobStatus", "JOBSTATUS", "RequestMemory", "Managed", "Foo"]),
                        max_size=4, unique_by=str.lower)):
                    value = data.draw(st.sampled_from(_ODD + ['"External"']))
                    t.set_attribute((cl, pp), name, value)
    routes = ROUTES[:1] + ROUTES[2:]
    sc = Scanner(routes, SC, "jobrouter")
    sc.begin_cycle([True, True], now=5)
    text = umbrella_text(SC, [r.requirements for r in routes], "jobrouter")
    for job in q:
        ad = job.classad()
        got = sc.scan(job)
        assert (got is not None and got.umbrella) == is_true(evaluate(text, ClassAd(), ad, now=5)), job.attrs
        if got is not None:
            want = tuple(i for i, r in enumerate(routes) if is_true(evaluate(r.requirements, ad, now=5)))
            assert got.matches == want, job.attrs


def test_gc_paused_restores_the_collector_state_even_on_error():
    # Source: RouteDeck implementation property (no HTCondor behaviour)


    assert gc.isenabled()
    try:
        with gc_paused():
            assert not gc.isenabled()
            raise KeyError("boom")
    except KeyError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # left off: it was off before
    finally:
        gc.enable()


def test_cluster_entries_kept_across_cycles():
    """htcondor.md §1.4 (the umbrella query and each route's REQUIREMENTS, asked every cycle):
    a scanner that keeps its per-cluster entries across cycles while the cluster ad is unchanged
    answers every job as a fresh scanner does (the oracle), after random edits of cluster and
    proc ads between cycles."""
    rng = random.Random(14)
    q = build_queue(seed=3)
    kept = Scanner(ROUTES, SC, "jobrouter")
    values = {"VO": ['"cms"', '"atlas"', 'strcat("c", "ms")'], "RequestMemory": ["1024", "4096", "RequestCpus * 1024"],
              "Owner": ['"alice"', '"blocked"'], "Managed": ['"External"', '"Schedd"'], "Weight": ["5", "ProcId * 3"]}
    for cycle in range(12):
        kept.begin_cycle([True, True, True], now=1000 + cycle)
        fresh = Scanner(ROUTES, SC, "jobrouter")
        fresh.begin_cycle([True, True, True], now=1000 + cycle)
        for job in q:
            assert kept.scan(job) == fresh.scan(job), (cycle, job.key)
            assert kept.last_fast == fresh.last_fast
        with q.transaction(now=cycle) as t:
            for _ in range(6):
                job = rng.choice(q.jobs())
                name = rng.choice(list(values))
                target = (job.id[0], -1) if rng.random() < 0.6 else job.id
                t.set_attribute(target, name, rng.choice(values[name]))


def test_a_placed_jobs_copy_is_the_source_ad_as_the_queue_holds_it():
    """htcondor.md §1.4 (a candidate keeps the source ad it was chosen with, JobRouter.cpp
    ``job->src_ad``): each job the cycle places holds, as ``RoutedJob.src``, the cluster ad
    overlaid by the proc ad — same texts, same order as ``Job.attrs`` — as a new, unchanged
    ``SrcAttrs`` (version 0) watched by the router; built in one copy (``_add_candidate``)."""
    q = build_queue(seed=11)
    r, _, _ = make_router(table(ROUTES), src=q)
    r.update_route_stats(1000)
    r.get_candidate_jobs(1000)
    assert len(r.jobs) > 20
    for key, rj in r.jobs.items():
        job = q.get(key)
        assert list(rj.src.items()) == list(job.attrs.items()), key
        assert type(rj.src) is SrcAttrs and rj.src.version == 0
        assert rj.src.watch is r._settled.touched and rj.src.key == key


def test_a_new_routed_job_sets_its_copy_without_an_exception():
    """RouteDeck implementation property (no HTCondor behaviour): ``RoutedJob(...)`` sets
    ``src`` (``lifecycle._set_src``) without raising an AttributeError into a Python frame (a
    traceback and a frame object per placed job, several per cent of a routing cycle:
    bench/router.py part 1); a later assignment still counts as a change of the copy."""
    raised = []

    def trace(frame, event, arg):
        if event == "exception":
            raised.append((frame.f_code.co_name, arg[0]))
        return trace

    sys.settrace(trace)
    try:
        job = RoutedJob("1.0", "A", {"Owner": '"alice"'})
    finally:
        sys.settrace(None)
    assert raised == [] and job.src.version == 0 and job.src == {"Owner": '"alice"'}
    seen: set[str] = set()
    job.src.watch, job.src.key = seen, "1.0"
    job.src = {"Owner": '"bob"'}
    assert job.src.version == 1 and seen == {"1.0"}


_PICK = "ifThenElse(RequestCpus > 1, [a = 20], [a = 5]).a"  # a selection on a call: Expr.refs is None


@pytest.mark.parametrize(("routes", "weight"), [
    (ROUTES, _PICK),  # a job attribute the table reaches reads names classad2 cannot list
    (ROUTES + [route("Odd", _PICK + " > 10 || CurrentTime.x =?= 1")], "5"),  # so does a route's text
])
def test_scan_with_unknown_references_equals_classad2(routes, weight):
    # Source: htcondor.md §1.4 (the umbrella candidate query), cross-checked with classad2: a
    # text whose references are unknown may read any attribute, so jobs are not grouped by the
    # attributes the table lists (the RequestCpus the pick reads is in no listed text)
    q = JobQueue()
    with q.transaction(now=0) as t:
        for cpus in ("1", "2", "1", "2"):
            cl = t.new_cluster()
            for k, v in {"Owner": '"alice"', "VO": '"cms"', "RequestMemory": "1024", "RequestCpus": cpus,
                         "Weight": weight}.items():
                t.set_attribute((cl, -1), k, v)
            for p in range(2):
                _, pp = t.new_proc(cl)
                t.set_attribute((cl, pp), "ProcId", str(pp))
                t.set_attribute((cl, pp), "JobStatus", "1")
    sc = Scanner(routes, SC, "jobrouter")
    seen = set()
    for _cycle in range(2):
        sc.begin_cycle([True] * len(routes), now=1000)
        for job in q:
            ad = job.classad()
            got = sc.scan(job)
            assert got is not None and got.umbrella
            want = tuple(i for i, r in enumerate(routes) if is_true(evaluate(r.requirements, ad, now=1000)))
            assert got.matches == want, job.attrs
            assert not sc.last_fast
            seen.add(want)
    assert len(seen) == 2  # the pick decides: both answers are checked
