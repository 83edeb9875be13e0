"""The fleet screen (tui/screens/fleet.py) under Pilot at a fixed size, over a fake Prometheus on
loopback (tests/helpers/fake_prometheus.py)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Static

from engine.fleet.board import fleet
from engine.fleet.promapi import Prometheus
from tests.helpers.fake_prometheus import FakePrometheus, two_ces
from tests.helpers.screen_render import screen_text
from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until
from tui.app import make_app
from tui.screens.fleet import UNROUTED_LEGEND, FleetApp, FleetRoutesScreen, unrouted_cell

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
            assert "nm4 th2" in row  # the unrouted reasons abbreviated, most jobs first (the legend says)
            assert [str(c) for c in table.get_row("127.0.0.1:9102")][2] == "down"
            status = str(app.screen.query_one("#fleet-status", Static).render())
            assert "2 CEs, 1 up" in status
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, FleetRoutesScreen)
            routes = app.screen.query_one("#ce-routes", DataTable)
            assert [r.value for r in routes.rows] == ["Site_B", "Site_A"]  # the match order
            assert routes.border_title == "Routes (in match order)"
            a = dict(zip([str(c.label) for c in routes.columns.values()],
                         [str(c).strip() for c in routes.get_row("Site_A")]))
            assert (a["State"], a["Throttle"], a["Fail/s"], a["St/Ok/Fail"]) == ("THROTTLED", "18.6/600s", "0.025", "12/0/15")
            assert a["Routed/Max"].startswith("9/100") and (a["Run"], a["Held"], a["#"]) == ("5", "1", "2")
            # re-evaluated 600 s after its window began (1e9 - 200), counted from the CE's snapshot time (1e9)
            assert a["Re-eval"] == "6m40s"
            assert a["Trend"].strip()  # the failure rate's history (a range query)
            assert [str(c).strip() for c in routes.get_row("Site_B")][:3] == ["1", "Site_B", "full"]
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


def _titles(table: DataTable) -> list[str]:
    return [str(c.label) for c in table.columns.values()]


def _lines(app) -> list[str]:
    return screen_text(app.screen)


@pytest.mark.parametrize("size", [(80, 24), (132, 40), (160, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_fleet_routes_have_the_local_boards_columns(size):
    """Issue 28: Enter on a CE gives its routes with "the same columns as the local board": the
    fleet's routes table and the local board (tui.screens.routes) at the same terminal size have
    the same column titles, in the same order."""
    local = make_app(FakeRuntime(make_snapshot(100)), blink=False)
    async with local.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: local.snapshot is not None and bool(local.screen.query("#routes")))
        await pilot.pause()
        want = _titles(local.screen.query_one("#routes", DataTable))
    answers, ranges = two_ces()
    with FakePrometheus(answers, ranges) as fake:
        prom = Prometheus(fake.url)
        app = FleetApp(lambda: fleet(prom, NOW), prom.url, refresh=60)
        async with app.run_test(size=size) as pilot:
            await wait_board(app, pilot)
            await pilot.press("enter")
            await pilot.pause()
            got = _titles(app.screen.query_one("#ce-routes", DataTable))
            assert got == want and "St/Ok/Fail" in got and "Throttle" in got
            if size[0] >= 150:
                assert got[-1] == "Not accepting because"


BUSY = {"no_match": 1234, "route_full": 56, "throttled": 20_000, "not_candidate": 7, "matched": 3}


def test_unrouted_cell_fits_whole():
    """The unrouted cell: abbreviations, most jobs first, short counts; reasons that do not fit
    whole are counted (+N), never cut."""
    assert unrouted_cell(BUSY, 33) == "th20k nm1.2k rf56 nc7 m3"
    assert unrouted_cell(BUSY, 18) == "th20k nm1.2k +3"
    assert unrouted_cell({"no_match": 4, "throttled": 0}, 18) == "nm4"
    assert unrouted_cell({}, 18) == unrouted_cell({"matched": 0}, 5) == "—"
    for width in range(8, 40):
        assert len(unrouted_cell(BUSY, width)) <= width


@pytest.mark.parametrize("size, cell", [((80, 24), "th20k nm1.2k +3"), ((132, 40), "th20k nm1.2k rf56 nc7 m3")],
                         ids=["80x24", "132x40"])
async def test_unrouted_by_reason_is_readable(size, cell):
    """Issue 28: the unrouted-by-reason cell was cut ("no_match=1234 route_full=56 throttled=2…" in
    28 columns). At 80×24 and 132×40 it is on screen whole, in view without scrolling, with the
    legend of its abbreviations under the table; Enter names every reason in full."""
    answers, ranges = two_ces()
    a = answers["routedeck_idle_unrouted_jobs"][0][0]
    answers["routedeck_idle_unrouted_jobs"] = [({**a, "reason": k}, v) for k, v in BUSY.items()]
    with FakePrometheus(answers, ranges) as fake:
        prom = Prometheus(fake.url)
        app = FleetApp(lambda: fleet(prom, NOW), prom.url, refresh=60)
        async with app.run_test(size=size) as pilot:
            await wait_board(app, pilot)
            await pilot.pause()
            screen = "\n".join(_lines(app))
            row = next(line for line in _lines(app) if "ce1.example.org" in line)
            assert cell in row, row
            assert "4" in row and "7" in row  # the CE's idle and running beside it
            assert "nm no_match" in screen and "th throttled" in screen and UNROUTED_LEGEND.startswith("Unrouted")
            await pilot.press("enter")
            await pilot.pause()
            title = str(app.screen.query_one("#ce-title", Static).render())
            assert "unrouted: throttled 20000, no_match 1234, route_full 56, not_candidate 7, matched 3" in title
