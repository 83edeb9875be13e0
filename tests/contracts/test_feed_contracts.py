"""Declared contracts between feeds, runtime and UI (issue 10 item 4): each mode's feed says which
controls apply (``Snapshot.controls``), the runtime refuses the others, and the UI receives
snapshots through the runtime's ``publish`` callback — no polling of ``latest()``."""

from __future__ import annotations

import threading

import pytest

from engine.contract import commands as C
from engine.contract import snapshot as S
from engine.clock import ManualClock, VirtualClock
from engine.contract.feed import NOT_OFFERED, FeedBase
from engine.feeds.demo import Simulation
from engine.feeds.replay.feed import ReplayFeed
from engine.feeds.watch.feed import WatchFeed
from engine.feeds.watch.follow import WatchEngine
from engine.feeds.watch.setup import WatchSetup
from engine.runtime import Runtime
from tui.app import make_app
from tests.helpers.tui_fixtures import make_snapshot, wait_until
from engine.launch.demo import demo_runtime
from engine.launch.replay import replay_runtime
from engine.launch.watch import watch_runtime


def test_each_feed_declares_its_controls():
    """Watch follows a live log read-only: no pause, speed, step or seek (a paused view of a log
    that keeps changing would mislead); replay cannot change jobs or the table; the demo can."""
    assert WatchFeed.controls == frozenset()
    assert ReplayFeed.controls == {"pause", "speed", "step", "seek"}
    assert Simulation.controls == {"pause", "speed", "step", "jobs", "routes"}
    assert all(f.controls <= S.CONTROLS for f in (WatchFeed, ReplayFeed, Simulation))


ABILITIES = ("why_not", "why_not_candidate", "ledger", "job_ad", "deferral_time")


def _offered(feed: type) -> set[str]:
    return {name for name in ABILITIES if getattr(feed, name) is not getattr(FeedBase, name)}


def test_each_feed_declares_the_abilities_it_offers():
    """The optional abilities are FeedBase members whose defaults say "not offered" (issue 26):
    the queries read them, never guess names. The demo has a router, a queue and a schedd's
    in-memory DeferralTime; replay and watch answer a why-not from the ledger and full ads from
    the recording / the followed log, with no router to pick a candidate."""
    base = FeedBase()
    assert (base.why_not("1.0", 0.0), base.why_not_candidate(None, 0.0), base.ledger(0.0), base.job_ad("1.0"),
            base.deferral_time("1.0"), base.table, base.startd) == (None, NOT_OFFERED, None, None, None, None, None)
    assert _offered(Simulation) == set(ABILITIES)
    # the why-not ledger of every idle job (issue 29's ledger screen) in all three
    assert _offered(ReplayFeed) == _offered(WatchFeed) == {"why_not", "ledger", "job_ad"}
    assert all(issubclass(f, FeedBase) for f in (Simulation, ReplayFeed, WatchFeed))


def test_the_runtime_refuses_a_control_the_feed_does_not_offer(tmp_path):
    log = tmp_path / "job_queue.log"
    log.write_text("107 1 CreationTimestamp 1700000000\n")
    feed = WatchFeed(WatchEngine(WatchSetup(str(log)), ManualClock(1_700_000_000.0)), poll_interval=3600)
    got: list[S.Snapshot] = []
    rt = Runtime(feed, VirtualClock(1_700_000_000.0), publish=got.append).start()
    try:
        rt.send(C.Pause())
        rt.query(lambda _feed: None)  # the command was taken before this query ran
    finally:
        rt.stop()
    last = got[-1]
    assert last.controls == frozenset() and not last.paused and last.engine_state != "paused"
    assert any(e.kind == "command-failed" and "Pause is not available" in e.message for e in last.events)


class _PublishOnly:
    """A runtime with no ``latest()``: the app can only get snapshots through ``publish``."""

    controls = S.CONTROLS

    def __init__(self, snap: S.Snapshot) -> None:
        self.snap = snap
        self.publish = None
        self.stopped = threading.Event()

    def start(self) -> None:
        self.publish(self.snap)

    def send(self, _command) -> None:
        self.snap = S.Snapshot(**{**self.snap.__dict__, "seq": self.snap.seq + 1, "time": self.snap.time + 1})
        self.publish(self.snap)

    def stop(self, timeout: float = 5.0) -> None:
        self.stopped.set()


@pytest.mark.anyio
async def test_the_app_gets_snapshots_through_the_publish_callback():

    runtime = _PublishOnly(make_snapshot(10))
    app = make_app(runtime, mode="demo", blink=False, watch_files=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.seq == runtime.snap.seq)
        first = app.snapshot.seq
        runtime.send(C.Pause())
        await wait_until(pilot, lambda: app.snapshot.seq == first + 1)
    assert runtime.stopped.is_set()


def test_every_mode_has_its_runtime_factory_in_the_engine():
    assert all(callable(f) for f in (demo_runtime, replay_runtime, watch_runtime))
