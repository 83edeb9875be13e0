"""The ``/`` filter box shared by the table screens (routes board, crondor): hidden until asked
for, it filters the screen's table as you type and hands focus back to the table on Enter."""

from __future__ import annotations

from textual.widgets import DataTable, Input


class FilterBox:
    """Mixin for a screen with an ``Input`` (``FILTER_INPUT``) over a ``DataTable``
    (``FILTER_TABLE``) and an ``update_body(snapshot)`` that applies ``filter_text``."""

    FILTER_INPUT = ""  # css selector of the Input, e.g. "#cron-filter"
    FILTER_TABLE = ""  # css selector of the DataTable, e.g. "#cron"
    filter_text = ""

    def action_filter(self) -> None:
        box = self.query_one(self.FILTER_INPUT, Input)
        box.add_class("-shown")
        box.cursor_blink = self.app.blink
        # the box is display:none until the class lands; focus it once it is laid out
        self.call_after_refresh(box.focus)
        if hasattr(self.app, "type_ahead"):
            self.app.type_ahead(box)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        if self.app.snapshot is not None:
            self.update_body(self.app.snapshot)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(self.FILTER_TABLE, DataTable).focus()
