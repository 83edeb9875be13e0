"""``DeckFooter`` (tui/widgets/footer.py) shows the screen's keys as they are now, and does not
rebuild itself when a bindings refresh leaves them unchanged (issue 14 item 3: Textual's footer
removed and mounted every key several times per screen switch). What the footer *widget* shows
is checked here, not only ``Screen.active_bindings``.
"""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey

from tui.app import make_app
from tui.widgets.footer import DeckFooter

from tui_fixtures import FakeRuntime, make_snapshot, wait_until

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _shown(app) -> list[tuple[str, str]]:
    footer = app.screen.query_one(DeckFooter)
    return [(k.key, k.description) for k in footer.query(FooterKey) if not k.has_class("-command-palette")]


async def test_footer_follows_a_bindings_change_on_the_same_screen():
    """Opening the jobs filter box makes ``/`` inapplicable (DeckScreen.check_action): the footer
    drops it; closing the box brings it back."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("j")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "JobsScreen" and ("slash", "Filter") in _shown(app))
        await pilot.press("slash")
        await wait_until(pilot, lambda: ("slash", "Filter") not in _shown(app))
        await pilot.press("escape")
        await wait_until(pilot, lambda: ("slash", "Filter") in _shown(app))


async def test_footer_keeps_its_keys_when_a_refresh_changes_nothing():
    """A bindings refresh with the same keys and width does not remount the footer's keys; a
    narrower terminal still refits them with quit, help and ``:`` kept (footer.fit)."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and _shown(app))
        footer = app.screen.query_one(DeckFooter)
        before = list(footer.query(FooterKey))
        for _ in range(3):
            app.screen.refresh_bindings()
            await pilot.pause()
        await pilot.pause()
        assert list(footer.query(FooterKey)) == before  # the same widgets, not rebuilt
        wide = _shown(app)
        await pilot.resize_terminal(80, 40)
        await wait_until(pilot, lambda: _shown(app) != wide)
        actions = {k.action for k in footer.query(FooterKey)}
        assert {"quit", "help", "command_line"} <= actions
