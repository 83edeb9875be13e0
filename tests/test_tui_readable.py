"""The dashboard's data made readable (issue 11, items 9–14), with Pilot on the real engine's
data (``demo_fixture``: the demo run for a virtual hour)."""

from __future__ import annotations

import pytest

from tui.app import make_app

from demo_fixture import EngineRuntime, demo_engine
from tui_fixtures import wait_until

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _app(runtime=None):
    return make_app(runtime or EngineRuntime(), blink=False, watch_files=False)


async def _ready(pilot):
    await wait_until(pilot, lambda: pilot.app.snapshot is not None and bool(pilot.app.screen.query("#routes")))
    await pilot.pause()


def _text(pilot) -> str:
    return str(pilot.app.screen.query_one("#whynot").render())


class TestWhyNot:
    async def test_board_w_picks_an_idle_candidate_of_the_selected_route(self):
        """Item 13. htcondor.md §1.4: a candidate is an idle job the router does not track that
        passes the umbrella; ``w`` on the board must ask about such a job for the selected route
        (it used to ask about the first idle row, job 2.0, whatever the route)."""
        engine = demo_engine()
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            board = app.screen
            picked = {}
            for _ in range(len(app.snapshot.routes)):
                route = board.selected_name()
                await pilot.press("w")
                await wait_until(pilot, lambda: type(app.screen).__name__ == "WhyNotScreen"
                                 and app.screen.verdict is not None)
                job = app.screen.job
                picked[route] = job
                assert job not in engine.router.jobs  # not tracked: a real question
                ad = engine.queue.get(job)
                assert ad.get("JobStatus") == "1"
                route_obj = next(r for r in engine.table.routes if r.name == route)
                if route_obj.matches(ad.classad(), engine.now):
                    assert f"that {route}'s requirements match" in app.screen.note
                # the fixed umbrella clauses pass (idle, not managed, not a routed copy …): the
                # answer is about routes, not about a job the router could never take
                failed = [c.label for c in app.screen.checks if c.ok is False]
                assert not [f for f in failed if f.startswith("umbrella:") and "requirements" not in f], failed
                await pilot.press("escape")
                await wait_until(pilot, lambda: app.screen is board)
                await pilot.press("down")
            # different routes raise different questions (CMS_T2's and Overflow's waiting jobs)
            assert len(set(picked.values())) > 1, picked

    async def test_routed_job_says_where_and_as_which_copy(self):
        """Item 13. htcondor.md §1.4: a job the router tracks is not a candidate again — why-not
        says it is routed, on which route and as which copy, not a failed check."""
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            src = next(r for r in app.snapshot.jobs if r.kind == "source" and r.routed_to)
            app.open_why_not(src.job)
            await wait_until(pilot, lambda: getattr(app.screen, "verdict", None) is not None)
            text = _text(pilot)
            assert f"{src.job} is routed" in text
            assert f"as routed copy {src.routed_to}" in text and src.route in text
            assert "✘" not in text and "not already managed" not in text

    async def test_routed_copy_names_its_source(self):
        """Item 13. A routed copy carries ``RoutedFromJobId`` and ``RoutedBy`` (htcondor.md §1.6);
        asked about, it is named as the copy of its source job."""
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            src = next(r for r in app.snapshot.jobs if r.kind == "source" and r.routed_to)
            app.open_why_not(src.routed_to)
            await wait_until(pilot, lambda: getattr(app.screen, "verdict", None) is not None)
            assert f"routed copy of {src.job}" in _text(pilot)
