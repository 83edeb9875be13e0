"""Route choice and the routed-copy life cycle (htcondor.md §1.4, §1.6).

The destination queue is edited the way a schedd would (start, complete with
JobFinishedHookDone, hold, remove, let the copy leave); the router only reacts.
"""

from __future__ import annotations

from tests.helpers.router_fixtures import (
    T0, get, kinds, make_router, route, schedd_destroy, schedd_set, submit, table,
)

from engine.queue.jobqueue import JobQueue
from engine.router.lifecycle import State
from engine.router.routerlog import HEADER, parse_router_log

# ------------------------------------------------------------------------------------ route choice


def test_first_match_in_list_order_and_one_poll_to_submitted():
    """§1.4: first matching route in JOB_ROUTER_ROUTE_NAMES order; one poll UNCLAIMED→SUBMITTED
    (the job_router_basic/xform tests: Production1 beats Production2, htcondor.md §6)."""
    tbl = table([route("Production1", "RouteMe == 1"), route("Analysis3", "RouteMe == 0"),
                 route("Production2", "RouteMe == 1")])
    r, src, dst = make_router(tbl)
    keys = submit(src, 4, RouteMe=lambda p: str(p % 2))
    r.poll(T0 + 10)
    routed = {k: r.jobs[k].route_name for k in keys}
    assert routed == {keys[0]: "Analysis3", keys[1]: "Production1", keys[2]: "Analysis3", keys[3]: "Production1"}
    assert all(r.jobs[k].state is State.SUBMITTED for k in keys)


def test_claim_and_routed_copy_attributes():
    """§1.6: the claim sets Managed/ManagedManager on the source; the copy carries RoutedFromJobId,
    RoutedBy, RouteName, LeaveJobInQueue; the source gets RoutedToJobId; ProcId/JobStatus in the
    proc ad, the rest in the cluster ad."""
    tbl = table([route("Site1", grid_resource="batch slurm")], name="htcondor-ce")
    r, src, dst = make_router(tbl)
    (key,) = submit(src)
    r.poll(T0 + 10)
    job = r.jobs[key]
    assert get(src, key, "Managed") == '"External"'
    assert get(src, key, "ManagedManager") == '"htcondor-ce"'
    assert get(src, key, "RoutedToJobId") == f'"{job.dest_key}"'
    d = job.dest_key
    assert get(dst, d, "RoutedFromJobId") == f'"{key}"'
    assert get(dst, d, "RoutedBy") == '"htcondor-ce"'
    assert get(dst, d, "RouteName") == '"Site1"'
    assert get(dst, d, "LeaveJobInQueue") == "JobStatus == 4"
    assert get(dst, d, "QDate") == str(int(T0 + 10))
    c = int(d.split(".")[0])
    assert set(dst.ad(d)) == {"ProcId", "JobStatus"}
    assert "RouteName" in dst.ad(f"0{c}.-1")
    assert kinds(r) == ["job-routed"]


def test_full_route_skipped_job_falls_through_and_limits_hold_within_one_poll():
    """§1.4/§1.5: a route not accepting jobs is skipped; counters increase at once."""
    tbl = table([route("Small", max_jobs=2), route("Big", max_jobs=100, max_idle_jobs=3)])
    r, src, dst = make_router(tbl)
    keys = submit(src, 8)
    r.poll(T0 + 10)
    on = [r.jobs[k].route_name if k in r.jobs else None for k in keys]
    # Small takes 2 (MaxJobs), Big takes 3 (MaxIdleJobs 3: all its jobs are idle), 3 stay
    assert on == ["Small", "Small", "Big", "Big", "Big", None, None, None]
    assert r.last_cycle["stopped"] == "all routes are full"
    st = {s.name: s for s in r.route_stats(T0 + 10)}
    assert st["Small"].reason == "full: 2 ≥ MaxJobs 2"
    assert st["Big"].reason == "idle limit: 3 idle ≥ MaxIdleJobs 3"


def test_round_robin_counter_shared_across_jobs():
    """§1.4: round robin picks matches[counter++ % n] among accepting matching routes."""
    tbl = table([route("A"), route("B"), route("C", "Pick == 1")], round_robin=True)
    r, src, dst = make_router(tbl)
    keys = submit(src, 6, Pick=lambda p: "1" if p >= 3 else "0")
    r.poll(T0 + 10)
    on = [r.jobs[k].route_name for k in keys]
    # counter 0,1,2 over [A,B]; then 3,4,5 over [A,B,C]
    assert on == ["A", "B", "A", "A", "B", "C"]


