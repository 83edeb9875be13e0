"""The router-log screen (issue 27: ``R`` / ``:routerlog`` in ``routedeck replay DIR``): the real
router's JobRouterLog table and lines at the replay's moment beside RouteDeck's figures, following
the replay as it seeks. Pilot tests on a real archive (the demo recording's first 3000 transactions
recorded with ``--router-log``, tests/helpers/routerlog.py; the table format is htcondor.md §1.5)."""

from __future__ import annotations

import pytest

from engine.launch.options import ReplayOptions
from engine.launch.replay import replay_runtime
from tui.app import make_app
from tui.screens.router_log import RouterLogScreen

from tests.helpers.replay_logs import Recording
from tests.helpers.routerlog import THROTTLED_FROM, archive_with_router_log
from tests.helpers.tui_fixtures import wait_until

pytestmark = pytest.mark.anyio


def _app(path, at: str | None = None):
    runtime = replay_runtime(ReplayOptions(log=str(path), tz="UTC", at=at))
    return make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False)


def _text(app, widget: str) -> str:
    return str(app.screen.query_one(widget).render())


def _read_at(app, moment: float):
    """The screen shows the router log read at ``moment`` (a seek lands on a transaction's time,
    ranked a few µs apart from others of the same second)."""
    return lambda: (isinstance(app.screen, RouterLogScreen) and app.screen.read_for is not None
                    and abs(app.screen.read_for - moment) < 0.01)


def _blackhole(app) -> str:
    return next(line for line in _text(app, "#rlog-table").splitlines() if line.startswith("BlackHole"))


async def _cmd(pilot, text: str) -> None:
    await pilot.press("colon")
    await pilot.pause()
    pilot.app.screen.query_one("#command-input").value = text
    await pilot.press("enter")


async def test_the_view_follows_the_replay_as_it_seeks(tmp_path):
    app = _app(archive_with_router_log(tmp_path), at="00:19:45")  # 20 s before THROTTLED_FROM (UTC)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("R")
        await wait_until(pilot, _read_at(app, THROTTLED_FROM - 15), timeout=10)
        assert "router at 00:19:40" in _text(app, "#rlog-table")  # the poll before the moment
        bh = _blackhole(app)
        assert bh.split("│")[1].split()[2] == "none"  # the router's throttle: not yet
        assert "±30 s of 2026-11-21 00:19:45" in app.screen.query_one("#rlog-lines-box").border_title
        lines = _text(app, "#rlog-lines")
        assert "── now 00:19:45 ──" in lines and "Checking for candidate jobs" in lines

        await _cmd(pilot, "seek 00:20:05")
        await wait_until(pilot, _read_at(app, THROTTLED_FROM + 5), timeout=10)
        assert "router at 00:20:00" in _text(app, "#rlog-table")
        theirs = _blackhole(app).split("│")[1].split()
        assert theirs[2] == "18" and theirs[3] == "40/0/30"  # 0.03 jobs/sec = 18 per 600 s; Recent S/S/F

        await pilot.press("left_square_bracket")  # the bar's -1 min
        await wait_until(pilot, _read_at(app, THROTTLED_FROM - 55), timeout=10)
        assert _blackhole(app).split("│")[1].split()[2] == "none"
        assert "router at 00:19:00" in _text(app, "#rlog-table")


async def test_an_archive_without_a_router_log_says_so(tmp_path):
    app = _app(archive_with_router_log(tmp_path, router_log=False), at="00:20:05")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await _cmd(pilot, "routerlog")
        await wait_until(pilot, lambda: isinstance(app.screen, RouterLogScreen) and app.screen.read_for is not None,
                         timeout=10)
        shown = _text(app, "#rlog-table")
        assert "No router log" in shown and "--router-log" in shown
        assert not app.screen.query_one("#rlog-lines-box").display  # the note alone, no empty lines panel


async def test_a_log_is_not_an_archive(tmp_path):
    log = tmp_path / "job_queue.log"
    log.write_text(Recording(7, steps=40).text())
    app = _app(log)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("R")
        await wait_until(pilot, lambda: isinstance(app.screen, RouterLogScreen) and app.screen.read_for is not None,
                         timeout=10)
        assert "reads no recorder's archive" in _text(app, "#rlog-table").replace("\n", " ")
