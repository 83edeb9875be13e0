"""Crash recovery, EditJobInPlace, source policy, table switches and the throttle in a running
router (htcondor.md §1.5–1.7)."""

from __future__ import annotations

from tests.helpers.router_fixtures import T0, get, kinds, make_router, route, schedd_set, submit, table

from engine.queue.jobqueue import JobQueue
from engine.router.lifecycle import State
from engine.router.router import JobRouter
from tests.helpers.router_fixtures import build


def test_restart_adopts_routed_copies_from_job_attributes_alone():
    """§1.7: a new router (no state) adopts dest jobs with RoutedBy/RoutedFromJobId/RouteName in
    SUBMITTED on poll 1, counts them on their route, and carries on to completion."""
    tbl = table([route("A"), route("B")])
    r1, src, dst = make_router(tbl)
    keys = submit(src, 2)
    r1.poll(T0 + 10)
    dests = {k: r1.jobs[k].dest_key for k in keys}
    routes = {k: r1.jobs[k].route_name for k in keys}
    del r1  # crash

    r2 = JobRouter(tbl, src, dst, now=T0 + 100, build=build)
    r2.poll(T0 + 110)  # poll_count 1 -> AdoptOrphans
    assert {k: (j.state, j.dest_key, j.route_name, j.is_claimed) for k, j in r2.jobs.items()} == {
        k: (State.SUBMITTED, dests[k], routes[k], True) for k in keys}
    assert kinds(r2).count("orphan-adopted") == 2
    assert sum(s.routed for s in r2.route_stats(T0 + 110)) == 2
    d = dests[keys[0]]
    schedd_set(dst, d, T0 + 120, JobStatus=4, JobFinishedHookDone=int(T0 + 120))
    r2.poll(T0 + 130)
    assert r2.jobs[keys[0]].outcome == "success"
    assert get(src, keys[0], "Managed") == '"ScheddDone"'


def test_orphans_only_looked_for_every_fifth_poll():
    """§1.4 step 2: AdoptOrphans on polls 1, 6, 11, …"""
    tbl = table([route("A")])
    r1, src, dst = make_router(tbl)
    submit(src)
    r1.poll(T0 + 10)
    r2 = JobRouter(tbl, src, dst, now=T0, build=build)
    r2.poll_count = 1  # pretend poll 1 happened before the copy existed
    for i in range(2, 6):
        r2.poll(T0 + 10 * i)
        assert not r2.jobs, i
    r2.poll(T0 + 60)  # poll 6
    assert len(r2.jobs) == 1


def test_dest_orphan_without_source_is_removed_and_source_orphan_is_yielded():
    """§1.7: a routed copy whose source is gone is removed ("JobRouter orphan"); a source claimed
    by this router with no routed copy is yielded (Managed = "Schedd", back to Idle)."""
    src, dst = JobQueue(), JobQueue()
    (orphan_dest,) = submit(dst, RoutedBy='"jobrouter"', RoutedFromJobId='"7.0"', RouteName='"A"')
    (claimed,) = submit(src, Managed='"External"', ManagedManager='"jobrouter"', JobStatus="2")
    (other,) = submit(src, Managed='"External"', ManagedManager='"someone-else"')
    (no_info,) = submit(dst, RoutedBy='"jobrouter"')
    tbl = table([route("A", "false")])
    r = JobRouter(tbl, src, dst, now=T0, build=build)
    r.poll(T0 + 10)
    assert get(dst, orphan_dest, "JobStatus") == "3" and get(dst, orphan_dest, "RemoveReason") == '"JobRouter orphan"'
    assert get(src, claimed, "Managed") == '"Schedd"' and get(src, claimed, "JobStatus") == "1"
    assert get(src, other, "Managed") == '"External"'  # not ours
    assert get(dst, no_info, "JobStatus") == "1"  # no routing information: skipped
    assert sorted(kinds(r)) == ["orphan-removed", "orphan-yielded"]


def test_edit_job_in_place_no_claim_success_and_rerouting_loop_guard():
    """§1.6 EditJobInPlace: no claim, no copy; the source is edited; counts as a success; it can
    be routed again if it still matches, so the route needs a marker."""
    tbl = table([route("Edit", "EditedBy is undefined", edit_job_in_place="true")])
    r, src, dst = make_router(tbl)
    (key,) = submit(src)
    r.poll(T0 + 10)
    assert get(src, key, "EditedBy") == '"Edit"'
    assert get(src, key, "Managed") is None
    assert len(list(dst)) == 1  # no routed copy (same queue: only the source)
    s = r.route_stats(T0 + 10)[0]
    assert (s.recent_started, s.recent_succeeded) == (1, 1)
    r.poll(T0 + 20)
    assert r.route_stats(T0 + 20)[0].recent_started == 1  # the marker stops the loop


