"""Taking a replay player's snapshot changes nothing (issue 26), as for watch and the demo
(tests/engine/feeds/test_watch_snapshot_pure.py, test_demo_snapshot_pure.py): a move —
``seek``, ``step``, ``tick`` — settles what the snapshot shows (the moved-over records' change
events taken into the jobs table and the route tally, new routes given their row), and
``Player.snapshot`` only reads it, at any replay time it is asked for.

The log is the shipped recording sample_configs/recordings/demo-3h.job_queue.log.
"""

from __future__ import annotations

import dataclasses

import pytest

from engine.clock import ManualClock
from engine.feeds.replay.player import Player
from tests.helpers.paths import REPO
from tests.helpers.pure_snapshot import two_equal_snapshots

RECORDING = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"


def _state(player: Player) -> tuple:
    """What a snapshot must not change: the change events not yet taken into the jobs table and
    the tally, the table's version, the route rows' order, the position."""
    rows = player.rows
    return (frozenset(rows.index.dirty), frozenset(rows.tally.dirty), rows.index.version, rows.index.full,
            rows.tally.full, tuple(player.route_order), player.position, player.version)


@pytest.mark.slow
def test_two_snapshots_in_a_row_are_equal_and_change_nothing(shipped_index):
    index = shipped_index()  # build_index(RECORDING), shared (tests/helpers/shipped_index.py)
    player = Player(index, ManualClock(0))
    for move in (lambda: player.seek(time=player.start + 3600), lambda: player.step(25),
                 lambda: player.seek(time=player.start + 600)):  # forward, forward, back (a restore)
        move()
        before = _state(player)
        one = two_equal_snapshots(lambda: player.snapshot(3), lambda: _state(player))
        later = player.snapshot(3, time=player.time() + 120)  # the figures at another moment: a read too
        assert _state(player) == before and later.jobs == one.jobs
        assert one.total_jobs > 0 and one.routes
    fresh = Player(index, ManualClock(0))
    fresh.seek(time=player.start + 600)
    # settled by the moves as from scratch (the version counts the moves)
    assert dataclasses.replace(fresh.snapshot(3), jobs_version=0) == dataclasses.replace(player.snapshot(3), jobs_version=0)
