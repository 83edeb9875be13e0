"""The Slots view: the embedded startd's slots (issue 12 item 4; htcondor.md §4.2).

One row per slot from ``Snapshot.slots`` (``engine.views.execute``): State/Activity, the claimed
job and whether it was fetched (FETCH_WORK) or pushed (a match), when the last fetch completed
(``LastFetchWorkCompleted``) and when ``tryFetchWork`` will next run FETCH_WORK and why
(``FetchWorkDelay`` as last evaluated, START locally false, no keyword). The panel shows the
highlighted slot's merged Startd Cron attributes. Enter opens the Hooks screen filtered
to the slot.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from engine.contract.snapshot import SlotRow, Snapshot
from tui.commands import keymap
from tui.text.format import clock_time, duration
from tui.screens.base import DeckScreen, RowPanel, plain, sync_rows
from tui.widgets.repaint import show_text, show_title
from tui.widgets.chrome import titled
from tui.widgets.column_scroll import ColumnScrollTable

STATE_STYLE = {"Claimed": "green", "Unclaimed": "", "Owner": "yellow", "Preempting": "bold red"}
# State/Activity together, the claim and the next fetch within 80 columns; the reason after.
COLUMNS = (("Slot", "slot", 16), ("State/Activity", "state", 16), ("Job", "job", 8), ("Claim", "claim", 7),
           ("Next fetch", "next", 10), ("Last fetch", "last", 10), ("Why then", "why", 40))


def slot_cells(s: SlotRow, now: float, tz: str) -> tuple:
    last = clock_time(s.last_fetch, tz, date=False) if s.last_fetch is not None else "never"
    if s.next_fetch is None:
        nxt = "—"
    else:
        left = s.next_fetch - now
        nxt = f"in {duration(left)}" if left > 0 else "due"
    return (s.name, Text(f"{s.state}/{s.activity}", style=STATE_STYLE.get(s.state, "")), s.job or "—",
            s.claim or "—", nxt, last, s.next_why)


def slot_detail(s: SlotRow, now: float, tz: str) -> Text:
    t = Text()
    t.append(s.name, style="bold")
    t.append(f"  {s.state}/{s.activity} · keyword {s.keyword or '(none)'} · NextFetchWorkDelay {s.fetch_delay}\n")
    if s.job:
        t.append(f"claimed by job {s.job} ({s.claim})\n")
    if s.next_fetch is not None:
        t.append(f"next fetch {clock_time(s.next_fetch, tz)}: {s.next_why}\n")
    elif s.next_why:
        t.append(f"no fetch scheduled: {s.next_why}\n", style="dim")
    if s.cron_attrs:
        t.append("Startd Cron attributes:\n", style="bold")
        for k, v in s.cron_attrs.items():
            t.append(f"  {k} = {v}\n")
        for why in s.cron_why:
            t.append(f"  {why}\n", style="dim")
    else:
        t.append("no Startd Cron attributes\n", style="dim")
    t.append("Enter: this slot's hook invocations", style="dim")
    return t


class SlotsTable(ColumnScrollTable, DataTable):
    """The slots table: its Enter shows in the footer (keymap.SLOTS_TABLE);
    its columns scroll a whole column at a time (``ColumnScrollTable``)."""

    BINDINGS = keymap.SLOTS_TABLE


class SlotsScreen(RowPanel, DeckScreen):
    TABLE = AUTO_FOCUS = "#slots"
    BINDINGS = keymap.SLOTS

    def __init__(self) -> None:
        super().__init__()
        self._keys: list[str] = []

    def compose_body(self) -> ComposeResult:
        yield titled(SlotsTable(id="slots", cursor_type="row", zebra_stripes=True, fixed_columns=1), "Slots")
        yield Static(id="slots-detail")

    def on_mount(self) -> None:
        table = self.query_one("#slots", DataTable)
        for title, key, width in COLUMNS:
            table.add_column(title, key=key, width=width)
        table.focus()
        super().on_mount()

    def update_body(self, snap: Snapshot) -> None:
        table = self.query_one("#slots", DataTable)
        busy = sum(1 for s in snap.slots if s.activity == "Busy")
        show_title(table, f"Slots ── {len(snap.slots)} slots · {busy} busy")
        self._keys = sync_rows(table, self._keys, [(s.name, slot_cells(s, snap.time, snap.tz)) for s in snap.slots],
                               [k for _t, k, _w in COLUMNS])
        self._detail(snap)

    def row_for(self, snap: Snapshot, key: str) -> SlotRow | None:
        return next((s for s in snap.slots if s.name == key), None)

    def row_id(self, row: SlotRow) -> str:
        return row.name

    def _detail(self, snap: Snapshot) -> None:
        s = self.selected(snap)
        panel = self.query_one("#slots-detail", Static)
        show_text(panel, slot_detail(s, snap.time, snap.tz) if s else Text("no execute node", style="dim"))

    def on_data_table_row_selected(self, event) -> None:
        self.action_open_hooks()

    def action_open_hooks(self) -> None:
        """The Hooks screen filtered by the slot's name (its fetch-work hooks)."""
        s = self.selected_now()
        if s is not None:
            self.app.show_hooks(s.name.split("@")[0])

    def table_export(self):
        from tui.files.export import Table, records_of  # noqa: PLC0415

        snap = self.app.snapshot
        rows = [plain(slot_cells(s, snap.time, snap.tz)) for s in snap.slots]
        return Table("slots", [t for t, _k, _w in COLUMNS], rows, records_of(snap.slots))
