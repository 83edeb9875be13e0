"""Pilot tests of the app shell: the engine bridge, replaceable snapshots, engine crash handling,
toasts from the events ring, the ``:`` command line, the palette, help and ``--readonly``.

Assertions are on the app's state and on the messages it posted (``message_hook``), as in
harlequin's tests; the engine is the fake runtime of ``tui_fixtures``.
"""

from __future__ import annotations

import dataclasses

import pytest
import gc
import hashlib

from engine.contract import commands as C
from engine.contract.feed import FeedBase
from engine.contract import snapshot as S
from tui.app import make_app
from tui.shell.messages import CommandSent, EngineCrashed, EventsSeen, SnapshotArrived
from tui.commands import keymap
from tui.commands.palette import COMMANDS

from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_prewarmed, wait_until
from tui.screens.help import help_sections
from tui.screens.jobs import JobsScreen
from tui.screens.routes import RoutesScreen
from tests.helpers.tui_fixtures import snapshot_for_conf, write_routes_conf
from tests.helpers.toasts import told
from engine.clock import VirtualClock
from engine.runtime import Runtime
from tui.shell import prewarm as app_module

SIZE = (120, 36)
pytestmark = pytest.mark.anyio  # anyio's pytest plugin (installed with watchfiles) runs the async tests


async def _cmd(pilot, text: str) -> None:
    """``:text`` Enter, with the text set at once (Pilot spends ~60 ms per typed key)."""
    await pilot.press("colon")
    await pilot.pause()
    pilot.app.screen.query_one("#command-input").value = text
    await pilot.press("enter")


def _app(runtime=None, **kw):
    return make_app(runtime or FakeRuntime(make_snapshot(500)), blink=False, **kw)


async def test_bridge_delivers_snapshots_and_starts_and_stops_the_runtime():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    seen = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        assert rt.started and app.snapshot.seq == 1
        rt.update(speed=120.0)
        await wait_until(pilot, lambda: app.snapshot.seq == 2)
        assert app.snapshot.speed == 120.0
        assert "×120" in str(app.screen.query_one("#status-header").render())
    assert rt.stopped
    assert any(isinstance(m, SnapshotArrived) for m in seen)


def test_snapshot_message_replaces_an_older_one():
    a, b = SnapshotArrived(make_snapshot(10)), SnapshotArrived(make_snapshot(10, seq=2))
    assert b.can_replace(a)
    assert not b.can_replace(EngineCrashed("x"))


async def test_stale_snapshot_is_ignored():
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        app.post_message(SnapshotArrived(make_snapshot(500, seq=5, speed=7.0)))
        await wait_until(pilot, lambda: app.snapshot.seq == 5)
        app.post_message(SnapshotArrived(make_snapshot(500, seq=4, speed=9.0)))
        await pilot.pause(0.1)
        assert app.snapshot.seq == 5 and app.snapshot.speed == 7.0


async def test_engine_start_failure_shows_banner_and_app_keeps_running():
    rt = FakeRuntime(make_snapshot(500), fail_on_start="port already in use")
    app = _app(rt)
    seen = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await wait_until(pilot, lambda: app.engine_error is not None)
        assert "port already in use" in app.engine_error
        banner = app.screen.query_one("#engine-banner")
        assert banner.has_class("-shown") and "port already in use" in str(banner.render())
        assert [m.error for m in seen if isinstance(m, EngineCrashed)] == [app.engine_error]
        await pilot.press("j")  # still navigable
        await pilot.pause()
        assert type(app.screen).__name__ == "JobsScreen"


async def test_engine_crash_keeps_the_last_snapshot_and_refuses_commands():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    seen = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        good = app.snapshot
        rt.crash("ZeroDivisionError in router cycle")
        await wait_until(pilot, lambda: app.engine_error is not None)
        assert app.snapshot is good  # figures stay as they were
        assert "ZeroDivisionError" in app.engine_error
        assert sum(isinstance(m, EngineCrashed) for m in seen) == 1
        await pilot.press("space")
        await pilot.pause()
        assert rt.sent == []  # nothing sent to a dead engine
        assert app.screen.query_one("#engine-banner").has_class("-shown")


async def test_events_retold_after_a_replay_jump_are_logged_not_toasted():
    """After a replay jump the feed re-tells the recording's events before the new moment
    (``Snapshot.history_upto``): they reach the events log but are neither toasted nor counted as
    missed; an event after them is toasted as usual."""
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        t = rt.latest().time
        old = (S.Event(60, t, "route-throttled", "BlackHole throttled: 56 failures in 605 s", level="warning"),
               S.Event(61, t, "job-routed", "3.0 routed to CMS_T2 as 9.0"))
        rt.update(events=old, history_upto=61)
        await wait_until(pilot, lambda: app.last_event_seq == 61)
        assert not told(app) and [e.seq for e in app.event_log][-2:] == [60, 61]
        rt.update(events=old + (S.Event(62, t, "route-unthrottled", "BlackHole: throttle removed"),), history_upto=61)
        await wait_until(pilot, lambda: app.last_event_seq == 62)
        assert told(app) == ["BlackHole: throttle removed"]


