"""The crondor screen: cron jobs, their next DeferralTime and start window (htcondor.md §2).

Times are shown absolute in the job's zone (with its abbreviation) and as a countdown from the
snapshot's time, which advances with every snapshot — a live countdown that stays deterministic
for a frozen snapshot. When an HTCondor >= 10.3 schedd would pick a different next run than the
documented rule (htcondor.md §2.3 item 4), the schedd's pick is shown next to it and the lint is
spelled out in the panel below.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Input, Static

from engine.contract.codes import HoldCode, JobStatus
from engine.contract.snapshot import CronView, Snapshot
from tui.commands import keymap
from tui.text.format import ago, duration, short, zoned
from tui.screens.base import DeckScreen, FittedTable, RowPanel, plain, sync_rows
from tui.widgets.repaint import show_text, show_title
from tui.screens.filter_box import FilterBox
from tui.widgets.chrome import titled
from tui.widgets.column_scroll import ColumnScrollTable

STATE_STYLE = {"idle": "", "waiting": "cyan", "running": "green", "held": "bold red", "invalid": "bold red"}
# The job id pinned, then what an operator reads first: state, countdown, next run.
COLUMNS = (("Job", "job", 7), ("State", "state", 8), ("In", "in", 9), ("Next run", "next", 20),
           ("Schedule", "schedule", 16), ("Window", "window", 13), ("", "lint", 1),
           ("Schedd pick", "schedd", 21))
N_RUNS = 5


def schedule_text(c: CronView) -> str:
    return " ".join(f if f is not None else "*" for f in c.fields)


def window_text(c: CronView) -> str:
    return f"−{short(c.prep_time)} … +{short(c.window)}"


def schedd_pick(c: CronView) -> tuple[int, int] | None:
    """The first next run where the schedd's pick differs from the documented rule, if any."""
    for ours, theirs in zip(c.next_runs, c.schedd_runs):
        if ours != theirs:
            return ours, theirs
    return None


def cron_cells(c: CronView, now: float) -> tuple:
    if c.deferral_time is not None:
        nxt = zoned(c.deferral_time, c.tz)
        left = c.deferral_time - now
        if left < 0 and c.state == "running":  # this run started at its DeferralTime: how long ago
            countdown = Text(ago(-left), style="dim")
        elif left < 0 and c.state == "held":  # held for a missed run (§2.4): when that run was due
            countdown = Text(ago(-left), style="red")
        else:  # negative: overdue (not started although its time has come)
            countdown = Text(duration(left), style="red" if left < 0 else "")
    else:
        nxt, countdown = "—", Text("")
    if c.state == "waiting" and c.deferral_time is not None:
        nxt = f"deferred {zoned(c.deferral_time, c.tz)[11:]}"
    elif c.state == "held":
        # A held job has no next run: the DeferralTime it keeps is the run it missed (the In column
        # says how long ago). On release the schedd computes a new one from the release time
        # (htcondor.md §2.4); the detail pane says which that would be now (issue 29: "Next run"
        # showed a past time).
        nxt = Text("on release", style="dim")
    diff = schedd_pick(c)
    pick = Text(zoned(diff[1], c.tz), style="yellow") if diff else Text("same", style="dim")
    return (c.job, Text(c.state, style=STATE_STYLE.get(c.state, "")), countdown, nxt, schedule_text(c),
            window_text(c), Text("⚠", style="yellow") if c.lints else "", pick)


def cron_detail(c: CronView, now: float) -> Text:
    t = Text()
    t.append(f"{c.job}", style="bold")
    t.append(f"  {schedule_text(c)}  zone {c.tz}  prep {short(c.prep_time)}, window {short(c.window)}\n")
    runs = ", ".join(zoned(r, c.tz) for r in c.next_runs[:N_RUNS]) or "none (schedule can never fire)"
    t.append(f"next {N_RUNS} runs: ", style="bold")
    t.append(runs + "\n")
    if c.schedd_runs[:N_RUNS] != c.next_runs[:N_RUNS]:
        t.append("an HTCondor ≥ 10.3 schedd picks: ", style="bold yellow")
        t.append(", ".join(zoned(r, c.tz) for r in c.schedd_runs[:N_RUNS]) + "\n")
    if c.hold_reason:
        t.append(f"held (code {c.hold_code}): {c.hold_reason}\n", style="red")
    if c.state == "held":
        if c.deferral_time is not None:
            t.append(f"the run due {zoned(c.deferral_time, c.tz)} was missed; ", style="red")
        t.append("released now, its next run would be "
                 + (zoned(c.next_runs[0], c.tz) if c.next_runs else "none") + "\n")
    for lint in c.lints:
        t.append(f"⚠ {lint}\n", style="yellow")
    return t




