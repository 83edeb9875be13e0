"""The routes board of watch mode: RouteDeck's figures, and the real router's beside them.

``routedeck watch --router-log JobRouterLog`` parses the router's routing-table lines
(htcondor.md §1.5: ``Submitted/Max``, ``Idle/Max``, ``Throttle``, ``Recent: Started Succeeded
Failed``); the engine attaches the last table's row to each route as ``RouteView.reported``.
This screen is the ordinary board plus a panel listing, per route, RouteDeck's own counts (from
the routed copies in the queue) next to the router's, and flags where they differ — the
difference is the point of showing both. Without a router log the panel says how to get one.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from engine.contract.snapshot import RouteView, Snapshot
from tui.text.format import clock_time
from tui.screens.routes import RoutesScreen
from tui.widgets.repaint import show_text


def _throttle(value: float | None) -> str:
    return "none" if value is None or value <= 0 else f"{value:.4g}/600s"


def router_log_text(snap: Snapshot) -> Text:
    reported = [r for r in snap.routes if r.reported is not None]
    if not reported:
        return Text("JobRouterLog: not given (--router-log FILE shows the real router's throttle and recent "
                    "figures here)", style="dim")
    when = reported[0].reported.time
    t = Text(f"JobRouterLog table{' at ' + clock_time(when, snap.tz) if when else ''}: "
             "RouteDeck (queue) │ router (its log)\n", style="bold")
    t.append(f"{'Route':16} {'routed':>7} {'idle':>6} │ {'submitted':>11} {'idle':>9} {'throttle':>11} "
             f"{'recent S/S/F':>14}\n", style="dim")
    for r in reported:
        t.append_text(_row(r))
    return t


def _row(r: RouteView) -> Text:
    rep = r.reported
    line = Text(f"{r.name[:16]:16} {r.routed:7d} {r.idle:6d} │ ")
    differs = rep.submitted != r.routed or rep.idle != r.idle
    line.append(f"{rep.submitted:5d}/{rep.max_jobs:<5d} {rep.idle:4d}/{rep.max_idle:<4d} ",
                style="yellow" if differs else "")
    line.append(f"{_throttle(rep.throttle):>11} ", style="bold red" if rep.throttle else "")
    recent = "/".join("-" if v is None else str(v) for v in
                      (rep.recent_started, rep.recent_succeeded, rep.recent_failed))
    line.append(f"{recent:>14}")
    if differs:
        line.append("  ≠ queue", style="yellow")
    line.append("\n")
    return line


class WatchRoutesScreen(RoutesScreen):
    DEFAULT_CSS = """
    WatchRoutesScreen #router-log { height: auto; max-height: 12; border: round $secondary; padding: 0 1; }
    """

    def compose_body(self) -> ComposeResult:
        yield from super().compose_body()
        panel = Static(id="router-log")
        panel.border_title = "Real router (JobRouterLog)"
        yield panel

    def update_body(self, snap: Snapshot) -> None:
        super().update_body(snap)
        show_text(self.query_one("#router-log", Static), router_log_text(snap))  # repainted only on change
