"""``DeckFooter`` (tui/widgets/footer.py) shows the screen's keys as they are now, and does not
rebuild itself when a bindings refresh leaves them unchanged (issue 14 item 3: Textual's footer
removed and mounted every key several times per screen switch). What the footer *widget* shows
is checked here, not only ``Screen.active_bindings``.
"""

from __future__ import annotations

import dataclasses

import pytest
from textual.widgets._footer import FooterKey

from tui.app import make_app
from tui.widgets.footer import DeckFooter

from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until

pytestmark = pytest.mark.anyio


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


async def test_at_80_columns_the_jobs_footer_keeps_hold_release_and_remove():
    """At 80 columns not every jobs key fits: the commands on the selected job (H, L, X) and
    Enter and ``/`` are chosen before sort and why-not (footer.PRIORITY), quit, help and ``:``
    always; what the footer widget draws is checked (``active_bindings`` had them all along)."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("j")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "JobsScreen" and _shown(app))
        shown = dict(_shown(app))
        for key, description in (("H", "Hold"), ("L", "Release"), ("X", "Remove"), ("enter", "Open ad"),
                                 ("slash", "Filter"), ("q", "Quit"), ("question_mark", "Help"),
                                 ("colon", "Command")):
            assert shown.get(key) == description, shown
        order = [k for k, _ in _shown(app)]
        assert order.index("H") < order.index("L") < order.index("X") < order.index("q")  # keymap order kept
        footer = app.screen.query_one(DeckFooter)
        assert sum(k.region.width for k in footer.query(FooterKey)) <= 80


async def test_crondor_footer_shows_open_ad_and_enter_opens_it():
    """The crondor table has the focus; its Enter (keymap.CRON_TABLE) is shown as "Open ad" in
    the footer, at 80 and 132 columns, and opens the selected cron job's ad."""
    snap = make_snapshot(50)
    app = make_app(FakeRuntime(snap), blink=False, watch_files=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("c")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CronScreen" and _shown(app))
        assert ("enter", "Open ad") in _shown(app)
        await pilot.resize_terminal(132, 40)
        await wait_until(pilot, lambda: ("space", "Pause/Play") in _shown(app))
        assert ("enter", "Open ad") in _shown(app)
        opened = []
        app.push_screen = opened.append  # the canned cron jobs are not in its jobs list: see what is asked
        app.snapshot = dataclasses.replace(snap, jobs=(dataclasses.replace(snap.jobs[0], job=snap.cron_jobs[0].job),))
        assert app.screen.query_one("#cron").cursor_row == 0
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(opened))
        assert type(opened[0]).__name__ == "AdScreen" and opened[0].row.job == snap.cron_jobs[0].job


async def test_hooks_and_slots_keys_reach_the_footer_where_the_feed_has_an_execute_node():
    """Issue 29's handling list: ``h``/``o`` were bound but never shown. The footer shows them where
    the feed offers the execute node (Snapshot.controls "execute") and not where it does not."""
    demo = dataclasses.replace(make_snapshot(50), controls=frozenset({"pause", "speed", "execute"}))
    app = make_app(FakeRuntime(demo), blink=False, watch_files=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: ("h", "Hooks") in _shown(app))
        assert ("o", "Slots") in _shown(app)
    watch = dataclasses.replace(make_snapshot(50), controls=frozenset())
    app = make_app(FakeRuntime(watch), blink=False, watch_files=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: ("q", "Quit") in _shown(app))
        assert ("h", "Hooks") not in _shown(app) and ("o", "Slots") not in _shown(app)
