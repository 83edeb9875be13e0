"""The chain screen (``x`` on a job, ``:chain``; issue 29) on the real demo engine's queue
(tests/helpers/demo_fixture: the demo run for a virtual hour, its schedd playing the
gridmanager): a routed source job's copy and grid job, every routed job with totals, and Esc back."""

from __future__ import annotations

import pytest

from engine.views.chain import chains
from tui.app import make_app

from tests.helpers.demo_fixture import EngineRuntime
from tests.helpers.tui_fixtures import wait_until

pytestmark = pytest.mark.anyio


def _chain_text(app) -> str:
    return str(app.screen.query_one("#chain").render())


async def test_x_on_a_routed_job_shows_its_copy_and_grid_job():
    runtime = EngineRuntime()
    engine = runtime.feed
    ads = {job.key: dict(job.attrs) for job in engine.queue}
    link = next(x for x in chains(ads, engine.now).links if x.grid_job_id)
    app = make_app(runtime, blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        app.run_command_line(f"jobs {link.source}")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "JobsScreen" and bool(app.screen.query("JobTable"))
                         and app.screen.table.selected is not None
                         and app.screen.table.selected.job == link.source)
        await pilot.press("x")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ChainScreen" and app.screen.found is not None)
        text = _chain_text(app)
        assert link.source in text and link.copy in text and link.grid_job_id in text
        assert f"batch id {link.batch_id}" in text and f"route {link.route}" in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "JobsScreen")
        app.run_command_line("chain")  # every routed job, with totals that count a job once
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ChainScreen" and app.screen.found is not None)
        totals = chains(ads, app.screen.found and engine.now).totals
        assert f"{totals['sources']} source jobs · {totals['copies']} routed copies" in _chain_text(app)
