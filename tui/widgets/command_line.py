"""The ``:`` command line (k9s style): a one-line modal at the bottom that returns its text."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class CommandLine(ModalScreen[str | None]):
    DEFAULT_CSS = """
    CommandLine { align: left bottom; background: transparent; }
    CommandLine > Horizontal { height: 1; width: 100%; background: $panel; }
    CommandLine Label { width: 1; }
    CommandLine Input { border: none; height: 1; padding: 0; width: 1fr; background: $panel; }
    """
    BINDINGS = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, value: str = "", blink: bool = True) -> None:
        super().__init__()
        self._value = value
        self._blink = blink

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Label(":")
            yield Input(value=self._value, placeholder="routes | jobs | cron | edit NAME | why JOB | pause | speed 60 | help",
                        id="command-input")

    def on_mount(self) -> None:
        box = self.query_one(Input)
        box.cursor_blink = self._blink
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
