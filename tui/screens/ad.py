"""A job's full ClassAd (drill-down from the jobs screen), as ``Name = value`` lines."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual import work
from textual.screen import ModalScreen
from textual.widgets import Static

from engine.snapshot import JobRow
from tui import keymap
from tui.engine_api import job_ad


class AdScreen(ModalScreen[None]):
    BINDINGS = keymap.AD

    def __init__(self, row: JobRow) -> None:
        super().__init__()
        self.row = row

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="ad-box", classes="dialog") as box:
            box.border_title = f"Job {self.row.job}"
            box.border_subtitle = "Esc close · w why not"
            yield Static(Text("reading the job's ad …", style="dim"), id="ad-text")

    def on_mount(self) -> None:
        self.loader = self._load()  # the Worker: tests await it

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        # The full ad comes from the engine thread (Runtime.query), which may take as long as one
        # engine step: wait for it in a worker, never on the UI thread.
        text = self._text()
        self.app.call_from_thread(self.query_one("#ad-text", Static).update, text)

    def _text(self) -> Text:
        try:
            ad = job_ad(self.app.runtime, self.row)
        except Exception as exc:  # noqa: BLE001 - the engine's query failed: say so, keep the screen
            return Text(f"could not read the job's ad: {exc}", style="red")
        t = Text()
        width = max((len(k) for k in ad), default=0)
        for name in sorted(ad, key=str.lower):
            t.append(name.ljust(width), style="bold cyan")
            t.append(f" = {ad[name]}\n")
        return t

    def action_why_not(self) -> None:
        self.dismiss()
        self.app.open_why_not(self.row.job)