def test_global_max_jobs_and_source_constraint():
    """§1.3/§1.4: JOB_ROUTER_MAX_JOBS counts managed jobs; the source constraint is in the umbrella."""
    tbl = table([route("A")], max_jobs=2, source_job_constraint="WantRoute =?= true")
    r, src, dst = make_router(tbl)
    keys = submit(src, 4, WantRoute=lambda p: "true" if p != 0 else "false")
    r.poll(T0 + 10)
    assert sorted(r.jobs) == keys[1:3]
    assert "JOB_ROUTER_MAX_JOBS reached" in r.last_cycle["stopped"]
    assert r.last_cycle["umbrella"].startswith("(WantRoute =?= true) && ( (true) )")


def test_umbrella_sanity_clause_excludes_non_idle_managed_and_routed_copies():
    """§1.4 umbrella: JobStatus == 1, Managed isnt External/ScheddDone, Owner defined,
    RoutedBy isnt the router (a copy in the same queue is never routed again)."""
    tbl = table([route("A")])
    r, src, dst = make_router(tbl)
    idle, _running, _done, _ext, _staged = (submit(src, 1)[0], submit(src, 1, JobStatus="2")[0],
                                        submit(src, 1, Managed='"ScheddDone"')[0],
                                        submit(src, 1, Managed='"External"')[0],
                                        submit(src, 1, StageInStart="5")[0])
    r.poll(T0 + 10)
    assert set(r.jobs) == {idle}
    r.poll(T0 + 20)
    assert set(r.jobs) == {idle}  # the copy (same queue, RoutedBy = jobrouter) is not a candidate


def test_tracked_jobs_are_not_candidates_twice():
    # Source: htcondor.md §1.4 (candidate query: Managed jobs are not candidates again)
    tbl = table([route("A")])
    r, src, dst = make_router(tbl)
    submit(src, 2)
    r.poll(T0 + 10)
    r.poll(T0 + 20)
    assert len(r.jobs) == 2 and r.route_stats(T0)[0].recent_started == 2


# ------------------------------------------------------------------------------------ life cycle


def start_and_finish(dst, dest, now, exit_code=0):
    schedd_set(dst, dest, now, JobStatus=2, JobCurrentStartDate=int(now))
    return lambda t: schedd_set(dst, dest, t, JobStatus=4, ExitCode=exit_code, CompletionDate=int(t),
                                RemoteWallClockTime="120.0", JobFinishedHookDone=int(t))


def test_status_mirroring_completion_finalize_and_retirement():
    """§1.6: Running and Completed are mirrored with the usage attributes; FINISHED needs
    JobStatus 4 and JobFinishedHookDone; finalize sets LeaveJobInQueue = FALSE; yield sets
    Managed = "ScheddDone"; success counted; the retired job is forgotten once the queues sync."""
    tbl = table([route("A")])
    r, src, dst = make_router(tbl)
    (key,) = submit(src)
    r.poll(T0 + 10)
    dest = r.jobs[key].dest_key
    finish = start_and_finish(dst, dest, T0 + 15)
    r.poll(T0 + 20)
    assert get(src, key, "JobStatus") == "2"
    assert get(src, key, "EnteredCurrentStatus") == str(int(T0 + 20))
    assert get(src, key, "JobCurrentStartDate") == str(int(T0 + 15))
    assert r.route_stats(T0 + 20)[0].running == 1

    schedd_set(dst, dest, T0 + 25, JobStatus=4, ExitCode=0)  # completed but not yet processed
    r.poll(T0 + 30)
    assert r.jobs[key].state is State.SUBMITTED and get(src, key, "JobStatus") == "4"
    finish(T0 + 35)
    r.poll(T0 + 40)
    job = r.jobs[key]
    assert job.state is State.RETIRED and job.outcome == "success"
    assert get(dst, dest, "LeaveJobInQueue") == "FALSE"
    assert get(src, key, "Managed") == '"ScheddDone"' and get(src, key, "ManagedManager") == '""'
    assert get(src, key, "RemoteWallClockTime") == "120.0" and get(src, key, "ExitCode") == "0"
    assert r.route_stats(T0 + 40)[0].recent_succeeded == 1
    assert "job-finished" in kinds(r)
    # the dest still shows RoutedBy: retirement waits for the schedd to let the copy go
    r.poll(T0 + 50)
    assert key in r.jobs
    schedd_destroy(dst, dest, T0 + 55)
    r.poll(T0 + 60)
    assert key not in r.jobs


