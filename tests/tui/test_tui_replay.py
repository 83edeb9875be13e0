"""Pilot tests of replay mode: the replay bar's keys and ``:seek`` drive the real replay engine
(``engine.feeds.replay.feed.ReplayFeed`` under ``engine.runtime.Runtime``, built by
``engine.launch.replay.replay_runtime``), and the assertions are on the player's position and
state. The recording is RouteDeck's random test log (tests/replay_logs.py, htcondor.md §3.1/§3.2
format with ``106 #`` times); product.md §6 lists the controls.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from engine.contract import commands as C
from engine.contract import snapshot as S
from engine.launch.replay import replay_runtime
from engine.cli.replay import options as replay_options
from engine.contract.commands import AddBookmark
from engine.record.recorder import Recorder
from tui.app import make_app
from tui.shell.messages import CommandSent
from tui.widgets.replay_bar import SOURCE_PREFIX, ReplayBar, bar_text, parse_seek

from tests.helpers.compaction import ScheddLog
from tests.helpers.paths import REPO
from tests.helpers.replay_logs import Recording
from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until
from tests.helpers.tui_fixtures import write_routes_conf
from tests.helpers.toasts import told

SIZE = (120, 36)
pytestmark = pytest.mark.anyio


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "job_queue.log"
    path.write_text(Recording(7, steps=80).text())
    return path


def _args(log, **kw):
    base = dict(log=str(log), at=None, transaction=None, json=False, jobs=False, speed=1.0, config=[],
                reroute=False, tz="UTC", seed=1, sites=None)
    base.update(kw)
    return argparse.Namespace(**base)


def _app(log):
    runtime = replay_runtime(replay_options(_args(log)))
    return make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False), runtime


async def _cmd(pilot, text: str) -> None:
    await pilot.press("colon")
    await pilot.pause()
    pilot.app.screen.query_one("#command-input").value = text
    await pilot.press("enter")


def _player(runtime):
    return runtime.feed.player


def _shown(app, transaction: int):
    """The app shows the engine at ``transaction`` (a snapshot after the move arrived)."""
    return lambda: app.snapshot is not None and app.snapshot.replay.transaction == transaction


async def test_step_forward_and_back_and_play_pause(log):
    app, runtime = _app(log)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.replay is not None)
        p0 = _player(runtime).position
        assert app.snapshot.paused  # a replay opens paused at its start
        await pilot.press("full_stop")  # . one transaction forward
        await wait_until(pilot, _shown(app, p0 + 1))
        assert _player(runtime).position == p0 + 1
        await pilot.press("full_stop", "full_stop")
        await wait_until(pilot, _shown(app, p0 + 3))
        await pilot.press("comma")  # , one back
        await wait_until(pilot, _shown(app, p0 + 2))
        assert _player(runtime).position == p0 + 2
        await pilot.press("space")  # play
        await wait_until(pilot, lambda: not app.snapshot.paused)
        assert not runtime.paused
        await pilot.press("space")  # pause
        await wait_until(pilot, lambda: app.snapshot.paused)
        assert runtime.paused
        moment = _player(runtime).position
        await pilot.press("right")  # → steps while paused (no table takes it on an empty board)
        await wait_until(pilot, _shown(app, moment + 1))


@pytest.mark.slow
async def test_seek_command_and_jump_keys(log):
    app, runtime = _app(log)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.replay is not None)
        index = _player(runtime).index
        await _cmd(pilot, "seek #10")  # the bar's 1-based numbering
        await wait_until(pilot, _shown(app, 9))
        assert _player(runtime).position == 9
        await _cmd(pilot, "seek end")
        await wait_until(pilot, _shown(app, index.steps - 1))
        await _cmd(pilot, "seek start")
        await wait_until(pilot, _shown(app, index.step_at_time(index.times[0])))
        t = app.snapshot.replay.time
        await pilot.press("right_curly_bracket")  # } +10 min
        target = index.step_at_time(t + 600)
        await wait_until(pilot, _shown(app, target))
        assert _player(runtime).position == target
        # [ -1 min: from the requested t + 600, not from the transaction the seek landed on
        await pilot.press("left_square_bracket")
        await wait_until(pilot, _shown(app, index.step_at_time(t + 600 - 60)))
        await _cmd(pilot, "seek #abc")  # a bad argument is an error toast, nothing is sent
        await pilot.pause()
        assert any(":seek" in t for t in told(app))


@pytest.mark.slow
async def test_bookmark_add_and_go(log):
    app, runtime = _app(log)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.replay is not None)
        await _cmd(pilot, "seek #6")
        await wait_until(pilot, _shown(app, 5))
        await pilot.press("m")  # bookmark B1 here
        await wait_until(pilot, lambda: "B1" in _player(runtime).bookmarks)
        assert _player(runtime).bookmarks["B1"] == 5 and app.bookmarks[0][:2] == ("B1", 5)
        await _cmd(pilot, "seek #30")
        await wait_until(pilot, _shown(app, 29))
        await pilot.press("apostrophe")  # the picker: B1 is the only entry
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, _shown(app, 5))
        assert _player(runtime).position == 5
        assert "marks B1" in bar_text(app.snapshot, app.bookmarks).plain
        for where in ("#30", "#12", "start"):  # the bookmark's line was logged again at every seek (issue 29)
            await _cmd(pilot, f"seek {where}")
            await pilot.pause()
        await wait_until(pilot, lambda: app.snapshot.replay.transaction != 5)
        marks = [e.message for e in app.event_log if e.kind == "bookmark-added"]
        assert marks == ["bookmark B1 at transaction 6"]
        seqs = [e.seq for e in app.event_log]
        assert len(seqs) == len(set(seqs))


async def test_replay_keys_do_nothing_outside_replay():
    """The replay keys are bound only in replay mode (check_action), and :seek says so."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    sent = []
    async with app.run_test(size=SIZE, message_hook=lambda m: sent.append(m)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("m", "full_stop", "right_square_bracket")
        await _cmd(pilot, "seek #3")
        await pilot.pause()
    commands = [m.command for m in sent if isinstance(m, CommandSent)]
    assert not any(isinstance(c, (AddBookmark, C.Seek, C.Step)) for c in commands)


def test_parse_seek_forms():
    """:seek TIME|+SECONDS|#TRANSACTION (the same TIME forms as ``routedeck replay --at``)."""
    pos = S.ReplayPosition(transaction=3, transactions=10, time=1000.0, start=900.0, end=5000.0,
                           times_inferred=False)
    snap = S.Snapshot(seq=1, time=1000.0, mode="replay", clock="virtual", speed=1.0, paused=True,
                      engine_state="paused", routes=(), replay=pos)
    assert parse_seek("#1", snap) == C.Seek(transaction=0)
    assert parse_seek("#0", snap) == C.Seek(transaction=-1)
    assert parse_seek("+60", snap) == C.Seek(time=960.0)
    assert parse_seek("end", snap) == C.Seek(time=5000.0)
    assert parse_seek("1970-01-01T00:20:00", snap) == C.Seek(time=1200.0)
    with pytest.raises(ValueError):
        parse_seek("soon", snap)


async def test_jumps_pressed_quickly_accumulate(log):
    """Issue 11 item 5: } } } pressed faster than snapshots arrive moves 30 minutes, not 10 — each
    jump starts from the requested time, not from the last snapshot's (or the landing) position."""
    app, runtime = _app(log)
    seen = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.replay is not None)
        index = _player(runtime).index
        t = app.snapshot.replay.time
        for _ in range(3):
            await pilot.press("right_curly_bracket")  # no pause between: the snapshot is still the old one
        target = index.step_at_time(t + 1800)
        assert target > index.step_at_time(t + 600)  # the recording is long enough to tell them apart
        await wait_until(pilot, _shown(app, target))
        assert _player(runtime).position == target
        seeks = [m.command.time for m in seen if isinstance(m, CommandSent) and isinstance(m.command, C.Seek)]
        assert seeks == [t + 600, t + 1200, t + 1800]


