"""The router's periodic policy pass costs what changed (issue 14 item 4), with the answers of a
full pass.

htcondor.md §1.6: the router evaluates the periodic expressions of the jobs it manages every
``PERIODIC_EXPR_INTERVAL`` (``EvalAllSrcJobPeriodicExprs``; HTCondor evaluates every job every
time). ``JobRouter.eval_periodic`` evaluates again only a job whose source changed, whose last
result acted, or whose time deadline (``engine.lang.user_policy.time_deadline``, ``TimerRemove``)
has come; these tests check that a job is acted on at the same interval as with a full pass.
"""

from __future__ import annotations

import copy
import pickle

from engine.queue.jobqueue import JobQueue
from engine.router.lifecycle import _set_local
from tests.helpers.router_fixtures import T0, get, make_router, route, schedd_set, submit, table


def _router(**kw):
    tbl = table([route("A", max_jobs=100, max_idle_jobs=100)], periodic_expr_interval=60)
    return make_router(tbl, **kw)


def test_an_unchanged_job_without_time_in_its_policy_is_not_evaluated_again():
    """§1.6: PeriodicHold reads only job attributes: its result changes only with the router's
    copy of the job, which status mirroring (routed copy → source, ``update_job_status``) changes."""
    r, src, dst = _router()
    keys = submit(src, 5, PeriodicHold="JobStatus == 2")
    r.poll(T0 + 10)
    r.poll(T0 + 70)
    first = r.periodic_evaluations
    assert first == 5
    r.poll(T0 + 130)
    r.poll(T0 + 190)
    assert r.periodic_evaluations == first  # nothing changed: nothing evaluated
    schedd_set(dst, r.jobs[keys[2]].dest_key, JobStatus="2")
    r.poll(T0 + 200)  # mirrored: the source runs
    assert get(src, keys[2], "JobStatus") == "2"
    r.poll(T0 + 250)
    assert get(src, keys[2], "JobStatus") == "5"  # held at the first interval after the change
    assert all(get(src, k, "JobStatus") == "1" for k in keys if k != keys[2])


def test_a_time_bounded_policy_fires_at_the_same_interval_as_a_full_pass():
    """§1.6: ``CurrentTime - QDate > 200`` becomes true with time alone; the job is removed at the
    first interval after QDate + 200, and not evaluated at the intervals before its deadline."""
    r, src, _ = _router()
    (key,) = submit(src, PeriodicRemove="CurrentTime - QDate > 200")
    r.poll(T0 + 10)
    r.poll(T0 + 70)
    n = r.periodic_evaluations
    r.poll(T0 + 130)
    assert r.periodic_evaluations == n and get(src, key, "JobStatus") == "1"
    r.poll(T0 + 190)
    assert get(src, key, "JobStatus") == "1"
    r.poll(T0 + 250)
    assert get(src, key, "JobStatus") == "3"


def test_timer_remove_edited_in_the_source_is_seen():
    """§1.6 (``AnalyzePolicy`` checks ``TimerRemove`` first): a TimerRemove set on the source
    after the router took the job removes it once its time has passed."""
    r, src, _ = _router()
    (key,) = submit(src)
    r.poll(T0 + 10)
    r.poll(T0 + 70)
    schedd_set(src, key, TimerRemove=str(int(T0 + 100)))
    r.poll(T0 + 80)  # not an interval
    r.poll(T0 + 130)
    assert get(src, key, "JobStatus") == "3"


