"""Ctrl-C quits RouteDeck from any view, as ``q`` does and as in k9s (product.md §8 anchors; issue 29
handling list): Textual's own ctrl+c only says "press ctrl+q to quit"."""

from __future__ import annotations

import pytest

from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until
from tui.app import make_app

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("view", ["b", "j", "c"])
async def test_ctrl_c_quits_from_every_view(view):
    app = make_app(FakeRuntime(make_snapshot(50)), mode="demo", blink=False, watch_files=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press(view)
        await pilot.pause()
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: app._exit)  # App.exit() was called (Textual's flag)
    assert app.return_code == 0
