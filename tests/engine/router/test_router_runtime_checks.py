"""Which tracked jobs a poll checks (engine/router/router.py: a SUBMITTED job is checked again only
when its source or routed copy changed since its last status check; htcondor.md §1.6 for the
check itself). Counted by wrapping the router's finish_check_status."""

from __future__ import annotations

from tests.helpers.router_fixtures import T0, get, make_router, route, schedd_set, submit, table


def _counting(r):
    calls = []
    orig = r.finish_check_status

    def wrapped(job, now):
        calls.append(job.src_key)
        return orig(job, now)

    r.finish_check_status = wrapped
    return calls


def test_own_claim_submit_and_mirroring_push_do_not_trigger_another_check():
    tbl = table([route("A")])
    r, src, dst = make_router(tbl)
    (key,) = submit(src)
    calls = _counting(r)
    r.poll(T0 + 10)  # claim, submit, first check (pushes RoutedToJobId)
    assert calls == [key] and get(src, key, "RoutedToJobId") is not None
    r.poll(T0 + 20)
    assert calls == [key]  # nothing changed since that check
    dest = r.jobs[key].dest_key
    schedd_set(dst, dest, T0 + 25, JobStatus=2, JobCurrentStartDate=int(T0 + 25))
    r.poll(T0 + 30)  # the copy changed: checked, Running mirrored to the source
    assert calls == [key, key] and get(src, key, "JobStatus") == "2"
    r.poll(T0 + 40)  # only the mirroring push changed the source since: not checked again
    assert calls == [key, key]


def test_a_change_to_the_source_by_anyone_else_is_checked():
    """A user hold on the source (htcondor.md §1.6: the router gives the job up) is seen."""
    tbl = table([route("A")])
    r, src, dst = make_router(tbl)
    (key,) = submit(src)
    r.poll(T0 + 10)
    calls = _counting(r)
    schedd_set(src, key, T0 + 15, JobStatus=5, HoldReason='"by user"')
    r.poll(T0 + 20)
    assert calls == [key]
    assert r.jobs[key].state.name in ("CLEANUP", "RETIRED")
