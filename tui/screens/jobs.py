"""The jobs screen: source, routed and plain jobs over the Line API ``JobTable``.

``/`` opens the filter: plain text matches any column; text starting with ``=`` is a ClassAd
constraint over the job's full ad when the engine offers it (else the row's attributes) (``=Owner == "alice" && JobStatus == 1``), evaluated in a
thread worker because 100,000 evaluations take seconds. ``s`` cycles the sort column, ``S``
reverses it, Enter opens the job's full ad, ``w`` asks why an idle job is not routed.
"""

from __future__ import annotations

import time

from textual import work
from textual.app import ComposeResult
from textual.message import Message
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from engine.contract.snapshot import Snapshot
from engine.contract.commands import HoldJob, ReleaseJob, RemoveJob
from tui.commands import keymap
from tui.engine_api import constraint_hits, full_ads_of
from tui.shell.messages import FilterChanged
from tui.screens.base import DeckScreen
from tui.text.legend import JOBS, legend_line
from tui.widgets.job_model import COLUMN_KEYS, COLUMNS
from tui.widgets.job_table import JobTable
from tui.widgets.repaint import show_text
from tui.commands.typeahead import open_text_box


PREPARE_ABOVE = 20_000  # below this, building search text on the first keystroke is fast enough
HEAVY_EVERY = 2.0  # seconds between re-filtering a large, changing queue


