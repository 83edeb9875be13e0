"""The bookmark picker of replay mode (``'``): pick a bookmark to go to it.

The list is the app's (``app.bookmarks``: name, 0-based transaction, time), in transaction
order; the engine keeps the same names (``engine.contract.commands.AddBookmark``), so going to one is
a ``GotoBookmark(name)``. Dismisses with the chosen name, or None on Escape.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui.commands import keymap
from tui.text.format import clock_time, count


class BookmarkPicker(ModalScreen[str | None]):
    BINDINGS = keymap.PICKER
    DEFAULT_CSS = """
    BookmarkPicker #bookmark-box { width: 60; height: auto; max-height: 20; border: thick $primary;
        background: $surface; padding: 0 1; }
    """

    def __init__(self, bookmarks: list[tuple[str, int, float]], tz: str = "UTC") -> None:
        super().__init__()
        self.bookmarks = sorted(bookmarks, key=lambda b: (b[1], b[0]))
        self.tz = tz

    def compose(self) -> ComposeResult:
        with Vertical(id="bookmark-box") as box:
            box.border_title = "Bookmarks"
            box.border_subtitle = "Enter go · Esc cancel"
            yield OptionList(*(
                Option(f"{name:8} transaction {count(step + 1):>8}  {clock_time(t, self.tz)}", id=name)
                for name, step, t in self.bookmarks), id="bookmarks")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
