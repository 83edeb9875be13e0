"""Embedded schedd: job states and their time attributes, hold / release / remove / qedit,
periodic and exit policy, history when a job leaves the queue (issue 5 part 1).
Sources: htcondor.md §1.6 (LeaveJobInQueue, JobFinishedHookDone), §3.1 (keys, cluster ad),
src/condor_utils/user_job_policy.cpp (policy order and reasons)."""

import pytest
import random

from engine.queue.jobqueue import JobQueue
from engine.schedd.history import HistoryWriter, read_history
from engine.schedd.queue_store import QueueStore
from engine.schedd.schedd import Schedd
from engine.schedd.store import MemoryStore
from engine.schedd.sites import RunTime, SiteSet, SiteSpec
from engine.schedd.workload import JobTemplate

T0 = 1_700_000_000.0


@pytest.fixture(params=["memory", "jobqueue"])
def kind(request):
    return request.param


def _store(kind):
    return MemoryStore() if kind == "memory" else QueueStore(JobQueue())


def _cluster_ad(store, c):
    if isinstance(store, MemoryStore):
        return store.ads.get(f"0{c}.-1")
    ad = store.queue.ad(f"0{c}.-1")
    return None if ad is None else dict(ad)


def _proc_ad(store, key):
    if isinstance(store, MemoryStore):
        return store.ads.get(key)
    return dict(store.queue.ad(key))


def _mk(kind, tmp_path=None, **site):
    spec = dict(slots=2, start_latency=(0, 0), runtime=RunTime("fixed", 100))
    spec.update(site)
    sites = SiteSet([SiteSpec("S", routes=("R",), **spec)], seed=1)
    hist = HistoryWriter(tmp_path / "history") if tmp_path else None
    return Schedd(_store(kind), sites, hist)


def _run(s, until):
    while s.sites.next_time() is not None and s.sites.next_time() <= until:
        t = s.sites.next_time()
        s.apply_reports(s.sites.advance(t), t)


def test_submit_puts_template_on_cluster_ad_and_state_on_procs(kind):
    s = _mk(kind)
    ids = s.submit(JobTemplate("t", {"Owner": '"bob"'}), 2, T0)
    assert ids == ["1.0", "1.1"]
    st = s.store
    c = _cluster_ad(st, 1)
    assert c["Owner"] == '"bob"' and c["QDate"] == str(int(T0))
    assert _proc_ad(st, "1.1") == {"ProcId": "1", "JobStatus": "1", "EnteredCurrentStatus": str(int(T0))}
    assert st.attrs("1.1")["Owner"] == '"bob"'


def _grid_job(s, extra=None, now=T0):
    attrs = {"JobUniverse": "9", "RouteName": '"R"', "LeaveJobInQueue": "JobStatus == 4"}
    attrs.update(extra or {})
    return s.submit(JobTemplate("g", attrs), 1, now)[0]


def test_run_to_completion_sets_time_and_exit_attributes(kind, tmp_path):
    s = _mk(kind, tmp_path)
    j = _grid_job(s)
    s.dispatch(T0)
    _run(s, T0 + 500)
    a = s.store.attrs(j)
    assert a["JobStatus"] == "4" and a["ExitCode"] == "0" and a["ExitBySignal"] == "false"
    assert a["JobCurrentStartDate"] == str(int(T0)) and a["CompletionDate"] == str(int(T0 + 100))
    assert a["RemoteWallClockTime"] == "100.0" and a["NumJobStarts"] == "1"
    # a routed copy stays (LeaveJobInQueue) until the router finalizes it (htcondor.md §1.6)
    assert a["JobFinishedHookDone"] == str(int(T0 + 100))
    assert s.reap(T0 + 500) == []
    s.qedit(j, "LeaveJobInQueue", "false", T0 + 510)
    assert s.reap(T0 + 520) == [j]
    assert s.store.attrs(j) is None and _cluster_ad(s.store, 1) is None
    (rec,) = read_history(tmp_path / "history")
    assert rec.attrs["ClusterId"] == "1" and rec.attrs["ProcId"] == "0" and rec.attrs["JobStatus"] == "4"