def held_summary(rows) -> str:
    """Held cron jobs told apart by HoldReasonCode: a missed run (20) is not a bad schedule (25)."""
    held = [c for c in rows if c.status == JobStatus.HELD]
    missed = sum(1 for c in held if c.hold_code == HoldCode.MissedDeferredExecutionTime)
    invalid = sum(1 for c in held if c.hold_code == HoldCode.InvalidCronSettings)
    text = f"held: {missed} missed run, {invalid} invalid schedule"
    other = len(held) - missed - invalid
    return text + (f", {other} other" if other else "")


class CronTable(ColumnScrollTable, DataTable):
    """The crondor table: its Enter ("Open ad") shows in the footer (keymap.CRON_TABLE); the job
    column is pinned and the rest scroll a whole column at a time (``ColumnScrollTable``)."""

    BINDINGS = keymap.CRON_TABLE


class CronScreen(RowPanel, FittedTable, FilterBox, DeckScreen):
    TABLE = AUTO_FOCUS = "#cron"
    FIT_COLUMNS = COLUMNS
    FILTER_INPUT = "#cron-filter"
    BINDINGS = keymap.CRON

    def __init__(self) -> None:
        super().__init__()
        self._keys: list[str] = []

    def compose_body(self) -> ComposeResult:
        yield Input(placeholder="filter cron jobs (job, schedule, state)…", id="cron-filter", classes="filter")
        yield titled(CronTable(id="cron", cursor_type="row", zebra_stripes=True, fixed_columns=1), "Crondor")
        yield Static(id="cron-detail")

    def on_mount(self) -> None:
        self.fit_table()
        self.query_one("#cron", DataTable).focus()
        super().on_mount()

    def visible(self, snap: Snapshot) -> list[CronView]:
        f = self.filter_text.lower()
        jobs = list(snap.cron_jobs)
        if f:
            jobs = [c for c in jobs if f in c.job or f in schedule_text(c) or f in c.state]
        return jobs

    def update_body(self, snap: Snapshot) -> None:
        table = self.query_one("#cron", DataTable)
        zones = sorted({c.tz for c in snap.cron_jobs}) or [snap.tz]
        show_title(table, f"Crondor ── schedule: m h dom mon dow ── zone {', '.join(zones)}")
        self._keys = sync_rows(table, self._keys, [(c.job, cron_cells(c, snap.time)) for c in self.visible(snap)],
                               [k for _t, k, _w in COLUMNS])
        self._detail(snap)

    def row_for(self, snap: Snapshot, key: str) -> CronView | None:
        return next((c for c in snap.cron_jobs if c.job == key), None)

    def row_id(self, row: CronView) -> str:
        return row.job

    def _detail(self, snap: Snapshot) -> None:
        c = self.selected(snap)
        waiting = sum(1 for j in snap.cron_jobs if j.state == "waiting")
        head = Text(f"{len(snap.cron_jobs)} cron jobs · {waiting} waiting (deferred) · "
                    f"{held_summary(snap.cron_jobs)}\n", style="dim")
        show_text(self.query_one("#cron-detail", Static), head + (cron_detail(c, snap.time) if c else Text("")))

    def on_data_table_row_selected(self, event) -> None:
        self.action_open_ad()

    def action_open_ad(self) -> None:
        """The selected cron job's full ad (with its in-memory DeferralTime), as from the jobs list."""
        from tui.screens.ad import AdScreen  # noqa: PLC0415

        snap = self.app.snapshot
        c = self.selected_now()
        if c is None:
            return
        row = next((r for r in snap.jobs if r.job == c.job), None)
        if row is None:
            self.notify(f"{c.job} is no longer in the queue", severity="warning")
            return
        self.app.push_screen(AdScreen(row))

    def table_export(self):
        from tui.files.export import Table, records_of  # noqa: PLC0415

        snap = self.app.snapshot
        shown = self.visible(snap)
        rows = [plain(cron_cells(v, snap.time)) for v in shown]
        return Table("cron", [t for t, _k, _w in COLUMNS], rows, records_of(shown))
