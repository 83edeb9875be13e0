"""The routes board (home screen): one row per route in match order (product.md §6).

Rows are keyed by route name and updated cell by cell, so the cursor and scroll survive the
four snapshots a second. Disabled and unlisted routes come after the active ones, flagged and
without an index. The panel under the table spells out the selected route's reason for not
accepting jobs and its throttle, with when it is next re-evaluated (htcondor.md §1.5: the
window is 600 s from ``stats_begin_time``).
"""

from __future__ import annotations

import re

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from engine.contract.snapshot import RouteView, Snapshot
from tui.commands import keymap
from tui.engine_api import why_not_candidate
from tui.files.export import Table, records_of
from tui.text.format import clock_time, duration, fit_columns
from tui.text.legend import BOARD, legend_line
from tui.screens.base import DeckScreen, plain
from tui.screens.filter_box import FilterBox
from tui.widgets.column_scroll import ColumnScrollTable
from tui.widgets.gauge import gauge, sparkline
from tui.widgets.repaint import show_text, write_cells

STATE_STYLE = {
    "accepting": "green", "full": "yellow", "idle-limit": "yellow", "throttled": "bold red",
    "disabled": "dim", "unlisted": "dim italic",
}
# Ordered by what an operator reads first: which route (pinned with its match index), its state,
# throttle and failure rate, then the gauges and counts. Widths are fixed for a given terminal
# width and set of route names (live figures must not make columns jump; DataTable's auto width
# re-layout left stale cached lines behind when rows arrived after the columns).
COLUMNS = (
    ("#", "idx", 2), ("Route", "name", 12), ("State", "state", 10), ("Throttle", "throttle", 9),
    ("Fail/s", "rate", 6), ("St/Ok/Fail", "recent", 11), ("Routed/Max", "routed", 12),
    ("Idle/MaxIdle", "idle", 12), ("Run", "running", 4), ("Held", "held", 4), ("Trend", "trend", 5),
    ("Re-eval", "reeval", 7),
)
PINNED = 2  # "#" and "Route" stay in view when the table scrolls right
BARS = 110  # below this terminal width the gauges drop their bars (the figures stay)


REASON = ("Not accepting because", "reason", 40)  # added on terminals at least WIDE columns wide
WIDE = 150
# On a narrow terminal the last column that fits whole takes the leftover width, so no column
# shows cut at the right edge (a cut "Idle/MaxIdle" read "9" for 9/20); the rest is a scroll away.
FRAME = 2  # the panel's border, left and right


def board_columns(width: int, names: list[str]) -> tuple[tuple[str, str, int], ...]:
    """The board's columns for a terminal ``width``: the route column as wide as the longest
    name (and its ⚠), the gauges without their bars on a narrow terminal, the reason column
    taking what is left on a wide one."""
    name_w = max([5] + [len(n) + 2 for n in names])
    name_w = min(name_w, 28)
    bars = width >= BARS
    cols = []
    for title, key, w in COLUMNS:
        if key == "name":
            w = name_w
        elif key in ("routed", "idle"):
            w = 12 if bars else len(title)
        cols.append((title, key, w))
    if width >= WIDE:
        used = sum(w + 2 for _t, _k, w in cols) + 4  # cell padding, borders and scrollbar
        cols.append((REASON[0], REASON[1], max(REASON[2], width - used)))
    elif not bars:
        return fit_columns(cols, width - FRAME)
    return tuple(cols)


def row_keys(routes: list[RouteView]) -> list[str]:
    """Unique, stable row keys: a name can be both an active route and a disabled one (the same
    name defined in both syntaxes, or listed twice), and DataTable keys must be unique."""
    keys, seen = [], {}
    for r in routes:
        base = f"{r.name}|{r.source_label}|{r.state if r.index == 0 else 'active'}"
        n = seen.get(base, 0)
        seen[base] = n + 1
        keys.append(base if n == 0 else f"{base}#{n}")
    return keys


def route_diagnostics(snap: Snapshot, name: str) -> list:
    """The table's lints about one route (the router words them "route NAME …")."""
    pat = re.compile(rf"\broute '?{re.escape(name)}'?(?![\w])")
    return [d for d in snap.diagnostics if pat.search(d.message)]


