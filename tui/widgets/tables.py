"""What every project ``DataTable`` shares: :class:`NewWidthForgetsRows`, and :class:`DeckTable`
for a plain table."""

from __future__ import annotations

from textual.geometry import Size
from textual.widgets import DataTable


class NewWidthForgetsRows:
    """A ``DataTable`` mixin (before ``DataTable`` in the bases): a new width forgets its rendered rows."""

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        """Textual's; a new width also forgets DataTable's rendered rows at once. A row's filler
        past the last column is as wide as the table, and DataTable's row cache is not keyed by
        the width: it forgets the rows on the ``Resize`` event (``_update_count``), which a paint
        can come before. A hooks table resized while hidden drew its header row again with the old
        filler when shown (13 cells in the table's background instead of the header's)."""
        if size.width != self._size.width:
            self._update_count += 1
        return super()._size_updated(size, virtual_size, container_size, layout)


class DeckTable(NewWidthForgetsRows, DataTable):
    """A plain ``DataTable`` with :class:`NewWidthForgetsRows`."""
