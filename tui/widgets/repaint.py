"""Repaint only what a snapshot changed (issue 30).

Snapshots arrive four times a second; redrawing a screen's table and panels for each one kept the
demo's UI thread busy (~30 % of a core at rest) and made a key wait for the repaint.

* :func:`write_cells`: a ``DataTable``'s cells written in place, only those whose value changed,
  with one repaint of the changed rows that renders only the changed cells again
  (``DataTable.update_cell`` bumps the table's render generation, so every cell on screen is
  rendered again, and repaints the whole table, on each call), and none when nothing changed.
* :func:`show_text`: a ``Static``'s content replaced only when it differs, and laid out again only
  when its lines' widths changed (``Static.update`` lays the whole screen out by default).
* :func:`show_title`: a widget's border title set only when it differs (setting it repaints the
  whole widget: every line of a table was rendered again on each snapshot and each switch to it).
"""

from __future__ import annotations

from typing import Any, Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget
from textual.widgets import DataTable, Static

WHOLE_TABLE = 16  # more changed rows than this: one repaint of the whole table, not one per row


def same_cell(a: Any, b: Any) -> bool:
    """Whether two cell values draw the same. ``Text.__eq__`` compares only the text and the spans,
    so a change of the whole text's style (a route turning red) would pass for no change."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Text):
        return (a.plain == b.plain and a.spans == b.spans and a.style == b.style and a.justify == b.justify
                and a.overflow == b.overflow and a.no_wrap == b.no_wrap and a.end == b.end)
    return bool(a == b)


def write_cells(table: DataTable, rows: Sequence[tuple[Any, Sequence[Any]]], columns: Sequence[Any]) -> int:
    """Put ``rows`` (``(key, cells)`` of rows ``table`` shows; ``columns``: the column keys in the
    cells' order) into ``table``: only changed cells are written, only their rows are repainted and
    only their cells rendered again (the rest of the table comes from its render caches). Past
    WHOLE_TABLE changed rows, the whole table is drawn again once. Returns the number of rows
    changed (0: nothing is repainted)."""
    data = table._data
    changed: dict[Any, list[Any]] = {}
    for key, cells in rows:
        row = data[key]
        for col, value in zip(columns, cells):
            if not same_cell(row.get(col), value):
                row[col] = value
                changed.setdefault(key, []).append(col)
    if not changed:
        return 0
    if len(changed) > WHOLE_TABLE or not _forget(table, changed):
        table._update_count += 1  # what update_cell does per cell: every render cache is keyed by it
        table.refresh()
        return len(changed)
    for key in changed:
        table.refresh_row(table.get_row_index(key))
    return len(changed)


def _forget(table: DataTable, changed: dict[Any, list[Any]]) -> bool:
    """Drop what ``table``'s render caches hold for the ``changed`` cells (row key -> column keys)
    and their rows' lines, so that those are rendered again and nothing else is. DataTable keys
    its caches by a generation that ``update_cell`` bumps, which re-renders every cell on screen
    for one changed value; the cache keys read here are textual 8.2.8's (pinned in pyproject).
    False when they are not as expected: the caller bumps the generation instead."""
    try:
        rows = {table._row_locations.get(key) for key in changed}
        cells = {(key, col) for key, cols in changed.items() for col in cols}
        caches = (
            (table._cell_render_cache, lambda k: (k[0], k[1]) in cells),  # (row key, column key, …)
            (table._row_render_cache, lambda k: k[0] in changed),  # (row key, line in row, …)
            (table._row_renderable_cache, lambda k: k[1] in rows),  # (generation, row index)
            (table._line_cache, lambda k: _row_at(table, k[0]) in changed),  # (y, …)
        )
        doomed = [(cache, [k for k in list(cache.keys()) if hit(k)]) for cache, hit in caches]
    except (AttributeError, LookupError, IndexError, TypeError):
        return False
    for cache, keys in doomed:
        for k in keys:
            cache.discard(k)
    return True


def _row_at(table: DataTable, y: int) -> Any:
    """The key of the row drawn on line ``y`` of ``table`` (None: no row, e.g. a line cached
    before rows were removed)."""
    try:
        return table._get_offsets(y)[0]
    except (LookupError, IndexError):
        return None


def _shape(content: Any) -> tuple[int, ...] | None:
    if isinstance(content, Text):
        content = content.plain
    if isinstance(content, str):
        return tuple(cell_len(line) for line in content.split("\n"))
    return None


def show_text(static: Static, content: Text | str) -> bool:
    """``static.update(content)`` unless it shows that already; laid out again only when the lines'
    widths differ from what it shows (the same widths wrap the same, so its height stays). True
    when it was updated."""
    before = static._Static__content  # what Static.update was last given
    if same_cell(before, content):
        return False
    shape = _shape(content)
    static.update(content, layout=shape is None or shape != _shape(before))
    return True


def show_title(widget: Widget, title: str) -> bool:
    """``widget.border_title = title`` unless this function set that title last. True when set."""
    if getattr(widget, "_shown_title", None) == title:
        return False
    widget.border_title = title
    widget._shown_title = title  # type: ignore[attr-defined]
    return True
