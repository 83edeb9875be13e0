"""A snapshot repaints only what it changed (issue 30): the board's and the jobs screen's tables are
not drawn again for a snapshot that shows the same, and changed cells cost one render generation
of the board, not one per cell."""

from __future__ import annotations

import dataclasses

import pytest
from rich.text import Text
from textual._context import visible_screen_stack
from textual.renderables.background_screen import BackgroundScreen
from textual.screen import ModalScreen

from tui.app import make_app
from tui.widgets.repaint import same_cell

from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until

SIZE = (120, 36)
pytestmark = pytest.mark.anyio


class Spy:
    """Counts ``refresh`` calls and drawn lines of one widget (instance attributes over its methods)."""

    def __init__(self, widget) -> None:
        self.refreshes = 0
        self.lines = 0
        refresh, render_line = widget.refresh, widget.render_line

        def counted_refresh(*args, **kwargs):
            self.refreshes += 1
            return refresh(*args, **kwargs)

        def counted_render_line(y):
            self.lines += 1
            return render_line(y)

        widget.refresh, widget.render_line = counted_refresh, counted_render_line

    def reset(self) -> None:
        self.refreshes = self.lines = 0


async def _next(pilot, app, rt, **changes) -> None:
    seq = app.snapshot.seq + 1
    rt.update(**changes)
    await wait_until(pilot, lambda: app.snapshot.seq == seq)
    await pilot.pause()
    await pilot.pause()


async def _opened(pilot, app, key: str, name: str):
    """The screen named ``name`` that ``key`` opens once the first snapshot is shown, drawn."""
    await wait_until(pilot, lambda: app.snapshot is not None)
    await pilot.press(key)
    await wait_until(pilot, lambda: type(app.screen).__name__ == name)
    await pilot.pause()
    return app.screen


def test_a_text_cell_that_changes_only_its_style_is_a_change():
    assert not same_cell(Text("3", style="red"), Text("3", style="green"))  # Text.__eq__ says equal
    assert not same_cell(Text("3"), "3")
    assert same_cell(Text("3", style="red"), Text("3", style="red"))


async def test_board_is_not_drawn_again_for_a_snapshot_that_changes_nothing():
    rt = FakeRuntime(make_snapshot(500))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        table = app.screen.query_one("#routes")
        await pilot.pause()
        spy, generation = Spy(table), table._update_count
        await _next(pilot, app, rt)  # a paused feed: the same routes at the same time
        assert (spy.refreshes, spy.lines, table._update_count) == (0, 0, generation)


async def test_changed_board_cells_repaint_their_row_and_render_only_those_cells_again():
    rt = FakeRuntime(make_snapshot(500))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        board = app.screen
        table = board.query_one("#routes")
        table.refresh()  # every line drawn at the table's present render generation
        await pilot.pause()
        cache = table._cell_render_cache
        spy, rendered = Spy(table), {k: cache.get(k) for k in cache.keys()}
        first = rt.latest().routes[0]
        routes = (dataclasses.replace(first, running=first.running + 5, held=first.held + 1),) + rt.latest().routes[1:]
        await _next(pilot, app, rt, routes=routes)  # two cells of one row
        assert spy.refreshes == 1 and spy.lines == 1  # the row (one line), once
        again = {(k[0].value, k[1].value) for k in cache.keys() if cache.get(k) is not rendered.get(k)}
        key = board.row_key(first.name)
        assert again == {(key, "running"), (key, "held")}  # not the row's other cells, nor other rows
        assert str(table.get_cell(board.row_key(first.name), "running")) == str(first.running + 5)
        assert str(table.get_cell(board.row_key(first.name), "held")) == str(first.held + 1)


async def test_jobs_table_is_not_drawn_again_for_a_snapshot_that_changes_nothing():
    rt = FakeRuntime(make_snapshot(3000))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _opened(pilot, app, "j", "JobsScreen")
        table = app.screen.table
        spy = Spy(table)
        await _next(pilot, app, rt)
        assert (spy.refreshes, spy.lines) == (0, 0)
        # a minute later the times in status read differently: those lines are drawn again
        before = table.render_line(1).text
        spy.reset()
        await _next(pilot, app, rt, time=rt.latest().time + 60)
        assert spy.lines > 0 and table.render_line(1).text != before


def _backdrop(screen, own: bool) -> list:
    """The help's content lines as Textual draws them (``own``: TintedBackdrop's, else Textual's
    BackgroundScreen path), rendered as the compositor renders the top screen."""
    token = visible_screen_stack.set(screen.app._background_screens)
    try:
        (type(screen) if own else ModalScreen)._render_content(screen)
    finally:
        visible_screen_stack.reset(token)
    return [strip._segments for strip in screen._render_cache.lines]


async def test_help_backdrop_is_textuals_and_tinted_again_only_where_the_board_changed(monkeypatch):
    """Issue 30: the help tints the live board under it from the board's lines, keeping each tinted
    line (Textual tinted the whole screen again through Rich on every repaint: 17-35 ms a snapshot
    at 132x40). Oracle: Textual's own BackgroundScreen path gives the same segments, before and
    after the board changes under the help; only the changed line is tinted again."""
    rt = FakeRuntime(make_snapshot(500))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        helper = await _opened(pilot, app, "question_mark", "HelpScreen")
        assert _backdrop(helper, own=True) == _backdrop(helper, own=False)
        tinted: list[int] = []  # segments tinted, per call
        original = BackgroundScreen.process_segments

        def counted(segments, color):
            out = list(original(segments, color))
            tinted.append(len(out))
            return iter(out)

        monkeypatch.setattr(BackgroundScreen, "process_segments", staticmethod(counted))
        _backdrop(helper, own=True)
        assert tinted == []  # nothing changed under it: every line kept
        first = rt.latest().routes[0]
        routes = (dataclasses.replace(first, running=first.running + 5),) + rt.latest().routes[1:]
        await _next(pilot, app, rt, routes=routes)  # one cell of the board under the help
        own = _backdrop(helper, own=True)
        assert tinted and sum(tinted) <= max(len(line) for line in own)  # the changed line tinted again, alone
        assert own == _backdrop(helper, own=False)
        assert str(first.running + 5) in "".join(text for text, _s, _c in own[[i for i, line in enumerate(own) if any(first.name in t for t, _s, _c in line)][0]])