def test_hold_release_remove(kind):
    s = _mk(kind)
    j = _grid_job(s)
    s.dispatch(T0)
    _run(s, T0 + 20)  # running (first update after 8 s)
    assert s.store.attrs(j)["JobStatus"] == "2"
    assert s.hold(j, T0 + 30, "testing")
    a = s.store.attrs(j)
    assert (a["JobStatus"], a["HoldReason"], a["HoldReasonCode"]) == ("5", '"testing"', "1")
    assert a["RemoteWallClockTime"] == "30.0" and a["EnteredCurrentStatus"] == str(int(T0 + 30))
    assert s.sites.location(j) is None  # the site run was cancelled
    assert not s.hold(j, T0 + 31)  # already held
    assert s.release(j, T0 + 40)
    a = s.store.attrs(j)
    assert a["JobStatus"] == "1" and "HoldReason" not in a and a["LastHoldReason"] == '"testing"'
    assert s.remove(j, T0 + 50, "bye")
    assert s.store.attrs(j)["JobStatus"] == "3"
    assert s.reap(T0 + 60) == [j]


def test_externally_managed_jobs_are_left_to_the_router(kind):
    s = _mk(kind)
    j = s.submit(JobTemplate("x", {"PeriodicRemove": "true", "Managed": '"External"'}), 1, T0)[0]
    assert s.periodic(T0) == 0
    s.remove(j, T0 + 1)
    assert s.reap(T0 + 2) == []  # stays until the router yields it


def test_periodic_policy_runs_every_interval(kind):
    s = _mk(kind)
    j = s.submit(JobTemplate("x", {"PeriodicHold": "time() - QDate > 100"}), 1, T0)[0]
    assert s.periodic(T0 + 90) == 0  # evaluated, not yet true
    assert s.periodic(T0 + 120) == 0  # true now, but only every PERIODIC_EXPR_INTERVAL (60 s)
    assert s.periodic(T0 + 150) == 1
    a = s.store.attrs(j)
    assert a["HoldReasonCode"] == "3" and "PeriodicHold" in a["HoldReason"]


def test_on_exit_hold_and_requeue(kind, tmp_path):
    s = _mk(kind, failure_probability=1.0)
    held = _grid_job(s, {"OnExitHold": "ExitCode != 0"})
    again = _grid_job(s, {"OnExitRemove": "ExitCode == 0"})
    s.dispatch(T0)
    _run(s, T0 + 150)
    assert s.store.attrs(held)["JobStatus"] == "5" and s.store.attrs(held)["HoldReasonCode"] == "3"
    a = s.store.attrs(again)
    assert a["JobStatus"] == "1" and a["ExitCode"] == "1" and "CompletionDate" not in a


def test_queue_store_indexes_follow_changes_as_a_rebuild_finds_them():
    """The store's indexes (status, dispatch, periodic, cron) kept from change events — a change
    of attributes no index reads only noted — equal those a full rebuild from the queue gives
    (the oracle), after random edits of indexed and other attributes on proc and cluster ads
    (htcondor.md §1.6: a job with Managed "External" is the router's; §2.1: Cron* attributes)."""
    q = JobQueue()
    store = QueueStore(q)
    rnd = random.Random(14)
    names = {"JobStatus": ["1", "2", "4", "5"], "JobUniverse": ["5", "9", "12"], "Managed": ['"External"', '"Schedd"'],
             "PeriodicHold": ["false"], "CronMinute": ['"*/5"'], "Foo": ["1", "2"], "RequestCpus": ["1"]}
    with q.transaction(now=1) as t:
        for c in (1, 2):
            t.new_ad(f"0{c}.-1", "Job")
            for p in range(3):
                t.new_ad(f"{c}.{p}", "Job")
                t.set_attribute(f"{c}.{p}", "JobStatus", "1")
    for step in range(60):
        with q.transaction(now=2 + step) as t:
            for _ in range(rnd.randint(1, 4)):
                c, p = rnd.choice((1, 2)), rnd.choice((-1, 0, 1, 2))
                key = f"0{c}.-1" if p < 0 else f"{c}.{p}"
                name = rnd.choice([n for n in names if not (p < 0 and n == "JobStatus")])
                if rnd.random() < 0.2:
                    t.delete_attribute(key, name)
                else:
                    t.set_attribute(key, name, rnd.choice(names[name]))
        oracle = QueueStore(q)
        assert store.status == oracle.status
        for index in ("_by_status", "_dispatch", "_periodic", "_cron"):
            got, want = getattr(store, index), getattr(oracle, index)
            if index == "_by_status":
                got = {k: set(v) for k, v in got.items() if v}
                want = {k: set(v) for k, v in want.items() if v}
            else:
                got, want = set(got), set(want)
            assert got == want, (index, step)
        oracle.close()
