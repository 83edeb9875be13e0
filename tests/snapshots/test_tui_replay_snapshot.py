"""Snapshot test (pytest-textual-snapshot) of the replay screen: the routes board with the replay
bar (product.md §6: position, recorded time and where it came from, speed, bookmarks).

Deterministic by construction: fixed terminal size, a canned snapshot at the frozen virtual time
``tui_fixtures.T0`` (no wall clock: the bar and header draw only from the snapshot), cursor blink
off, no toasts. Update with ``--snapshot-update`` and review the SVG.
"""

from __future__ import annotations

import dataclasses

from engine.contract import snapshot as S
from tui.app import make_app

from tests.helpers.tui_fixtures import T0, FakeRuntime, make_snapshot, wait_until

WIDE = (120, 36)


def _replay_snapshot() -> S.Snapshot:
    pos = S.ReplayPosition(transaction=2386, transactions=19455, time=T0, start=T0 - 1300, end=T0 + 9500,
                           times_inferred=False)
    return dataclasses.replace(
        make_snapshot(2000), mode="replay", speed=60.0, paused=True, engine_state="paused", replay=pos,
        diagnostics=(S.Diagnostic("info", "time of this transaction: inferred"),))


def test_replay_board_with_bar(snap_compare):
    app = make_app(FakeRuntime(_replay_snapshot()), mode="replay", readonly=True, blink=False, watch_files=False)
    app.bookmarks = [("B1", 120, T0 - 1200), ("B2", 2000, T0 - 60)]

    async def run_before(pilot):
        await wait_until(pilot, lambda: pilot.app.snapshot is not None and pilot.app.screen.query("ReplayBar"))
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)