def route_cells(r: RouteView, now: float, flagged: bool = False, reason: bool = False, bars: bool = True) -> tuple:
    inactive = r.state in ("disabled", "unlisted")
    state = Text(r.state.upper() if r.state == "throttled" else r.state, style=STATE_STYLE.get(r.state, ""))
    name = Text(r.name, style="dim" if inactive else "")
    if flagged:
        name.append(" ⚠", style="yellow")
    extra = (Text(r.reason or "", style="dim" if inactive else ""),) if reason else ()
    if inactive:
        return (Text("─", style="dim"), name, state) + ("",) * (len(COLUMNS) - 3) + extra
    rate = Text(f"{r.failure_rate:.3f}", style="red" if r.failure_rate > r.failure_threshold else "")
    # jobs per 600 s window (htcondor.md §1.5); one decimal keeps "18.6/600s" inside the column
    throttle = f"{r.throttle:.1f}".removesuffix(".0") + "/600s" if r.throttle is not None else "—"
    recent = Text(f"{r.recent_started}/{r.recent_succeeded}/")
    recent.append(str(r.recent_failed), style="red" if r.recent_failed else "")
    width = 4 if bars else 0
    return (
        str(r.index), name, state, throttle, rate, recent,
        gauge(r.routed, r.max_jobs, width=width, digits=7), gauge(r.idle, r.max_idle, width=width, digits=7),
        str(r.running), str(r.held), sparkline(r.rate_history, r.failure_threshold, 5),
        reeval_cell(r, now),
    ) + extra


def reevaluation(r: RouteView) -> float | None:
    """When the route's throttle window is next re-evaluated; None when it has no window (0/None:
    figures from the queue, not from a router)."""
    t = r.next_reevaluation
    return t if t is not None and t > 0 else None


def reeval_cell(r: RouteView, now: float) -> str:
    due = reevaluation(r)
    if due is None:
        return "—"
    return duration(due - now) if due > now else "due"


def route_detail(r: RouteView, now: float, tz: str, diagnostics=()) -> Text:
    t = Text()
    t.append(f"{r.name}", style="bold")
    t.append(f"  {r.source_label} ({r.syntax})")
    if r.location:
        t.append(f"  {r.location}", style="dim")
    t.append("\n")
    if r.state == "unlisted":
        t.append("unlisted: defined, but not in JOB_ROUTER_ROUTE_NAMES — never matched\n", style="italic")
    elif r.state == "disabled":
        t.append(f"disabled: {r.reason or 'not enabled'}\n", style="italic")
    elif r.reason:
        t.append("not accepting: ", style="bold red" if r.state == "throttled" else "bold yellow")
        t.append(f"{r.reason}\n")
    else:
        t.append("accepting jobs\n", style="green")
    t.append(f"failure rate {r.failure_rate:.3f}/s vs threshold {r.failure_threshold:.3f}/s")
    due = reevaluation(r)
    if due is not None and due > now:
        t.append(f"; window since {clock_time(r.window_start, tz, date=False)}, re-evaluated at "
                 f"{clock_time(due, tz, date=False)} (in {duration(due - now)})")
    elif due is not None:
        t.append(f"; re-evaluation due (window ended {clock_time(due, tz, date=False)})")
    else:
        t.append("; no re-evaluation window (figures from the queue, not from a router)")
    if r.requirements:
        t.append(f"\nRequirements: {r.requirements}", style="dim")
    for d in diagnostics:
        t.append(f"\n⚠ {d.level}: {d.message}", style="red" if d.level == "error" else "yellow")
    return t