async def test_replay_with_config_shows_it_read_only(log, tmp_path):
    """Issue 11 item 8: in replay with --config, e shows that config read-only (it was an empty
    "no config file" editor), and the footer offers View config, not Edit."""
    conf = tmp_path / "routes.conf"
    text = write_routes_conf(conf)
    runtime = replay_runtime(replay_options(_args(log, config=[str(conf)])))
    app = make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.replay is not None)
        assert app.snapshot.config_files == (str(conf),)
        shown = {k: b.binding.description for k, b in app.screen.active_bindings.items() if b.binding.show}
        assert shown.get("e") == "View config"
        await pilot.press("e")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "EditorScreen" and app.screen.path is not None)
        area = app.screen.query_one("#editor")
        assert area.read_only and area.text == text and str(conf) in area.border_title
    assert conf.read_text() == text


def test_the_bar_says_in_words_where_an_estimated_time_comes_from():
    """Issue 29's handling list: "(carried)" in the replay bar meant nothing to a user. A transaction
    without a ``106 #`` time (htcondor.md §3.1: the comment is optional) shows an estimated time,
    and the bar says so and from what; at 80 columns it says "(est.)"."""
    pos = S.ReplayPosition(transaction=4, transactions=10, time=1_700_000_300, start=1_700_000_000,
                           end=1_700_003_600, times_inferred=False)
    for source, words in (("carried", "no time stamp, last known time"), ("inferred", "from the job times it set")):
        snap = make_snapshot(0, mode="replay", replay=pos, diagnostics=(S.Diagnostic("info", SOURCE_PREFIX + source),))
        wide, narrow = bar_text(snap, width=132).plain, bar_text(snap, width=80).plain
        assert f"(estimated: {words})" in wide and source not in wide
        assert "(est.)" in narrow and len(narrow) <= 80
    snap = make_snapshot(0, mode="replay", replay=pos, diagnostics=(S.Diagnostic("info", SOURCE_PREFIX + "comment"),))
    assert "estimated" not in bar_text(snap, width=132).plain


