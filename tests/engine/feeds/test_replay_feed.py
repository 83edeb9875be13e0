"""Replay driven by the engine thread (engine.feeds.replay.feed with engine.runtime.Runtime).

Sources: product.md §3 (one engine, three feeds; the clock is injected and never goes back) and
§2 (replay: play/pause/step/seek); the recordings are tests/replay_logs.py's generated logs,
whose expected state after each transaction is computed independently.
"""

from __future__ import annotations

import math

from engine.contract import commands as C
from engine.clock import VirtualClock
from engine.feeds.replay.feed import ReplayFeed
from engine.contract.commands import AddBookmark, GotoBookmark
from engine.feeds.replay.index import build_index
from engine.feeds.replay.player import Player
from engine.clock import ManualClock
from engine.runtime import Runtime
from tests.helpers.replay_logs import Recording, as_expected


def _feed(tmp_path, seed=41, steps=120):
    rec = Recording(seed, steps=steps)
    p = tmp_path / "job_queue.log"
    p.write_text(rec.text())
    ix = build_index(p, every=30, tz="UTC")
    return rec, ix, ReplayFeed(Player(ix, ManualClock(0)))


def test_step_seek_back_and_forth_with_a_forward_only_clock(tmp_path):
    rec, ix, feed = _feed(tmp_path)
    clock = feed.now
    for _ in range(5):  # what the runtime does for Step: jump to next_time, step there
        before = feed.player.position
        clock = max(clock, feed.next_time())
        feed.step(clock)
        assert feed.player.position == before + 1  # exactly one transaction, also among equal times
        assert as_expected(feed.player.state) == rec.states[feed.player.position]
    assert feed.handle(C.Seek(transaction=2)) is None
    assert feed.player.position == 2 and as_expected(feed.player.state) == rec.states[2]
    clock += 1.0  # the clock went on; replay time continues from transaction 2's time
    feed.step(clock)
    assert abs(feed.replay_time - (ix.times[2] + 1.0)) < 1e-3
    assert feed.handle(C.Seek(time=ix.times[-1])) is None and math.isfinite(feed.next_time())
    assert feed.handle(AddBookmark("end")) is None
    feed.handle(C.Seek(transaction=-1))
    assert feed.player.state.table == {}
    assert feed.handle(GotoBookmark("end")) is None and feed.player.position == ix.steps - 1
    assert "not available" in feed.handle(C.HoldJob("1.0"))
    snap = feed.snapshot(7, speed=2.0, paused=True)
    assert snap.replay.transaction == ix.steps - 1 and snap.mode == "replay" and snap.paused
    kinds = [e.kind for e in snap.events]  # our bookmark, and the recording's router events before the moment
    assert kinds.count("bookmark-added") == 1
    assert set(kinds) - {"bookmark-added"} <= {"job-routed", "job-retired", "throttle-adjusted", "route-throttled",
                                               "route-unthrottled"}
    assert snap.history_upto == max(e.seq for e in snap.events)  # all re-told after the jump: no toasts


def test_runtime_plays_a_recording_to_its_end(tmp_path):
    rec, ix, feed = _feed(tmp_path, seed=42, steps=80)
    clock = VirtualClock(start=feed.now)
    seen = []
    rt = Runtime(feed, clock, seen.append, speed="max", until=feed.end_time)
    rt.start()
    rt.join(20)
    assert rt.state == "stopped" and rt.error is None
    last = rt.latest()
    assert last.replay.transaction == ix.steps - 1
    assert as_expected(feed.player.state) == rec.states[-1]
