"""Watch's header says what is true of a live log (issue 14, its last point: watch on a live log
from a demo run at ×30 showed "(×1)", a speed the user cannot change and the log's clock belies).

Watch is live (``WatchFeed.controls`` is empty: no speed), so the header says "live"; when the
log's own clock — its transactions' ``106 # <time>`` comments, htcondor.md §3.2
(``SCHEDD_JOB_QUEUE_TIMESTAMPS``) — advances clearly faster or slower than the runtime's clock,
it gives that pace ("live, log ×30"), measured by ``engine.feeds.watch.pace.LogPace`` from the log time
already read against the injected (here manual) clock. Demo and replay keep their speed.

The log is the shipped recording sample_configs/recordings/demo-3h.job_queue.log (written by
``routedeck demo``), appended transaction by transaction as a writer at a given pace would.
"""

from __future__ import annotations

import dataclasses

import pytest

from engine.clock import ManualClock
from engine.feeds.watch.feed import WatchFeed
from engine.feeds.watch.follow import WatchEngine
from engine.feeds.watch.pace import PACE_MIN_SPAN, PACE_WINDOW, LogPace
from engine.feeds.watch.setup import WatchSetup
from engine.queue.timeline import parse_comment_time
from engine.runtime import Runtime
from tui.app import make_app
from tui.widgets.chrome import header_text

from tests.helpers.demo_fixture import EngineRuntime
from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until

RECORDING = "sample_configs/recordings/demo-3h.job_queue.log"
WALL = 1_900_000_000.0  # the runtime's clock: years after the recording (the log is on its own clock)


def transactions(path: str = RECORDING) -> tuple[bytes, list[tuple[float, bytes]]]:
    """The recording as (head before the first timed transaction, [(its time, its bytes)])."""
    with open(path, "rb") as fh:
        lines = fh.read().splitlines(keepends=True)
    head, out, chunk = b"", [], []
    for line in lines:
        chunk.append(line)
        if line.startswith(b"106 "):
            t = parse_comment_time(line.decode().rstrip("\n"), "UTC")
            if t is None:
                continue
            if not out and not head:
                head, chunk = b"".join(chunk[:-1]), [line]  # the log's first records: no time yet
            out.append((t, b"".join(chunk)))
            chunk = []
    return head, out


class Writer:
    """Appends the recording's transactions to ``log`` as a writer running at ``pace`` would:
    ``second()`` writes one more second of the runtime's clock (``pace`` seconds of log time)."""

    def __init__(self, log, pace: float, backlog: float = 600.0) -> None:
        self.log, self.pace = log, pace
        head, self.txns = transactions()
        self.start = self.txns[0][0]
        self.upto = self.start + backlog  # a writer that has been running a while: a backlog
        self.i = 0
        log.write_bytes(head)
        self._write()

    def _write(self) -> None:
        with open(self.log, "ab") as fh:
            while self.i < len(self.txns) and self.txns[self.i][0] <= self.upto:
                fh.write(self.txns[self.i][1])
                self.i += 1

    def second(self) -> None:
        self.upto += self.pace
        self._write()


def _watch(tmp_path, pace: float, backlog: float = 600.0):
    clock = ManualClock(WALL)
    writer = Writer(tmp_path / "job_queue.log", pace, backlog)
    feed = WatchFeed(WatchEngine(WatchSetup(str(writer.log)), clock), poll_interval=1.0)
    runtime = Runtime(feed, clock)  # not started: its snapshot is what it would publish
    feed.step(clock.now())  # the first poll reads the backlog
    return clock, writer, feed, runtime


def _seconds(clock, writer, feed, n: int) -> None:
    for _ in range(n):
        writer.second()
        clock.advance(1.0)
        feed.step(clock.now())


def test_a_log_written_at_x30_is_said_to_run_at_x30(tmp_path):
    """A demo at ×30 writes 30 s of log time per second: once ``PACE_MIN_SPAN`` seconds are read
    the snapshot carries the pace, and the header says "live, log ×30" — never "×1"."""
    clock, writer, feed, runtime = _watch(tmp_path, 30.0)
    snap = runtime._snapshot()
    assert snap.log_rate is None  # the backlog alone says nothing of a pace
    assert "(live)" in header_text(snap, True).plain and "×1" not in header_text(snap, True).plain
    _seconds(clock, writer, feed, int(PACE_MIN_SPAN) + 3)
    snap = runtime._snapshot()
    assert snap.mode == "watch" and "speed" not in snap.controls
    assert snap.log_rate == pytest.approx(30.0, rel=0.15)
    assert "(live, log ×30)" in header_text(snap, True).plain
    # the writer stops: after the window there is no pace to claim
    clock.advance(PACE_WINDOW + 1)
    feed.step(clock.now())
    snap = runtime._snapshot()
    assert snap.log_rate is None and "(live)" in header_text(snap, True).plain


