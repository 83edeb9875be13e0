"""Issue 14, the tables' horizontal scroll and their scrollbars (the points the issue lists at its
end): every reachable horizontal scroll of the board, crondor and jobs tables shows the first
scrolled column whole beside the pinned ones — the end included, and however the scroll got there
(→, End, a wheel step, a scrollbar drag) — and every scrollbar draws whole cells.

The column maths is ``tui.text.format`` (``column_starts``, ``farthest_scroll``, ``column_snap``); the
tables share it through ``tui.widgets.column_scroll``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.geometry import Region
from textual.scrollbar import ScrollBarRender
from textual.strip import Strip

from tui.app import make_app
from tui.text.format import column_snap, column_starts, farthest_scroll
from tui.widgets.scrollbar import thumb_cells

from tests.helpers.demo_fixture import EngineRuntime
from engine.views.execute import execute_views
from tests.helpers.execute_fixture import T0, build_node
from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until
from tui.widgets.job_model import COLUMNS

pytestmark = pytest.mark.anyio
SIZES = [(80, 24), (132, 40)]
PARTIAL = set(ScrollBarRender.HORIZONTAL_BARS + ScrollBarRender.VERTICAL_BARS) - {" "}


# -- the column maths ----------------------------------------------------------------------------
widths_st = st.lists(st.integers(1, 40), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(widths_st, st.integers(1, 120))
def test_farthest_scroll_is_the_first_column_start_that_shows_the_rest(widths, view):
    x = farthest_scroll(widths, view)
    starts = column_starts(widths)
    total = sum(widths)
    if total <= view:
        assert x == 0
        return
    assert x in starts
    fits = [s for s in starts if s + view >= total]
    # the first start from which the rest fits; the last column's start when even it does not
    assert x == (fits[0] if fits else starts[-1])
    assert x >= total - view or not fits  # nothing of the table is out of reach but a too-wide last column


@settings(max_examples=300, deadline=None)
@given(widths_st, st.integers(1, 120), st.floats(-50, 600), st.floats(-50, 600))
def test_column_snap_rests_at_a_column_start_in_the_direction_moved(widths, view, x, previous):
    limit = farthest_scroll(widths, view)
    starts = [s for s in column_starts(widths) if s <= limit]
    got = column_snap(widths, x, previous, limit)
    assert got in starts
    if x > previous:
        assert got >= min(x, limit) or got == starts[-1]
        assert not [s for s in starts if min(x, limit) <= s < got]  # the first start at or after x
    elif x < previous:
        assert got <= max(x, 0) or got == 0
        assert not [s for s in starts if got < s <= x]  # the last start at or before x


def test_thumb_cells_fill_the_bar_from_home_to_end():
    """The thumb is whole cells, at the bar's start when scrolled home and at its end when
    scrolled to the end, its length the window's share of the bar (Textual's own ratio)."""
    assert thumb_cells(78, 122, 78, 0) == (0, 50)
    assert thumb_cells(78, 122, 78, 44) == (28, 50)
    assert thumb_cells(10, 1000, 10, 0) == (0, 1)  # at least a cell
    assert thumb_cells(10, 1000, 10, 990) == (9, 1)
    for pos in range(0, 45):
        start, length = thumb_cells(78, 122, 78, pos)
        assert 0 <= start and start + length <= 78 and length == 50


# -- the tables, in the real app -----------------------------------------------------------------
TABLES = ["board", "crondor", "jobs", "hooks", "slots"]


def _app(which="board", tmp_path=None, monkeypatch=None):
    """The demo's engine; for the hooks and slots tables an execute node's (as their snapshots)."""
    if which not in ("hooks", "slots"):
        return make_app(EngineRuntime(), blink=False, watch_files=False)
    sd = build_node(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)
    slots, hooks = execute_views(sd)
    return make_app(FakeRuntime(make_snapshot(50, slots=slots, hooks=hooks, time=float(T0 + 60))), blink=False,
                    watch_files=False)


def _strip(app, y: int) -> Strip:
    """Line ``y`` of what the terminal shows: ``render_strips()[y]``, the compositor drawing the
    widgets on that line alone (a check reads one line; the whole screen cost ~20x as much)."""
    compositor = app.screen._compositor
    chops = compositor._render_chops(Region(0, y, compositor.size.width, 1), lambda line: line == y)
    return Strip.join(chops[y].values())


def _line(app, y: int) -> str:
    return _strip(app, y).text


async def _open(pilot, which: str):
    """The demo's board, crondor or jobs screen, ready; returns (table, column titles, pinned)."""
    app = pilot.app
    await wait_until(pilot, lambda: app.snapshot is not None and bool(app.screen.query("#routes")))
    await pilot.pause()
    if which == "board":
        table = app.screen.query_one("#routes")
        titles = [str(c.label) for c in table.ordered_columns]
    elif which in ("hooks", "slots"):
        await pilot.press("h" if which == "hooks" else "o")
        await wait_until(pilot, lambda: bool(getattr(app.screen, "_keys", None)))
        table = app.screen.query_one(f"#{which}")
        titles = [str(c.label) for c in table.ordered_columns]
    elif which == "crondor":
        await pilot.press("c")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CronScreen" and app.screen._keys)
        table = app.screen.query_one("#cron")
        titles = [str(c.label) for c in table.ordered_columns]
    else:
        await pilot.press("j")
        await wait_until(pilot, lambda: bool(app.screen.query("#jobs")) and len(app.screen.table.model) > 0)
        table = app.screen.table
        titles = [c.title for c in COLUMNS]
    table.focus()
    await pilot.pause()
    return table, titles, len(titles) - len(table.scroll_widths())


