"""GetCandidateJobs costs what changed (issue 14 item 2), with the answers of a full scan.

HTCondor's ``GetCandidateJobs`` evaluates the umbrella over the whole queue on every poll
(htcondor.md §1.4). RouteDeck skips an untracked job whose last scan showed it unroutable
whatever the routes' state (sanity clause false, or no route's REQUIREMENTS true) until the job
changes; these tests check that such a job is reconsidered exactly when HTCondor's full scan
could give another answer: the job or its cluster ad changed, the table changed, the job was
untracked, or the table reads the clock.
"""

from __future__ import annotations

from tests.helpers.router_fixtures import T0, make_router, route, schedd_set, submit, table

from engine.queue.jobqueue import JobQueue
from engine.router.candidates import Scanner


def _routed(r):
    return sorted(r.jobs)


def test_unroutable_jobs_are_not_scanned_again_until_they_change():
    """htcondor.md §1.4: a job no route's REQUIREMENTS accepts is not routed; it is once an edit
    (condor_qedit) makes it match, on the next poll."""
    tbl = table([route("Small", "RequestMemory <= 2048", max_jobs=100, max_idle_jobs=100)])
    r, q, _ = make_router(tbl, dst=JobQueue())
    big = submit(q, 50, RequestMemory="9000")
    small = submit(q, 2, RequestMemory="1000")
    r.poll(T0 + 10)
    assert _routed(r) == sorted(small) and r.last_cycle["considered"] == 52
    r.poll(T0 + 20)
    assert r.last_cycle["considered"] == 0  # nothing changed: nothing scanned
    schedd_set(q, big[7], RequestMemory="1024")
    r.poll(T0 + 30)
    assert r.last_cycle["considered"] == 1 and big[7] in r.jobs


def test_a_cluster_ad_edit_reconsiders_its_procs():
    """htcondor.md §3.1 "Keys": a proc's effective ad is its cluster ad plus its own; editing the
    cluster ad changes every proc."""
    tbl = table([route("VO", 'VO == "cms"', max_jobs=100, max_idle_jobs=100)])
    r, q, _ = make_router(tbl)
    keys = submit(q, 3)
    r.poll(T0 + 10)
    assert not r.jobs
    cluster = "0" + keys[0].split(".")[0] + ".-1"
    schedd_set(q, cluster, VO='"cms"')
    r.poll(T0 + 20)
    assert _routed(r) == sorted(keys)


def test_a_full_route_keeps_its_matching_jobs_candidates():
    """htcondor.md §1.5: a route at MaxIdleJobs accepts nothing; the jobs it matches are routed as
    soon as its idle copies start running, although they did not change (only jobs no route
    matches are skipped)."""
    tbl = table([route("R", "true", max_jobs=100, max_idle_jobs=2)])
    r, q, dst = make_router(tbl, dst=JobQueue())
    keys = submit(q, 5)
    r.poll(T0 + 10)
    assert len(r.jobs) == 2
    for job in list(dst):
        schedd_set(dst, job.key, JobStatus=2)
    r.poll(T0 + 20)  # sees the copies running
    r.poll(T0 + 30)
    assert len(r.jobs) == 4 and set(r.jobs) <= set(keys)


def test_routing_order_is_the_queue_order_after_changes():
    """The router takes candidates in queue order (HTCondor: the order of its umbrella query's
    results); an edited job keeps its place, it does not go to the end."""
    tbl = table([route("R", "RequestMemory <= 2048", max_jobs=1, max_idle_jobs=1)])
    r, q, _ = make_router(tbl)
    keys = submit(q, 4, RequestMemory="9000")
    r.poll(T0 + 10)
    schedd_set(q, keys[3], RequestMemory="100")
    schedd_set(q, keys[1], RequestMemory="100")  # edited later, but earlier in the queue
    r.poll(T0 + 20)
    assert _routed(r) == [keys[1]]


def test_a_table_reading_the_clock_rescans_everything():
    """A REQUIREMENTS with time() may change its value with no job change (htcondor.md §1.4: the
    umbrella is evaluated on every poll): such a table is scanned in full every time."""
    tbl = table([route("Later", f"time() > {T0 + 15}", max_jobs=100, max_idle_jobs=100)])
    r, q, _ = make_router(tbl)
    keys = submit(q, 3)
    assert not Scanner(tbl.routes, None, "jobrouter").time_free
    r.poll(T0 + 10)
    assert not r.jobs and r.last_cycle["considered"] == 3
    r.poll(T0 + 20)
    assert _routed(r) == sorted(keys)


def test_same_outcome_as_a_router_without_change_events():
    """The incremental scan against the full scan (a router that does not see the queue's change
    events scans everything every poll): the same jobs routed on the same polls."""
    tbl = table([route("A", "RequestMemory <= 2048", max_jobs=6, max_idle_jobs=3),
                 route("B", 'VO == "x"', max_jobs=4, max_idle_jobs=2)])
    runs = []
    for watching in (True, False):
        r, q, _ = make_router(tbl)
        r._watching = watching
        submit(q, 6, RequestMemory=lambda p: "1000" if p % 2 else "9000")
        submit(q, 5, VO='"x"', RequestMemory="9000")
        got = []
        for k in range(6):
            if k == 3:
                for key in sorted(q.get(j).key for j in q.ids())[:4]:
                    schedd_set(q, key, RequestMemory="512")
            r.poll(T0 + 10 * (k + 1))
            got.append(_routed(r))
        runs.append(got)
    assert runs[0] == runs[1]
