"""``?`` help: every key binding of the app and of each screen, and every ``:`` command.

Built from ``tui.commands.keymap`` (where every screen's bindings come from) and the command table, so it cannot fall out of date.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.commands import keymap
from tui.text.legend import legend_sections
from tui.commands.palette import COMMANDS
from tui.widgets.chrome import titled


def help_sections(app) -> list[tuple[str, list[tuple[str, str]]]]:
    """The keymap's sections and every ``:`` command."""
    sections = [("Everywhere", keymap.rows(keymap.APP) + [("ctrl+p", "command palette")])]
    for title, bindings in keymap.SECTIONS[1:]:
        if title == "Replay" and getattr(app, "mode", "") != "replay":
            title = "Replay (routedeck replay only)"
        sections.append((title, keymap.rows(bindings)))
    sections.append((": commands", [(f":{c.name} {c.arg}".strip()
                                     + (f"  (:{', :'.join(c.aliases)})" if c.aliases else ""), c.help)
                                    for c in COMMANDS]))
    sections.extend(legend_sections())  # what each column means (tui.text.legend)
    return sections


class HelpScreen(ModalScreen[None]):
    BINDINGS = keymap.HELP

    def compose(self) -> ComposeResult:
        yield titled(VerticalScroll(Static(self.render_help(), id="help-text"), id="help-box", classes="dialog"),
                     "RouteDeck help", "Esc close")

    def render_help(self) -> Table:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold cyan", no_wrap=True)
        grid.add_column()
        for title, rows in help_sections(self.app):
            grid.add_row(Text(title, style="bold underline"), "")
            for key, what in rows:
                grid.add_row(key, what)
            grid.add_row("", "")
        return grid


class TextScreen(ModalScreen[None]):
    """A long text in a scrollable dialog (the engine's traceback after a crash)."""

    BINDINGS = keymap.DIALOG

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text, self.text = title, text

    def compose(self) -> ComposeResult:
        yield titled(VerticalScroll(Static(Text(self.text), id="text-body"), classes="dialog"),
                     self.title_text, "Esc close")