def test_a_log_written_at_real_time_is_just_live(tmp_path):
    """A log whose clock keeps the runtime's pace (a live schedd): "live", no rate, no "×"."""
    clock, writer, feed, runtime = _watch(tmp_path, 1.0)
    _seconds(clock, writer, feed, int(PACE_WINDOW) + 5)
    snap = runtime._snapshot()
    assert feed.engine.pace.rate(clock.now()) == pytest.approx(1.0, rel=0.34)
    assert snap.log_rate is None
    text = header_text(snap, True).plain
    assert "(live)" in text and "×" not in text


def test_pace_counts_a_backlog_as_one_reading_and_an_idle_log_as_none():
    """``LogPace``: hours read in one poll take no clock time (one reading); polls that read
    nothing new are no readings (an idle schedd's clock is not standing still)."""
    pace = LogPace()
    pace.saw(100.0, 5_000.0)  # the backlog
    pace.saw(100.0, 9_000.0)  # more of it at the same instant
    assert pace.rate(100.0) is None
    for k in range(1, 11):
        pace.saw(100.0 + k, 9_000.0 + 600 * k)  # a ×600 writer
        pace.saw(100.0 + k + 0.5, 9_000.0 + 600 * k)  # a poll that read nothing new
    assert pace.rate(110.0) == pytest.approx(600.0)
    assert pace.shown(110.0) == pytest.approx(600.0)
    pace.saw(200.0, 20_000.0)  # the log resumes after a long pause: one reading, no old span
    assert pace.rate(200.0) is None


def _header(app) -> str:
    return str(app.screen.query_one("StatusHeader").render())


@pytest.mark.anyio
@pytest.mark.parametrize("size", [(80, 24), (132, 40)], ids=["80x24", "132x40"])
async def test_watch_header_on_a_x30_log_says_live_and_the_logs_pace(tmp_path, size):
    """The dashboard in watch mode, fed what watch's runtime publishes for a log written at ×30:
    the header reads "(live, log ×30)", not the runtime's "(×1)"."""
    clock, writer, feed, runtime = _watch(tmp_path, 30.0)
    _seconds(clock, writer, feed, int(PACE_MIN_SPAN) + 3)
    fake = FakeRuntime(runtime._snapshot())
    app = make_app(fake, mode="watch", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and "live" in _header(app))
        assert "(live, log ×30)" in _header(app) and "(×1)" not in _header(app)
        shown = app.screen._compositor.render_strips()[0].text  # the terminal's first line
        assert shown.rstrip() == _header(app).rstrip()  # whole: nothing cut at 80 columns
        state = app.snapshot.engine_state  # the runtime was not started: "starting"
        assert (f"engine {state} · read-only" if size[0] > 80 else f"· {state}") in shown
        # the writer stops; the next snapshot says only "live"
        clock.advance(PACE_WINDOW + 1)
        feed.step(clock.now())
        fake.push(runtime._snapshot())
        await wait_until(pilot, lambda: "(live)" in _header(app))
        assert "×" not in _header(app)


@pytest.mark.anyio
async def test_demo_and_replay_keep_their_speed():
    """Demo and replay can change their speed: the header shows it, as before."""
    app = make_app(EngineRuntime(), blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.pause()
        assert "(×60)" in _header(app) and "live" not in _header(app)
    replay = dataclasses.replace(make_snapshot(50), mode="replay", speed=10.0,
                                 controls=frozenset({"pause", "speed", "step", "seek", "jobs", "routes"}))
    assert "(×10)" in header_text(replay, True).plain


def test_a_log_that_stopped_growing_says_when_it_last_changed():
    """issue 29 handling list: watch kept "(live) · running" on a log that stopped growing. On a
    log written in real time the header says when it last changed once a minute has passed
    (Snapshot.log_lag, the wall time since the newest transaction); a virtual-time log's lag
    means nothing on the wall clock and is not shown."""
    base = make_snapshot(5)
    live = dataclasses.replace(base, mode="watch", clock="real", controls=frozenset(), log_lag=30.0)
    assert "(live)" in header_text(live, True).plain
    quiet = dataclasses.replace(live, log_lag=7 * 60 + 5)
    assert "(live, last change 7m5s ago)" in header_text(quiet, True).plain
    virtual = dataclasses.replace(quiet, clock="virtual")
    assert "(live)" in header_text(virtual, True).plain