class BoardTable(ColumnScrollTable, DataTable):
    """The board's table: ``<`` ``>`` move a column focus (named in the legend line under the
    table) while the row cursor stays; the pinned columns stay in view as the rest scrolls, a whole
    column at a time (``ColumnScrollTable``: a cell at a time left the next column cut beside the
    pinned ones, "CMS_T2  g" was the last letter of "accepting"). ← → keep their meaning: scroll,
    and step a paused replay when there is nothing to scroll."""

    class ColumnFocused(Message):
        def __init__(self, title: str) -> None:
            super().__init__()
            self.title = title

    focus_column = 2  # State

    BINDINGS = keymap.BOARD_TABLE

    def action_column(self, delta: int) -> None:
        self._move_column(delta)

    def _move_column(self, delta: int) -> None:
        cols = list(self.columns.values())
        if not cols:
            return
        self.focus_column = max(0, min(len(cols) - 1, self.focus_column + delta))
        self.scroll_to_column(self.focus_column)
        self.post_message(self.ColumnFocused(str(cols[self.focus_column].label)))

    def scroll_to_column(self, index: int) -> None:
        if index >= self.fixed_columns:
            self.scroll_column_into_view(index - self.fixed_columns)


class RoutesScreen(FilterBox, DeckScreen):
    DEFAULT_CSS = """
    RoutesScreen #board-legend { height: auto; max-height: 2; padding: 0 1; color: $text-muted; }
    """
    TABLE = AUTO_FOCUS = "#routes"
    FILTER_INPUT = "#route-filter"
    BINDINGS = keymap.BOARD

    def __init__(self) -> None:
        super().__init__()
        self.filter_text = ""
        self._keys: list[str] = []
        self._routes: list[RouteView] = []
        self._wide: bool | None = None
        self._bars = True
        self._shape: tuple | None = None

    def compose_body(self) -> ComposeResult:
        with Vertical(id="board"):
            yield Input(placeholder="filter routes (name, state)…", id="route-filter", classes="filter")
            table = BoardTable(id="routes", cursor_type="row", zebra_stripes=True, cell_padding=1,
                               fixed_columns=PINNED)
            table.border_title = "Routes (match order)"
            yield table
            yield Static(legend_line(BOARD, "State"), id="board-legend")
            yield Static(id="route-detail")
            events = Static(id="events")
            events.border_title = "Events"
            yield events

    def on_mount(self) -> None:
        self._columns()
        super().on_mount()

    def _columns(self) -> None:
        """(Re)build the columns when the terminal width or the route names change."""
        width = self.app.size.width
        snap = self.app.snapshot
        names = [r.name for r in (list(snap.routes) + list(snap.inactive_routes))] if snap else []
        cols = board_columns(width, names)
        if cols == self._shape:
            return
        self._shape, self._wide = cols, width >= WIDE
        self._bars = width >= BARS
        table = self.query_one("#routes", DataTable)
        table.clear(columns=True)
        self._keys, self._routes = [], []
        for title, key, w in cols:
            table.add_column(title, key=key, width=w)

    def on_resize(self, event) -> None:
        before = self._shape
        self._columns()
        if before != self._shape and self.app.snapshot is not None:
            self.update_body(self.app.snapshot)

    def on_board_table_column_focused(self, event: "BoardTable.ColumnFocused") -> None:
        self.query_one("#board-legend", Static).update(legend_line(BOARD, event.title))

    def visible_routes(self, snap: Snapshot) -> list[RouteView]:
        routes = list(snap.routes) + list(snap.inactive_routes)
        f = self.filter_text.lower()
        if f:
            routes = [r for r in routes if f in r.name.lower() or f in r.state]
        return routes

    def update_body(self, snap: Snapshot) -> None:
        self._columns()
        table = self.query_one("#routes", DataTable)
        routes = self.visible_routes(snap)
        keys = row_keys(routes)
        columns = self._shape

        def cells(r: RouteView) -> tuple:
            return route_cells(r, snap.time, bool(route_diagnostics(snap, r.name)), bool(self._wide), self._bars)

        if keys != self._keys:
            selected = self._keys[table.cursor_row] if 0 <= table.cursor_row < len(self._keys) else None
            table.clear()
            for key, r in zip(keys, routes):
                table.add_row(*cells(r), key=key)
            self._keys = keys
            if selected in keys:
                table.move_cursor(row=keys.index(selected), animate=False)
        else:
            write_cells(table, [(key, cells(r)) for key, r in zip(keys, routes)], [col for _, col, _w in columns])
        self._routes = routes
        self._show_detail(snap)
        self._show_events(snap)

    def _show_detail(self, snap: Snapshot) -> None:
        route = self.selected_route()
        show_text(self.query_one("#route-detail", Static),
                  route_detail(route, snap.time, snap.tz, route_diagnostics(snap, route.name)) if route
                  else Text("no route selected", style="dim"))

    def _show_events(self, snap: Snapshot) -> None:
        # Route, config and engine events, from the app's log (its notable ring: per-job events
        # such as "job-routed" are kept apart and cannot push them out); job events only while
        # nothing else has happened.
        log = self.app.event_log
        events = list(log.notable_events) or list(log.job_events) or list(snap.events)
        lines = Text()
        style = {"warning": "yellow", "error": "red"}
        for e in reversed(events[-30:]):
            lines.append(f"{clock_time(e.time, snap.tz, date=False)} ", style="dim")
            lines.append(e.message + "\n", style=style.get(e.level, ""))
        show_text(self.query_one("#events", Static), lines if events else Text("no events yet", style="dim"))

    def selected_route(self) -> RouteView | None:
        table = self.query_one("#routes", DataTable)
        if not 0 <= table.cursor_row < len(self._routes):
            return None
        return self._routes[table.cursor_row]

    def selected_name(self) -> str | None:
        route = self.selected_route()
        return route.name if route else None

    def selected_id(self) -> str | None:
        return self.selected_name()

    def action_copy(self) -> None:
        name = self.selected_name()
        if name:
            self.app.copy_to_clipboard(name)
            self.notify(f"copied route name {name}")

    def table_export(self) -> Table:
        """The routes as shown (filter applied), every column of this width, as plain text."""
        snap = self.app.snapshot
        cols = self._shape or ()
        rows = []
        for r in self._routes:
            cells = route_cells(r, snap.time, bool(route_diagnostics(snap, r.name)), bool(self._wide), self._bars)
            rows.append(plain(cells))
        return Table("routes", [t for t, _k, _w in cols], rows, records_of(self._routes))

    @property
    def names(self) -> list[str]:
        return [r.name for r in self._routes]

    def row_key(self, name: str) -> str:
        """The table row key of the first route called ``name``."""
        return self._keys[self.names.index(name)]

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if self.app.snapshot is not None:
            self._show_detail(self.app.snapshot)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open_route()

    def action_open_route(self) -> None:
        name = self.selected_name()
        if name:
            self.app.open_route(name)

    def action_edit_route(self) -> None:
        self.app.open_editor(self.selected_name())

    def action_why_not(self) -> None:
        """Why-not for the idle job the selected route raises the question about: the router picks
        it on the engine thread (the oldest idle job waiting for this route, else for any route;
        ``engine.router.whynot.pick_candidate``)."""
        snap = self.app.snapshot
        if snap is None:
            return
        self._pick_candidate(self.selected_name(), snap.time, snap.jobs)

    @work(thread=True, exclusive=True, group="why-not-pick")
    def _pick_candidate(self, route: str | None, now: float, rows) -> None:
        try:
            picked = why_not_candidate(self.app.runtime, route, now, rows)
        except Exception as exc:  # noqa: BLE001 - engine stopped or busy: say so
            self.app.call_from_thread(self.notify, f"why-not: the engine did not answer ({exc})", severity="error")
            return
        self.app.call_from_thread(self._open_picked, route, picked)

    def _open_picked(self, route: str | None, picked: tuple[str, str] | None) -> None:
        if picked is None:
            self.notify("no idle job is waiting to be routed")
            return
        from tui.screens.whynot import WhyNotScreen  # noqa: PLC0415

        job, why = picked
        self.app.push_screen(WhyNotScreen(job, note=f"{job}: {why}" + (f" (asked from route {route})" if route else "")))

    def action_view_route(self) -> None:
        self.app.open_editor(self.selected_name())

    def action_back(self) -> None:
        box = self.query_one("#route-filter", Input)
        box.value = ""
        box.remove_class("-shown")
        self.query_one("#routes", DataTable).focus()
