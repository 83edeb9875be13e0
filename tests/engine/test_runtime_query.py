"""Runtime.query (product.md §3: the engine thread never blocks on the UI): a function run on the
engine thread between two steps, answered through a Future; prompt when paused, a clear error
when the engine is not running. No sleeps: waits are on events and futures with timeouts."""

import threading

import pytest
from concurrent.futures import Future

from engine.contract import commands as C
from engine.clock import ManualClock, VirtualClock
from engine.runtime import EngineNotRunning, Runtime
from tests.helpers.runtime_fixture import FakeEngine
from engine.feeds.demo import build_demo
from tui import engine_api


def _wait_for(pred, rt, limit=5.0):
    for _ in range(int(limit / 0.01)):
        if pred():
            return True
        rt.done.wait(0.01)
    return pred()


def test_query_runs_on_the_engine_thread_and_returns_its_result():
    eng = FakeEngine()
    rt = Runtime(eng, VirtualClock(1000.0, speed=1.0), snapshot_interval=0.05).start()
    try:
        where, now = rt.query(lambda e: (threading.current_thread().name, e.now), timeout=5)
        assert where == "routedeck-engine" and now >= 1000.0
        with pytest.raises(KeyError):  # the query's own error reaches the asker
            rt.query(lambda e: {}["missing"], timeout=5)
    finally:
        rt.stop()


def test_query_is_answered_promptly_when_paused():
    """A paused loop waits up to snapshot_interval (here an hour): the query must wake it."""
    clock = ManualClock(1000.0)
    eng = FakeEngine()
    rt = Runtime(eng, clock, snapshot_interval=3600.0)
    rt.send(C.Pause())
    rt.start()
    try:
        assert _wait_for(lambda: rt.latest() is not None and rt.latest().paused, rt)
        assert rt.query(lambda e: e.now, timeout=5) == 1000.0
        assert rt.query(lambda e: "again", timeout=5) == "again"
    finally:
        rt.stop()


def test_query_at_maximum_speed():
    eng = FakeEngine()
    rt = Runtime(eng, VirtualClock(1000.0), speed="max", until=1e9).start()
    try:
        seen = [rt.query(lambda e: e.now, timeout=5) for _ in range(3)]
        assert seen == sorted(seen)
    finally:
        rt.stop()


def test_query_of_a_runtime_that_is_not_running_is_a_clear_error():
    rt = Runtime(FakeEngine(), VirtualClock(1000.0, speed=1.0))
    with pytest.raises(EngineNotRunning, match="not started"):
        rt.query(lambda e: 1, timeout=1)
    rt.start()
    rt.stop()
    assert rt.done.is_set()
    with pytest.raises(EngineNotRunning, match="stopped"):
        rt.query(lambda e: 1, timeout=1)


def test_query_of_a_crashed_engine_names_the_crash():
    eng = FakeEngine(crash_at=1020)
    rt = Runtime(eng, VirtualClock(1000.0), speed="max").start()
    assert rt.done.wait(5) and rt.state == "crashed"
    with pytest.raises(EngineNotRunning, match="crashed.*boom"):
        rt.query(lambda e: 1, timeout=1)


def test_a_query_the_asker_gave_up_on_is_not_run_and_never_blocks_the_engine():
    """The engine is busy in a step (held by an event): the asker times out and cancels; once the
    step ends the engine skips the cancelled query and answers the next one."""
    release, inside = threading.Event(), threading.Event()

    class Busy(FakeEngine):
        def step(self, now):
            if now >= 1010 and not release.is_set():
                inside.set()
                release.wait(10)
            super().step(now)

    ran = []
    rt = Runtime(Busy(), VirtualClock(1000.0), speed="max", until=1e9).start()
    try:
        assert inside.wait(5)
        with pytest.raises(TimeoutError):
            rt.query(lambda e: ran.append("late"), timeout=0.05)
        release.set()
        assert rt.query(lambda e: "answered", timeout=5) == "answered"
        assert ran == []
    finally:
        release.set()
        rt.stop()


def test_pending_queries_fail_when_the_loop_ends():
    """A query queued when the loop has ended (after its last drain) fails instead of hanging."""
    rt = Runtime(FakeEngine(), VirtualClock(1000.0), speed="max", until=1100).start()
    assert rt.done.wait(5)

    fut = Future()
    rt._queries.put((lambda e: 1, fut))
    rt._fail_queries()
    with pytest.raises(EngineNotRunning):
        fut.result(1)


def test_the_uis_why_not_and_full_ads_are_engine_queries():
    """tui.engine_api reads router and queue state through Runtime.query (one query per batch of
    ads, not per row), on the engine thread."""
    engine = build_demo(seed=2, durable=False)
    engine.step(engine.start + 600)
    rt = Runtime(engine, ManualClock(engine.now), snapshot_interval=3600.0)
    rt.send(C.Pause())
    threads = []
    real_query = rt.query

    def counting(fn, timeout=10.0):
        return real_query(lambda e: (threads.append(threading.current_thread().name), fn(e))[1], timeout)

    rt.query = counting
    # the rows are settled before the engine thread starts (a snapshot only reads what the advance
    # settled; a snapshot that consumed change events on two threads crashed the engine, seen in CI)
    engine.advance()
    rows = list(engine.snapshot().jobs)
    rt.start()
    try:
        verdict, checks = engine_api.why_not(rt, rows[0].job, engine.now)
        assert checks and threads == ["routedeck-engine"]
        ads = engine_api.FullAds(rt)
        hits = engine_api.constraint_hits(rows, "JobUniverse =!= undefined", engine.now, ad_of=ads)
        # JobUniverse is not in a JobRow: only the full ads can match it
        assert len(hits) == len(rows)
        assert len(threads) == 1 + -(-len(rows) // engine_api.AD_BATCH)
        assert set(threads) == {"routedeck-engine"}
        assert engine_api.job_ad(rt, rows[0])["JobUniverse"]
    finally:
        rt.stop()
    # stopped: the UI falls back to the row's own attributes instead of failing
    assert "JobUniverse" not in engine_api.job_ad(rt, rows[0])
