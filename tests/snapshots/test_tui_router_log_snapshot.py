"""Snapshot test (pytest-textual-snapshot) of the router-log screen (issue 27: ``R`` in ``routedeck
replay DIR`` on an archive recorded with ``--router-log``) at 132×40: RouteDeck's figures beside
the real router's last routing table, and the JobRouterLog lines near the moment with its rule.

Deterministic: a canned replay snapshot at the frozen virtual time ``tui_fixtures.T0`` and a
canned ``router_log`` answer, its lines written in the router's format (tests/helpers/routerlog.py,
htcondor.md §1.5) and parsed by the engine's parser (the screen reads no clock), cursor blink off.
Update with ``--snapshot-update`` and review the SVG."""

from __future__ import annotations

import dataclasses

from engine.contract import snapshot as S
from engine.router.routerlog import parse_router_log
from tui.app import make_app
from tui.screens.router_log import RouterLogScreen

from tests.helpers.routerlog import block, row, stamp
from tests.helpers.tui_fixtures import T0, FakeFeed, FakeRuntime, make_snapshot, wait_until


def _poll(t: float, bh_throttle: float) -> str:
    return block(stamp(t), [row("Site1_Slurm", "entries:001", 212, 500, 18, 50, 0, 57, 51, 0),
                            row("Site2_PBS", "entries:002", 60, 200, 50, 50, 0, 12, 10, 0),
                            row("BlackHole", "entries:003", 14, 100, 14, 50, bh_throttle, 40, 0, 39),
                            row("GPU_Site", "entries:005", 41, 40, 3, -1, 0, 8, 7, 1),
                            row("Legacy_CE", "entries:009", 0, 10, 0, 5, 0, 0, 0, 0)])


TEXT = (_poll(T0 - 25, 0) + f"{stamp(T0 - 24)} JobRouter: Found 3 candidate jobs\n"
        + _poll(T0 - 5, 3.4) + f"{stamp(T0 - 4)} JobRouter (src=1203.0,route=Site1_Slurm): submitted job\n"
        + _poll(T0 + 15, 3.4))


def _router_log() -> dict:
    tables, _problems = parse_router_log(TEXT, "UTC")
    table = tables[1]  # the last at or before T0
    times = [T0 - 25] * 7 + [T0 - 24] + [T0 - 5] * 7 + [T0 - 4] + [T0 + 15] * 7
    return {"table": {"time": table.time, "routes": [
        {"name": r.name, "submitted": r.submitted, "max_jobs": r.max_jobs, "idle": r.idle, "max_idle": r.max_idle,
         "throttle": r.throttle_per_window, "throttle_text": r.throttle_text, "recent_started": r.recent_started,
         "recent_succeeded": r.recent_succeeded, "recent_failed": r.recent_failed} for r in table.rows]},
        "lines": [{"time": t, "text": text} for t, text in zip(times, TEXT.splitlines())]}


class RouterLogFeed(FakeFeed):
    def router_log(self, now: float) -> dict:
        return _router_log()


class RouterLogRuntime(FakeRuntime):
    def __init__(self, snapshot) -> None:
        super().__init__(snapshot)
        self.feed = RouterLogFeed(self)


def test_router_log_screen(snap_compare):
    pos = S.ReplayPosition(transaction=2386, transactions=19455, time=T0, start=T0 - 1300, end=T0 + 9500,
                           times_inferred=False)
    snap = dataclasses.replace(make_snapshot(200), mode="replay", speed=1.0, paused=True, engine_state="paused",
                               replay=pos, tz="UTC")
    app = make_app(RouterLogRuntime(snap), mode="replay", readonly=True, blink=False, watch_files=False)

    async def run_before(pilot):
        await wait_until(pilot, lambda: pilot.app.snapshot is not None)
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, RouterLogScreen)
                         and pilot.app.screen.read_for is not None)
        pilot.app.runtime.update()  # the next snapshot (same moment) gives the screen its replay bar
        await wait_until(pilot, lambda: pilot.app.screen.query("ReplayBar"))
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(132, 40), run_before=run_before)
