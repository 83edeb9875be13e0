"""The demo's event rings and job rows as the UI sees them (product.md §3: a ring of recent events
with sequence numbers so none is lost silently; engine/contract/snapshot.py's JobRow contract).

The routes and the black-hole site are the sample demo's (tests/data/demo_small); the throttle
comes from the failure formula of htcondor.md §1.5."""

from __future__ import annotations

import pytest

from engine.contract import commands as C
from engine.clock import VirtualClock
from engine.feeds.demo import build_demo
from engine.views.rows import is_job_event
from engine.views.build import SNAPSHOT_JOB_EVENTS
from engine.runtime import Runtime
from tests.helpers.demo_fixture import make_config_dir
from engine.views.build import DemoJobs, source_route

NOTABLE = ("config-reloaded", "route-throttled")


@pytest.mark.slow
def test_notable_events_survive_a_maximum_speed_flood_of_job_events(tmp_path):
    """A slow consumer that only takes the latest snapshot (the mailbox replaces the others) still
    gets the config reload and the throttle, though far more job events than a snapshot carries
    came after them."""
    cfg = make_config_dir(tmp_path)
    engine = build_demo(config_dir=cfg, seed=3, state_dir=tmp_path / "state", durable=False)
    rt = Runtime(engine, VirtualClock(engine.now), speed="max", snapshot_interval=3600.0,
                 until=engine.now + 2 * 3600)
    rt.send(C.ApplyRoutes(engine.config_files, reason="reloaded by the test"))
    rt.start()
    assert rt.done.wait(120) and rt.state == "stopped"
    last = rt.mailbox.take()
    assert last is not None and last.engine_state == "stopped"
    kinds = {e.kind: e for e in last.events}
    for kind in NOTABLE:
        assert kind in kinds, f"{kind} not in the last snapshot"
    throttled = [e for e in last.events if e.kind == "route-throttled"]
    assert any(e.route == "BlackHole" for e in throttled)
    # the flood is real: the old single ring of 200 would have lost these events
    for kind in NOTABLE:
        first = min(e.seq for e in last.events if e.kind == kind)
        assert engine.ring.seq - first > 2 * SNAPSHOT_JOB_EVENTS
    # numbered from one sequence, oldest first, no duplicates; job events are the newest ones
    seqs = [e.seq for e in last.events]
    assert seqs == sorted(set(seqs))
    jobs = [e for e in last.events if is_job_event(e.kind)]
    assert len(jobs) == SNAPSHOT_JOB_EVENTS and jobs[-1].seq > engine.ring.seq - 50
    assert all(not is_job_event(e.kind) for e in engine.ring.notable_events)
    engine.close()


def test_event_kinds_are_sorted_into_rings():
    assert is_job_event("job-routed") and is_job_event("job-finished") and is_job_event("routing-failed")
    for kind in ("route-throttled", "route-unthrottled", "config-reloaded", "config-rejected", "hook-failed"):
        assert not is_job_event(kind)


@pytest.fixture
def routed(tmp_path):
    cfg = make_config_dir(tmp_path)
    engine = build_demo(config_dir=cfg, seed=5, state_dir=tmp_path / "state", durable=False)
    engine.step(engine.start + 1800)
    engine.advance()  # what the snapshots show (a snapshot only reads: issue 26)
    yield engine
    engine.close()


def test_source_rows_carry_the_route_of_their_copy(routed):
    """JobRow contract (engine/contract/snapshot.py): a source job's route is the RouteName of the copy its
    RoutedToJobId names; while the router has claimed it but not yet pushed RoutedToJobId (it goes
    with the next status update, htcondor.md §1.6), the route the router tracks it on."""
    engine = routed
    rows = {r.job: r for r in engine.snapshot().jobs}
    sources = [r for r in rows.values() if r.kind == "source"]
    assert sources
    via_copy = tracked_only = 0
    for r in sources:
        copy = rows.get(r.routed_to) if r.routed_to else None
        tracked = engine.router.jobs.get(r.job)
        if copy is not None:
            assert r.route == copy.route is not None
            via_copy += 1
        elif tracked is not None:
            assert r.route == (tracked.route_name or tracked.last_route)
            tracked_only += 1
    assert via_copy > 0


def test_a_claimed_source_without_a_visible_copy_shows_its_tracked_route(routed):
    """While the router has claimed a source but its RoutedToJobId is not recorded yet (it is
    pushed with the next status update, htcondor.md §1.6), or its copy already left the queue,
    the row names the route the router tracks the job on."""
    engine = routed
    key, tracked = next((k, j) for k, j in engine.router.jobs.items() if j.route_name)
    assert source_route(DemoJobs(engine), key, None) == tracked.route_name
    assert source_route(DemoJobs(engine), key, "999999.0") == tracked.route_name  # copy gone
    plain = next(r.job for r in engine.snapshot().jobs if r.kind == "plain")
    assert source_route(DemoJobs(engine), plain, None) is None
