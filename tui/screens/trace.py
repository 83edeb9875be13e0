"""The transform tracer: a job's routed ad built step by step (issue 13 item 1).

Each step of the pipeline in HTCondor's order (VanillaToGrid, each pre-route transform, the
route, each post-route transform, the router's attributes; htcondor.md §1.3, §1.6), each statement
at its config file:line with what it did to the ad — attributes set (+), changed (~), deleted
(-), renamed (→) — the macro values it assigned, ``if`` branches taken or not, statements
skipped and why. The data is :func:`engine.views.queries.trace.trace_job` (the same
``engine.router.trace`` the headless ``routedeck route --trace`` prints), asked from a thread
worker so a slow table load never freezes the UI. Opened with ``t`` from the jobs, job ad and
why-not screens, or ``:trace JOB``. The body scrolls (↑/↓, PgUp/PgDn) at any size.
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
from tui.engine_api import TraceResult, trace_job
from tui.widgets.chrome import StatusHeader
from tui.widgets.footer import DeckFooter

CHANGE_MARK = {"set": ("+", "green"), "changed": ("~", "yellow"), "deleted": ("-", "red"),
               "renamed": ("→", "cyan")}


def _change(t: Text, c, indent: str) -> None:
    mark, style = CHANGE_MARK.get(c.kind, ("?", ""))
    t.append(f"{indent}{mark} ", style=style)
    if c.kind == "set":
        t.append(f"{c.attr} = {c.new}\n")
    elif c.kind == "changed":
        t.append(f"{c.attr}: {c.old} → {c.new}\n")
    elif c.kind == "deleted":
        t.append(f"{c.attr}", style="strike")
        t.append(f" (was {c.old})\n", style="dim")
    else:
        t.append(f"{c.attr} → {c.new_name} ({c.new})\n")


FOLDED = 3  # changes shown of a step without statements (VanillaToGrid, the router's attributes) when folded


def render_trace(result: TraceResult, expand: bool = False) -> Text:
    """The trace laid out for reading: a header (job, route, verdict, how it was picked), then
    one section per pipeline step with its statements and their diffs. The long, always-the-same
    diffs of VanillaToGrid and the router's attributes are folded to :data:`FOLDED` lines unless
    ``expand`` (key ``x``)."""
    t = Text()
    t.append(f"{result.job}", style="bold")
    t.append(f" → {result.route}\n" if result.route else " → not routed\n", style="bold cyan")
    t.append(f"{result.verdict}\n", style="cyan")
    if result.note:
        t.append(f"{result.note}\n", style="dim")
    if result.table_from:
        t.append(f"routing table: {result.table_from}\n", style="dim")
    if not result.blocks:
        t.append("\nno routed ad is built for this job (it takes no route)\n", style="yellow")
        return t
    for b in result.blocks:
        t.append("\n")
        head = b.step if b.step in ("VanillaToGrid", "router attributes") else f"{b.step} {b.name}"
        t.append(f"▸ {head}", style="bold")
        if b.status != "applied":
            t.append(f"  [{b.status}]", style="red" if b.status.startswith("failed") else "yellow")
        t.append("\n")
        if b.knob and b.file:
            t.append(f"  {b.knob} · {b.file}:{b.file_line}\n", style="dim")
        for ev in b.statements:
            skipped = ev.status.startswith("skipped") or ev.status == "branch not taken"
            t.append(f"  {ev.where(short=True)} ", style="dim")
            t.append(ev.text, style="dim" if skipped else "")
            if ev.status and ev.status not in ("applied", "macro"):
                t.append(f"  [{ev.status}]", style="dim italic" if skipped else "italic")
            t.append("\n")
            if ev.expanded is not None:
                t.append(f"      expanded: {ev.expanded}\n", style="dim")
            if ev.macro is not None:
                t.append(f"      macro {ev.macro[0]} = {ev.macro[1]}\n", style="magenta")
            for c in ev.changes:
                _change(t, c, "      ")
            for w in ev.warnings:
                t.append(f"      warning: {w}\n", style="yellow")
        if not b.statements:
            shown = b.changes if expand or len(b.changes) <= FOLDED + 1 else b.changes[:FOLDED]
            for c in shown:
                _change(t, c, "    ")
            if len(shown) < len(b.changes):
                t.append(f"    … {len(b.changes) - len(shown)} more changes (x shows all)\n", style="dim")
            if not b.changes and b.status == "applied":
                t.append("    (no change)\n", style="dim")
    if result.routed_ad is not None:
        t.append(f"\nrouted ad: {len(result.routed_ad)} attributes\n", style="bold")
    return t


class TraceScreen(Screen):
    BINDINGS = keymap.TRACE

    class Traced(Message):
        def __init__(self, job: str, result: TraceResult | None, error: str | None) -> None:
            super().__init__()
            self.job, self.result, self.error = job, result, error

    def __init__(self, job: str) -> None:
        super().__init__()
        self.job = job
        self.result: TraceResult | None = None
        self.error: str | None = None
        self.expand = False

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        with VerticalScroll(id="trace-box") as box:
            box.border_title = f"Transform trace · {self.job}"
            yield Static(Text("building the routed ad…", style="dim"), id="trace")
        yield DeckFooter()

    def on_mount(self) -> None:
        self.query_one(StatusHeader).show(self.app.snapshot, self.app.readonly)
        self.action_retrace()
        self.query_one("#trace-box").focus()

    def action_retrace(self) -> None:
        snap = self.app.snapshot
        self._trace(snap.time if snap else 0.0, tuple(getattr(snap, "config_files", ()) or ()))

    def action_expand(self) -> None:
        self.expand = not self.expand
        if self.result is not None:
            self.query_one("#trace", Static).update(render_trace(self.result, self.expand))

    def action_why_not(self) -> None:
        self.app.pop_screen()
        self.app.open_why_not(self.job)

    @work(thread=True, exclusive=True)
    def _trace(self, now: float, config_files: tuple[str, ...]) -> None:
        try:
            result = trace_job(self.app.runtime, self.job, now, config_files)
        except Exception as exc:  # noqa: BLE001 - unknown job, no table, engine busy: shown, not raised
            message = str(exc) if isinstance(exc, LookupError) else f"{type(exc).__name__}: {exc}"
            self.post_message(self.Traced(self.job, None, message))
            return
        self.post_message(self.Traced(self.job, result, None))

    def on_trace_screen_traced(self, event: Traced) -> None:
        box = self.query_one("#trace", Static)
        if event.error:
            self.error = event.error
            box.update(Text(f"no trace for {event.job}: {event.error}", style="red"))
            return
        self.result = event.result
        box.update(render_trace(event.result, self.expand))
