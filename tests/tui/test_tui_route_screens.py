"""Route screens are kept between opens (tui/screens/route_detail.py ``route_detail_screen``,
issue 14 item 3: building the screen was most of board → route): reopening a route resumes its
screen with the latest snapshot and its cursor, another route gets its own, a route's screen
already on the stack is not pushed twice, and only ``KEEP_SCREENS`` are kept.
"""

from __future__ import annotations

import dataclasses

import pytest

from tui.app import make_app
from tui.screens import route_detail
from tui.widgets.job_table import JobTable

from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until

pytestmark = pytest.mark.anyio


def _on(app, name):
    s = app.screen
    return type(s).__name__ == "RouteDetailScreen" and s.route_name == name and s._rows_id is not None


async def test_reopened_route_resumes_its_screen_with_the_latest_snapshot():
    rt = FakeRuntime(make_snapshot(300))
    app = make_app(rt, blink=False, watch_files=False)
    names = [r.name for r in rt.latest().routes]
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        app.open_route(names[0])
        await wait_until(pilot, lambda: _on(app, names[0]))
        first = app.screen
        table = first.query_one(JobTable)
        assert len(table.model) > 2
        await pilot.press("down", "down")
        cursor = table.cursor
        await pilot.press("escape")
        # the queue changes while the route is closed: the reopened screen shows the new tuple
        rt.update(jobs=rt.latest().jobs[:-1], jobs_version=rt.latest().jobs_version + 1)
        await wait_until(pilot, lambda: app.snapshot.jobs_version == rt.latest().jobs_version)
        app.open_route(names[0])
        await wait_until(pilot, lambda: _on(app, names[0]) and app.screen._rows_id == rt.latest().jobs_version)
        assert app.screen is first and table.cursor == cursor and table.has_focus
        await pilot.press("escape")
        app.open_route(names[1])
        await wait_until(pilot, lambda: _on(app, names[1]))
        assert app.screen is not first
        assert all(app.screen.query_one(JobTable).model.row(i).route == names[1]
                   for i in range(len(app.screen.query_one(JobTable).model)))
        # the same route opened again on top of its own screen: a second, unkept screen
        app.open_route(names[1])
        await wait_until(pilot, lambda: len(app.screen_stack) == 3 and _on(app, names[1]))
        assert app.screen_stack[1] is not app.screen_stack[2]


@pytest.mark.slow
async def test_only_keep_screens_are_kept(monkeypatch):
    monkeypatch.setattr(route_detail, "KEEP_SCREENS", 2)
    rt = FakeRuntime(make_snapshot(100))
    app = make_app(rt, blink=False, watch_files=False)
    names = [r.name for r in rt.latest().routes][:4]
    assert len(names) == 4
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        screens = []
        for name in names:
            app.open_route(name)
            await wait_until(pilot, lambda: _on(app, name))
            screens.append(app.screen)
            await pilot.press("escape")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "RoutesScreen")
        assert list(app._route_screens) == names[2:]
        installed = set(app._installed_screens.values())
        assert screens[0] not in installed and screens[1] not in installed
        assert screens[2] in installed and screens[3] in installed
        await pilot.pause(0.1)
        assert not screens[0].is_attached  # dropped screens are removed, not left mounted


async def test_a_route_without_definition_text_shows_live_figures():
    """Issue 29's handling list: in replay (routes known from the recording, no file:line) the
    left pane drew the first snapshot's figures once and kept them beside the live History pane.
    It follows every snapshot."""
    snap = make_snapshot(300)
    routes = tuple(dataclasses.replace(r, location=None, source_label="recorded") for r in snap.routes)
    rt = FakeRuntime(dataclasses.replace(snap, routes=routes))
    app = make_app(rt, blink=False, watch_files=False)
    name = routes[0].name
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        app.open_route(name)
        await wait_until(pilot, lambda: _on(app, name))

        def left() -> str:
            return str(app.screen.query_one("#route-text").render())

        await wait_until(pilot, lambda: "accepting" in left())
        busy = tuple(dataclasses.replace(r, state="full", reason=f"full: {r.routed} ≥ MaxJobs {r.routed}")
                     if r.name == name else r for r in routes)
        rt.update(routes=busy)
        await wait_until(pilot, lambda: "full:" in left())
        assert "full:" in str(app.screen.query_one("#route-history").render())
