"""tests/helpers/pilot_waits.py reads Textual's private state to tell that a draw is pending (textual
8.2.8, pinned): the screen's update timer, made on first use under a name-mangled attribute, and the
callbacks queued for after the next draw. Its lookup has a default (the timer may not be made yet),
so a rename would not raise there: the Pilot waits would end before the draws. These pin the names."""

from __future__ import annotations

import pytest
from textual.app import App

from tests.helpers.pilot_waits import _draw_pending

pytestmark = pytest.mark.anyio


async def test_a_draw_is_pending_while_the_screens_update_timer_runs_or_callbacks_wait_for_it():
    app = App()
    async with app.run_test(size=(20, 5)) as pilot:
        await pilot.pause()
        screen = app.screen
        timer = screen._update_timer  # Textual's property, which makes it on first use
        assert getattr(screen, "_Screen__update_timer") is timer  # the name _draw_pending reads
        timer.pause()
        assert not _draw_pending()
        timer.resume()  # (as Textual does while something is dirty)
        assert _draw_pending()
        timer.pause()
        screen._invoke_later(lambda: None, screen)  # (Textual's call_after_refresh, on the screen)
        assert screen._callbacks and _draw_pending()
        await pilot.pause()  # the next draw runs them
        assert not screen._callbacks and not _draw_pending()