class JobsScreen(DeckScreen):
    DEFAULT_CSS = """
    JobsScreen #jobs-legend { height: auto; max-height: 2; padding: 0 1; color: $text-muted; }
    """
    AUTO_FOCUS = "#jobs"
    BINDINGS = keymap.JOBS

    def __init__(self) -> None:
        super().__init__()
        self.where: str | None = None
        self._status_note = ""
        self._pending: list = []
        self._pending_snap: Snapshot | None = None
        self._adopt_timer = None
        self._adopted = 0.0

    def compose_body(self) -> ComposeResult:
        yield Input(placeholder="filter: text, or =ClassAd constraint (Enter: done, Esc: clear)",
                    id="job-filter", classes="filter")
        table = JobTable(id="jobs")
        table.border_title = "Jobs"
        yield table
        yield Static(legend_line(JOBS, COLUMNS[0].title), id="jobs-legend")
        yield Static(id="jobs-status")

    @property
    def table(self) -> JobTable:
        return self.query_one(JobTable)

    def on_mount(self) -> None:
        self.table.focus()
        super().on_mount()
        self.call_after_refresh(self._run_pending)

    def _ready(self) -> bool:
        # A screen created by a ":jobs alice" command is not composed yet when the command runs.
        return self.is_mounted and bool(self.query("#job-filter"))

    def _run_pending(self) -> None:
        pending, self._pending = self._pending, []
        for fn in pending:
            fn()

    def update_body(self, snap: Snapshot) -> None:
        m = self.table.model
        heavy = len(snap.jobs) >= PREPARE_ABOVE and bool(m.text or m.sort_key or m.constraint_hits is not None)
        if heavy and snap.jobs is not m.rows and m.rows:
            # Re-filtering/sorting 100,000 rows costs ~0.1 s: with a filter or sort on, a changing
            # queue is adopted at most every HEAVY_EVERY seconds so keys stay answered at once.
            wait = self._adopted + HEAVY_EVERY - time.monotonic()
            if wait > 0:
                self._pending_snap = snap
                if self._adopt_timer is None:
                    self._adopt_timer = self.set_timer(wait, self._adopt_pending)
                self.table.now = snap.time
                self.table.refresh()
                return
        self._adopt(snap)

    def _adopt_pending(self) -> None:
        self._adopt_timer = None
        snap, self._pending_snap = self._pending_snap, None
        if snap is not None and self.is_current:
            self._adopt(self.app.snapshot or snap)

    def _adopt(self, snap: Snapshot) -> None:
        rows_before = self.table.model.rows
        self.table.set_rows(snap.jobs, snap.jobs_version, snap.time, snap.tz)
        if self.table.model.rows is not rows_before:
            self._adopted = time.monotonic()
            if len(snap.jobs) >= PREPARE_ABOVE and (not rows_before or self._filtering()):
                # search text ahead of the keystrokes: on first view and while a filter is in use
                # (not on every queue change of an unfiltered view: that would be CPU for nothing)
                self._prepare(snap.jobs, ("job",) if not rows_before else ())
        self._status()

    def _filtering(self) -> bool:
        return bool(self.table.model.text) or self.query_one("#job-filter", Input).has_class("-shown")

    @work(thread=True, exclusive=True, group="prepare")
    def _prepare(self, rows, keys: tuple[str, ...] = ()) -> None:
        self.table.model.prepare(rows, keys)

    def _status(self) -> None:
        m = self.table.model
        snap = self.app.snapshot
        total = len(m.rows)
        parts = [f"{len(m):,} of {total:,} jobs"]
        if snap is not None and snap.total_jobs != total:
            parts.append(f"(queue {snap.total_jobs:,})")
        if m.text:
            parts.append(f"filter “{m.text}”")
        if self.where:
            parts.append(f"where {self.where}")
        if m.sort_key:
            parts.append(f"sorted by {m.sort_key}{' desc' if m.reverse else ''}")
        if self._status_note:
            parts.append(self._status_note)
        show_text(self.query_one("#jobs-status", Static), " · ".join(parts))

    # -- filter and sort ----------------------------------------------------------------------
    def action_filter(self) -> None:
        m = self.table.model
        if m._hay is None and len(m.rows) >= PREPARE_ABOVE:
            self._prepare(m.rows)  # ready before the first keystroke, most likely
        box = self.query_one("#job-filter", Input)
        open_text_box(self, box, self.app.blink)

    def set_filter(self, text: str) -> None:
        if not self._ready():
            self._pending.append(lambda: self.set_filter(text))
            return
        box = self.query_one("#job-filter", Input)
        if box.value != text:
            box.value = text  # on_input_changed applies it
        else:
            self._apply_text(text)

    def on_input_changed(self, event: Input.Changed) -> None:
        value = event.value
        if value.startswith("="):
            return  # constraints run on Enter; evaluating while typing would be wasted work
        self._apply_text(value)

    def _apply_text(self, value: str) -> None:
        self.table.apply(lambda m: m.set_filter(value))
        self._status()
        self.post_message(FilterChanged(value, len(self.table.model), len(self.table.model.rows)))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.startswith("="):
            self.set_constraint(event.value[1:].strip() or None)
        self.table.focus()

    def set_constraint(self, text: str | None) -> None:
        if not self._ready():
            self._pending.append(lambda: self.set_constraint(text))
            return
        self.where = text
        if text is None:
            self.table.apply(lambda m: m.set_constraint_hits(None))
            self._status()
            return
        self._status_note = "evaluating constraint…"
        self._status()
        self._evaluate(text, self.table.model.rows, self.app.snapshot.time if self.app.snapshot else 0.0)

    @work(thread=True, exclusive=True, group="constraint")
    def _evaluate(self, text: str, rows, now: float) -> None:
        worker = get_current_worker()
        try:
            hits = constraint_hits(rows, text, now, cancelled=lambda: worker.is_cancelled,
                                   ad_of=full_ads_of(self.app.runtime))
        except ValueError as exc:  # ClassAdError is a ValueError
            self.post_message(self.ConstraintEvaluated(text, None, str(exc)))
            return
        if not worker.is_cancelled:
            self.post_message(self.ConstraintEvaluated(text, hits, None))

    class ConstraintEvaluated(Message):
        def __init__(self, text: str, hits: frozenset[str] | None, error: str | None) -> None:
            super().__init__()
            self.text, self.hits, self.error = text, hits, error

    def on_jobs_screen_constraint_evaluated(self, event: "JobsScreen.ConstraintEvaluated") -> None:
        if event.text != self.where:
            return  # superseded by a newer constraint
        if event.error is not None:
            self._constraint_failed(event.text, event.error)
        else:
            self._constraint_done(event.text, event.hits)

    def _constraint_done(self, text: str, hits: frozenset[str]) -> None:
        self._status_note = ""
        self.table.apply(lambda m: m.set_constraint_hits(hits))
        self._status()
        self.post_message(FilterChanged("=" + text, len(self.table.model), len(self.table.model.rows)))

    def _constraint_failed(self, text: str, error: str) -> None:
        self.where = None
        self._status_note = ""
        self._status()
        self.notify(f"constraint does not parse: {error}", severity="error")

    def action_cycle_sort(self) -> None:
        m = self.table.model
        keys = (None,) + COLUMN_KEYS
        nxt = keys[(keys.index(m.sort_key) + 1) % len(keys)]
        self.sort_by(nxt)

    def action_reverse_sort(self) -> None:
        m = self.table.model
        self.sort_by(m.sort_key or "job", reverse=not m.reverse)

    def sort_by(self, key: str | None, reverse: bool = False) -> None:
        if not self._ready():
            self._pending.append(lambda: self.sort_by(key, reverse))
            return
        self.table.apply(lambda m: m.set_sort(key, reverse))
        self._status()

    def on_job_table_column_focused(self, event: JobTable.ColumnFocused) -> None:
        self.query_one("#jobs-legend", Static).update(legend_line(JOBS, event.title))

    def on_job_table_header_clicked(self, event: JobTable.HeaderClicked) -> None:
        m = self.table.model
        self.sort_by(event.key, reverse=(m.sort_key == event.key and not m.reverse))

    def action_back(self) -> None:
        box = self.query_one("#job-filter", Input)
        if box.value or self.where:
            box.value = ""
            self.set_constraint(None)
            box.remove_class("-shown")
            self.table.focus()
        elif box.has_focus or box.has_class("-shown"):
            box.remove_class("-shown")
            self.table.focus()

    # -- drill-down and job commands ------------------------------------------------------------
    def on_job_table_selected(self, event: JobTable.Selected) -> None:
        from tui.screens.ad import AdScreen  # noqa: PLC0415

        self.app.push_screen(AdScreen(event.job))

    def selected_id(self) -> str | None:
        row = self.table.selected
        return row.job if row else None

    def action_copy(self) -> None:
        job = self.selected_id()
        if job:
            self.app.copy_to_clipboard(job)
            self.notify(f"copied job id {job}")

    def table_export(self):
        from tui.files.export import Table, records_of  # noqa: PLC0415

        columns, rows = self.table.export_rows()
        return Table("jobs", columns, rows, records_of(self.table.shown_rows()))

    def action_why_not(self) -> None:
        row = self.table.selected
        if row is not None:
            self.app.open_why_not(row.job)

    def action_trace(self) -> None:
        row = self.table.selected
        if row is not None:
            self.app.open_trace(row.job)

    def action_chain(self) -> None:
        row = self.table.selected
        self.app.open_chain(row.job if row is not None else None)

    def action_hold(self) -> None:
        if self.table.selected:
            self.app.confirm_job_command(HoldJob(self.table.selected.job))

    def action_release(self) -> None:
        if self.table.selected:
            self.app.confirm_job_command(ReleaseJob(self.table.selected.job))

    def action_remove(self) -> None:
        if self.table.selected:
            self.app.confirm_job_command(RemoveJob(self.table.selected.job))
