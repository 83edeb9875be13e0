"""A stand-in engine for the runtime loop's tests: ticks on a manual clock, records commands."""
from __future__ import annotations

from engine.contract import snapshot as S
from engine.contract.feed import FeedBase


class FakeEngine(FeedBase):
    """Ticks every 10 s of engine time; records what it was asked to do."""

    def __init__(self, start=1000.0, crash_at=None):
        self.now = start
        self.ticks = []
        self.handled = []
        self.events = []
        self.crash_at = crash_at

    def next_time(self):
        return (self.now // 10 + 1) * 10 if self.now % 10 or self.ticks and self.ticks[-1] == self.now else self.now

    def step(self, now):
        while self.next_time() <= now:
            t = self.next_time()
            if self.crash_at is not None and t >= self.crash_at:
                raise RuntimeError("boom")
            self.now = t
            self.ticks.append(t)
        self.now = max(self.now, now)

    def handle(self, cmd):
        self.handled.append(cmd)
        return None if cmd.job != "bad" else "no such job"

    def emit(self, t, kind, message, level="info"):
        self.events.append((kind, message, level))

    def snapshot(self, seq, *, speed, paused, engine_state, clock, controls=None, error=None):
        return S.Snapshot(seq=seq, time=self.now, mode="demo", clock=clock, speed=speed, paused=paused,
                          engine_state=engine_state, routes=(), error=error,
                          controls=S.CONTROLS if controls is None else controls)
