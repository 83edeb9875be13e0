"""``?`` help: every key binding of the app and of each screen, and every ``:`` command.

Built from the bindings and the command table themselves, so it cannot fall out of date.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.legend import legend_sections
from tui.palette import COMMANDS


def binding_rows(bindings) -> list[tuple[str, str]]:
    rows = []
    for b in bindings:
        if isinstance(b, tuple):
            b = Binding(*b)
        key = b.key_display or ", ".join(k.replace("question_mark", "?").replace("colon", ":")
                                         .replace("slash", "/").replace("plus", "+").replace("minus", "-")
                                         for k in b.key.split(","))
        rows.append((key, b.description or b.action))
    return rows


def help_sections(app) -> list[tuple[str, list[tuple[str, str]]]]:
    from tui.screens.cron import CronScreen  # noqa: PLC0415
    from tui.screens.editor import EditorScreen  # noqa: PLC0415
    from tui.screens.jobs import JobsScreen  # noqa: PLC0415
    from tui.screens.route_detail import RouteDetailScreen  # noqa: PLC0415
    from tui.screens.routes import RoutesScreen  # noqa: PLC0415
    from tui.screens.whynot import WhyNotScreen  # noqa: PLC0415
    from tui.widgets.job_table import JobTable  # noqa: PLC0415

    sections = [("Everywhere", binding_rows(type(app).BINDINGS) + [("ctrl+p", "command palette")])]
    for title, cls in (("Routes board", RoutesScreen), ("Route", RouteDetailScreen), ("Jobs", JobsScreen),
                       ("Jobs list", JobTable), ("Why not routed", WhyNotScreen), ("Crondor", CronScreen),
                       ("Route editor", EditorScreen)):
        sections.append((title, binding_rows(cls.BINDINGS)))
    sections.append((": commands", [(f":{c.name} {c.arg}".strip(), c.help) for c in COMMANDS]))
    sections.extend(legend_sections())  # what each column means (tui.legend)
    return sections


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box", classes="dialog") as box:
            box.border_title = "RouteDeck help"
            box.border_subtitle = "Esc close"
            yield Static(self.render_help(), id="help-text")

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

    BINDINGS = [Binding("escape,q", "dismiss", "Close")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text, self.text = title, text

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog") as box:
            box.border_title = self.title_text
            box.border_subtitle = "Esc close"
            yield Static(Text(self.text), id="text-body")
