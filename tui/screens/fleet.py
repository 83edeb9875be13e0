"""The fleet board (``routedeck fleet --prometheus URL``): one row per CE read from Prometheus, Enter
for that CE's routes (issue 28).

A small App of its own: the fleet has no engine runtime (its figures are Prometheus's, assembled
by engine.fleet.board), so it does not go through the shell around the local board. The board is
fetched on a worker thread every ``refresh`` seconds (the HTTP calls never block the screen);
rows are keyed by instance and route so the cursor survives a refresh. A failed fetch keeps the
last board and says why in the status line.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from engine.fleet.board import route_view
from engine.fleet.promapi import PromError
from tui.screens.routes import BARS, PINNED, WIDE, board_columns, route_cells
from tui.widgets.gauge import sparkline
from tui.widgets.tables import DeckTable

# 130 columns with DataTable's cell padding: whole on a 132-column terminal
CE_COLUMNS = (
    ("Instance", "instance", 16), ("Schedd", "schedd", 16), ("Scrape", "state", 6), ("Routes", "routes", 6),
    ("Idle", "idle", 5), ("Run", "running", 5), ("Held", "held", 5), ("Thr", "throttled", 3),
    ("Full", "full", 4), ("Unrouted by reason", "unrouted", 33), ("Run 30m", "trend", 10),
)
# below WIDE_FLEET columns: the CE by its schedd's name, its figures and the unrouted reasons in
# view (the unrouted column takes what is left, UNROUTED_MIN at least), the rest a scroll away
WIDE_FLEET = 132
NARROW_CE_COLUMNS = (
    ("CE", "ce", 16), ("Scrape", "state", 6), ("Idle", "idle", 5), ("Run", "running", 5), ("Held", "held", 5),
    ("Thr", "throttled", 3), ("Full", "full", 4), ("Unrouted", "unrouted", 0), ("Routes", "routes", 6),
    ("Instance", "instance", 18), ("Run 30m", "trend", 10),
)
UNROUTED_MIN = 14
FRAME = 2  # a vertical scrollbar's width: the unrouted cell's text leaves it free (still whole under one)
# the unrouted cell's abbreviations (engine.router.unrouted.REASONS), explained by the legend line
REASON_ABBREV = {"no_match": "nm", "route_full": "rf", "throttled": "th", "not_candidate": "nc", "matched": "m"}
UNROUTED_LEGEND = ("Unrouted: idle source jobs by why they wait, most first — nm no_match · rf route_full · "
                   "th throttled · nc not_candidate · m matched (taken at the next poll); +N: N more reasons "
                   "(Enter: all of them)")
SCRAPE_STYLE = {"up": "green", "down": "bold red", "stale": "yellow"}


def ce_columns(width: int) -> tuple[tuple[str, str, int], ...]:
    """The CE table's columns for a terminal ``width`` (see NARROW_CE_COLUMNS)."""
    if width >= WIDE_FLEET:
        return CE_COLUMNS
    cols = list(NARROW_CE_COLUMNS)
    i = [k for _t, k, _w in cols].index("unrouted")
    used = sum(w + 2 for _t, _k, w in cols[:i]) + 2  # the columns before it and its own padding
    cols[i] = (cols[i][0], "unrouted", max(UNROUTED_MIN, width - used))  # the next starts past the edge
    return tuple(cols)


def count_text(n: int) -> str:
    """A count in at most four characters (1234 -> 1.2k, 12345 -> 12k)."""
    if n < 1000:
        return str(n)
    if n < 10_000:
        return f"{n / 1000:.1f}".removesuffix(".0") + "k"
    return f"{n // 1000}k" if n < 1_000_000 else f"{n // 1_000_000}M"


def unrouted_cell(counts: dict[str, int], width: int) -> str:
    """The non-zero reasons, abbreviated (REASON_ABBREV), most jobs first, as many as fit in
    ``width`` whole; ``+N`` ends it when N reasons did not fit. "—" when no job waits."""
    items = sorted(((n, k) for k, n in counts.items() if n), key=lambda nk: -nk[0])
    words = [f"{REASON_ABBREV.get(k, k)}{count_text(n)}" for n, k in items]
    shown: list[str] = []
    for i, word in enumerate(words):
        rest = len(words) - i - 1
        room = width - len(" ".join([*shown, word])) - (len(f" +{rest}") if rest else 0)
        if room < 0:
            break
        shown.append(word)
    left = len(words) - len(shown)
    return " ".join([*shown, f"+{left}"] if left else shown) or "—"


def unrouted_words(counts: dict[str, int]) -> str:
    """The non-zero reasons in full words, most jobs first (the CE's routes screen)."""
    items = sorted(((n, k) for k, n in counts.items() if n), key=lambda nk: -nk[0])
    return ", ".join(f"{k} {n}" for n, k in items) or "none"


def ce_cells(c: dict[str, Any], columns: tuple[tuple[str, str, int], ...]) -> tuple:
    """The CE's cells in the order of ``columns`` (ce_columns)."""
    dim = c["state"] != "up"
    thr, full = c["routes_throttled"], c["routes_full"]
    unrouted_w = next((w for _t, k, w in columns if k == "unrouted"), 0) - FRAME
    cells = {
        "instance": c["instance"], "schedd": c["schedd"] or "?", "ce": c["schedd"] or c["instance"],
        "state": Text(c["state"], style=SCRAPE_STYLE.get(c["state"], "")),
        "routes": str(len(c["routes"])), "idle": str(c["idle"]), "running": str(c["running"]), "held": str(c["held"]),
        "throttled": Text(str(thr), style="bold red" if thr else ""),
        "full": Text(str(full), style="yellow" if full else ""),
        "unrouted": unrouted_cell(c["unrouted"], unrouted_w),
        "trend": sparkline(c["trend"], width=10),
    }
    if dim:
        cells.update(dict.fromkeys(("routes", "idle", "running", "held", "throttled", "full", "unrouted"), "—"))
    return tuple(cells[k] for _t, k, _w in columns)