@pytest.mark.slow
async def test_why_not_in_replay_answers_from_the_ledger():
    """Issue 29: in replay the why-not screen said "this engine offers no routing explanation".
    With --config it shows the job's ledger entry, the same one ``routedeck why`` gives (engine.
    feeds.replay.why: one computation): the verdict and every route's verdict in match order.
    The recording is the shipped demo one (sample_configs/recordings/README.md)."""
    from engine.feeds.replay.why import replay_ledger  # noqa: PLC0415 - this test only
    from engine.launch.options import ReplayOptions  # noqa: PLC0415 - this test only
    from engine.router.loader import load_config_and_table  # noqa: PLC0415 - this test only

    root = Path(__file__).resolve().parents[2]
    log = str(root / "sample_configs" / "recordings" / "demo-3h.job_queue.log")
    conf = str(root / "sample_configs" / "demo" / "condor_config")
    runtime = replay_runtime(ReplayOptions(log=log, config=(conf,), tz="UTC", at="+1h"))
    app = make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.replay is not None)
        loaded = load_config_and_table([conf])
        entries = runtime.query(lambda feed: replay_ledger(feed.player, loaded.table, loaded.config.get))
        entry = next(e for e in entries if e.routes)
        await _cmd(pilot, f"why {entry.job}")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "WhyNotScreen" and app.screen.checks is not None)
        text = str(app.screen.query_one("#whynot").render())
        assert "no routing explanation" not in text and entry.verdict in text
        assert [c.label for c in app.screen.checks][:len(entry.routes)] == [
            f"[{r['route']}] {r['verdict']}" for r in entry.routes]


async def test_the_bar_marks_an_archives_generation_boundaries_and_gaps(tmp_path):
    """Issue 27: ``routedeck replay DIR`` — "the replay bar shows generation boundaries and gaps".
    An archive of the demo recording with a compaction followed (a boundary) and a recorder down
    over two compactions (a gap, htcondor.md §3.4: the rotated copy it needed is unlinked)."""
    schedd = ScheddLog(tmp_path / "job_queue.log", (REPO / "sample_configs" / "recordings" /
                                                    "demo-3h.job_queue.log").read_bytes())
    rec = Recorder(tmp_path / "job_queue.log", tmp_path / "archive", tz="UTC")
    schedd.advance(200)
    rec.poll(0, flush=True)
    schedd.compact()  # followed: a new generation, no gap
    schedd.advance(200)
    rec.poll(1, flush=True)
    schedd.advance(100)
    schedd.compact()
    schedd.advance(100)
    schedd.compact()  # the recorder was down over two compactions: a gap
    schedd.advance(100)
    rec.poll(2, flush=True)
    runtime = replay_runtime(replay_options(_args(tmp_path / "archive")))
    app = make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(160, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.replay is not None)
        marks = app.snapshot.replay.marks
        assert [m.kind for m in marks].count("gap") == 1 and "generation" in [m.kind for m in marks]
        assert [m.time for m in marks] == sorted(m.time for m in marks)
        # under load the first bar was drawn before the first layout (a guessed width, no room for
        # the marks); the one drawn at the real width has them
        await wait_until(pilot, lambda: "1 gap" in str(app.screen.query_one(ReplayBar).render()))
        await wait_until(pilot, lambda: "✕" in str(app.screen.query_one(ReplayBar).render()))
        shown = str(app.screen.query_one(ReplayBar).render())
        assert "✕" in shown and "┊" in shown
    narrow = bar_text(app.snapshot, width=80).plain
    assert len(narrow) <= 80 and "✕" in narrow
    # a plain log has no marks
    assert bar_text(make_snapshot(0, mode="replay", replay=S.ReplayPosition(
        0, 10, 1.0, 0.0, 10.0, False)), width=132).plain.count("✕") == 0
