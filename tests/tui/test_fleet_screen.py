"""The fleet screen (tui/screens/fleet.py) under Pilot at a fixed size, over a fake Prometheus on
loopback (tests/helpers/fake_prometheus.py)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from engine.fleet.board import fleet
from engine.fleet.promapi import Prometheus
from tests.helpers.fake_prometheus import FakePrometheus, two_ces
from tui.screens.fleet import FleetApp, FleetRoutesScreen

pytestmark = pytest.mark.anyio
NOW = 1_000_000_000.0


async def wait_board(app, pilot) -> None:
    for _ in range(200):  # bounded: the fetch is a worker thread
        await app.workers.wait_for_complete()
        await pilot.pause()
        if app.board is not None:
            return
    raise AssertionError("the board never arrived")


async def test_fleet_rows_and_enter_for_routes():
    answers, ranges = two_ces()
    with FakePrometheus(answers, ranges) as fake:
        prom = Prometheus(fake.url)
        app = FleetApp(lambda: fleet(prom, NOW), prom.url, refresh=60)
        async with app.run_test(size=(132, 40)) as pilot:
            await wait_board(app, pilot)
            table = app.screen.query_one("#fleet-ces", DataTable)
            assert [r.value for r in table.rows] == ["127.0.0.1:9101", "127.0.0.1:9102"]
            row = [str(c) for c in table.get_row("127.0.0.1:9101")]
            assert row[1:7] == ["ce1.example.org", "up", "2", "4", "7", "1"]
            assert "no_match=4 throttled=2" in row
            assert [str(c) for c in table.get_row("127.0.0.1:9102")][2] == "down"
            status = str(app.screen.query_one("#fleet-status", Static).render())
            assert "2 CEs, 1 up" in status
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, FleetRoutesScreen)
            routes = app.screen.query_one("#ce-routes", DataTable)
            assert [r.value for r in routes.rows] == ["Site_A", "Site_B"]
            a = [str(c).strip() for c in routes.get_row("Site_A")]
            assert a[1] == "THROTTLED" and a[2] == "0.025" and a[3].startswith("9/100") and a[5:] == ["5", "1"]
            assert [str(c) for c in routes.get_row("Site_B")][1] == "full"
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, FleetRoutesScreen)


async def test_unreachable_is_said_on_the_status_line():
    prom = Prometheus("http://127.0.0.1:1", timeout=2)
    app = FleetApp(lambda: fleet(prom, NOW), prom.url, refresh=60)
    async with app.run_test(size=(132, 40)) as pilot:
        for _ in range(200):
            await app.workers.wait_for_complete()
            await pilot.pause()
            status = str(app.screen.query_one("#fleet-status", Static).render())
            if "cannot reach" in status:
                break
        assert "cannot reach http://127.0.0.1:1" in status
