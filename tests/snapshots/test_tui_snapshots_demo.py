"""Snapshot tests of the board, jobs and crondor screens at 80×24 and 132×40 on the real engine's
data: the embedded demo run for a virtual hour (``demo_fixture``; seed 1, no wall clock), frozen.
Update with ``--snapshot-update`` on the specific test and review the SVGs.
"""

from __future__ import annotations

import pytest

from tui.app import make_app

from tests.helpers.demo_fixture import ROOT, EngineRuntime
from tests.helpers.tui_fixtures import wait_until

SIZES = {"80x24": (80, 24), "132x40": (132, 40)}


def _app():
    return make_app(EngineRuntime(), blink=False, watch_files=False)


async def _ready(pilot):
    await wait_until(pilot, lambda: pilot.app.snapshot is not None and bool(pilot.app.screen.query("#routes")))
    await pilot.pause()


@pytest.fixture(autouse=True)
def _in_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # route locations are shown relative to the checkout


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
def test_board(snap_compare, size):
    async def run_before(pilot):
        await _ready(pilot)
        await pilot.press("down", "down")  # BlackHole: its throttle in the panel
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_jobs(snap_compare, size):
    async def run_before(pilot):
        await _ready(pilot)
        await pilot.press("j")  # every job, the hold reason after id, status, owner and route
        await wait_until(pilot, lambda: bool(pilot.app.screen.query("#jobs")) and len(pilot.app.screen.table.model) > 0)
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_crondor(snap_compare, size):
    async def run_before(pilot):
        await _ready(pilot)
        await pilot.press("c")
        await wait_until(pilot, lambda: bool(pilot.app.screen.query("#cron")) and bool(pilot.app.screen._keys))
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=SIZES[size], run_before=run_before)


def test_job_ad(snap_compare):
    async def run_before(pilot):
        await _ready(pilot)
        await pilot.press("c", "enter")  # the first crondor job's ad, with its in-memory DeferralTime
        await wait_until(pilot, lambda: getattr(pilot.app.screen, "lines", None) is not None)
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=(132, 40), run_before=run_before)