def _assert_first_scrolled_column_whole(app, table, titles, pinned):
    """The scroll rests at a column start, and the header shows that column's title whole, right
    after the pinned columns (a cut one read "d / hold reason" or "ate")."""
    x = round(table.scroll_x)
    starts = column_starts(table.scroll_widths())
    assert x in starts, (x, starts)
    title = titles[pinned + starts.index(x)]
    top = table.content_region.y  # the header line
    line = _line(app, top)
    left = table.content_region.x + table.pinned_width()
    rest = line[left:]
    assert rest.lstrip().startswith(title) and len(rest) - len(rest.lstrip()) <= 1, (title, line)


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("which", TABLES)
async def test_every_horizontal_scroll_shows_the_first_scrolled_column_whole(which, size, tmp_path, monkeypatch):
    """→ pressed to the end, ← back, End (DataTable's scroll_end), a wheel step of a few cells and
    a scrollbar drag that lands mid-column: each rests at a column start, the end included."""
    app = _app(which, tmp_path, monkeypatch)
    async with app.run_test(size=size) as pilot:
        table, titles, pinned = await _open(pilot, which)
        starts = column_starts(table.scroll_widths())
        assert table.max_scroll_x > 0 or size != (80, 24)  # every table scrolls at 80×24
        if table.max_scroll_x == 0:
            assert table.virtual_size.width <= table.scrollable_content_region.width
            return  # nothing scrolls at this size
        seen = []
        for _ in range(len(titles) + 2):  # → to the end and beyond
            await pilot.press("right")
            _assert_first_scrolled_column_whole(app, table, titles, pinned)
            seen.append(round(table.scroll_x))
        assert seen[-1] == table.max_scroll_x and seen[-1] in starts  # the end is a column start
        # the last column is in view at the end (nothing out of reach)
        assert titles[-1] in _line(app, table.content_region.y)
        await pilot.press("left")
        _assert_first_scrolled_column_whole(app, table, titles, pinned)
        assert round(table.scroll_x) < seen[-1]
        # End: Textual's own paths to the widest scroll
        table.scroll_end(animate=False, immediate=True) if hasattr(table, "scroll_end") else None
        table.scroll_x = table.max_scroll_x
        await pilot.pause()
        _assert_first_scrolled_column_whole(app, table, titles, pinned)
        # a scrollbar drag lands anywhere: at every cell it rests at a column start
        for x in range(0, table.max_scroll_x + 3):
            table.scroll_to(x=0, animate=False, immediate=True)
            table.scroll_to(x=x, animate=False, immediate=True)
            await pilot.pause()
            _assert_first_scrolled_column_whole(app, table, titles, pinned)
        # a mouse wheel step (a few cells) moves a whole column right, then left
        table.scroll_to(x=0, animate=False, immediate=True)
        await pilot.pause()
        table._scroll_right_for_pointer(animate=False)
        await pilot.pause()
        assert round(table.scroll_x) == starts[1]
        _assert_first_scrolled_column_whole(app, table, titles, pinned)
        table._scroll_left_for_pointer(animate=False)
        await pilot.pause()
        assert round(table.scroll_x) == 0


async def test_a_resize_keeps_the_scroll_at_a_column_start():
    """Scrolled to the end at 80×24, then the terminal narrows and widens: still a column start."""
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        table, titles, pinned = await _open(pilot, "jobs")
        for _ in range(len(titles)):
            await pilot.press("right")
        for size in ((90, 24), (71, 24), (80, 24)):
            await pilot.resize_terminal(*size)
            await pilot.pause(0.1)
            _assert_first_scrolled_column_whole(app, table, titles, pinned)


def _bar_cells(app, bar) -> list:
    """The segments the compositor shows in a scrollbar's region, one per cell."""
    region = bar.region
    out = []
    for y in range(region.y, region.bottom):
        strip = _strip(app, y)
        out.append(strip.crop(region.x, region.right))
    return out


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("which", TABLES)
async def test_scrollbars_draw_whole_cells(which, size, tmp_path, monkeypatch):
    """Textual's ScrollBarRender draws the thumb's ends as partial blocks ("▊" at the end of the
    board's bar at 80×24); RouteDeck's scrollbars draw whole cells only: at home the thumb starts
    at the bar's first cell, at the end it ends at its last."""
    app = _app(which, tmp_path, monkeypatch)
    async with app.run_test(size=size) as pilot:
        table, titles, pinned = await _open(pilot, which)
        bars = [b for show, b in ((table.show_horizontal_scrollbar, table.horizontal_scrollbar),
                                  (table.show_vertical_scrollbar, table.vertical_scrollbar)) if show]
        if which == "jobs" or size == (80, 24):
            assert bars  # at 132×40 the other tables' columns fit: no horizontal bar
        for x in (0, table.max_scroll_x // 2, table.max_scroll_x):
            table.scroll_to(x=x, animate=False, immediate=True)
            await pilot.pause()
            for bar in bars:
                strips = _bar_cells(app, bar)
                text = "".join(s.text for s in strips)
                assert not PARTIAL & set(text), (bar.vertical, text)
                if bar.vertical:
                    continue
                thumb = [i for i, seg in enumerate(strips[0]) if seg.style and seg.style.reverse]
                assert thumb and thumb == list(range(thumb[0], thumb[-1] + 1))  # one run
                if x == 0:
                    assert thumb[0] == 0
                if x == table.max_scroll_x:
                    assert thumb[-1] == bar.region.width - 1
