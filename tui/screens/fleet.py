"""The fleet board (``routedeck fleet --prometheus URL``): one row per CE read from Prometheus, Enter
for that CE's routes (issue 28).

A small App of its own: the fleet has no engine runtime (its figures are Prometheus's, assembled
by engine.fleet.board), so it does not go through the shell around the local board. The board is
fetched on a worker thread every ``refresh`` seconds (the HTTP calls never block the screen);
rows are keyed by instance and route so the cursor survives a refresh. A failed fetch keeps the
last board and says why in the status line.
"""

from __future__ import annotations

from typing import Any, Callable

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from engine.fleet.promapi import PromError
from tui.screens.routes import STATE_STYLE
from tui.widgets.gauge import gauge, sparkline

CE_COLUMNS = (  # 129 columns with DataTable's cell padding: whole on a 132-column terminal
    ("Instance", "instance", 18), ("Schedd", "schedd", 18), ("Scrape", "state", 6), ("Routes", "routes", 6),
    ("Idle", "idle", 5), ("Run", "running", 5), ("Held", "held", 5), ("Thr", "throttled", 3),
    ("Full", "full", 4), ("Unrouted by reason", "unrouted", 28), ("Run 30m", "trend", 10),
)
# the local board's titles (tui.screens.routes.COLUMNS) for the figures Prometheus has
ROUTE_COLUMNS = (
    ("Route", "name", 16), ("State", "state", 10), ("Fail/s", "rate", 6), ("Routed/Max", "routed", 12),
    ("Idle/MaxIdle", "idle", 12), ("Run", "running", 5), ("Held", "held", 5),
)
SCRAPE_STYLE = {"up": "green", "down": "bold red", "stale": "yellow"}


def route_state(r: dict[str, Any]) -> str:
    if r["throttled"]:
        return "throttled"
    if r["full"]:
        return "full"
    if r["accepting"] is None:
        return "unknown"
    return "accepting" if r["accepting"] else "not accepting"


def ce_cells(c: dict[str, Any]) -> tuple:
    state = Text(c["state"], style=SCRAPE_STYLE.get(c["state"], ""))
    unrouted = " ".join(f"{k}={v}" for k, v in c["unrouted"].items() if v) or "—"
    dim = c["state"] != "up"
    figures = ("—",) * 5 if dim else (str(len(c["routes"])), str(c["idle"]), str(c["running"]), str(c["held"]),
                                      Text(str(c["routes_throttled"]), style="bold red" if c["routes_throttled"] else ""))
    full = "—" if dim else Text(str(c["routes_full"]), style="yellow" if c["routes_full"] else "")
    return (c["instance"], c["schedd"] or "?", state, *figures, full, "—" if dim else unrouted,
            sparkline(c["trend"], width=10))


def route_cells(r: dict[str, Any]) -> tuple:
    st = route_state(r)
    max_jobs = r["max_jobs"] if r["max_jobs"] is not None else -1
    max_idle = r["max_idle_jobs"] if r["max_idle_jobs"] is not None else -1
    rate = f"{r['failure_rate']:.3f}" if r["failure_rate"] is not None else "—"
    return (r["name"], Text(st.upper() if st == "throttled" else st, style=STATE_STYLE.get(st, "")), rate,
            gauge(r["routed"], max_jobs, width=3, digits=7), gauge(r["idle"], max_idle, width=3, digits=7),
            str(r["running"]), str(r["held"]))


def fill(table: DataTable, rows: list[tuple[str, tuple]]) -> None:
    """Put ``rows`` (key, cells) in ``table``, updating kept rows cell by cell (the cursor stays)."""
    keys = [k for k, _ in rows]
    present = {rk.value for rk in table.rows}
    if list(present) != keys and set(present) != set(keys):
        cursor = table.cursor_row
        table.clear()
        for key, cells in rows:
            table.add_row(*cells, key=key)
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))
        return
    cols = [c.key for c in table.columns.values()]
    for key, cells in rows:
        for col, cell in zip(cols, cells):
            table.update_cell(key, col, cell)


