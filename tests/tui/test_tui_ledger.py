"""Pilot tests of the ledger screen (issue 29: every idle source job with its verdict, in every
mode): ``l`` / ``:ledger`` lists the entries the engine's ledger gives (the entries of ``routedeck
why``), Enter opens the why-not of the row's job, and the table fits at 80×24 and 132×40. The
recording is the shipped demo one (sample_configs/recordings/README.md) with its config."""

from __future__ import annotations

import shutil

import pytest

from engine.contract.commands import WakeUp
from engine.launch.options import ReplayOptions, WatchOptions
from engine.launch.replay import replay_runtime
from engine.launch.watch import watch_runtime
from engine.router.unrouted import REASONS
from tui.app import make_app

from tests.helpers.demo_fixture import EngineRuntime
from tests.helpers.paths import REPO
from tests.helpers.tui_fixtures import wait_until

pytestmark = pytest.mark.anyio
LOG = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"
CONF = str(REPO / "sample_configs" / "demo" / "condor_config")
SIZES = ((80, 24), (132, 40))


def _name(app) -> str:
    return type(app.screen).__name__


async def _open_ledger(app, pilot, key: str = "l"):
    await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.total_jobs > 0, timeout=60)
    if key == ":":
        app.run_command_line("ledger")
    else:
        await pilot.press(key)
    await wait_until(pilot, lambda: _name(app) == "LedgerScreen" and app.screen.entries is not None, timeout=60)
    return app.screen


def _fits(screen) -> None:
    table = screen.query_one("#ledger")
    assert table.virtual_size.width <= table.scrollable_content_region.width, (
        table.virtual_size.width, table.scrollable_content_region.width)
    assert screen.query_one("#ledger-box").region.right <= screen.app.size.width


async def _enter_opens_why_not(app, pilot, screen) -> None:
    job = screen.selected_job()
    await pilot.press("enter")
    await wait_until(pilot, lambda: _name(app) == "WhyNotScreen" and app.screen.checks is not None, timeout=30)
    assert app.screen.job == job
    await pilot.press("escape")
    await wait_until(pilot, lambda: _name(app) == "LedgerScreen")


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES)
async def test_ledger_in_replay_lists_the_entries_of_routedeck_why(size):
    """In replay with --config: the rows are the ledger of ``routedeck why`` at the player's moment
    (engine.feeds.replay.why.replay_ledger, one computation), in queue order, with the route a
    matched job takes and the hold countdown where one is predicted."""
    from engine.feeds.replay.why import replay_ledger  # noqa: PLC0415 - this test only
    from engine.router.loader import load_config_and_table  # noqa: PLC0415 - this test only

    runtime = replay_runtime(ReplayOptions(log=str(LOG), config=(CONF,), tz="UTC", at="+1h"))
    app = make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=size) as pilot:
        screen = await _open_ledger(app, pilot, ":")
        loaded = load_config_and_table([CONF])
        want = runtime.query(lambda feed: replay_ledger(feed.player, loaded.table, loaded.config.get))
        assert [(e.job, e.verdict) for e in screen.entries] == [(e.job, e.verdict) for e in want]
        assert want and {e.verdict for e in want} <= set(REASONS)
        table = screen.query_one("#ledger")
        assert table.row_count == len(want)
        matched = next((i for i, e in enumerate(want) if e.verdict == "matched"), None)
        if matched is not None:
            assert str(table.get_row_at(matched)[2]).startswith("→ ")
        held = next((i for i, e in enumerate(want) if e.hold), None)
        if held is not None:
            assert "held in" in str(table.get_row_at(held)[3]) or "removed in" in str(table.get_row_at(held)[3])
        _fits(screen)
        await _enter_opens_why_not(app, pilot, screen)


@pytest.mark.slow
async def test_ledger_in_replay_without_config_says_how_to_get_one():
    runtime = replay_runtime(ReplayOptions(log=str(LOG), tz="UTC", at="+1h"))
    app = make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.total_jobs > 0, timeout=60)
        await pilot.press("l")
        await wait_until(pilot, lambda: _name(app) == "LedgerScreen")
        head = app.screen.query_one("#ledger-summary")
        await wait_until(pilot, lambda: "--config" in str(head.render()))


@pytest.mark.slow
async def test_ledger_in_watch_lists_the_followed_queue(tmp_path):
    """In watch: the ledger over the followed queue (a copy of the recording), the same entries as
    the feed's own (WatchEngine.ledger, the computation of its why-not)."""
    log = tmp_path / "job_queue.log"
    shutil.copy(LOG, log)
    runtime = watch_runtime(WatchOptions(queue_log=str(log), config=(CONF,), tz="UTC", slow_poll=60.0))
    app = make_app(runtime, mode="watch", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(80, 24)) as pilot:
        runtime.send(WakeUp())
        screen = await _open_ledger(app, pilot)
        now = app.snapshot.time
        want = runtime.query(lambda feed: feed.ledger(now))
        assert screen.entries and [(e.job, e.verdict) for e in screen.entries] == [(e.job, e.verdict) for e in want]
        _fits(screen)
        await _enter_opens_why_not(app, pilot, screen)


async def test_ledger_in_the_demo():
    """In the demo: the embedded router's idle source jobs judged by the same pipeline
    (engine.router.unrouted.router_ledger), a matched job's route among the table's. The demo is
    the real engine run for a virtual hour and frozen (tests.helpers.demo_fixture, built once per
    test process); the live runtime's query across its thread is the replay and watch tests'."""
    runtime = EngineRuntime()
    assert any(j.status == 1 and j.kind == "plain" for j in runtime.latest().jobs)  # idle source jobs to judge
    app = make_app(runtime, mode="demo", blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        screen = await _open_ledger(app, pilot)
        assert screen.entries and {e.verdict for e in screen.entries} <= set(REASONS)
        assert [(e.job, e.verdict) for e in screen.entries] == [
            (e.job, e.verdict) for e in runtime.feed.ledger(app.snapshot.time)]
        routes = {r.name for r in app.snapshot.routes}
        for e in screen.entries:
            assert all(r["route"] in routes for r in e.routes)
        _fits(screen)
        await _enter_opens_why_not(app, pilot, screen)


def test_the_summary_names_a_route_no_job_seen_reaches():
    """Below the counts, the shadowing the route texts cannot prove, over the jobs seen
    (engine.views.ledger.unreached): every job that matches Multi matches Small first."""
    from engine.router.unrouted import Entry  # noqa: PLC0415 - this test only
    from tui.screens.ledger import summary  # noqa: PLC0415 - this test only

    both = ({"route": "Small", "verdict": "matched", "detail": ""}, {"route": "Multi", "verdict": "matched", "detail": ""})
    entries = [Entry("1.0", "matched", both, None, "route Small"), Entry("2.0", "matched", both, None, "route Small")]
    assert "route Multi is reached by none of the 2 jobs seen that match it: they match Small first" in summary(
        entries).plain
    assert "⚠" not in summary(entries[:1] + [Entry("3.0", "matched", both[1:], None, "route Multi")]).plain
