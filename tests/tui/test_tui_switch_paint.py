"""What a switch to a main view and a snapshot repaint (issue 30): a switch to a built main view
paints the whole screen, with the latest snapshot, within the key (tui.shell.prewarm.pull_before_paint,
painted_now), and its ScreenResume does not paint it all again; nothing is painted after it; a view
shown again keeps its own lines (tui.screens.base.keeping_lines)."""

from __future__ import annotations

import pytest
from rich.segment import Segment
from rich.style import Style
from textual.dom import DOMNode
from textual.geometry import Region
from textual.strip import Strip

from engine.contract.codes import JobStatus
from tests.helpers.screen_render import fresh_cells, on_paint, screen_cells, screen_text, stale_lines, strip_cells
from tests.helpers.tui_fixtures import T0, FakeRuntime, make_snapshot, newer_snapshot, settle, wait_prewarmed, wait_until
from tui.app import make_app
from tui.screens.base import keeping_lines
from tui.widgets.chrome import EngineBanner, StatusHeader
from tui.widgets.job_table import JobTable

pytestmark = pytest.mark.anyio


def _lines(update) -> list[str]:
    return ["".join(strip.text for strip in line) for line in update.strips]


def _painting_app(monkeypatch) -> tuple:
    """The app over a fake runtime of 50 jobs, and the list every paint is added to (screen, update)."""
    runtime = FakeRuntime(make_snapshot(50))
    app = make_app(runtime, blink=False, watch_files=False)
    painted: list = []
    on_paint(monkeypatch, lambda screen, update: painted.append((screen, update)))
    return runtime, app, painted


async def _prewarmed_and_visited(pilot, app, *actions) -> None:
    await wait_prewarmed(pilot, app)
    for action in actions:
        action()  # (a first visit composes the view's footer after it is shown)
        await pilot.pause()


@pytest.mark.prewarm
async def test_a_switch_paints_the_whole_view_with_the_latest_snapshot_at_once(monkeypatch):
    runtime, app, painted = _painting_app(monkeypatch)
    async with app.run_test(size=(132, 40)) as pilot:
        await _prewarmed_and_visited(pilot, app, app.action_show_cron, app.action_show_jobs, app.action_show_routes)
        for mode, action, hours in (("cron", app.action_show_cron, 1), ("jobs", app.action_show_jobs, 2),
                                    ("routes", app.action_show_routes, 3)):
            await newer_snapshot(pilot, app, runtime, time=T0 + hours * 3600)  # the view (hidden) has an older one
            painted.clear()
            action()  # within the key: one whole paint of the new view
            screen = app.screen
            whole = [u for s, u in painted if s is screen and type(u).__name__ == "LayoutUpdate"]
            assert len(whole) == 1, mode  # (Textual painted it only after its ScreenResume)
            await pilot.pause()
            await pilot.pause()
            # ... already as the settled view shows it: every line, from the latest snapshot
            assert _lines(whole[0]) == screen_text(screen), mode
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
        await newer_snapshot(pilot, app, runtime)  # the same cron jobs at the same time
        await pilot.pause()
        assert repaints == []


def _spy_own_lines(screen) -> list[int]:
    """The lines ``screen`` draws of its own (its background), as its styles cache asks for them."""
    drawn: list[int] = []
    render_line = screen.render_line
    screen.render_line = lambda y: (drawn.append(y), render_line(y))[1]
    return drawn


@pytest.mark.prewarm
async def test_a_main_view_shown_again_keeps_its_own_lines(monkeypatch):
    """Issue 30: Textual refreshes a screen as it leaves it (``switch_mode``, ``push_screen``) and as
    it comes back from a dialog; each refresh forgot the screen's own lines (its background, 40 at
    132x40), drawn again on every switch. They are kept (tui.screens.base.keeping_lines), and what
    is painted is what the settled screen shows."""
    runtime, app, painted = _painting_app(monkeypatch)
    async with app.run_test(size=(132, 40)) as pilot:
        await _prewarmed_and_visited(pilot, app, app.action_show_cron, app.action_show_routes)
        board = app.screen
        drawn = _spy_own_lines(board)
        for hours, keys in ((1, ("c", "b")), (2, ("question_mark", "escape"))):
            await newer_snapshot(pilot, app, runtime, time=T0 + hours * 3600)  # drawn on the board first
            await pilot.pause()
            await pilot.pause()
            for key in keys:
                await pilot.press(key)
                await pilot.pause()
            await pilot.pause()
            assert app.screen is board
            assert drawn == [], keys  # (40 lines again after each, before)
            last = [u for s, u in painted if s is board][-1]
            assert type(last).__name__ == "LayoutUpdate", keys  # (the whole screen)
            assert [strip_cells(line) for line in last.strips] == fresh_cells(board), keys  # with styles
            drawn.clear()  # (fresh_cells drew them)


