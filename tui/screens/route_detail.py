"""One route opened from the board: its definition text, its jobs and its history.

Nothing here waits on work on the UI thread (issue 14 item 3):

- The definition text is cut from its config file in a thread worker, once per
  ``(location, table_version)`` (the file is read again only when the engine loaded a new
  table); the app keeps what was read, so reopening a route paints its text at once. Until the
  text arrives, the route's figures from the snapshot stand in.
- The route's jobs are found in a thread worker once per jobs tuple (``jobs_version``), for every
  route at once (:func:`jobs_by_route`; inline below ``SPLIT_INLINE_BELOW`` jobs, where it
  costs less than a millisecond and a thread round trip would only delay it; at most every
  ``HEAVY_EVERY`` seconds for a queue of ``PREPARE_ABOVE`` jobs or more, as the jobs screen
  adopts one, because a thread worker still shares the interpreter lock); the app keeps the result for that tuple, so opening
  another route, or the same one again, adopts its rows without a scan. Snapshots whose jobs did
  not change cost nothing here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Static

from engine.contract.snapshot import JobRow, Snapshot
from tui.commands import keymap
from tui.text.format import clock_time
from tui.text.route_text import route_text
from tui.screens.base import DeckScreen
from tui.screens.jobs import HEAVY_EVERY, PREPARE_ABOVE
from tui.screens.routes import route_detail
from tui.widgets.chrome import titled
from tui.widgets.gauge import sparkline
from tui.widgets.job_model import copy_routes
from tui.widgets.job_table import JobTable
from tui.screens.kept import kept_screen


SPLIT_INLINE_BELOW = 2_000  # jobs: below this the split costs less than a worker's round trip
TEXT_CACHE = 256  # route texts the app keeps (route × table version)


@dataclass(frozen=True)
class RouteJobs:
    """One jobs tuple split by route: per route, its jobs' ids and their rows' indices (queue order)."""

    rows: Sequence[JobRow]
    version: int
    hits: dict[str, frozenset[str]]
    order: dict[str, list[int]]
    copies: dict[str, str]  # routed copy id -> its route (``copy_routes``), for the table's route column


def jobs_by_route(rows: Sequence[JobRow], version: int) -> RouteJobs:
    """Every route's jobs in one pass (any thread): a routed copy by its route, a source job by
    its own route or, where its row lacks one, its routed copy's (``copy_routes``)."""
    copies = copy_routes(rows)
    ids: dict[str, list[str]] = {}
    order: dict[str, list[int]] = {}
    for i, j in enumerate(rows):
        route = j.route or (copies.get(j.routed_to) if j.routed_to else None)
        if route:
            ids.setdefault(route, []).append(j.job)
            order.setdefault(route, []).append(i)
    return RouteJobs(rows, version, {k: frozenset(v) for k, v in ids.items()}, order, copies)


KEEP_SCREENS = 8  # route screens kept alive between opens (the most recently opened)


def route_detail_screen(app, name: str) -> "RouteDetailScreen":
    """The route's screen to push: the one opened before if still kept, else a new one, kept.

    Building a screen (compose, mount, style, the footer's keys) was most of the time of
    board → route (issue 14 item 3); a kept screen resumes as the main views do, with its cursor,
    and pulls the latest snapshot. Kept screens are installed on the app (Textual removes a
    popped screen otherwise); past ``KEEP_SCREENS`` the least recently opened is dropped. A
    route whose kept screen is already on a stack gets a fresh, unkept one.
    """
    kept: dict[str, RouteDetailScreen] | None = getattr(app, "_route_screens", None)
    if kept is None:
        kept = app._route_screens = {}
    return kept_screen(app, kept, name, lambda: RouteDetailScreen(name), "route-detail", KEEP_SCREENS)