def fleet_route_cells(r: dict[str, Any], width: int, now: float | None) -> tuple:
    """A board route's cells: the local board's (tui.screens.routes.route_cells) of its RouteView
    (engine.fleet.board.route_view), for a terminal ``width``, the re-evaluation counted from the
    CE's snapshot time ``now``; "#" is — for a route with no match order (an exporter before
    routedeck_route_match_order, or a route not enabled), as Re-eval is without a window."""
    view = route_view(r)
    if now is None:
        view = dataclasses.replace(view, next_reevaluation=0.0)
    cells = route_cells(view, now or 0.0, reason=width >= WIDE, bars=width >= BARS)
    return (str(view.index) if view.index else "—", *cells[1:])


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


def _line_over_table(line_id: str, table_id: str, columns, **kw: Any) -> ComposeResult:
    """The fleet screens' layout: header, a line of text, a table of ``columns`` (title, key, width), footer."""
    yield Header()
    yield Static(id=line_id)
    table = DeckTable(id=table_id, cursor_type="row", zebra_stripes=True, **kw)
    for title, key, w in columns:
        table.add_column(title, key=key, width=w)
    yield table
    yield Footer()


class FleetRoutesScreen(Screen):
    """One CE's routes (Escape goes back to the fleet): the local board's columns for the terminal's
    width (tui.screens.routes.board_columns), rebuilt when the width or the route names change, in
    a panel framed as the local board's (whose width those columns allow for)."""

    DEFAULT_CSS = """
    FleetRoutesScreen #ce-routes { height: auto; max-height: 1fr; border: round $primary; }
    """

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, instance: str) -> None:
        super().__init__()
        self.instance = instance
        self._shape: tuple | None = None

    def compose(self) -> ComposeResult:
        yield from _line_over_table("ce-title", "ce-routes", (), fixed_columns=PINNED)

    def on_mount(self) -> None:
        self.show(self.app.board)

    def on_resize(self, event: Any) -> None:
        self.show(self.app.board)

    def _columns(self, names: list[str]) -> None:
        cols = board_columns(self.app.size.width, names)
        if cols == self._shape:
            return
        self._shape = cols
        table = self.query_one("#ce-routes", DataTable)
        table.clear(columns=True)
        for title, key, w in cols:
            table.add_column(title, key=key, width=w)

    def show(self, board: dict[str, Any] | None) -> None:
        ce = next((c for c in (board or {}).get("ces", []) if c["instance"] == self.instance), None)
        title = self.query_one("#ce-title", Static)
        if ce is None:
            title.update(f"{self.instance}: no longer on the board")
            return
        title.update(Text.assemble((f"{ce['schedd'] or '?'}", "bold"), f" at {ce['instance']} — scrape ",
                                   (ce["state"], SCRAPE_STYLE.get(ce["state"], "")),
                                   f" — {len(ce['routes'])} routes — unrouted: {unrouted_words(ce['unrouted'])}"))
        self._columns([r["name"] for r in ce["routes"]])
        width = self.app.size.width
        table = self.query_one("#ce-routes", DataTable)
        ordered = any(r.get("match_order") for r in ce["routes"])
        table.border_title = "Routes (in match order)" if ordered else "Routes (by name: no match order exported)"
        fill(table, [(r["name"], fleet_route_cells(r, width, ce.get("time"))) for r in ce["routes"]])


class FleetScreen(Screen):
    """The CEs (Enter: the selected CE's routes); the columns of the terminal's width (ce_columns),
    the unrouted cell's abbreviations on the legend line under the table."""

    DEFAULT_CSS = """
    FleetScreen #fleet-legend { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [Binding("r", "app.refresh_board", "Refresh"), Binding("q", "app.quit", "Quit")]

    def __init__(self) -> None:
        super().__init__()
        self._shape: tuple | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="fleet-status")
        yield DeckTable(id="fleet-ces", cursor_type="row", zebra_stripes=True, fixed_columns=1)
        yield Static(UNROUTED_LEGEND, id="fleet-legend")
        yield Footer()

    def on_mount(self) -> None:
        self._columns()
        self.show(None, f"reading {self.app.source} …")
        self.app.action_refresh_board()

    def on_resize(self, event: Any) -> None:
        if self._columns() and self.app.board is not None:
            self._rows(self.app.board)

    def _columns(self) -> bool:
        """(Re)build the columns for the terminal's width; True when they changed."""
        cols = ce_columns(self.app.size.width)
        if cols == self._shape:
            return False
        self._shape = cols
        table = self.query_one("#fleet-ces", DataTable)
        table.clear(columns=True)
        for title, key, w in cols:
            table.add_column(title, key=key, width=w)
        return True

    def _rows(self, board: dict[str, Any]) -> None:
        columns = self._shape or ()
        fill(self.query_one("#fleet-ces", DataTable), [(c["instance"], ce_cells(c, columns)) for c in board["ces"]])

    def show(self, board: dict[str, Any] | None, status: str) -> None:
        self.query_one("#fleet-status", Static).update(status)
        if board is not None:
            self._rows(board)

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