def test_source_periodic_remove_evaluated_by_the_router():
    """§1.6: the schedd does not evaluate policy for externally managed jobs, the router does
    every PERIODIC_EXPR_INTERVAL; a remove leads to an interrupted cleanup on the next poll."""
    tbl = table([route("A")], periodic_expr_interval=60)
    r, src, dst = make_router(tbl)
    (key,) = submit(src, PeriodicRemove="CurrentTime - QDate > 100")
    r.poll(T0 + 10)
    r.poll(T0 + 60)  # policy runs: 60 - 0 = 60 not > 100
    assert get(src, key, "JobStatus") == "1"
    r.poll(T0 + 130)  # the interval passed again: 130 > 100 -> removed
    assert get(src, key, "JobStatus") == "3"
    assert "The job attribute PeriodicRemove expression 'CurrentTime - QDate > 100' evaluated to TRUE" in get(src, key, "RemoveReason")
    r.poll(T0 + 140)
    ev = [e for e in r.drain_events() if e.kind == "job-retired"]
    assert ev and ev[0].outcome == "interrupted"
    assert src.get(key) is None  # yield destroyed the removed source


def test_periodic_hold_fields():
    """§1.6 policy Hold: JobStatus 5, HoldReason/Code/SubCode, ReleaseReason → LastReleaseReason,
    ReleaseReason "Undefined", NumSystemHolds + 1."""
    tbl = table([route("A")], periodic_expr_interval=60)
    r, src, dst = make_router(tbl)
    (key,) = submit(src, PeriodicHold="true", PeriodicHoldSubCode="4", ReleaseReason='"was released"')
    r.poll(T0 + 10)
    r.poll(T0 + 70)
    assert get(src, key, "JobStatus") == "5"
    assert get(src, key, "HoldReasonCode") == "3" and get(src, key, "HoldReasonSubCode") == "4"
    assert get(src, key, "LastReleaseReason") == '"was released"'
    assert get(src, key, "ReleaseReason") == '"Undefined"'
    assert get(src, key, "NumSystemHolds") == "1"


def test_table_switch_keeps_route_state_by_name():
    """§1.5 CopyState across reconfig; jobs keep their route; a new route starts fresh."""
    tbl = table([route("A", max_jobs=5)])
    r, src, dst = make_router(tbl)
    submit(src, 3)
    r.poll(T0 + 10)
    r.book.get("A").throttle = 9.0
    r.set_table(table([route("a", max_jobs=5), route("New")]), T0 + 20)
    st = {s.name: s for s in r.route_stats(T0 + 20)}
    assert st["a"].routed == 3 and st["a"].recent_started == 3 and st["a"].throttle == 9.0
    assert st["New"].window_start == T0 + 20
    assert "table-switched" in kinds(r)


def test_black_hole_route_gets_throttled_and_stops_accepting():
    """§1.5 end to end: failures in a 600 s window throttle the route; routing then stops once
    recent_routed reaches the throttle."""
    tbl = table([route("BlackHole", max_jobs=1000, max_idle_jobs=-1)])
    r, src, dst = make_router(tbl)
    keys = submit(src, 20)
    r.poll(T0 + 10)
    for k in keys:  # the site kills every copy
        schedd_set(dst, r.jobs[k].dest_key, T0 + 20, JobStatus=3)
        dst_key = r.jobs[k].dest_key
        with dst.transaction(now=T0 + 21) as t:
            t.destroy(dst_key)
    r.poll(T0 + 30)  # all 20 seen removed: failures; the sources are yielded back to Idle
    s = r.route_stats(T0 + 30)[0]
    assert s.recent_failed == 20 and s.recent_started == 20 and s.routed == 0
    # the window began when the router started (T0); at T0+600 it closes:
    # rate 20/600 = 0.0333 > 0.03, ratio = 20/(20+0+0) = 1 -> throttle = 600*0.03/1 = 18
    r.poll(T0 + 600)
    s = r.route_stats(T0 + 600)[0]
    assert s.throttle == 18.0
    assert "route-throttled" in kinds(r)
    # in the same poll the 20 idle sources are candidates again, but only 18 get through
    assert s.recent_started == 18 and s.routed == 18
    assert not s.accepting and s.reason.startswith("throttled: 18 routed ≥ throttle 18 per 600 s")
    assert r.last_cycle["stopped"] == "all routes are full"


def test_a_job_adopted_in_a_poll_counts_against_its_route_in_that_poll():
    """§1.4: a poll runs AdoptOrphans, then UpdateRouteStats, then GetCandidateJobs, so a routed
    copy adopted in the poll fills its route's MaxJobs before any candidate is matched (the route
    counts are recounted after the adoption, not kept from the previous poll's end)."""
    tbl = table([route("A", max_jobs=1)])
    r1, src, dst = make_router(tbl)
    (first,) = submit(src)
    r1.poll(T0 + 10)
    r2 = JobRouter(tbl, src, dst, now=T0, build=build)
    r2.poll_count = 1  # pretend poll 1 happened before the copy existed
    for i in range(2, 6):
        r2.poll(T0 + 10 * i)
    assert not r2.jobs
    (second,) = submit(src, now=T0 + 55)
    r2.poll(T0 + 60)  # poll 6: adopts the first job's copy, which fills route A
    assert list(r2.jobs) == [first]
    assert [(s.name, s.routed) for s in r2.route_stats(T0 + 60)] == [("A", 1)]
