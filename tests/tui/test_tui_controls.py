"""The TUI offers only the controls the feed declares (``Snapshot.controls``, engine/contract/snapshot.py;
issue 10 item 3: "keys that cannot apply in a mode are not offered there").

watch offers none, replay pause/speed/step/seek, the demo pause/speed/step/jobs/routes. A key of a
control the feed lacks is not in the footer, and typed anyway it is refused with a toast; the
``:`` commands and palette entries that need it are refused / not listed the same way.
"""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey
import dataclasses

from tui.app import make_app

from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until
from engine.feeds.demo import Simulation
from engine.feeds.replay.feed import ReplayFeed
from engine.feeds.watch.feed import WatchFeed
from tests.helpers.tui_fixtures import make_cron
from tests.helpers.tui_fixtures import snapshot_for_conf, write_routes_conf
from tests.helpers.toasts import told

pytestmark = pytest.mark.anyio

WATCH: frozenset[str] = frozenset()
REPLAY = frozenset({"pause", "speed", "step", "seek"})
DEMO = frozenset({"pause", "speed", "step", "jobs", "routes"})


def _app(controls, mode="watch", readonly=False):
    rt = FakeRuntime(make_snapshot(50, controls=controls, mode=mode))
    return rt, make_app(rt, mode=mode, readonly=readonly, blink=False, watch_files=False)


def _footer(app) -> dict[str, str]:
    return {k: b.binding.description for k, b in app.screen.active_bindings.items()
            if b.binding.show and b.enabled}


def test_feeds_declare_what_the_tests_assume():
    assert Simulation.controls == DEMO
    assert WatchFeed.controls == WATCH
    assert ReplayFeed.controls == REPLAY


async def test_watch_hides_pause_and_refuses_space_with_a_toast():
    rt, app = _app(WATCH)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.pause()
        assert "Pause/Play" not in _footer(app).values()
        await pilot.press("space", "plus")
        await wait_until(pilot, lambda: len(told(app)) >= 2)
        assert rt.sent == []
        text = " ".join(told(app))
        assert "pause is not available in watch mode" in text
        assert "speed change is not available in watch mode" in text


async def test_watch_jobs_screen_hides_and_refuses_hold_release_remove():
    rt, app = _app(WATCH)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("j")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "JobsScreen")
        await pilot.pause()
        footer = _footer(app)
        assert not {"Hold", "Release", "Remove"} & set(footer.values())
        await pilot.press("X")
        await wait_until(pilot, lambda: any("job commands" in t for t in told(app)))
        assert type(app.screen).__name__ == "JobsScreen"  # no confirmation opened
        assert rt.sent == []


async def test_replay_keeps_pause_but_not_job_commands():
    rt, app = _app(REPLAY, mode="replay", readonly=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.pause()
        assert "Pause/Play" in _footer(app).values()
        await pilot.press("j")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "JobsScreen")
        await pilot.pause()
        assert not {"Hold", "Release", "Remove"} & set(_footer(app).values())


async def test_edit_is_view_where_the_feed_cannot_apply_routes():
    """Not --readonly, but the feed takes no ApplyRoutes: ``e`` views, it does not edit."""
    rt, app = _app(REPLAY, mode="replay", readonly=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.pause()
        footer = _footer(app)
        assert footer.get("e") == "View config" and "Edit" not in footer.values()


async def test_commands_that_need_a_control_are_refused_and_not_in_the_palette():
    rt, app = _app(WATCH)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        app.run_command_line("pause")
        app.run_command_line("hold 3.0")
        app.run_command_line("seek +60")
        await pilot.pause()
        assert rt.sent == []
        text = " ".join(told(app))
        assert "pause is not available" in text and "job commands" in text and "seeking" in text
        assert "Confirm" not in type(app.screen).__name__  # :hold asked nothing
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert ":jobs" in titles and ":why JOB" in titles
        assert not [t for t in titles if t.split()[0] in (":pause", ":resume", ":speed", ":hold", ":rm", ":seek")]


async def test_demo_offers_everything_it_declares():
    rt, app = _app(DEMO, mode="demo")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.pause()
        assert "Pause/Play" in _footer(app).values() and _footer(app).get("e") == "Edit"
        await pilot.press("j")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "JobsScreen")
        await pilot.pause()
        assert {"Hold", "Release", "Remove"} <= set(_footer(app).values())


# -- the footer's essential keys at 80×24 (issue 11 item 9) -----------------------------------------

