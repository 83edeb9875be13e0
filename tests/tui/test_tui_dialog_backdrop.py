"""What the terminal shows behind a dialog that is not the help (the job's ad: ``j`` then Enter) is
the screen under it as it draws now: a snapshot under the dialog repaints the jobs view's header
and rows behind it. From the second open on, the header and rows a snapshot changed were not
painted (the board behind the ad kept the old clock and ages; review of s16-switch, side note):
Textual's update of a screen under a dialog paints only the regions the screen itself marked,
when it has marked any, and a scrollbar's repaint after the first open had marked its strip only
(tui.screens.base.DeckScreen._on_timer_update)."""

from __future__ import annotations

import pytest

from tests.helpers.screen_render import Terminal, fresh_cells, on_paint
from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, newer_snapshot, settle, wait_prewarmed
from tui.app import make_app
from tui.screens.ad import AdScreen

pytestmark = pytest.mark.anyio


async def _open_ad(pilot, app) -> AdScreen:
    await pilot.press("enter")
    ad = app.screen
    assert isinstance(ad, AdScreen)
    await ad.loader.wait()
    await settle(pilot)
    return ad


@pytest.mark.prewarm
@pytest.mark.parametrize("opens", [1, 2, 3])
async def test_a_snapshot_repaints_the_jobs_view_behind_the_ad(monkeypatch, opens):
    rt = FakeRuntime(make_snapshot(50))
    app = make_app(rt, blink=False, watch_files=False)
    term = Terminal(132, 40)
    on_paint(monkeypatch, lambda screen, update: update is not None and term.paint(update))
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_prewarmed(pilot, app)
        await pilot.press("j")
        await settle(pilot)
        for _ in range(opens - 1):
            await _open_ad(pilot, app)
            await pilot.press("escape")
            await settle(pilot)
        ad = await _open_ad(pilot, app)
        before = fresh_cells(ad)
        assert term.cells == before
        for k in range(1, 3):
            await newer_snapshot(pilot, app, rt, time=rt.latest().time + 3600 * k)
            await settle(pilot)
            assert app.screen is ad
            now = fresh_cells(ad)
            assert now[0] != before[0]  # (the header's clock, and the jobs' ages, changed behind the ad)
            assert term.cells == now, k
