"""Snapshot tests (pytest-textual-snapshot) of the fleet board (tui/screens/fleet.py, issue 28) at
132×40 (80×24 is checked by Pilot in tests/tui/test_fleet_screen.py: its SVG differed by one
scrollbar thumb depending on which tests ran before it in the process): the CE rows with the unrouted reasons whole and their legend, and a CE's routes
in the local board's columns. Deterministic: the board is assembled once (engine.fleet.board over
the fake Prometheus of tests/helpers/fake_prometheus.py) and given to the app as canned data,
with a fixed source URL; no clock on screen. Update with ``--snapshot-update`` and review the SVGs."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from engine.fleet.board import fleet
from engine.fleet.promapi import Prometheus
from tests.helpers.fake_prometheus import FakePrometheus, two_ces
from tests.helpers.tui_fixtures import wait_until
from tui.screens.fleet import FleetApp

NOW = 1_000_000_000.0
BUSY = {"no_match": 1234, "route_full": 56, "throttled": 20_000, "not_candidate": 7, "matched": 3}


@pytest.fixture(scope="module")
def board():
    answers, ranges = two_ces()
    a = answers["routedeck_idle_unrouted_jobs"][0][0]
    answers["routedeck_idle_unrouted_jobs"] = [({**a, "reason": k}, v) for k, v in BUSY.items()]
    with FakePrometheus(answers, ranges) as fake:
        return fleet(Prometheus(fake.url), NOW)


def _app(board):
    return FleetApp(lambda: board, "http://prometheus.example.org:9090", refresh=600)


async def _ready(pilot, table: str = "#fleet-ces"):
    """The board shown and its table's scrollbars laid out (the horizontal one at 80 columns
    appears a refresh after the rows: a snapshot between the two had no thumb)."""
    await wait_until(pilot, lambda: pilot.app.board is not None)

    def laid_out() -> bool:
        t = pilot.app.screen.query_one(table, DataTable)
        wide = t.virtual_size.width > t.scrollable_content_region.width
        return t.row_count > 0 and t.show_horizontal_scrollbar == wide and t.horizontal_scrollbar.display == wide

    await wait_until(pilot, laid_out)
    await settled(pilot)


async def settled(pilot, rounds: int = 3, tries: int = 40) -> None:
    """Wait until the screen draws the same for ``rounds`` refreshes in a row: under load a
    scrollbar's thumb came a refresh after the check above (a flake of the 80×24 snapshots)."""
    last, same = None, 0
    for _ in range(tries):
        await pilot.pause(0.02)
        shot = pilot.app.export_screenshot()
        same = same + 1 if shot == last else 0
        if same >= rounds:
            return
        last = shot


@pytest.mark.parametrize("size", [(132, 40)], ids=["132x40"])
def test_fleet_board(snap_compare, board, size):
    assert snap_compare(_app(board), terminal_size=size, run_before=_ready)


@pytest.mark.parametrize("size", [(132, 40)], ids=["132x40"])
def test_fleet_routes(snap_compare, board, size):
    async def run_before(pilot):
        await _ready(pilot)
        await pilot.press("enter")  # ce1's routes
        await _ready(pilot, "#ce-routes")

    assert snap_compare(_app(board), terminal_size=size, run_before=run_before)
