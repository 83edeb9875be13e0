"""Repaint only what a snapshot changed (issue 30).

Snapshots arrive four times a second; redrawing a screen's table and panels for each one kept the
demo's UI thread busy (~30 % of a core at rest) and made a key wait for the repaint.

* :func:`write_cells`: a ``DataTable``'s cells written in place, only those whose value changed,
  with one repaint of the changed rows (``DataTable.update_cell`` bumps the table's render
  generation and repaints the whole table on each call), and none when nothing changed.
* :func:`show_text`: a ``Static``'s content replaced only when it differs, and laid out again only
  when its lines' widths changed (``Static.update`` lays the whole screen out by default).
"""

from __future__ import annotations

from typing import Any, Sequence

from rich.cells import cell_len
from rich.text import Text
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
    cells' order) into ``table``: only changed cells are written, the table's render caches are
    dropped once and only the changed rows are repainted (the whole table once past WHOLE_TABLE
    rows). Returns the number of rows changed (0: nothing is repainted)."""
    data = table._data
    changed: list[Any] = []
    for key, cells in rows:
        row = data[key]
        hit = False
        for col, value in zip(columns, cells):
            if not same_cell(row.get(col), value):
                row[col] = value
                hit = True
        if hit:
            changed.append(key)
    if changed:
        table._update_count += 1  # what update_cell does per cell: the render caches are keyed by it
        if len(changed) > WHOLE_TABLE:
            table.refresh()
        else:
            for key in changed:
                table.refresh_row(table.get_row_index(key))
    return len(changed)


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
