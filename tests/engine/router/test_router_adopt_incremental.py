"""AdoptOrphans reads again only the routed copies that changed or stopped being a tracked job's
own (issue 14 item 4). htcondor.md §1.7: every fifth poll the router rebuilds tracked jobs from
the routed copies' attributes; a copy that is the tracked job's own is left alone, any other copy
of this router is adopted (or removed when its source is gone)."""

from __future__ import annotations

from tests.helpers.router_fixtures import T0, kinds, make_router, route, submit, table

from engine.queue.jobqueue import JobQueue


def test_a_copy_no_longer_tracked_is_adopted_again_although_it_did_not_change():
    """§1.7: the router forgets a job (as after a crash of its state) while its routed copy sits
    unchanged in the queue; the next AdoptOrphans pass adopts the copy again."""
    r, src, dst = make_router(table([route("A", max_jobs=10, max_idle_jobs=10)]), dst=JobQueue())
    keys = submit(src, 3)
    for i in range(1, 7):  # polls 1 and 6 adopt: the copies are seen as the tracked jobs' own
        r.poll(T0 + 10 * i)
    assert kinds(r).count("orphan-adopted") == 0
    dest = r.jobs[keys[1]].dest_key
    del r.jobs[keys[1]]
    for i in range(7, 12):
        r.poll(T0 + 10 * i)  # poll 11 adopts
    assert kinds(r).count("orphan-adopted") == 1
    assert r.jobs[keys[1]].dest_key == dest


def test_a_copy_tracked_under_another_key_is_removed():
    """§1.7: a routed copy of a source the router tracks with another copy is removed ("is already
    routed"), even when the copy itself did not change since the last pass."""
    r, src, dst = make_router(table([route("A", max_jobs=10, max_idle_jobs=10)]), dst=JobQueue())
    (key,) = submit(src)
    for i in range(1, 7):
        r.poll(T0 + 10 * i)
    dest = r.jobs[key].dest_key
    r.jobs[key].dest_key = "999.0"  # the router now believes another copy is this job's
    r.drain_events()
    for i in range(7, 11):
        r.poll(T0 + 10 * i)
    assert kinds(r) == []  # no AdoptOrphans pass yet
    r.poll(T0 + 110)  # poll 11
    assert kinds(r) == ["orphan-removed"]
    assert dst.get(dest).get("JobStatus") == "3"  # removed ("JobRouter orphan")