async def test_new_events_become_toasts_and_a_gap_is_reported():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    seen = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        assert not told(app)  # events older than the first snapshot are not toasted
        snap = rt.latest()
        # the ring moved on by more than it holds: 42 and 43 fell out before the UI saw them
        new = (S.Event(44, snap.time, "route-unthrottled", "BlackHole released: rate 0.010 < 0.030"),
               S.Event(45, snap.time, "config-rejected", "routes.conf:7: syntax error", level="error"))
        rt.update(events=new)
        await wait_until(pilot, lambda: app.last_event_seq == 45)
        texts = told(app)
        assert "BlackHole released: rate 0.010 < 0.030" in texts
        assert "routes.conf:7: syntax error" in texts
        assert any("2 engine events were not shown" in t for t in texts)
        ev = [m for m in seen if isinstance(m, EventsSeen)][-1]
        assert ev.kinds == ("route-unthrottled", "config-rejected") and ev.missed == 2


async def test_keys_pause_and_speed_send_commands():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    seen = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("space")
        await wait_until(pilot, lambda: app.snapshot.paused)
        await pilot.press("space", "plus")
        await wait_until(pilot, lambda: app.snapshot.speed == 120.0)
        assert rt.sent == [C.Pause(), C.Resume(), C.SetSpeed(120.0)]
        assert [m.command for m in seen if isinstance(m, CommandSent)] == rt.sent
        assert "engine paused" not in str(app.screen.query_one("#status-header").render())


@pytest.mark.slow
async def test_command_line_runs_commands_and_reports_bad_ones():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("colon", *"speed 60", "enter")  # typed key by key, as a user would
        await _cmd(pilot, "jobs alice")
        await pilot.pause()
        assert type(app.screen).__name__ == "JobsScreen"
        assert app.screen.table.model.text == "alice"
        await _cmd(pilot, "cron")
        await pilot.pause()
        assert type(app.screen).__name__ == "CronScreen"
        await _cmd(pilot, "speed fast")
        await _cmd(pilot, "frobnicate")
        await _cmd(pilot, "routes")
        await pilot.pause()
        assert type(app.screen).__name__ == "RoutesScreen"
        assert rt.sent == [C.SetSpeed(60.0)]
        texts = told(app)
        assert any("speed must be a number" in t for t in texts)
        assert any("unknown command 'frobnicate'" in t for t in texts)


async def test_palette_offers_routedeck_commands():
    app = _app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for c in COMMANDS:
            assert any(t.startswith(f":{c.name}") for t in titles), c.name
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert type(app.screen).__name__ == "CommandPalette"
        await pilot.press(*":cron")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "CronScreen")


async def test_help_lists_the_screens_keys_and_the_modes_commands():
    """``?`` lists the keys of the screen it is opened on, the app's, and the ``:`` commands the
    mode offers; not every screen's keys at once, nor commands the mode refuses (issue 29)."""
    app = _app(FakeRuntime(dataclasses.replace(make_snapshot(500), controls=frozenset({"pause", "speed"}))))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("question_mark")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        sections = dict(help_sections(app))
        listed = {what for rows in sections.values() for _, what in rows}
        for b in keymap.APP + RoutesScreen.BINDINGS:  # not the replay keys: a demo
            assert b.description in listed, b
        assert "Routes board (this screen)" in sections and "Routes board columns" in sections
        assert "Jobs (this screen)" not in sections and "Jobs columns" not in sections
        offered = {c.help for c in COMMANDS if app.offers(c.control)}
        assert {what for _, what in sections[": commands"]} == offered
        assert next(c.help for c in COMMANDS if c.name == "seek") not in listed  # a replay command
        await pilot.press("escape", "j")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "JobsScreen")
        await pilot.press("question_mark")
        await pilot.pause()
        sections = dict(help_sections(app))
        listed = {what for rows in sections.values() for _, what in rows}
        for b in JobsScreen.BINDINGS:
            assert b.description in listed, b
        assert "Jobs (this screen)" in sections and "Routes board (this screen)" not in sections
        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ == "JobsScreen"


async def test_readonly_refuses_job_and_table_changes():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt, readonly=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await _cmd(pilot, "hold 100.0")
        await _cmd(pilot, "undo")
        await _cmd(pilot, "pause")
        await pilot.pause()
        assert rt.sent == [C.Pause()]  # viewing controls still work
        assert any("read-only" in t for t in told(app))
        assert "read-only" in str(app.screen.query_one("#status-header").render())


@pytest.mark.slow
async def test_hold_release_remove_commands_name_the_job():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        for text in ("hold 100", "release 100.0", "rm 101.0"):
            await _cmd(pilot, text)
            await wait_until(pilot, lambda: type(app.screen).__name__ == "Confirm")
            await pilot.press("y")
            await pilot.pause()
        assert rt.sent == [C.HoldJob("100.0"), C.ReleaseJob("100.0"), C.RemoveJob("101.0")]