def test_job_failure_test_counts_as_failure():
    """§1.4/§1.5: JobFailureTest evaluated on the router's copy with the mirrored final attributes."""
    tbl = table([route("A", job_failure_test="ExitCode =!= 0")])
    r, src, dst = make_router(tbl)
    (key,) = submit(src)
    r.poll(T0 + 10)
    start_and_finish(dst, r.jobs[key].dest_key, T0 + 11, exit_code=3)(T0 + 12)
    r.poll(T0 + 20)
    assert r.jobs[key].outcome == "failure"
    s = r.route_stats(T0 + 20)[0]
    assert (s.recent_succeeded, s.recent_failed) == (0, 1)


def test_source_removed_is_interrupted_and_copy_removed_and_source_destroyed():
    """§1.6: condor_rm of the source: interrupted (not counted); cleanup removes the copy with
    "JobRouter aborted job"; yield sees Removed and destroys the source."""
    tbl = table([route("A")])
    r, src, dst = make_router(tbl)
    (key,) = submit(src)
    r.poll(T0 + 10)
    dest = r.jobs[key].dest_key
    schedd_set(src, key, T0 + 12, JobStatus=3, RemoveReason='"via condor_rm"')
    r.poll(T0 + 20)
    assert r.jobs[key].outcome == "interrupted"
    assert get(dst, dest, "JobStatus") == "3" and get(dst, dest, "RemoveReason") == '"JobRouter aborted job"'
    assert src.get(key) is None
    s = r.route_stats(T0 + 20)[0]
    assert (s.recent_succeeded, s.recent_failed) == (0, 0)


def test_source_held_by_user_is_interrupted_and_stays_held():
    """§1.6: a hold not copied from the routed job interrupts; the source stays Held, Managed="Schedd"."""
    tbl = table([route("A")])
    r, src, dst = make_router(tbl)
    (key,) = submit(src)
    r.poll(T0 + 10)
    schedd_set(src, key, T0 + 12, JobStatus=5, HoldReason='"user hold"')
    r.poll(T0 + 20)
    assert r.jobs[key].outcome == "interrupted"
    assert get(src, key, "JobStatus") == "5" and get(src, key, "Managed") == '"Schedd"'


def _held_copy_then_removed(release_on_hold):
    tbl = table([route("A")], release_on_hold=release_on_hold)
    r, src, dst = make_router(tbl)
    (key,) = submit(src, ReleaseReason='"earlier release"', NumSystemHolds="2")
    r.poll(T0 + 10)
    dest = r.jobs[key].dest_key
    schedd_set(dst, dest, T0 + 12, JobStatus=5, HoldReason='"site said no"', HoldReasonCode=28, HoldReasonSubCode=7)
    r.poll(T0 + 20)
    return r, src, dst, key, dest


def test_routed_copy_hold_is_mirrored():
    """§1.6 dest Held: source JobStatus 5 with HoldReason, codes, HoldCopiedFromTargetJob,
    NumSystemHolds + 1, ReleaseReason → LastReleaseReason; the job stays managed."""
    r, src, dst, key, dest = _held_copy_then_removed(True)
    assert get(src, key, "JobStatus") == "5"
    assert get(src, key, "HoldReason") == '"site said no"'
    assert (get(src, key, "HoldReasonCode"), get(src, key, "HoldReasonSubCode")) == ("28", "7")
    assert get(src, key, "HoldCopiedFromTargetJob") == "true"
    assert get(src, key, "NumSystemHolds") == "3"
    assert get(src, key, "LastReleaseReason") == '"earlier release"'
    assert r.jobs[key].state is State.SUBMITTED
    assert r.route_stats(T0 + 20)[0].held == 1