def _line_over_table(line_id: str, table_id: str, columns) -> ComposeResult:
    """The fleet screens' layout: header, a line of text, a table of ``columns`` (title, key, width), footer."""
    yield Header()
    yield Static(id=line_id)
    table = DataTable(id=table_id, cursor_type="row", zebra_stripes=True)
    for title, key, w in columns:
        table.add_column(title, key=key, width=w)
    yield table
    yield Footer()


class FleetRoutesScreen(Screen):
    """One CE's routes (Escape goes back to the fleet)."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, instance: str) -> None:
        super().__init__()
        self.instance = instance

    def compose(self) -> ComposeResult:
        return _line_over_table("ce-title", "ce-routes", ROUTE_COLUMNS)

    def on_mount(self) -> None:
        self.show(self.app.board)

    def show(self, board: dict[str, Any] | None) -> None:
        ce = next((c for c in (board or {}).get("ces", []) if c["instance"] == self.instance), None)
        title = self.query_one("#ce-title", Static)
        if ce is None:
            title.update(f"{self.instance}: no longer on the board")
            return
        title.update(Text.assemble((f"{ce['schedd'] or '?'}", "bold"), f" at {ce['instance']} — scrape ",
                                   (ce["state"], SCRAPE_STYLE.get(ce["state"], "")),
                                   f" — {len(ce['routes'])} routes"))
        fill(self.query_one("#ce-routes", DataTable), [(r["name"], route_cells(r)) for r in ce["routes"]])


class FleetScreen(Screen):
    """The CEs (Enter: the selected CE's routes)."""

    BINDINGS = [Binding("r", "app.refresh_board", "Refresh"), Binding("q", "app.quit", "Quit")]

    def compose(self) -> ComposeResult:
        return _line_over_table("fleet-status", "fleet-ces", CE_COLUMNS)

    def on_mount(self) -> None:
        self.show(None, f"reading {self.app.source} …")
        self.app.action_refresh_board()

    def show(self, board: dict[str, Any] | None, status: str) -> None:
        self.query_one("#fleet-status", Static).update(status)
        if board is not None:
            fill(self.query_one("#fleet-ces", DataTable), [(c["instance"], ce_cells(c)) for c in board["ces"]])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.app.push_screen(FleetRoutesScreen(event.row_key.value))


class FleetApp(App):
    """The fleet board over ``fetch()`` (engine.fleet.board.fleet with a client and the clock)."""

    TITLE = "RouteDeck fleet"

    def __init__(self, fetch: Callable[[], dict[str, Any]], source: str, refresh: float = 5.0) -> None:
        super().__init__()
        self.fetch = fetch
        self.source = source
        self.refresh_every = refresh
        self.board: dict[str, Any] | None = None
        self.fleet_screen = FleetScreen()

    def on_mount(self) -> None:
        self.sub_title = self.source
        self.push_screen(self.fleet_screen)
        self.set_interval(self.refresh_every, self.action_refresh_board)

    def action_refresh_board(self) -> None:
        self._fetch()

    @work(thread=True, exclusive=True, group="fleet")
    def _fetch(self) -> None:
        try:
            board, error = self.fetch(), None
        except PromError as exc:
            board, error = None, str(exc)
        self.call_from_thread(self._arrived, board, error)

    def _arrived(self, board: dict[str, Any] | None, error: str | None) -> None:
        if board is not None:
            self.board = board
        ces = (self.board or {}).get("ces", [])
        up = sum(1 for c in ces if c["state"] == "up")
        status = f"{len(ces)} CEs, {up} up, from {self.source} (Enter: a CE's routes, r: refresh)"
        if error:
            status = Text.assemble((f"{error}", "bold red"), " — showing the last board" if self.board else "")
        self.fleet_screen.show(board, status)
        if isinstance(self.screen, FleetRoutesScreen):
            self.screen.show(self.board)
