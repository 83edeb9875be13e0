"""Watch on a log written in virtual time shows the log's clock (issue 10 item 3): a demo
recording's transactions are dated by their ``106 # <time>`` comments (htcondor.md §3.2,
``SCHEDD_JOB_QUEUE_TIMESTAMPS``), far from today's wall clock, so the board's header, the
snapshot's time and every "in …"/"ago" derived from it follow ``engine.clock.LogClock``, labelled
"virtual", and move on with the base clock's seconds from there.

The recording is sample_configs/recordings/demo-3h.job_queue.log (written by ``routedeck demo``,
see its README.md): its last transaction is committed at 2026-11-21T02:59:55 (UTC).
"""

from __future__ import annotations

import argparse
from datetime import datetime, timezone

import pytest

from engine.cli.watch import build_runtime
from engine.clock import ManualClock
from engine.feeds.watch.feed import WatchFeed
from engine.feeds.watch.follow import WatchEngine
from engine.feeds.watch.setup import resolve
from engine.contract.commands import WakeUp
from tui.app import make_app
from tui.widgets.chrome import header_text

from tests.helpers.tui_fixtures import wait_until

LOG = "sample_configs/recordings/demo-3h.job_queue.log"
CONFIG = "sample_configs/demo/condor_config"
LAST = datetime(2026, 11, 21, 2, 59, 55, tzinfo=timezone.utc).timestamp()
WALL = 1_900_000_000.0  # 2030: a wall clock years after the recording


@pytest.mark.slow
def test_snapshot_and_header_carry_the_logs_clock():
    wall = ManualClock(WALL)
    feed = WatchFeed(WatchEngine(resolve(LOG, CONFIG, None), wall, tz="UTC"))
    before = feed.snapshot(0, clock="real")  # nothing read yet: the base clock, labelled real
    assert before.time == WALL and before.clock == "real"
    feed.step(wall.now())  # the first poll reads the whole recording
    # the runtime passes clock="real" (its own clock is the system's); the feed's clock wins
    snap = feed.snapshot(1, clock="real")
    assert snap.clock == "virtual" and snap.time == LAST
    assert " · watch · virtual 2026-11-21 02:59:55 UTC" in header_text(snap, True).plain
    wall.advance(10)
    feed.advance()  # as the runtime does before each snapshot (a snapshot only reads: issue 26)
    snap = feed.snapshot(2, clock="real")
    assert snap.time == LAST + 10 and "02:59:55" not in header_text(snap, True).plain


@pytest.mark.slow
@pytest.mark.anyio
async def test_watch_board_header_shows_the_recordings_time():
    args = argparse.Namespace(queue_log=LOG, config=[CONFIG], router_log=None, tz="UTC", slow_poll=60.0)
    runtime = build_runtime(args)
    app = make_app(runtime, mode="watch", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(120, 40)) as pilot:
        runtime.send(WakeUp())
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.total_jobs > 0, timeout=60)
        await wait_until(pilot, lambda: "virtual 2026-11-21" in str(app.screen.query_one("StatusHeader").render()))
        header = str(app.screen.query_one("StatusHeader").render())
        assert " · watch · virtual 2026-11-21 0" in header and app.snapshot.clock == "virtual"
        assert LAST <= app.snapshot.time < LAST + 600  # the log's time, moved on by seconds only
