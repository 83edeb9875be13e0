"""What a switch to a main view and a snapshot repaint (issue 30)."""

from __future__ import annotations

import pytest

from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until
from tui.app import make_app

pytestmark = pytest.mark.anyio


@pytest.mark.prewarm
async def test_a_snapshot_that_changes_nothing_on_crondor_repaints_none_of_it():
    """Issue 30: the crondor's table title and detail panel were set again on every snapshot (and on
    every switch to it): the title repainted the whole table, every line rendered again."""
    from textual.widgets import DataTable, Static  # noqa: PLC0415 - only this test spies on them

    runtime = FakeRuntime(make_snapshot(50))
    app = make_app(runtime, blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.prewarmed)
        app.action_show_cron()
        await pilot.pause()
        table, detail = app.screen.query_one("#cron", DataTable), app.screen.query_one("#cron-detail", Static)
        repaints: list = []
        for widget in (table, detail):
            refresh = widget.refresh
            widget.refresh = lambda *a, _w=widget, _r=refresh, **k: (repaints.append(_w), _r(*a, **k))[1]
        runtime.update()  # a new snapshot, the same cron jobs at the same time
        seq = runtime.latest().seq
        await wait_until(pilot, lambda: app.snapshot.seq == seq)
        await pilot.pause()
        assert repaints == []