async def test_narrow_terminal_header_fits():
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        text = str(app.screen.query_one("#status-header").render())
        assert "engine running" in text and len(text.rstrip()) <= 80


async def test_config_file_changed_outside_is_reloaded_but_own_writes_are_not(tmp_path):
    conf = tmp_path / "routes.conf"
    text = write_routes_conf(conf)
    rt = FakeRuntime(snapshot_for_conf(conf))
    app = _app(rt)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app._watching)
        await pilot.pause(0.3)  # let the watcher start
        conf.write_text(text.replace("MaxJobs = 500", "MaxJobs = 400"))  # an admin's edit
        await wait_until(pilot, lambda: len(rt.sent) == 1)
        assert rt.sent == [C.ApplyRoutes((str(conf),), reason="changed on disk (routes.conf)")]
        new = text.replace("MaxJobs = 500", "MaxJobs = 300")
        app.own_writes[str(conf)] = hashlib.sha256(new.encode()).hexdigest()
        conf.write_text(new)  # what the editor itself wrote: already applied, not sent again
        await pilot.pause(1.0)
        assert len(rt.sent) == 1


async def test_real_runtime_crash_is_shown_and_the_last_snapshot_kept():
    """``engine.runtime.Runtime`` publishes a ``crashed`` snapshot carrying the traceback."""
    class CrashingEngine(FeedBase):
        def __init__(self):
            self.now = 1_000.0
            self.steps = 0

        def snapshot(self, seq, **kw):
            return make_snapshot(200, seq=seq, time=self.now, **kw)

        def next_time(self):
            return self.now + 1.0

        def step(self, t):
            self.steps += 1
            if self.steps > 3:
                raise ZeroDivisionError("route stats window of length 0")
            self.now = max(self.now, t)

        def handle(self, command):
            return None

        def emit(self, *a, **kw):
            pass

    engine = CrashingEngine()
    runtime = Runtime(engine, VirtualClock(start=engine.now, speed=1.0), snapshot_interval=0.05)
    app = _app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.engine_error is not None, timeout=20)
        assert "ZeroDivisionError: route stats window of length 0" in app.engine_error
        assert app.snapshot is not None and app.snapshot.engine_state != "crashed"
        banner = app.screen.query_one("#engine-banner")
        assert banner.has_class("-shown")
        assert "engine stopped: ZeroDivisionError: route stats window of length 0" in str(banner.render())
        await _cmd(pilot, "error")
        await wait_until(pilot, lambda: any("Traceback" in str(b.render()) for b in app.screen.query("#text-body")))


@pytest.mark.prewarm
async def test_startup_heap_is_frozen_after_the_first_snapshot(monkeypatch):
    """The objects alive once the first snapshot is shown are moved out of the cyclic GC's reach
    (``gc.freeze``) once per process, so its full collections stop pausing screen switches for
    ~130 ms (bench/tui.py --part screens reports the pauses)."""
    rt = FakeRuntime(make_snapshot(50))
    app = _app(rt)
    # as in a new process, whatever an earlier app here froze; the test process itself froze what
    # it keeps (tests/helpers/gc_kept.py), so the app's own freeze is what makes the count grow
    monkeypatch.setattr(app_module, "_FROZEN", False)
    frozen = gc.get_freeze_count()
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await wait_prewarmed(pilot, app)  # the freeze ends the prewarm (tui.shell.prewarm)
        assert app_module._FROZEN and gc.get_freeze_count() > frozen


@pytest.mark.prewarm
async def test_help_is_kept_per_text_and_opens_at_the_top_with_no_toasts():
    """Issue 30: ``?`` pushes a help screen kept from an earlier open (built off screen for the
    board) instead of composing a new one each time; it opens at the top with the toasts cleared,
    as a new one did, and another screen's help is its own (the keys of the screen under it)."""
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_prewarmed(pilot, app)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen")
        board_help = app.screen
        assert board_help in app._help_screens.values()  # the one built off screen
        box = board_help.query_one("#help-box")
        box.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert box.scroll_y > 0
        await pilot.press("escape")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "RoutesScreen")
        app.notify("route BlackHole throttled", title="route throttled")
        await pilot.pause()
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen")
        await pilot.pause()
        assert app.screen is board_help and box.scroll_y == 0 and not app._notifications
        await pilot.press("escape", "j")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "JobsScreen")
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen")
        assert app.screen is not board_help
        titles = [title for title, _ in app.screen.sections]
        assert "Jobs (this screen)" in titles and "Routes board (this screen)" not in titles


async def test_help_is_not_covered_by_toasts_at_80x24():
    """Issue 29's handling list: at 80×24 the toasts (bottom right, above every screen) covered
    help's keys. Opening help clears them; the events they told are in the Events pane."""
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        app.notify("route BlackHole throttled", title="route throttled")
        await pilot.pause()
        assert app._notifications
        await pilot.press("question_mark")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        assert not app._notifications
