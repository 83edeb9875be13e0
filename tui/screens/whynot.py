"""Why is this idle job not routed: the router's checks in order, with their numbers.

The steps come from the router's ``why_not(job_id, now)`` (global limit, source constraint and
the failing clause, each route's requirements in match order, then the chosen route's capacity
and throttle checks, htcondor.md §1); this screen only lays them out. The query runs in a
thread worker so a slow explanation never freezes the UI.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from tui.commands import keymap
from tui.engine_api import Check, why_not
from tui.widgets.footer import DeckFooter
from tui.widgets.chrome import StatusHeader

MARK = {True: ("✔", "green"), False: ("✘", "bold red"), None: ("·", "dim")}


def is_routed(verdict: str | None) -> bool:
    """The router's verdict says the job is routed already (tracked) or is a routed copy."""
    return bool(verdict) and (verdict.startswith("already managed") or verdict.startswith("this is the routed copy"))


def render_checks(job: str, checks: list[Check], verdict: str | None = None, note: str | None = None) -> Text:
    t = Text()
    if note:
        t.append(f"picked: {note}\n", style="dim")
    if is_routed(verdict):
        t.append(f"{job} is routed: {verdict}\n", style="bold green")
        verdict = None
    else:
        t.append(f"Why is {job} not routed? The router's checks in order:\n", style="bold")
    if verdict:
        t.append(f"verdict: {verdict}\n", style="bold cyan")
    t.append("\n")
    for k, c in enumerate(checks, 1):
        mark, style = MARK[c.ok]
        t.append(f" {mark} ", style=style)
        t.append(f"{k:>2}. {c.label}", style="bold" if c.ok is False else "")
        if c.detail:
            t.append(f"\n       {c.detail}", style="dim" if c.ok else "")
        t.append("\n")
    failed = next((c for c in checks if c.ok is False), None)
    if failed:
        t.append(f"\nFirst failing check: {failed.label}", style="bold red")
    return t


class WhyNotScreen(Screen):
    BINDINGS = keymap.WHY_NOT

    class Explained(Message):
        def __init__(self, job: str, checks: list[Check] | None, error: str | None,
                     verdict: str | None = None) -> None:
            super().__init__()
            self.job, self.checks, self.error, self.verdict = job, checks, error, verdict

    def __init__(self, job: str, note: str | None = None) -> None:
        super().__init__()
        self.job = job
        self.note = note
        self.checks: list[Check] | None = None
        self.verdict: str | None = None

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        with VerticalScroll(id="whynot-box") as box:
            box.border_title = f"Why not routed · {self.job}"
            yield Static(Text("asking the router…", style="dim"), id="whynot")
        yield DeckFooter()

    def on_mount(self) -> None:
        self.query_one(StatusHeader).show(self.app.snapshot, self.app.readonly)
        self.action_refresh_checks()

    def action_refresh_checks(self) -> None:
        now = self.app.snapshot.time if self.app.snapshot else 0.0
        self._explain(now)

    @work(thread=True, exclusive=True)
    def _explain(self, now: float) -> None:
        try:
            verdict, checks = why_not(self.app.runtime, self.job, now)
        except Exception as exc:  # noqa: BLE001 - unknown job, engine error: shown, not raised
            self.post_message(self.Explained(self.job, None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Explained(self.job, checks, None, verdict))

    def action_trace(self) -> None:
        self.app.pop_screen()
        self.app.open_trace(self.job)

    def on_why_not_screen_explained(self, event: Explained) -> None:
        box = self.query_one("#whynot", Static)
        if event.error:
            box.update(Text(f"no explanation for {event.job}: {event.error}", style="red"))
            return
        self.checks = event.checks
        self.verdict = event.verdict
        box.update(render_checks(event.job, event.checks or [], event.verdict, self.note))
