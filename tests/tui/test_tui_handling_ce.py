"""Pilot tests of issue 29's handling list (the dashboard tried as a new CE admin would, at 80×24
and 132×40): each reproduction is a test that failed before the fix. The rest of the list is
tested where its screen is (help and toasts: test_tui_app.py; export: test_tui_readable.py; the
replay bar and bookmarks: test_tui_replay.py; h/o in the footer: test_tui_footer.py; hooks and
slots fit: test_tui_execute.py; held cron next run: test_tui_screens.py; route detail:
test_tui_route_screens.py)."""

from __future__ import annotations

import dataclasses

import pytest

from engine.contract import snapshot as S
from engine.contract.codes import JobStatus
from tests.helpers.handling import NARROW, _app, _name, _open_prompt, _type
from tests.helpers.tui_fixtures import T0, FakeRuntime, make_snapshot, wait_until

pytestmark = pytest.mark.anyio


async def test_tab_again_cycles_through_the_candidates():
    """Issue 29's handling list: Tab on the ``:`` line completed the common prefix once and then did
    nothing. As in zsh's menu completion, Tab again cycles through the candidates and back to what
    was typed; typing in between starts afresh."""
    app = _app()
    async with app.run_test(size=NARROW) as pilot:
        box = await _open_prompt(app, pilot)
        await _type(pilot, "w")
        seen = []
        for _ in range(5):
            await pilot.press("tab")
            seen.append(box.value)
        assert seen == ["wh", "why", "where", "whynot", "wh"]
        await _type(pilot, "e")
        await pilot.press("tab")
        assert box.value == "where "  # typed: one candidate left


async def test_why_offers_the_jobs_waiting_for_a_route_first():
    """``:why ⇥`` offered crondor jobs first (issue 29's handling list): it completes to idle jobs
    the router may still take before cron jobs (waiting for their DeferralTime), routed copies and
    jobs in other states."""
    base = make_snapshot(0)
    row = S.JobRow(job="1.0", status=JobStatus.IDLE, owner="alice", route=None, kind="plain", routed_to=None,
                   routed_from=None, qdate=T0, entered_status=T0)
    rows = (dataclasses.replace(row, job="1.0", deferral_time=T0 + 60),  # crondor: waits for its time
            dataclasses.replace(row, job="2.0", status=JobStatus.RUNNING),
            dataclasses.replace(row, job="3.0", kind="routed", routed_from="9.0"),
            dataclasses.replace(row, job="4.0"),
            dataclasses.replace(row, job="9.0", kind="source", routed_to="3.0"),
            dataclasses.replace(row, job="5.0"))
    cron = (dataclasses.replace(base.cron_jobs[0], job="6.0"),)  # in replay a cron row may have no DeferralTime
    rows = rows + (dataclasses.replace(row, job="6.0"),)
    app = _app(FakeRuntime(dataclasses.replace(base, jobs=rows, total_jobs=len(rows), jobs_version=7, cron_jobs=cron)))
    async with app.run_test(size=NARROW) as pilot:
        box = await _open_prompt(app, pilot)
        await _type(pilot, "why ")
        await pilot.pause()
        hint = str(app.screen.query_one("#command-hint").render())
        assert hint.index("4.0") < hint.index("5.0") < hint.index("1.0")
        assert hint.index("5.0") < hint.index("3.0") and hint.index("5.0") < hint.index("9.0")
        assert hint.index("5.0") < hint.index("6.0")
        await pilot.press("tab")
        assert box.value == "why "  # several candidates, no common prefix beyond ""
        await pilot.press("tab")
        assert box.value == "why 4.0"


async def test_home_and_end_go_to_the_first_and_last_row_in_every_table():
    """Issue 29's handling list: End/Home moved columns on the board (DataTable's default) but rows
    in Jobs. One rule (keymap.ROW_ENDS): Home/g and End/G are the first and last row; < and >
    move columns."""
    app = _app()
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        board = app.screen.query_one("#routes")
        board.focus()
        await pilot.pause()
        scroll_x = board.scroll_x
        await pilot.press("end")
        assert board.cursor_row == board.row_count - 1 > 0 and board.scroll_x == scroll_x
        await pilot.press("home")
        assert board.cursor_row == 0
        await pilot.press("G")
        assert board.cursor_row == board.row_count - 1
        await pilot.press("c")
        await wait_until(pilot, lambda: _name(app) == "CronScreen")
        cron = app.screen.query_one("#cron")
        cron.focus()
        await pilot.press("end")
        assert cron.cursor_row == cron.row_count - 1 > 0
        await pilot.press("home")
        assert cron.cursor_row == 0


async def test_the_events_pane_keeps_throttles_past_thousands_of_job_events():
    """Issue 29's handling list: the board's Events pane lost throttle and config lines after a
    virtual hour or two, because the app kept one 2,000-entry log shared with per-job events. The
    app keeps them in the engine's two rings (engine.views.rows.EventRing), as the snapshot does."""
    rt = FakeRuntime(make_snapshot(50, events=(
        S.Event(1, T0, "route-throttled", "route BlackHole throttled: 56 failures in 605 s", "warning", "BlackHole"),
        S.Event(2, T0, "config-reloaded", "routing table reloaded: 5 routes"))))
    app = _app(rt)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        seq = 2
        for batch in range(12):  # 3,600 job events, 300 a snapshot
            events = tuple(S.Event(seq + i, T0 + batch, "job-routed", f"{seq + i}.0 routed to CMS_T2", job=f"{seq + i}.0")
                           for i in range(1, 301))
            seq += 300
            new = rt.update(events=events, time=T0 + batch)
            await wait_until(pilot, lambda new=new: app.snapshot.seq == new.seq)
        await pilot.pause()
        pane = str(app.screen.query_one("#events").render())
        assert "BlackHole throttled" in pane and "routing table reloaded" in pane
        assert [e.seq for e in app.event_log][-1] == seq