@pytest.mark.prewarm
@pytest.mark.parametrize("how", ["hidden", "dialog", "resize-hidden", "theme-hidden", "theme-dialog"])
async def test_the_jobs_view_shown_again_shows_what_it_draws_afresh(how):
    """Review of issue 30's keeping_lines: what the jobs view shows after it was left (or covered by
    the help) and shown again, with a resize or a theme change in between, is, cell by cell with
    styles, what it draws with every line cache cleared. The jobs view shows its own background
    (the board's is covered by its widgets). The check sees a stale line (the sanity step)."""
    runtime = FakeRuntime(make_snapshot(200))
    app = make_app(runtime, blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await _prewarmed_and_visited(pilot, app, app.action_show_cron, app.action_show_jobs)
        jobs = app.screen
        await settle(pilot)
        away, back = ("c", "j") if "hidden" in how else ("question_mark", "escape")
        await pilot.press(away)
        await settle(pilot)
        if how.startswith("resize"):
            await pilot.resize_terminal(150, 45)
        elif how.startswith("theme"):
            app.theme = "textual-light" if app.theme != "textual-light" else "nord"
        await newer_snapshot(pilot, app, runtime, time=T0 + 3600, jobs=make_snapshot(120).jobs, jobs_version=2)
        await settle(pilot)
        await pilot.press(back)
        await settle(pilot)
        assert app.screen is jobs
        assert stale_lines(screen_cells(jobs), jobs) == []
        # sanity: a stale line (the header's, as a kept cache would hold it) is seen
        header = jobs.query_one(StatusHeader)
        cache = header._styles_cache._cache
        cache[0] = Strip([Segment("X" * header.size.width)])
        assert stale_lines(screen_cells(jobs), jobs) == [header.region.y]


@pytest.mark.prewarm
async def test_the_switch_paint_takes_the_repaints_its_layout_asked_for(monkeypatch):
    """Issue 30: the switch's layout moves the jobs table's scrollbar (its refresh), and that refresh
    painted the scrollbar's 34 lines once more after the switch's whole paint of the screen, on
    every ``j``. The whole paint takes it (DeckScreen._compositor_refresh): nothing is painted
    after it."""
    runtime, app, painted = _painting_app(monkeypatch)
    async with app.run_test(size=(132, 40)) as pilot:
        await _prewarmed_and_visited(pilot, app, app.action_show_jobs, app.action_show_routes)
        await newer_snapshot(pilot, app, runtime, time=T0 + 3600, jobs=make_snapshot(80).jobs, jobs_version=2)  # the thumb moves
        painted.clear()
        app.action_show_jobs()
        screen = app.screen
        await settle(pilot)
        shown = [u for s, u in painted if s is screen and u is not None]
        assert [type(u).__name__ for u in shown] == ["LayoutUpdate"]  # (then a ChopsUpdate of 34 lines, before)
        # what a whole render with every line cache cleared shows, with styles (the repaints taken
        # were painted: DeckScreen._compositor_refresh assumes Textual paints the whole dirty screen)
        assert [strip_cells(line) for line in shown[0].strips] == fresh_cells(screen)


@pytest.mark.prewarm
async def test_a_repaint_keeping_lines_keeps_only_the_screens_own_lines():
    """What tui.screens.base.repaint_keeping_lines relies on in the pinned Textual (8.2.8): a bare
    ``refresh()`` forgets a screen's own lines (``Widget._set_dirty`` clears ``_styles_cache``) and
    asks for a repaint; within keeping_lines the repaint is still asked for, the lines are kept,
    and outside it (or for a refresh with regions, as a restyle's is not) Textual's runs."""

    runtime = FakeRuntime(make_snapshot(50))
    app = make_app(runtime, blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_prewarmed(pilot, app)
        screen = app.screen
        await pilot.pause()
        cache = screen._styles_cache._cache
        assert len(cache) == 40  # its own lines, drawn
        throwaway = type(screen._styles_cache)()  # (repaint_keeping_lines makes one: no arguments)
        assert len(throwaway._cache) == 0
        with keeping_lines(screen):
            screen.refresh()
            assert screen._repaint_required
            assert screen._styles_cache._cache is cache and len(cache) == 40
            screen.refresh()  # (only the first: times=1)
            assert len(screen._styles_cache._cache) == 0
        await pilot.pause()
        assert len(screen._styles_cache._cache) == 40
        screen.refresh()
        assert len(screen._styles_cache._cache) == 0


async def test_the_jobs_table_works_out_its_lines_styles_once_per_paint(monkeypatch):
    """Issue 30: each line of the jobs table asked for the widget's ``rich_style`` (every ancestor's
    styles walked) and its component styles: a third of a line's cost, for each of the ~36 lines a
    switch to the jobs view draws. Once per paint now, the same lines."""

    runtime = FakeRuntime(make_snapshot(50))
    app = make_app(runtime, blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        app.action_show_jobs()
        await wait_until(pilot, lambda: any(len(t.model) == 50 for t in app.screen.query(JobTable)))
        table = app.screen.query_one(JobTable)
        region = Region(0, 0, table.outer_size.width, table.outer_size.height)
        before = [strip.text for strip in table.render_lines(region)]
        asked: list = []
        rich_style = DOMNode.rich_style
        monkeypatch.setattr(JobTable, "rich_style", property(lambda w: (asked.append(w), rich_style.fget(w))[1]))
        table._styles_cache.clear()
        assert [strip.text for strip in table.render_lines(region)] == before
        assert len(asked) == 1  # (one per line drawn, before: 36 at 132x40)
        monkeypatch.undo()


async def test_the_jobs_tables_lines_have_the_styles_each_line_works_out_on_its_own():
    """Issue 30's JobTable.render_lines works out the lines' styles once per paint: the lines it
    draws are, segment by segment with their styles, those ``render_line`` draws on its own (each
    line working its styles out): the header, the cursor row, a held job's row, the other rows,
    with the table focused and not."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        app.action_show_jobs()
        await wait_until(pilot, lambda: any(len(t.model) == 50 for t in app.screen.query(JobTable)))
        table = app.screen.query_one(JobTable)
        held = [i for i in range(len(table.model)) if table.model.row(i).status == JobStatus.HELD]
        assert held and held[0] + 1 < table.size.height  # (a held row in view)
        table.cursor = 2 if held[0] != 2 else 3
        for focused in (True, False):
            if focused:
                table.focus()
            else:
                app.screen.set_focus(None)
            await pilot.pause()
            await pilot.pause()
            assert table.has_focus is focused
            drawn: dict = {}
            render_line = table.render_line
            table.render_line = lambda y: drawn.setdefault(y, render_line(y))
            table._styles_cache.clear()
            table.render_lines(Region(0, 0, table.outer_size.width, table.outer_size.height))
            del table.render_line
            assert sorted(drawn) == list(range(table.size.height))
            alone = {y: list(table.render_line(y)) for y in drawn}  # (each works its styles out)
            assert {y: list(strip) for y, strip in drawn.items()} == alone, focused
            # and they are the styles the theme gives each line (the first cell's, the pinned column)
            base, component = table.rich_style, table.get_component_rich_style
            column = component("jobtable--column") if focused else Style(underline=True)
            header = base + component("jobtable--header")
            assert alone[0][0].style == (header + column if table.column == 0 else header), focused
            cursor = base + (component("jobtable--cursor") if focused else Style(reverse=True))
            assert alone[table.cursor + 1][0].style == cursor, focused
            assert alone[held[0] + 1][0].style == base + component("jobtable--held"), focused
            plain = next(i for i in range(len(table.model)) if i != table.cursor and i not in held)
            assert alone[plain + 1][0].style == base, focused


async def test_the_header_is_shown_without_querying_the_screen_each_time():
    """Issue 30: each snapshot and each switch queried the screen twice (every node matched against
    a selector) for its header and engine banner. Looked up once they are composed."""
    runtime = FakeRuntime(make_snapshot(50))
    app = make_app(runtime, blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and bool(app.screen.query(StatusHeader)))
        screen = app.screen
        screen.show_header(app.snapshot)
        header, banner = screen.query_one(StatusHeader), screen.query_one(EngineBanner)
        queries: list = []
        shown: list = []
        query = screen.query
        screen.query = lambda *a: (queries.append(a), query(*a))[1]
        for widget in (header, banner):
            show = widget.show
            widget.show = lambda *a, _w=widget, _s=show: (shown.append(_w), _s(*a))[1]
        screen.show_header(app.snapshot)
        assert shown == [header, banner]
        assert queries == []  # (two, before)


async def _board_drawn(pilot, app):
    await wait_prewarmed(pilot, app)
    screen = app.screen
    await pilot.pause()
    assert len(screen._styles_cache._cache) == 40  # its own lines, drawn
    return screen


@pytest.mark.prewarm
async def test_a_restyle_within_a_keeping_window_forgets_the_screens_lines():
    """Review of issue 30's keeping_lines: a change of the screen's own styles refreshes it with a
    bare ``refresh()`` (Textual's ``StylesBase.refresh``), which a window kept: 40 of 40 lines
    stayed in the old colour. The restyle closes the window."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        screen = await _board_drawn(pilot, app)
        with keeping_lines(screen, times=5):
            screen.styles.background = "red"
            assert len(screen._styles_cache._cache) == 0
            assert screen._keep_lines == 0
            screen.refresh()  # (and the window is closed)
            assert len(screen._styles_cache._cache) == 0


@pytest.mark.prewarm
async def test_keeping_windows_nest():
    """An inner window's exit gives the outer one back (it closed it)."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        screen = await _board_drawn(pilot, app)
        cache = screen._styles_cache._cache
        with keeping_lines(screen, times=2):
            with keeping_lines(screen, repaint=False):
                pass
            screen.refresh()
            assert screen._repaint_required  # (the outer window's repaint)
            assert screen._styles_cache._cache is cache and len(cache) == 40
        assert screen._keep_lines == 0


@pytest.mark.prewarm
async def test_the_window_of_a_screen_shown_again_closes_before_textual_awaits():
    """tui.shell.prewarm.Prewarm._replace_screen keeps the lines of the screen shown again through
    the refresh Textual's ``App._replace_screen`` starts with (textual 8.2.8), synchronously: the
    window is used up before the popped screen is suspended (and, unless kept, removed: awaited).
    """
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        board = await _board_drawn(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()
        dialog = app.screen
        seen: list = []
        post = dialog.post_message
        dialog.post_message = lambda m: (seen.append((type(m).__name__, board._keep_lines)), post(m))[1]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is board
        assert ("ScreenSuspend", 0) in seen


async def test_a_header_composed_again_is_looked_up_again():
    """DeckScreen._chrome keeps the header and banner it found while they are attached: one
    removed and another mounted (no screen does it today), the new one is shown."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and bool(app.screen.query(StatusHeader)))
        screen = app.screen
        screen.show_header(app.snapshot)
        old = screen.query_one(StatusHeader)
        parent = old.parent
        await old.remove()
        new = StatusHeader()
        await parent.mount(new, before=0)
        shown: list = []
        new.show = lambda *a: shown.append(a)
        screen.show_header(app.snapshot)
        assert shown == [(app.snapshot, app.readonly)]


@pytest.mark.prewarm
async def test_the_hooks_view_resized_while_hidden_draws_its_header_row_afresh():
    """Review of issue 30 (finding 6, older than it): the hooks view left, the terminal resized, the
    view shown again: its table's header row kept the old width's filler (DataTable's row cache
    is not keyed by the width and was forgotten only on the Resize event, after the switch's
    paint): 13 cells in the table's background, not the header's. tui.widgets.column_scroll."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await _prewarmed_and_visited(pilot, app, app.action_show_cron, app.action_show_hooks)
        hooks = app.screen
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.resize_terminal(150, 45)
        await settle(pilot)
        await pilot.press("h")
        await settle(pilot)
        assert app.screen is hooks
        assert stale_lines(screen_cells(hooks), hooks) == []