class RouteDetailScreen(DeckScreen):
    AUTO_FOCUS = "#route-jobs"
    BINDINGS = keymap.ROUTE

    class TextRead(Message):
        def __init__(self, key: tuple[str | None, int], found: tuple[str, str] | None) -> None:
            super().__init__()
            self.key, self.found = key, found

    class JobsFound(Message):
        def __init__(self, result: RouteJobs) -> None:
            super().__init__()
            self.result = result

    def __init__(self, name: str) -> None:
        super().__init__()
        self.route_name = name
        self._rows_id = None  # jobs_version of the rows shown (None: not yet)
        self._asked: tuple[int, int] | None = None  # (jobs_version, id of the tuple) being searched
        self._text_key: tuple[str | None, int] | None = None
        self._reading: tuple[str | None, int] | None = None
        self._split_at = 0.0  # time.monotonic() of the last split started
        self._split_timer = None

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="route-top"):
            yield titled(Static(id="route-text"), f"Route {self.route_name}")
            with Vertical(id="route-side"):
                yield titled(Static(id="route-history"), "History")
        yield titled(JobTable(id="route-jobs"), f"Jobs on {self.route_name}")

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
        self._show_text(r, snap)
        hist = route_detail(r, snap.time, snap.tz)
        hist.append("\nrouted over time ")
        hist.append_text(sparkline([float(x) for x in r.routed_history], 0.0, 12))
        hist.append("\nfailure rate     ")
        hist.append_text(sparkline(r.rate_history, r.failure_threshold, 12))
        events = [e for e in snap.events if e.route == r.name][-5:]
        for e in events:
            hist.append(f"\n{clock_time(e.time, snap.tz, date=False)} {e.message}")
        self.query_one("#route-history", Static).update(hist)
        self._show_jobs(snap)

    # -- the definition text (file read in a worker, once per location and table) ---------------
    def _texts(self) -> dict:
        cache = getattr(self.app, "_route_texts", None)
        if cache is None:
            cache = self.app._route_texts = {}
        return cache

    def _show_text(self, r, snap: Snapshot) -> None:
        key = (r.location, snap.table_version)
        cache = self._texts()
        if key not in cache:
            if self._text_key is None or self._text_key[0] != r.location:
                # nothing of this route shown yet: its figures stand in until the text is read
                self.query_one("#route-text", Static).update(route_detail(r, snap.time, snap.tz))
                self._text_key = (r.location, -1)
            if self._reading != key:
                self._reading = key
                self._read_text(key)
            return
        found = cache[key]
        if not found:
            # No definition text (a route known only from the recording): its live figures stand
            # in, redrawn with every snapshot; they were drawn once and stayed beside the live
            # History pane (issue 29).
            self._text_key = key
            self.query_one("#route-text", Static).update(route_detail(r, snap.time, snap.tz))
            return
        if key == self._text_key:
            return  # already shown: nothing to redraw four times a second
        self._text_key = key
        self.query_one("#route-text", Static).update(
            Syntax(found[1], "ini", theme="ansi_dark", word_wrap=True, line_numbers=False))

    @work(thread=True, exclusive=True, group="route-text")
    def _read_text(self, key: tuple[str | None, int]) -> None:
        self.post_message(self.TextRead(key, route_text(key[0])))

    def on_route_detail_screen_text_read(self, event: "RouteDetailScreen.TextRead") -> None:
        cache = self._texts()
        if len(cache) >= TEXT_CACHE:
            cache.clear()
        cache[event.key] = event.found
        self._reading = None
        if self.app.snapshot is not None and self.is_mounted:
            r = self.route(self.app.snapshot)
            if r is not None:
                self._show_text(r, self.app.snapshot)

    # -- the route's jobs (one scan per jobs tuple, in a worker, shared by every route) ----------
    def _show_jobs(self, snap: Snapshot) -> None:
        table = self.query_one(JobTable)
        known: RouteJobs | None = getattr(self.app, "_route_jobs", None)
        if known is not None and known.rows is snap.jobs and known.version == snap.jobs_version:
            if self._rows_id != snap.jobs_version or table.model.rows is not snap.jobs:
                self._adopt(known, snap)
            else:
                table.now = snap.time
                table.refresh()
            return
        ask = (snap.jobs_version, id(snap.jobs))
        if self._asked != ask:
            if len(snap.jobs) >= PREPARE_ABOVE and self._rows_id is not None:
                # A large changing queue is split at most every HEAVY_EVERY seconds (as the jobs
                # screen adopts one): the worker shares the interpreter lock with the UI thread.
                wait = self._split_at + HEAVY_EVERY - time.monotonic()
                if wait > 0:
                    if self._split_timer is None:
                        self._split_timer = self.set_timer(wait, self._split_later)
                    table.now = snap.time
                    table.refresh()
                    return
            self._asked = ask
            self._split_at = time.monotonic()
            if len(snap.jobs) < SPLIT_INLINE_BELOW:  # under a millisecond: no thread round trip
                self.app._route_jobs = result = jobs_by_route(snap.jobs, snap.jobs_version)
                self._adopt(result, snap)
            else:
                self._find_jobs(snap.jobs, snap.jobs_version)

    def _split_later(self) -> None:
        self._split_timer = None
        if self.is_mounted and self.app.snapshot is not None:
            self._show_jobs(self.app.snapshot)

    @work(thread=True, exclusive=True, group="route-jobs")
    def _find_jobs(self, rows: Sequence[JobRow], version: int) -> None:
        self.post_message(self.JobsFound(jobs_by_route(rows, version)))

    def on_route_detail_screen_jobs_found(self, event: "RouteDetailScreen.JobsFound") -> None:
        result = event.result
        snap = self.app.snapshot
        if snap is None or not self.is_mounted:
            return
        if snap.jobs is result.rows:
            self.app._route_jobs = result  # kept for the current tuple only
            self._adopt(result, snap)
        elif self._rows_id is None or result.version > self._rows_id:
            # a newer tuple arrived meanwhile (its split is under way): show this one until then,
            # so a queue changing faster than the split still shows its jobs
            self._adopt(result, snap)

    def _adopt(self, result: RouteJobs, snap: Snapshot) -> None:
        table = self.query_one(JobTable)
        name = self.route_name
        table.now, table.tz = snap.time, snap.tz
        table.apply(lambda m: m.adopt(result.rows, result.version, result.hits.get(name, frozenset()),
                                      result.order.get(name, []), result.copies))
        self._rows_id = result.version

    def selected_id(self) -> str | None:
        row = self.query_one(JobTable).selected
        return row.job if row else self.route_name

    def table_export(self):
        from tui.files.export import Table, records_of  # noqa: PLC0415

        table = self.query_one(JobTable)
        columns, rows = table.export_rows()
        return Table(f"route-{self.route_name}-jobs", columns, rows, records_of(table.shown_rows()))

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
