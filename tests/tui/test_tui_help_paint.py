"""The kept help is painted whole within its ``?`` (issue 30; tui.shell.prewarm.Prewarm.push_screen,
tui.screens.whole_paint): Textual painted it from its update timer once its ScreenResume had run
(the first ``?`` of a run was the slowest switch in a terminal, 78-86 ms at 132x40), and so is the
board shown again by ``Esc`` (``pop_screen``). The paint shows what the settled screen shows (the
help opened at the top and without toasts), and nothing is painted after it."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.screen import ModalScreen
from textual.widgets import Static

from tests.helpers.screen_render import fresh_cells, on_paint, strip_cells
from tests.helpers.tui_fixtures import FakeRuntime, jobs, make_snapshot, newer_snapshot, settle, wait_prewarmed, wait_until
from tui.app import make_app
from tui.screens.help import HelpScreen

pytestmark = pytest.mark.anyio


def _painting_app(monkeypatch, runtime: FakeRuntime | None = None) -> tuple:
    """The app over a fake runtime of 50 jobs (no snapshot after the first unless the test sends
    one through ``runtime``: nothing changes under the help), and the list every paint is added to
    (screen, update)."""
    app = make_app(runtime or FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    painted: list = []
    on_paint(monkeypatch, lambda screen, update: painted.append((screen, update)))
    return app, painted


@pytest.mark.prewarm
@pytest.mark.parametrize("size", [(132, 40), (80, 24)])
async def test_question_mark_paints_the_whole_help_within_the_key_and_nothing_after(monkeypatch, size):
    app, painted = _painting_app(monkeypatch)
    async with app.run_test(size=size) as pilot:
        await wait_prewarmed(pilot, app)
        await settle(pilot)
        for n in range(3):  # the prewarmed help's first open, then the kept one's
            painted.clear()
            app.action_help()  # within the key: one whole paint of the help
            helper = app.screen
            assert isinstance(helper, HelpScreen), n
            assert [type(u).__name__ for s, u in painted if s is helper] == ["LayoutUpdate"], n
            await settle(pilot)
            shown = [u for s, u in painted if u is not None]
            assert len(shown) == 1, n  # (Textual's resume repainted it whole after the paint)
            # what a whole render of the settled help with every line cache cleared shows, with styles
            assert [strip_cells(line) for line in shown[0].strips] == fresh_cells(helper), n
            app.pop_screen()
            await settle(pilot)


@pytest.mark.prewarm
@pytest.mark.parametrize("size", [(132, 40), (80, 24)])
async def test_escape_paints_the_whole_board_within_the_key_and_nothing_after(monkeypatch, size):
    """The board shown again after ``Esc`` on the help (tui.shell.prewarm.Prewarm.pop_screen): Textual
    painted it from its update timer too, and _replace_screen's refresh painted it whole again."""
    app, painted = _painting_app(monkeypatch)
    async with app.run_test(size=size) as pilot:
        await wait_prewarmed(pilot, app)
        board = app.screen
        for n in range(3):
            app.action_help()
            await settle(pilot)
            painted.clear()
            app.pop_screen()  # (what Esc on the help does: Screen.dismiss)
            assert app.screen is board
            assert [type(u).__name__ for s, u in painted if s is board] == ["LayoutUpdate"], n
            await settle(pilot)
            shown = [u for s, u in painted if u is not None]
            assert len(shown) == 1, n
            assert [strip_cells(line) for line in shown[0].strips] == fresh_cells(board), n