def _visible_footer_keys(app) -> dict[str, tuple[int, int]]:
    """action → (x, right edge) of each footer key actually laid out on screen."""
    out = {}
    for key in app.screen.query(FooterKey):
        r = key.region
        if r.width > 0:
            out[key.action] = (r.x, r.right)
    return out


@pytest.mark.parametrize("mode, controls", [("demo", DEMO), ("watch", WATCH), ("replay", REPLAY)])
async def test_essential_keys_stay_visible_at_80x24_on_every_main_screen(mode, controls):
    rt, app = _app(controls, mode=mode, readonly=mode != "demo")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        for key, screen in (("b", "RoutesScreen"), ("j", "JobsScreen"), ("c", "CronScreen")):
            await pilot.press(key)
            await wait_until(pilot, lambda: type(app.screen).__name__.endswith(screen))
            await pilot.pause()
            await pilot.pause()
            keys = _visible_footer_keys(app)
            for action in ("quit", "help", "command_line"):
                assert action in keys, (mode, screen, sorted(keys))
                assert keys[action][1] <= 80, (mode, screen, action, keys[action])
            assert len(keys) >= 5, (mode, screen, keys)  # and some of the screen's own keys


# -- crondor: missed-run holds told apart from invalid-schedule holds (issue 10 item 3) -----------

async def test_cron_counts_only_missed_deferral_holds_as_missed_runs():
    """HoldReasonCode 20 (MissedDeferredExecutionTime, htcondor.md §2.5) is a missed run; 25
    (InvalidCronSettings, htcondor.md §2.4) is a bad schedule, counted apart; a user hold is neither."""
    rows = list(make_cron())
    base = next(c for c in rows if c.status == 5)
    rows += [dataclasses.replace(base, job="17.0", hold_code=25, state="invalid",
                                 hold_reason="Invalid cron schedule parameters: cron_minute"),
             dataclasses.replace(base, job="18.0", hold_code=1, hold_reason="via condor_hold")]
    rt = FakeRuntime(make_snapshot(50, cron_jobs=tuple(rows)))
    app = make_app(rt, blink=False, watch_files=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("c")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CronScreen")
        await pilot.pause()
        detail = str(app.screen.query_one("#cron-detail").render())
        assert "held: 1 missed run, 1 invalid schedule, 1 other" in detail


# -- route detail: no re-evaluation window (issue 10 item 3) --------------------------------------

@pytest.mark.parametrize("reeval", [None, 0.0, "past"])
async def test_route_detail_says_there_is_no_window_instead_of_a_nonsense_time(reeval):
    """htcondor.md §1.5: the throttle window is re-evaluated at window start + 600 s; a row without
    a window (0/None) or a window already over must not read "(in -…)"."""
    snap = make_snapshot(50)
    value = snap.time - 3600 if reeval == "past" else reeval
    routes = tuple(dataclasses.replace(r, next_reevaluation=value) for r in snap.routes)
    app = make_app(FakeRuntime(dataclasses.replace(snap, routes=routes)), blink=False, watch_files=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.pause()
        await pilot.pause()
        detail = str(app.screen.query_one("#route-detail").render())
        assert "(in -" not in detail and "could not draw" not in " ".join(told(app))
        if reeval == "past":
            assert "re-evaluation due" in detail
        else:
            assert "no re-evaluation window" in detail and "re-evaluated at" not in detail


# -- the route editor uses the width at 80×24 (issue 11 item 9) ------------------------------------

async def test_editor_uses_the_width_at_80x24(tmp_path):
    conf = tmp_path / "routes.conf"
    write_routes_conf(conf)
    app = make_app(FakeRuntime(snapshot_for_conf(conf)), blink=False, watch_files=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("e")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "EditorScreen" and app.screen.lint is not None)
        await pilot.pause()
        editor = app.screen.query_one("#editor").region
        lint = app.screen.query_one("#lint").region
        assert editor.width >= 76, editor
        assert editor.height >= 8, editor
        assert lint.width > 0 and lint.height >= 3, lint  # lint and what-if still on screen


async def test_typing_a_space_in_the_command_line_is_not_refused_as_pause():
    rt, app = _app(WATCH)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("colon", "s", "o", "r", "t", "space", "o")
        await pilot.pause()
        assert not [t for t in told(app) if "not available" in t]
        assert app.screen.query_one("Input").value == "sort o"