def test_release_on_hold_after_copy_removed():
    """§1.6 yield: JOB_ROUTER_RELEASE_ON_HOLD true releases a mirrored hold (JobStatus 1, the
    attribute deleted); a removed copy that had been seen counts as a failure."""
    r, src, dst, key, dest = _held_copy_then_removed(True)
    schedd_destroy(dst, dest, T0 + 25)
    r.poll(T0 + 30)
    retired = [e for e in r.drain_events() if e.kind == "job-retired"]
    assert retired[0].outcome == "failure" and "was removed" in retired[0].message
    assert r.route_stats(T0 + 30)[0].recent_failed == 1
    assert key not in r.jobs  # both queues already in sync: forgotten in the same poll
    assert get(src, key, "JobStatus") == "1" and get(src, key, "HoldCopiedFromTargetJob") is None
    assert get(src, key, "Managed") == '"Schedd"'


def test_no_release_on_hold_keeps_source_held():
    """§1.6 yield with JOB_ROUTER_RELEASE_ON_HOLD false: the source stays Held."""
    r, src, dst, key, dest = _held_copy_then_removed(False)
    schedd_destroy(dst, dest, T0 + 25)
    r.poll(T0 + 30)
    assert get(src, key, "JobStatus") == "5"


def test_removed_copy_status_not_passed_back():
    """§1.6: dest Removed is not passed on to the source."""
    tbl = table([route("A")])
    r, src, dst = make_router(tbl)
    (key,) = submit(src)
    r.poll(T0 + 10)
    schedd_set(dst, r.jobs[key].dest_key, T0 + 11, JobStatus=3)
    r.poll(T0 + 20)
    assert get(src, key, "JobStatus") == "1"


class LaggingMirror:
    """A destination mirror that does not show some jobs yet (htcondor.md §3.5 lag)."""

    def __init__(self, q):
        self.q, self.hidden = q, set()

    def get(self, key):
        return None if (key if isinstance(key, str) else "%d.%d" % key) in self.hidden else self.q.get(key)

    def __iter__(self):
        return (j for j in self.q if j.key not in self.hidden)

    def transaction(self, now=None):
        return self.q.transaction(now=now)


def test_copy_never_seen_gives_up_after_mirror_lag():
    """§1.6: a routed copy not in the mirror: wait up to MAX_JOB_MIRROR_UPDATE_LAG, then fail."""
    real = JobQueue()
    mirror = LaggingMirror(real)
    tbl = table([route("A")])
    r, src, _ = make_router(tbl, dst=mirror)
    (key,) = submit(src)
    mirror.hidden.add("1.0")  # the first cluster of the (separate) destination queue
    r.poll(T0 + 10)
    assert r.jobs[key].state is State.SUBMITTED and r.jobs[key].dest_key == "1.0"
    r.poll(T0 + 10 + 600)  # age 600 is not > 600
    assert r.jobs[key].state is State.SUBMITTED
    r.drain_events()
    r.poll(T0 + 10 + 601)
    retired = [e for e in r.drain_events() if e.kind == "job-retired"]
    assert retired[0].outcome == "failure" and "giving up" in retired[0].message


def test_log_table_reads_back_with_the_jobrouterlog_reader():
    """§1.5: the per-poll table format ("%-24s %-11s %7d/%7d %7d/%7d %8s  %7d %9d %6d"); the
    JobRouterLog reader (engine.router.routerlog) reads our rows back with the same figures."""
    tbl = table([route("Site1", max_jobs=10, max_idle_jobs=5), route("BlackHole")])
    r, src, dst = make_router(tbl)
    submit(src, 7)
    r.poll(T0 + 10)
    r.book.get("BlackHole").throttle = 3.4
    text = r.log_table()
    assert text.splitlines()[1].startswith("Site1                    JOB_ROUTER_ROUTE_Site1       5/     10       5/      5")
    tables, problems = parse_router_log("11/21/26 14:32:05 " + HEADER + "\n" + text)
    assert not problems
    rows = {row.name: row for row in tables[0].rows}
    assert (rows["Site1"].submitted, rows["Site1"].max_jobs, rows["Site1"].idle, rows["Site1"].max_idle) == (5, 10, 5, 5)
    assert rows["BlackHole"].submitted == 2
    assert rows["BlackHole"].throttle_text == "%g jobs/sec" % (3.4 / 600)