def test_same_outcome_as_a_router_without_change_events():
    """The incremental pass against a full pass (a router that forgets what it evaluated before
    each poll and does not see the queue's change events evaluates every job every interval, as
    HTCondor does): the same status of every job after every poll."""
    runs = []
    for full in (False, True):
        r, src, _ = _router()
        r._watching = not full
        keys = submit(src, 4, PeriodicHold="JobStatus == 2")
        keys += submit(src, 3, PeriodicRemove=lambda p: f"CurrentTime - QDate > {100 * (p + 1)}")
        keys += submit(src, 2, TimerRemove=lambda p: str(int(T0 + 150 + 200 * p)))
        got = []
        for k in range(12):
            if k in (4, 7):
                schedd_set(r.dst_q, r.jobs[keys[k // 4 - 1]].dest_key, JobStatus="2")
            if full:
                r._periodic_ads = {}
            r.poll(T0 + 10 + 60 * k)
            got.append([get(src, key, "JobStatus") for key in keys])
        runs.append((got, r.periodic_evaluations))
    assert runs[0][0] == runs[1][0]
    assert {None, "5"} <= set(runs[0][0][-1])  # held, and removed (then yielded and gone)
    assert runs[0][1] < runs[1][1]  # and the incremental pass evaluated fewer jobs


# each edit changes the copy through one counted call (the rest through dict's own, uncounted)
EDITS = {
    "set": lambda ad: ad.__setitem__("Flag", "1"),
    "update": lambda ad: ad.update(Flag="1"),
    "or": lambda ad: ad.__ior__({"Flag": "1"}),
    "setdefault": lambda ad: (dict.pop(ad, "Flag"), ad.setdefault("Flag", "1")),
    "del": lambda ad: (ad.__delitem__("Flag"), dict.__setitem__(ad, "Flag", "1")),
    "pop": lambda ad: (ad.pop("Flag"), dict.__setitem__(ad, "Flag", "1")),
    "popitem": lambda ad: (dict.__setitem__(ad, "Flag", "1"), ad.popitem(), dict.__setitem__(ad, "Flag", "1")),
    "clear": lambda ad: (lambda kept: (ad.clear(), dict.update(ad, kept)))({**ad, "Flag": "1"}),
}


def test_an_edit_of_the_routers_copy_by_any_dict_method_is_evaluated():
    """§1.6 (EvalAllSrcJobPeriodicExprs reads the router's copy of the source): the pass tells an
    unchanged copy by its change count (``lifecycle.SrcAttrs``); every way of editing the copy
    counts, so the edit is evaluated at the next interval."""
    for how, edit in EDITS.items():
        r, src, _ = _router()
        (key,) = submit(src, 1, PeriodicRemove="Flag == 1", Flag="0")
        r.poll(T0 + 10)
        r.poll(T0 + 70)
        job = r.jobs[key]
        evaluated = r.periodic_evaluations
        r.poll(T0 + 130)
        assert r.periodic_evaluations == evaluated, how  # unchanged: not evaluated again
        edit(job.src)
        r.poll(T0 + 190)
        assert get(src, key, "JobStatus") == "3", how


def test_the_deadline_heap_stays_bounded_by_the_tracked_jobs():
    """A far-off time deadline (``PeriodicRemove`` on ``time()``) re-evaluated on every pass,
    because status mirroring changes the router's copy each pass, is queued once per job: the
    heap of deadlines holds at most one entry per tracked job (it grew by one a pass)."""
    tbl = table([route("B", "true", max_jobs=30, max_idle_jobs=12)], periodic_expr_interval=30)
    r, src, dst = make_router(tbl, dst=JobQueue())
    submit(src, 5, now=T0, PeriodicRemove="time() - QDate > 10000000")
    now = T0
    for k in range(300):
        now += 30
        for job in list(dst):
            schedd_set(dst, job.key, now=now, JobStatus=2 if k % 2 else 1, RemoteWallClockTime=k)
        r.poll(now)
        assert len(r._periodic_heap) <= len(r.jobs) == 5
    assert r.periodic_evaluations > 300  # every pass evaluated the changed copies


def test_a_routed_jobs_copy_pickles_and_copies_unwatched():
    """``RoutedJob.src`` (``lifecycle.SrcAttrs``) survives pickle and copy with its texts, as a
    new unwatched copy: it does not note its key in the router's set of touched jobs."""
    r, src, _ = _router()
    (key,) = submit(src)
    r.poll(T0 + 10)
    job = r.jobs[key]
    job.src["Foo"] = "1"
    r._settled.touched.clear()
    back = pickle.loads(pickle.dumps(job))
    assert back.src_key == key and dict(back.src) == dict(job.src) and back.src.version == 0
    twin = copy.copy(job.src)
    assert dict(twin) == dict(job.src) and twin.watch is None and twin.version == 0
    twin["Bar"] = "2"
    back.src["Bar"] = "2"
    assert r._settled.touched == set()


def test_a_copy_set_by_the_routers_local_writer_counts_the_change():
    """``lifecycle._set_local`` on a routed job's copy (``SrcAttrs``) counts the change and notes
    the job for the next source policy pass, as every other write of the copy does."""
    r, src, _ = _router()
    (key,) = submit(src)
    r.poll(T0 + 10)
    job = r.jobs[key]
    r._settled.touched.clear()
    version = job.src.version
    _set_local(job.src, "foo", "1")
    assert job.src["foo"] == "1" and job.src.version == version + 1
    assert r._settled.touched == {key}


def test_stale_deadlines_are_dropped_when_they_outnumber_the_queued_ones():
    """Entries whose deadline moved since (or whose job was forgotten) are dropped from the heap
    once they outnumber the queued deadlines, before they come up."""
    r, src, _ = _router()
    submit(src, 5, PeriodicRemove="time() - QDate > 10000000")
    r.poll(T0 + 10)
    r.poll(T0 + 70)
    assert len(r._periodic_heap) == 5
    r._periodic_heap.extend((T0 + 10**9 + i, "9.9") for i in range(200))  # stale: nothing queued
    r.poll(T0 + 130)
    assert len(r._periodic_heap) == 5
