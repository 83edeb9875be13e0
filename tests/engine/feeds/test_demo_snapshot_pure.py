"""Taking a demo snapshot changes nothing (issue 26), as for watch
(tests/engine/feeds/test_watch_snapshot_pure.py): ``Simulation.advance()`` — called by the
runtime before each snapshot — takes the queue's change events into the jobs table, numbers new
hook invocations and recounts the unrouted jobs; ``snapshot()`` only reads what it settled. So two
snapshots in a row are equal and leave the engine as it was, and a snapshot taken after a step
but before the next advance shows the settled moment, not a half-read one.

The demo is tests/data/demo_small's sites and workload with the sample routes, stepped on its
virtual clock (no wall clock).
"""

from __future__ import annotations

import threading

from engine.feeds.demo import build_demo
from engine.views.build import DemoJobs, RowIndex
from tests.helpers.demo_fixture import make_config_dir
from tests.helpers.pure_snapshot import two_equal_snapshots


def _state(engine) -> tuple:
    """What a snapshot must not change: the jobs table's pending change events and version, the
    hook numbering, the kept unrouted counts, the events, the queue."""
    index = getattr(engine, "row_index", None)
    hooks = getattr(engine, "hook_index", None)
    return (None if index is None else (frozenset(index.dirty), index.version, index.full, len(index.rows)),
            None if hooks is None else hooks.count, getattr(engine, "_unrouted_kept", None),
            engine.ring.seq, engine.jobs_version, engine.now)


def _demo(tmp_path):
    engine = build_demo(config_dir=make_config_dir(tmp_path), seed=4, state_dir=None, durable=False)
    engine.count_unrouted = True  # as --metrics sets it: the unrouted counts are settled too
    return engine


def test_two_snapshots_in_a_row_are_equal_and_change_nothing(tmp_path):
    engine = _demo(tmp_path)
    try:
        engine.step(engine.now + 600)
        engine.advance()
        engine.step(engine.now + 60)  # jobs changed since the advance: change events wait in the table
        engine.advance()
        one = two_equal_snapshots(lambda: engine.snapshot(5), lambda: _state(engine))
        assert one.total_jobs > 0 and one.routes and one.unrouted is not None
        assert list(one.jobs) == list(RowIndex(DemoJobs(engine)).table())  # the settled table is the queue's
    finally:
        engine.close()


def test_a_snapshot_shows_what_the_last_advance_settled(tmp_path):
    engine = _demo(tmp_path)
    try:
        engine.step(engine.now + 600)
        engine.advance()
        settled = engine.snapshot(1)
        version = engine.jobs_version
        engine.step(engine.now + 120)
        assert engine.jobs_version != version  # the queue moved on
        before = _state(engine)
        got: list = []
        reader = threading.Thread(target=lambda: got.append(engine.snapshot(1)))  # as a metrics scrape would
        reader.start()
        reader.join()
        assert got[0] == settled and engine.snapshot(1) == settled
        assert _state(engine) == before  # the change events are still the next advance's
        engine.advance()
        moved = engine.snapshot(2)
        assert moved.time == engine.now and moved.jobs_version == engine.jobs_version
        assert list(moved.jobs) == list(RowIndex(DemoJobs(engine)).table())
    finally:
        engine.close()
