"""One route opened from the board: its definition text, its jobs and its history."""

from __future__ import annotations

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from engine.snapshot import Snapshot
from tui import keymap
from tui.format import clock_time
from tui.route_text import route_text
from tui.screens.base import DeckScreen
from tui.screens.routes import route_detail
from tui.widgets.gauge import sparkline
from tui.widgets.job_model import copy_routes
from tui.widgets.job_table import JobTable


class RouteDetailScreen(DeckScreen):
    AUTO_FOCUS = "#route-jobs"
    BINDINGS = keymap.ROUTE

    def __init__(self, name: str) -> None:
        super().__init__()
        self.route_name = name
        self._rows_id = None

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="route-top"):
            text = Static(id="route-text")
            text.border_title = f"Route {self.route_name}"
            yield text
            with Vertical(id="route-side"):
                hist = Static(id="route-history")
                hist.border_title = "History"
                yield hist
        jobs = JobTable(id="route-jobs")
        jobs.border_title = f"Jobs on {self.route_name}"
        yield jobs

    def on_mount(self) -> None:
        self.query_one(JobTable).focus()
        super().on_mount()

    def route(self, snap: Snapshot):
        return next((r for r in list(snap.routes) + list(snap.inactive_routes) if r.name == self.route_name), None)

    def update_body(self, snap: Snapshot) -> None:
        r = self.route(snap)
        if r is None:
            self.query_one("#route-text", Static).update(Text(f"route {self.route_name} is not in the table",
                                                              style="red"))
            return
        found = route_text(r.location)
        body = Text()
        if found:
            where, text = found
            body.append(f"{where}\n", style="dim")
            self.query_one("#route-text", Static).update(
                Syntax(text, "ini", theme="ansi_dark", word_wrap=True, line_numbers=False))
        else:
            self.query_one("#route-text", Static).update(route_detail(r, snap.time, snap.tz))
        hist = route_detail(r, snap.time, snap.tz)
        hist.append("\nrouted over time ")
        hist.append_text(sparkline([float(x) for x in r.routed_history], 0.0, 12))
        hist.append("\nfailure rate     ")
        hist.append_text(sparkline(r.rate_history, r.failure_threshold, 12))
        events = [e for e in snap.events if e.route == r.name][-5:]
        for e in events:
            hist.append(f"\n{clock_time(e.time, snap.tz, date=False)} {e.message}")
        self.query_one("#route-history", Static).update(hist)
        table = self.query_one(JobTable)
        name = self.route_name
        if self._rows_id != snap.jobs_version:
            self._rows_id = snap.jobs_version
            copies = copy_routes(snap.jobs)  # a source job's row may not carry its copy's route
            table.model.constraint_hits = frozenset(
                j.job for j in snap.jobs if j.route == name or (j.routed_to and copies.get(j.routed_to) == name))
            table.set_rows(snap.jobs, snap.jobs_version, snap.time, snap.tz)

    def selected_id(self) -> str | None:
        row = self.query_one(JobTable).selected
        return row.job if row else self.route_name

    def table_export(self):
        from tui.export import Table  # noqa: PLC0415

        columns, rows = self.query_one(JobTable).export_rows()
        return Table(f"route-{self.route_name}-jobs", columns, rows)

    def action_edit(self) -> None:
        self.app.open_editor(self.route_name)

    def action_view(self) -> None:
        self.app.open_editor(self.route_name)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_why_not(self) -> None:
        row = self.query_one(JobTable).selected
        if row is not None:
            self.app.open_why_not(row.job)

    def on_job_table_selected(self, event: JobTable.Selected) -> None:
        from tui.screens.ad import AdScreen  # noqa: PLC0415

        self.app.push_screen(AdScreen(event.job))