@pytest.mark.prewarm
async def test_a_kept_help_is_painted_at_its_top_and_without_toasts(monkeypatch):
    """Issue 29: the help opens at the top and clears the toasts that covered its keys; the push's
    paint shows it so (tui.screens.help.HelpScreen.prepare_paint runs before it)."""
    app, painted = _painting_app(monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_prewarmed(pilot, app)
        app.action_help()
        await settle(pilot)
        box = app.screen.query_one("#help-box")
        box.scroll_end(animate=False, immediate=True)
        await settle(pilot)
        assert box.scroll_y > 0
        app.pop_screen()
        await settle(pilot)
        app.notify("a toast that covered the help's keys", timeout=30)
        await settle(pilot)
        painted.clear()
        app.action_help()
        whole = [u for s, u in painted if s is app.screen]
        assert len(whole) == 1
        text = ["".join(strip.text for strip in line) for line in whole[0].strips]
        assert any("RouteDeck help" in line for line in text) and any("(this screen)" in line for line in text)
        assert not any("covered the help" in line for line in text)


async def _snapshot(pilot, app, rt: FakeRuntime, **changes) -> None:
    """A new snapshot from ``rt``, drawn by the app."""
    await newer_snapshot(pilot, app, rt, time=rt.latest().time + 60, **changes)
    await settle(pilot)


@pytest.mark.prewarm
@pytest.mark.parametrize("change", ["snapshot", "paused", "cursor", "resize"])
async def test_question_mark_paints_the_board_as_it_is_now_behind_the_help(monkeypatch, change):
    """The help's tinted backdrop (tui.screens.backdrop) is the board as it is at ``?``: the kept
    help's lines were drawn again only when its own dirty regions were not empty, and a repaint
    while it was open (a snapshot under it, a resize) emptied them, so the next ``?`` painted the
    board as it was then ("engine running" over a paused board, the old clock, counts, cursor row
    and footer; review of s16-switch, F1). The board changes while the help is hidden."""
    rt = FakeRuntime(make_snapshot(50))
    app, painted = _painting_app(monkeypatch, rt)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_prewarmed(pilot, app)
        await settle(pilot)
        app.action_help()
        await settle(pilot)
        if change == "resize":  # the open help is laid out and painted again at the new size
            await pilot.resize_terminal(80, 24)
        else:  # a snapshot under the open help repaints it
            await _snapshot(pilot, app, rt)
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        board = app.screen
        before = fresh_cells(board)
        if change == "snapshot":
            await _snapshot(pilot, app, rt, jobs=jobs(20))
        elif change == "paused":
            await pilot.press("space")  # (the fake runtime sends the paused snapshot)
            await wait_until(pilot, lambda: app.snapshot.paused)
            await settle(pilot)
        elif change == "cursor":
            await pilot.press("down", "down")
            await settle(pilot)
        assert fresh_cells(board) != before or change == "resize"  # (the resize changed it under the help)
        painted.clear()
        await pilot.press("question_mark")
        helper = app.screen
        assert isinstance(helper, HelpScreen)
        whole = [u for s, u in painted if s is helper]
        assert [type(u).__name__ for u in whole] == ["LayoutUpdate"]
        assert [strip_cells(line) for line in whole[0].strips] == fresh_cells(helper)
        await settle(pilot)
        assert len([u for s, u in painted if u is not None]) == 1  # (and nothing painted after it)


async def test_textual_paints_a_pushed_screen_only_after_its_resume():
    """What Prewarm.push_screen and HelpScreen._on_screen_resume rely on in the pinned Textual
    (8.2.8): ``push_screen`` of a mounted screen and ``pop_screen`` paint none of it,
    ``_screen_resized`` lays out (and paints) only a screen resumed before, and the ScreenResume
    handler asks for a bare repaint of the whole screen (the one a push that painted it whole skips)."""

    class Dialog(ModalScreen):
        def compose(self):
            yield Static("dialog")

    class Probe(App):
        pass

    app = Probe()
    painted: list = []
    async with app.run_test(size=(40, 10)) as pilot:
        display = app._display
        app._display = lambda screen, update: (painted.append(screen), display(screen, update))[1]
        dialog = Dialog()
        app.install_screen(dialog, "dialog")
        await app.push_screen(dialog)
        await pilot.pause()
        app.pop_screen()
        await pilot.pause()
        painted.clear()
        app.push_screen(dialog)
        assert dialog not in painted and dialog.stack_updates == 2  # (its resume and suspend)
        dialog._screen_resized(app.size)
        assert painted == [dialog]
        assert not dialog._repaint_required
        dialog._on_screen_resume(type("Resume", (), {"refresh_styles": False})())
        assert dialog._repaint_required and not dialog._layout_required
        await pilot.pause()
        painted.clear()
        under = app.screen_stack[-2]
        app.pop_screen()
        assert painted == [] and under.stack_updates  # (resumed before: _screen_resized paints it)



@pytest.mark.prewarm
async def test_a_main_view_shown_again_after_a_whole_screen_keeps_textuals_paint(monkeypatch):
    """Only a pop from a screen painted within its push paints the screen shown again: the jobs view
    after its why-not (a whole screen, ``w`` then Esc) is painted by Textual's path, as before (a
    paint within the pop there was followed by two whole paints more, where Textual's path paints
    it whole twice in all)."""
    app, painted = _painting_app(monkeypatch)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_prewarmed(pilot, app)
        app.action_show_jobs()
        await settle(pilot)
        jobs = app.screen
        app.open_why_not(app.snapshot.jobs[0].job)
        await settle(pilot)
        painted.clear()
        app.pop_screen()
        assert painted == []
        await settle(pilot)
        whole = [u for s, u in painted if s is jobs and type(u).__name__ == "LayoutUpdate"]
        assert whole and [strip_cells(line) for line in whole[-1].strips] == fresh_cells(jobs)
