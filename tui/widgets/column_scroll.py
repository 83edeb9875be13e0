"""Horizontal scrolling by whole columns, shared by every table that scrolls sideways (the board,
crondor, jobs, hooks and slots tables).

The one rule: a table's horizontal scroll only ever rests at a column start, so the first
scrolled column beside the pinned ones is always whole. Three things make it hold everywhere:

* the widest scroll is a column start (``tui.text.format.farthest_scroll``): the table's virtual width
  is padded so that the end shows the last columns from a column start, blank on the right,
  instead of the last screenful cut at the left ("d / hold reason" for "Cmd / hold reason");
* every scroll request — → / ←, a mouse wheel's few cells, a scrollbar drag, a page, End — goes
  through ``_scroll_to`` and is snapped to a start in its direction (``tui.text.format.column_snap``),
  so a few cells right move a whole column right;
* a value set directly (``scroll_x = …``, an animation's steps) snaps to the nearest start.

The column maths is in ``tui.text.format`` alone; a table says which columns scroll
(:meth:`ColumnScroll.scroll_widths`) and how wide its pinned ones are.
"""

from __future__ import annotations

from textual.geometry import Size

from tui.text.format import column_snap, column_step, farthest_scroll, fit_columns
from tui.widgets.tables import NewWidthForgetsRows


class ColumnScroll:
    """Mixin for a ``ScrollView`` (``DataTable`` or a Line API table); put it first in the bases."""

    def scroll_widths(self) -> list[int]:
        """The scrolling columns' widths in cells, in order (the pinned ones left out)."""
        raise NotImplementedError

    def pinned_width(self) -> int:
        """Cells taken by the pinned columns at the left."""
        raise NotImplementedError

    def column_view(self) -> int:
        """Cells the scrolling columns are shown in."""
        return max(1, self.container_size.width - self.scrollbar_size_vertical - self.pinned_width())

    @property
    def max_scroll_x(self) -> int:
        return farthest_scroll(self.scroll_widths(), self.column_view())

    def validate_virtual_size(self, size: Size) -> Size:
        # room after the last column, so the widest scroll is a column start (and the scrollbar's
        # thumb, drawn from the virtual width, ends where the scroll does)
        widths = self.scroll_widths()
        view = self.column_view()
        if sum(widths) <= view:
            return size  # nothing scrolls: the table keeps its own width
        width = self.pinned_width() + max(sum(widths), farthest_scroll(widths, view) + view)
        return Size(width, size.height)

    def _snap(self, x: float, previous: float) -> int:
        return column_snap(self.scroll_widths(), x, previous, self.max_scroll_x)

    def validate_scroll_x(self, value: float) -> float:
        return self._snap(value, value)

    def validate_scroll_target_x(self, value: float) -> float:
        return self._snap(value, value)

    def _scroll_to(self, x: float | None = None, y: float | None = None, **kwargs) -> bool:
        if x is not None:
            x = self._snap(x, self.scroll_target_x)
        return super()._scroll_to(x, y, **kwargs)

    def column_scroll(self, delta: int) -> bool:
        """→ (``delta`` 1) / ← (-1): scroll a whole column; False when there is none to go to."""
        x = column_step(self.scroll_widths(), self.scroll_x, delta, self.max_scroll_x)
        if x is None:
            return False
        self.scroll_to(x=x, animate=False, immediate=True)
        return True

    def scroll_column_into_view(self, index: int) -> None:
        """Bring scrolling column ``index`` into view, whole (the snap picks the column start
        that shows it when it lies to the right)."""
        widths = self.scroll_widths()
        left = sum(widths[:index])
        right = left + widths[index]
        if left < self.scroll_x:
            self.scroll_to(x=left, animate=False, immediate=True)
        elif right > self.scroll_x + self.column_view():
            x = column_snap(widths, right - self.column_view(), -1, self.max_scroll_x)
            self.scroll_to(x=min(x, left), animate=False, immediate=True)

    def columns_changed(self) -> None:
        """After the columns' widths or the view changed: pad again and rest at a start."""
        self.virtual_size = self.virtual_size
        self.scroll_target_x = self.scroll_x = self.scroll_x

    def on_resize(self, event) -> None:
        self.columns_changed()

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        # the vertical bar takes a cell from the view once rows overflow (no resize is sent)
        self.columns_changed()


class ColumnScrollTable(NewWidthForgetsRows, ColumnScroll):
    """A ``DataTable`` with ``fixed_columns`` pinned: → / ← scroll a whole column, and with no
    column to go to the key goes on as DataTable's own (which skips to the app's binding when
    there is nothing to scroll: a paused replay steps)."""

    def scroll_widths(self) -> list[int]:
        return [c.get_render_width(self) for c in self.ordered_columns[self.fixed_columns:]]

    def pinned_width(self) -> int:
        return self._get_fixed_offset().left

    _shape: tuple | None = None  # the fitted columns shown

    def fit_columns_to(self, columns, width: int) -> bool:
        """Show ``columns`` (``(title, key, width)``) fitted to ``width`` cells
        (``tui.text.format.fit_columns``: none cut at the right edge). True when they changed: the
        rows went with them, and the caller adds them again."""
        shape = fit_columns(columns, width)
        if shape == self._shape:
            return False
        self._shape = shape
        self.clear(columns=True)
        for title, key, w in shape:
            self.add_column(title, key=key, width=w)
        return True

    def action_cursor_right(self) -> None:
        if not self.column_scroll(1):
            super().action_cursor_right()

    def action_cursor_left(self) -> None:
        if not self.column_scroll(-1):
            super().action_cursor_left()
