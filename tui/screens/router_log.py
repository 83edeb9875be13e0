"""The real router's log at the replay's moment (issue 27): ``R`` or ``:routerlog`` in
``routedeck replay DIR`` on an archive recorded with ``routedeck record --router-log FILE``.

Two panels follow the replay as it moves (play, ``:seek``, the bar's keys):

- **Routes**: per route, RouteDeck's own figures of the moment (the snapshot's ``RouteView``:
  routed and idle copies in the queue, its throttle, recent started/succeeded/failed) beside the
  real router's from its last routing table at or before the moment (htcondor.md §1.5:
  ``Submitted/Max``, ``Idle/Max``, ``Throttle``, ``Recent: Started Succeeded Failed``, printed
  once per poll). A route whose counts differ is marked ``≠``; a route only one side names shows
  ``—`` on the other. Throttles are in jobs per 600 s on both sides (the router prints jobs/sec;
  its own text is in the lines below).
- **Lines**: the JobRouterLog lines within 30 s of the moment, with a ``now`` rule where the
  moment falls (lines after it are dimmed).

The router's part is the engine's ``router_log(now)`` (``engine.views.queries.routerlog``: the
``router_log`` of ``replay DIR --at T --json``), read in a thread worker whenever the moment
changes; a read that finishes after a newer one is dropped. RouteDeck's part is drawn from each
snapshot at once. Without a router log (a log, or an archive recorded without
``--router-log``) the screen says so and how to get one.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from engine.contract.snapshot import RouteView, Snapshot
from tui.commands import keymap
from tui.engine_api import ROUTER_LOG_HEADER, router_log
from tui.screens.base import DeckScreen
from tui.text.format import clock_time

NAME_MIN, NAME_MAX = 9, 24
RULE = "── now "  # the moment's rule among the lines
# (title, width) of the columns after the route's name: RouteDeck's four, then the router's four
# (at 80 columns a name of 11 fits beside them, with the "≠" mark)
OURS = (("routed", 6), ("idle", 4), ("thr", 5), ("S/S/F", 8))
THEIRS = (("sub/max", 8), ("idle/max", 8), ("thr", 5), ("S/S/F", 9))


def throttle_cell(per_window: float | None) -> str:
    """A throttle in jobs per 600 s (RouteView.throttle's unit): ``none`` when there is none."""
    return "none" if per_window is None or per_window <= 0 else f"{per_window:.3g}"


def recent_cell(*values: int | None) -> str:
    return "/".join("-" if v is None else str(v) for v in values)


def name_width(width: int) -> int:
    """The route-name column's width in a panel ``width`` cells wide (the rest is fixed)."""
    fixed = sum(w + 1 for _t, w in OURS) + 2 + sum(w + 1 for _t, w in THEIRS) + 1  # + the "≠" mark
    return max(NAME_MIN, min(NAME_MAX, width - fixed - 1))


def compare_text(routes: tuple[RouteView, ...], rlog: dict | None, tz: str, width: int) -> Text:
    """RouteDeck's figures beside the router's table of ``rlog`` (router_log_at's dict), per
    route: RouteDeck's routes in match order, then those only the router names."""
    table = (rlog or {}).get("table")
    theirs = {r["name"]: r for r in table["routes"]} if table else {}
    nw = name_width(width)
    t = Text(f"{'':{nw}} ", style="bold")
    t.append(f"{'RouteDeck (queue)':{sum(w + 1 for _t, w in OURS)}}│ ", style="bold")
    when = f"router at {clock_time(table['time'], tz, date=False)}" if table and table.get("time") else "router"
    t.append(f"{when}\n", style="bold")
    t.append(f"{'Route':{nw}} " + "".join(f"{title:>{w}} " for title, w in OURS) + "│ "
             + "".join(f"{title:>{w}} " for title, w in THEIRS).rstrip() + "\n", style="dim")
    names = [r.name for r in routes]
    for r in routes:
        t.append_text(_row(r.name, r, theirs.get(r.name), nw, bool(table)))
    for name in theirs:
        if name not in names:
            t.append_text(_row(name, None, theirs[name], nw, True))
    if not routes and not theirs:
        t.append("no routes at this moment\n", style="dim")
    t.rstrip()
    return t


def _row(name: str, ours: RouteView | None, theirs: dict | None, nw: int, has_table: bool) -> Text:
    shown = name if len(name) <= nw else name[: nw - 1] + "…"
    line = Text(f"{shown:{nw}} ", style="bold")
    if ours is None:
        line.append("".join(f"{'—':>{w}} " for _t, w in OURS), style="dim")
    else:
        cells = (str(ours.routed), str(ours.idle), throttle_cell(ours.throttle),
                 recent_cell(ours.recent_started, ours.recent_succeeded, ours.recent_failed))
        for k, ((_t, w), cell) in enumerate(zip(OURS, cells)):
            line.append(f"{cell:>{w}} ", style="bold red" if k == 2 and cell != "none" else "")
    line.append("│ ")
    if theirs is None:
        line.append("".join(f"{'—' if has_table else '':>{w}} " for _t, w in THEIRS).rstrip(), style="dim")
        return line.append("\n")
    differs = ours is not None and (theirs["submitted"] != ours.routed or theirs["idle"] != ours.idle)
    max_idle = theirs["max_idle"]
    cells = (f"{theirs['submitted']}/{theirs['max_jobs']}", f"{theirs['idle']}/{max_idle}",
             throttle_cell(theirs["throttle"]),
             recent_cell(theirs["recent_started"], theirs["recent_succeeded"], theirs["recent_failed"]))
    styles = ("yellow" if differs else "", "yellow" if differs else "",
              "bold red" if cells[2] != "none" else "", "")
    for (_t, w), cell, style in zip(THEIRS, cells, styles):
        line.append(f"{cell:>{w}} ", style=style)
    if differs:
        line.append("≠", style="yellow")
    line.rstrip()
    return line.append("\n")


def lines_text(rlog: dict | None, now: float, tz: str) -> Text:
    """The router's lines near ``now``, a ``now`` rule where the moment falls, later lines dimmed."""
    t = Text()
    lines = (rlog or {}).get("lines") or []
    if not lines:
        t.append("no JobRouterLog line within 30 s of this moment", style="dim")
        return t
    ruled = False
    for x in lines:
        if not ruled and x["time"] > now:
            t.append(f"{RULE}{clock_time(now, tz, date=False)} ──\n", style="bold cyan")
            ruled = True
        t.append(x["text"] + "\n", style="dim" if ruled else "")
    if not ruled:
        t.append(f"{RULE}{clock_time(now, tz, date=False)} ──", style="bold cyan")
    t.rstrip()
    return t


def moment_of(snap: Snapshot) -> float:
    return snap.replay.time if snap.replay is not None else snap.time


class RouterLogScreen(DeckScreen):
    BINDINGS = keymap.ROUTER_LOG
    DEFAULT_CSS = """
    RouterLogScreen #rlog-box { border: round $primary; padding: 0 1; height: auto; max-height: 50%; }
    RouterLogScreen #rlog-lines-box { border: round $secondary; padding: 0 1; height: 1fr; }
    RouterLogScreen #rlog-table, RouterLogScreen #rlog-lines { text-wrap: nowrap; text-overflow: ellipsis; }
    RouterLogScreen.-no-log #rlog-table { text-wrap: wrap; }
    RouterLogScreen.-no-log #rlog-box { height: 1fr; max-height: 100%; }
    RouterLogScreen.-no-log #rlog-lines-box { display: none; }
    """

    class Read(Message):
        def __init__(self, ticket: int, now: float, rlog: dict | None, note: str, error: str | None = None) -> None:
            super().__init__()
            self.ticket, self.now, self.rlog, self.note, self.error = ticket, now, rlog, note, error

    def __init__(self) -> None:
        super().__init__()
        self.rlog: dict | None = None  # the last read shown (router_log_at's dict)
        self.note = ""  # why there is none, once read
        self.read_for: float | None = None  # the moment of the read shown
        self._asked: float | None = None  # the moment last asked
        self._ticket = 0  # reads asked; a read older than the one shown is dropped
        self._shown_ticket = 0
        self._lines_for: tuple | None = None  # (moment, zone) of the lines drawn

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="rlog-box") as box:
            box.border_title = "Routes · RouteDeck beside the real router (JobRouterLog)"
            box.border_subtitle = "throttle: jobs/600 s"
            yield Static(Text("reading the router log…", style="dim"), id="rlog-table")
        with VerticalScroll(id="rlog-lines-box") as lines:
            lines.border_title = "JobRouterLog lines within ±30 s"
            yield Static(Text(""), id="rlog-lines")

    def update_body(self, snap: Snapshot) -> None:
        now = moment_of(snap)
        if now != self._asked:
            self._asked = now
            self._ticket += 1
            self._read(self._ticket, now)
        self._draw(snap)

    def action_refresh_router_log(self) -> None:
        snap = self.app.snapshot
        if snap is not None:
            self._asked = None
            self.update_body(snap)

    @work(thread=True, exclusive=True)
    def _read(self, ticket: int, now: float) -> None:
        try:
            rlog, note = router_log(self.app.runtime, now)
        except Exception as exc:  # noqa: BLE001 - engine stopped or busy: shown, not raised
            self.post_message(self.Read(ticket, now, None, "", f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Read(ticket, now, rlog, note))

    def on_router_log_screen_read(self, event: Read) -> None:
        if event.ticket < self._shown_ticket:
            return  # a newer moment is shown already
        self._shown_ticket = event.ticket
        self.rlog, self.read_for = event.rlog, event.now
        self.note = event.note if not event.error else f"could not read the router log: {event.error}"
        if self.app.snapshot is not None:
            self._draw(self.app.snapshot)

    def _draw(self, snap: Snapshot) -> None:
        table = self.query_one("#rlog-table", Static)
        lines = self.query_one("#rlog-lines", Static)
        if self.read_for is None:
            return  # the first read is on its way
        self.set_class(self.rlog is None, "-no-log")  # the note alone, wrapped (the table's rows are cut)
        if self.rlog is None:
            table.update(Text(f"No router log: {self.note}", style="yellow"))
            return
        width = max(40, self.query_one("#rlog-box").content_region.width or self.app.size.width - 4)
        out = compare_text(snap.routes, self.rlog, snap.tz, width)
        if self.rlog.get("table") is None:
            out.append("\nthe router logged no routing table before this moment", style="dim")
        table.update(out)
        if self._lines_for != (self.read_for, snap.tz):  # the lines change with the read only
            self._lines_for = (self.read_for, snap.tz)
            text = lines_text(self.rlog, self.read_for, snap.tz)
            lines.update(text)
            box = self.query_one("#rlog-lines-box", VerticalScroll)
            box.border_title = f"JobRouterLog lines within ±30 s of {clock_time(self.read_for, snap.tz)}"
            self.call_after_refresh(self._scroll_to_moment, text.plain.split("\n"))

    def _scroll_to_moment(self, lines: list[str]) -> None:
        """Show the routing table in force at the moment (its header line at the top) with the
        moment's rule; when both do not fit, the rule in the middle."""
        box = self.query_one("#rlog-lines-box", VerticalScroll)
        rule = next((k for k, line in enumerate(lines) if line.startswith(RULE)), 0)
        top = max((k for k in range(rule) if ROUTER_LOG_HEADER in lines[k]), default=0)
        height = box.scrollable_content_region.height
        if rule - top >= height:
            top = max(0, rule - height // 2)
        box.scroll_to(y=top, animate=False)