async def test_esc_from_why_not_and_trace_opened_on_a_job_ad_returns_to_the_ad():
    """Issue 29's handling list: ``w`` (or ``t``) on a job's ad closed the ad first, so Esc from
    the why-not landed on the jobs table. They open on top of the ad; Esc comes back to it."""
    app = _app()
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("j")
        await wait_until(pilot, lambda: _name(app) == "JobsScreen" and app.screen.table.selected is not None)
        await pilot.press("enter")
        await wait_until(pilot, lambda: _name(app) == "AdScreen")
        for key, screen in (("w", "WhyNotScreen"), ("t", "TraceScreen")):
            await pilot.press(key)
            await wait_until(pilot, lambda screen=screen: _name(app) == screen)
            await pilot.press("escape")
            await wait_until(pilot, lambda: _name(app) == "AdScreen")
        await pilot.press("escape")
        await wait_until(pilot, lambda: _name(app) == "JobsScreen")


async def test_w_on_the_board_picks_an_idle_job_the_router_does_not_manage():
    """Issue 29's handling list: ``w`` on the board could pick a routed job. Without a router to
    ask (a fake runtime), the pick from the rows is an idle plain job: not a routed copy, and not
    a source the router manages (``Managed = "External"`` without RoutedToJobId yet: kind
    "source")."""
    base = make_snapshot(0)
    row = S.JobRow(job="1.0", status=JobStatus.IDLE, owner="alice", route=None, kind="plain", routed_to=None,
                   routed_from=None, qdate=T0, entered_status=T0)
    rows = (dataclasses.replace(row, job="1.0", kind="source"),  # managed, its copy not in the queue yet
            dataclasses.replace(row, job="2.0", kind="routed", routed_from="1.0"),
            dataclasses.replace(row, job="3.0"))
    rt = FakeRuntime(dataclasses.replace(base, jobs=rows, total_jobs=len(rows), jobs_version=3))
    app = _app(rt)
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        app.screen.query_one("#routes").focus()
        await pilot.press("w")
        await wait_until(pilot, lambda: _name(app) == "WhyNotScreen")
        assert app.screen.job == "3.0"


@pytest.mark.slow
async def test_w_on_the_replay_board_picks_a_job_of_the_ledger():
    """``w`` on the board in replay (no router to ask) picks from the ledger (the entries of
    ``routedeck why``): an idle source job the router may take, not one its umbrella or the
    source constraint leaves out (the first idle row of the demo recording at +1h is one)."""
    from engine.launch.options import ReplayOptions  # noqa: PLC0415 - this test only
    from engine.launch.replay import replay_runtime  # noqa: PLC0415 - this test only
    from tests.helpers.paths import REPO  # noqa: PLC0415 - this test only
    from tui.app import make_app  # noqa: PLC0415 - this test only

    conf = str(REPO / "sample_configs" / "demo" / "condor_config")
    runtime = replay_runtime(ReplayOptions(log=str(REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"),
                                           config=(conf,), tz="UTC", at="+1h"))
    app = make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.total_jobs > 0, timeout=60)
        now = app.snapshot.time
        entries = runtime.query(lambda feed: feed.ledger(now))
        verdict = {e.job: e.verdict for e in entries}
        app.screen.query_one("#routes").focus()
        await pilot.press("w")
        await wait_until(pilot, lambda: _name(app) == "WhyNotScreen", timeout=30)
        assert verdict.get(app.screen.job) not in (None, "not_candidate")


@pytest.mark.slow
async def test_route_detail_in_replay_shows_the_config_text_and_e_opens_its_line():
    """Issue 29's handling list: in replay with ``--config`` route detail showed no config text and
    ``e`` opened the config at line 1. The board's routes carry their definition's place
    (engine.views.figures.route_locations): the detail shows the definition, ``e`` opens the
    read-only editor on its line."""
    from engine.launch.options import ReplayOptions  # noqa: PLC0415 - this test only
    from engine.launch.replay import replay_runtime  # noqa: PLC0415 - this test only
    from tests.helpers.paths import REPO  # noqa: PLC0415 - this test only
    from tui.app import make_app  # noqa: PLC0415 - this test only

    conf = str(REPO / "sample_configs" / "demo" / "condor_config")
    runtime = replay_runtime(ReplayOptions(log=str(REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"),
                                           config=(conf,), tz="UTC", at="+1h"))
    app = make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.routes, timeout=60)
        name = app.snapshot.routes[0].name
        lines = open(conf, encoding="utf-8").read().splitlines()
        line = next(i for i, text in enumerate(lines, 1) if text.startswith(f"JOB_ROUTER_ROUTE_{name} "))
        app.open_route(name)
        await wait_until(pilot, lambda: _name(app) == "RouteDetailScreen")
        box = app.screen.query_one("#route-text")
        shown = lambda: getattr(box.content, "code", str(box.content))  # noqa: E731 - the Syntax's text
        await wait_until(pilot, lambda: f"JOB_ROUTER_ROUTE_{name}" in shown(), timeout=30)
        await pilot.press("e")
        await wait_until(pilot, lambda: _name(app) == "EditorScreen")
        assert (app.screen.path, app.screen.line) == (conf, line)
