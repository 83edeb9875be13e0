"""The ledger (issue 29): every idle source job with its verdict — the route it will take or why
it waits — and when the schedd's periodic policy holds it ("held in …"), in every mode: ``l`` or
``:ledger``. Enter on a row opens the why-not screen of that job (every route's verdict). Below
the counts, a route every job seen that matches it matches earlier too (engine.views.ledger.
unreached: the shadowing lint over the jobs seen, where the route texts prove nothing).

The entries are the engine's ``ledger(now)`` (``engine.views.queries.whynot.ledger``: the
entries of ``routedeck why --json``, engine.views.ledger / engine.router.unrouted), read in a
thread worker at the snapshot's moment; ``r`` reads them again.
"""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static

from tui.commands import keymap
from tui.engine_api import ledger, unreached
from tui.text.format import duration
from tui.widgets.chrome import StatusHeader
from tui.widgets.footer import DeckFooter
from tui.widgets.tables import NewWidthForgetsRows

VERDICT_STYLE = {"matched": "green", "no_match": "bold red", "route_full": "yellow", "throttled": "yellow",
                 "not_candidate": "dim"}
VERDICTS = ("matched", "no_match", "route_full", "throttled", "not_candidate")
# (title, key, width); the "why" column takes the room the others leave
COLUMNS = (("Job", "job", 9), ("Verdict", "verdict", 13), ("Route, or why it waits", "why", 0),
           ("Hold", "hold", 16))
SHOWN = 5000  # rows drawn at most (the summary counts them all)


def why_text(entry) -> str:
    """The route a ``matched`` job takes, else why it waits: the first route of the job's verdict
    with its detail (the false clause, the limit's numbers, the throttle), else the verdict's."""
    if entry.verdict == "matched":
        return f"→ {entry.detail.removeprefix('route ')}" if entry.detail else "→ ?"
    first = next((r for r in entry.routes if r["verdict"] == entry.verdict and r.get("detail")), None)
    return f"{first['route']}: {first['detail']}" if first is not None else entry.detail


def hold_text(entry) -> Text:
    h = entry.hold
    if not h:
        return Text("")
    word = "removed" if h.get("action") == "remove" else "held"
    return Text(f"{word} in {duration(max(0.0, float(h['in'])))}", style="bold red" if h["in"] < 3600 else "red")


def ledger_cells(entry, why_width: int) -> tuple:
    why = why_text(entry)
    if len(why) > why_width:
        why = why[:max(0, why_width - 1)] + "…"
    return (entry.job, Text(entry.verdict, style=VERDICT_STYLE.get(entry.verdict, "")), why, hold_text(entry))


def summary(entries) -> Text:
    counts = Counter(e.verdict for e in entries)
    held = sum(1 for e in entries if e.hold and e.hold.get("action") != "remove")
    t = Text(f"{len(entries)} idle source jobs: ", style="bold")
    t.append(" · ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v]) or "none")
    if held:
        t.append(f" · {held} to be held if still waiting", style="red")
    for u in unreached(entries):  # shadowing the route texts cannot prove, shown over these jobs
        t.append(f"\n⚠ route {u.route} is reached by none of the {u.jobs} jobs seen that match it: "
                 f"they match {u.by} first", style="yellow")
    return t


class LedgerTable(NewWidthForgetsRows, DataTable):
    """Enter opens the why-not of the row's job (keymap.LEDGER_TABLE)."""

    BINDINGS = keymap.LEDGER_TABLE


class LedgerScreen(Screen):
    BINDINGS = keymap.LEDGER

    class Read(Message):
        def __init__(self, entries, note: str, error: str | None = None) -> None:
            super().__init__()
            self.entries, self.note, self.error = entries, note, error

    def __init__(self) -> None:
        super().__init__()
        self.entries: list | None = None
        self.note = ""

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        with Vertical(id="ledger-box") as box:
            box.border_title = "Ledger · every idle source job"
            yield Static(Text("reading the ledger…", style="dim"), id="ledger-summary")
            yield LedgerTable(id="ledger", cursor_type="row", zebra_stripes=True)
        yield DeckFooter()

    def why_width(self) -> int:
        fixed = sum(w for _t, _k, w in COLUMNS)
        # the box's border and padding (4), the table's scrollbar (2), each cell's padding (2)
        return max(12, self.app.size.width - 6 - fixed - 2 * len(COLUMNS))

    def on_mount(self) -> None:
        table = self.query_one("#ledger", DataTable)
        for title, key, width in COLUMNS:
            table.add_column(title, key=key, width=width or self.why_width())
        table.focus()
        self.query_one(StatusHeader).show(self.app.snapshot, self.app.readonly)
        self.action_refresh_ledger()

    def action_refresh_ledger(self) -> None:
        snap = self.app.snapshot
        if snap is not None:
            self._read(snap.time)

    @work(thread=True, exclusive=True)
    def _read(self, now: float) -> None:
        try:
            entries, note = ledger(self.app.runtime, now)
        except Exception as exc:  # noqa: BLE001 - engine stopped or busy: shown, not raised
            self.post_message(self.Read(None, "", f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Read(entries, note))

    def on_ledger_screen_read(self, event: Read) -> None:
        head = self.query_one("#ledger-summary", Static)
        table = self.query_one("#ledger", DataTable)
        if event.error or event.entries is None:
            head.update(Text(f"no ledger: {event.error or event.note}", style="red"))
            return
        self.entries, self.note = event.entries, event.note
        row = table.cursor_row
        table.clear()
        width = self.why_width()
        for entry in event.entries[:SHOWN]:
            table.add_row(*ledger_cells(entry, width), key=entry.job)
        if table.row_count:
            table.move_cursor(row=min(max(row, 0), table.row_count - 1), animate=False)
        text = summary(event.entries)
        if len(event.entries) > SHOWN:
            text.append(f" (the first {SHOWN} shown)", style="dim")
        head.update(text)

    def selected_job(self) -> str | None:
        table = self.query_one("#ledger", DataTable)
        if not self.entries or not 0 <= table.cursor_row < min(len(self.entries), SHOWN):
            return None
        return self.entries[table.cursor_row].job

    def on_data_table_row_selected(self, event) -> None:
        self.action_why_not()

    def action_why_not(self) -> None:
        job = self.selected_job()
        if job is not None:
            self.app.open_why_not(job)
