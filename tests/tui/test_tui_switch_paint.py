"""What a switch to a main view and a snapshot repaint (issue 30): a switch to a built main view
paints the whole screen, with the latest snapshot, within the key (tui.shell.prewarm.pull_before_paint,
painted_now), and its ScreenResume does not paint it all again."""

from __future__ import annotations

import pytest
from textual.app import App

from tests.helpers.tui_fixtures import T0, FakeRuntime, make_snapshot, wait_prewarmed, wait_until
from tui.app import make_app

pytestmark = pytest.mark.anyio


def _lines(update) -> list[str]:
    return ["".join(strip.text for strip in line) for line in update.strips]


@pytest.mark.prewarm
async def test_a_switch_paints_the_whole_view_with_the_latest_snapshot_at_once(monkeypatch):
    runtime = FakeRuntime(make_snapshot(50))
    app = make_app(runtime, blink=False, watch_files=False)
    painted: list = []
    display = App._display
    monkeypatch.setattr(App, "_display", lambda self, screen, update: (
        painted.append((screen, update)), display(self, screen, update))[1])
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_prewarmed(pilot, app)
        for action in (app.action_show_cron, app.action_show_jobs, app.action_show_routes):
            action()  # (a first visit composes the view's footer after it is shown)
            await pilot.pause()
        for mode, action, hours in (("cron", app.action_show_cron, 1), ("jobs", app.action_show_jobs, 2),
                                    ("routes", app.action_show_routes, 3)):
            runtime.update(time=T0 + hours * 3600)  # the view (hidden) has an older snapshot
            seq = runtime.latest().seq
            await wait_until(pilot, lambda: app.snapshot.seq == seq)
            painted.clear()
            action()  # within the key: one whole paint of the new view
            screen = app.screen
            whole = [u for s, u in painted if s is screen and type(u).__name__ == "LayoutUpdate"]
            assert len(whole) == 1, mode  # (Textual painted it only after its ScreenResume)
            await pilot.pause()
            await pilot.pause()
            # ... already as the settled view shows it: every line, from the latest snapshot
            assert _lines(whole[0]) == [strip.text for strip in screen._compositor.render_strips()], mode
            # and the ScreenResume did not paint all of it again
            assert [u for s, u in painted if s is screen and type(u).__name__ == "LayoutUpdate"] == whole, mode


@pytest.mark.prewarm
async def test_a_snapshot_that_changes_nothing_on_crondor_repaints_none_of_it():
    """Issue 30: the crondor's table title and detail panel were set again on every snapshot (and on
    every switch to it): the title repainted the whole table, every line rendered again."""
    from textual.widgets import DataTable, Static  # noqa: PLC0415 - only this test spies on them

    runtime = FakeRuntime(make_snapshot(50))
    app = make_app(runtime, blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_prewarmed(pilot, app)
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
