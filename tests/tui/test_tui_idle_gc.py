"""The cyclic GC's full collections run when the UI is idle, not on a key (issue 14 item 3;
``tui.shell.idle_gc``). RouteDeck's own UI rule, not HTCondor behaviour; the GC facts relied on are
CPython's (``gc.get_count``: generation-1 collections since the last full one in ``count[2]``).
Time is a manual clock: the collector's decision is driven directly, and the app's timer tick is
called by hand with the clock and the GC replaced by recorders.
"""

from __future__ import annotations

import gc

import pytest

from tui.app import make_app
from tui.shell.idle_gc import CAP, DEEP_EVERY, FULL_AFTER, IDLE_AFTER, OUT_OF_REACH, IdleCollector

from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until

pytestmark = pytest.mark.anyio


def test_full_collection_waits_while_keys_arrive_and_runs_once_idle():
    c = IdleCollector()
    due = (5, 3, FULL_AFTER)  # a full collection is due
    t = 1000.0
    for _ in range(20):  # a key every 0.1 s: never idle
        c.key(t)
        assert c.decide(t + 0.1, due) is None
        t += 0.1
    t = 2000.0
    c.key(t)
    assert c.decide(t + IDLE_AFTER - 0.01, due) is None
    assert c.decide(t + IDLE_AFTER, due) == (2, "idle-2")
    assert c.decide(t + IDLE_AFTER, due, building=True) is None  # a screen being built: not idle


def test_every_deep_every_th_idle_full_collection_is_a_deep_one():
    c = IdleCollector()
    kinds = []
    for k in range(2 * DEEP_EVERY):
        why = c.decide(100.0 + k, (0, 0, FULL_AFTER))[1]
        c.collections[why] += 1
        kinds.append(why)
    assert kinds.count("deep-2") == 2 and kinds[DEEP_EVERY - 1] == kinds[-1] == "deep-2"
    assert c.decide(1000.0, (0, 0, CAP)) == (2, "forced-2")  # a forced one is never deep (it may land on a key)


def test_idle_with_nothing_due_collects_only_the_young_generations():
    c = IdleCollector()
    c.key(0.0)
    assert c.decide(1.0, (100, 2, FULL_AFTER - 1)) == (1, "idle-1")
    assert c.decide(1.0, (100, 0, 0)) is None  # nothing pending: nothing to do


def test_full_collection_runs_anyway_past_the_cap():
    """A session that never pauses (a key every 50 ms) still gets its full collection once
    ``cap`` young collections have passed, so memory cannot grow without bound."""
    c = IdleCollector()
    for k in range(CAP + 5):
        t = k * 0.05
        c.key(t)
        decision = c.decide(t, (0, 0, k))
        assert decision == ((2, "forced-2") if k >= CAP else None)


@pytest.mark.prewarm
async def test_app_defers_collections_on_keys_and_collects_when_idle_then_restores_thresholds():
    before = gc.get_threshold()
    app = make_app(FakeRuntime(make_snapshot(20)), blink=False, watch_files=False)
    now = [500.0]
    counts = [(0, 0, 0)]
    collected: list[int] = []
    app.idle_gc_clock = lambda: now[0]
    app.idle_gc_counts = lambda: counts[0]
    app.idle_gc_collect = collected.append
    app.idle_gc_freeze = lambda: collected.append("freeze")
    app.idle_gc_unfreeze = lambda: collected.append("unfreeze")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.prewarmed and app.idle_collector is not None)
        assert gc.get_threshold()[2] == OUT_OF_REACH  # no automatic full collection while it runs
        app._idle_gc_timer.pause()  # its ticks are called by hand below
        await pilot.press("down")
        assert app.idle_collector.last_key == 500.0  # the key was seen (manual clock)
        counts[0] = (0, 0, FULL_AFTER)
        now[0] = 500.0 + IDLE_AFTER / 2
        app._idle_gc_tick()
        assert collected == []  # a key 0.15 s ago: wait
        now[0] = 500.0 + IDLE_AFTER
        await wait_until(pilot, lambda: not app.idle_gc_building())  # the key's repaint is done
        app._idle_gc_tick()
        assert collected == [2, "freeze"]  # what survived it is frozen: the next one skips it
        assert app.idle_collector.collections["idle-2"] >= 1
        counts[0] = (0, 0, CAP)
        await pilot.press("up")
        app._idle_gc_tick()
        assert collected == [2, "freeze", 2, "freeze"] and app.idle_collector.forced >= 1  # past the cap: even on a key
        collected.clear()
        app.idle_collector.collections["idle-2"] = DEEP_EVERY - 1
        counts[0] = (0, 0, FULL_AFTER)
        now[0] += 10 * IDLE_AFTER
        await wait_until(pilot, lambda: not app.idle_gc_building())  # the last key's repaint is done
        app._idle_gc_tick()
        assert collected == ["unfreeze", 2, "freeze"]  # now and then one over the frozen heap too
        collected.clear()
    assert collected == ["unfreeze"]  # what it froze is given back at exit (it would never be freed)
    assert gc.get_threshold() == before
