"""Watch tells the log's backlog as history: the events rebuilt from what the log already held
when it was first read are on the Events panel but not toasted as news; what is appended later is
news (the replay's ``history_upto`` rule, engine.contract.snapshot.Snapshot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.launch.options import WatchOptions
from engine.launch.watch import watch_runtime
from engine.clock import ManualClock
from engine.feeds.watch.feed import WatchFeed
from engine.feeds.watch.follow import WatchEngine
from engine.feeds.watch.setup import resolve
from engine.contract.commands import WakeUp
from tui.app import make_app

from tests.helpers.tui_fixtures import wait_until
from tests.helpers.toasts import told

LOG = Path("sample_configs/recordings/demo-3h.job_queue.log")
CONFIG = "sample_configs/demo/condor_config"
WALL = 1_900_000_000.0


def _cut(data: bytes, fraction: float) -> int:
    """The end of the first committed transaction after ``fraction`` of the log."""
    at = data.index(b"\n106", int(len(data) * fraction)) + 1
    return data.index(b"\n", at) + 1


@pytest.mark.slow
def test_backlog_events_are_history_and_appended_ones_are_news(tmp_path):
    data = LOG.read_bytes()
    cut = _cut(data, 0.1)
    log = tmp_path / "job_queue.log"
    log.write_bytes(data[:cut])
    wall = ManualClock(WALL)
    feed = WatchFeed(WatchEngine(resolve(str(log), CONFIG, None), wall, tz="UTC"))
    feed.step(wall.now())  # the first read: the backlog
    snap = feed.snapshot(1)
    assert snap.events and snap.history_upto == max(e.seq for e in snap.events)
    with log.open("ab") as fh:
        fh.write(data[cut:])
    wall.advance(5)
    feed.handle(WakeUp())
    snap = feed.snapshot(2)
    news = [e for e in snap.events if e.seq > snap.history_upto]
    assert news and all(e.time > 0 for e in news)
    # the router's throttle of BlackHole is re-evaluated in the rest of the recording
    assert "throttle-adjusted" in {e.kind for e in news}


@pytest.mark.slow
@pytest.mark.anyio
async def test_watching_a_finished_log_toasts_nothing_from_its_past():
    """The 3-hour recording throttles BlackHole at 00:30:05: opening watch on it later must not
    pop "route throttled" up as if it had just happened."""
    args = WatchOptions(queue_log=str(LOG), config=(CONFIG,), router_log=None, tz="UTC", slow_poll=60.0)
    runtime = watch_runtime(args)
    app = make_app(runtime, mode="watch", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(80, 24)) as pilot:
        runtime.send(WakeUp())
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.total_jobs > 0, timeout=60)
        seq = app.snapshot.seq
        await wait_until(pilot, lambda: app.snapshot.seq >= seq + 2, timeout=30)
        assert any(e.kind == "route-throttled" for e in app.event_log)
        assert not told(app)
