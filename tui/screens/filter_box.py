"""The ``/`` filter box shared by the table screens (routes board, crondor): hidden until asked
for, it filters the screen's table as you type and hands focus back to the table on Enter."""

from __future__ import annotations

from textual.widgets import DataTable, Input
from tui.commands.typeahead import open_text_box


class FilterBox:
    """Mixin for a screen with an ``Input`` (``FILTER_INPUT``) over a ``DataTable``
    (``TABLE``) and an ``update_body(snapshot)`` that applies ``filter_text``."""

    FILTER_INPUT = ""  # css selector of the Input, e.g. "#cron-filter"
    TABLE = ""  # css selector of the DataTable, e.g. "#cron"
    filter_text = ""

    def action_filter(self) -> None:
        box = self.query_one(self.FILTER_INPUT, Input)
        open_text_box(self, box, self.app.blink)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        if self.app.snapshot is not None:
            self.update_body(self.app.snapshot)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(self.TABLE, DataTable).focus()

    def action_back(self) -> None:
        """Escape: empty and hide the filter box (if it is in use) and go back to the table."""
        box = self.query_one(self.FILTER_INPUT, Input)
        if box.value or box.has_focus or box.has_class("-shown"):
            box.value = ""
            box.remove_class("-shown")
            self.query_one(self.TABLE, DataTable).focus()
