"""Watch mode as a feed for :class:`engine.runtime.Runtime`, and the wake-up the log's watcher sends it."""

from __future__ import annotations

from typing import Any

from engine.contract import commands as C
from engine.contract.feed import FeedBase, WhyNot
from engine.contract.snapshot import CONTROLS, Snapshot
from engine.feeds.watch.follow import WAITING, WatchEngine


class WatchFeed(FeedBase):
    """Watch mode as an engine for :class:`engine.runtime.Runtime`.

    Read-only and live: no pause, speed, step or seek (``controls`` is empty; a paused view of a
    log that keeps changing would only mislead). All reading happens on the runtime's thread (``step``/``handle``), so the queue is never read
    and written by two threads. ``next_time()`` asks for a poll every ``poll_interval`` seconds
    of the (system) clock; :meth:`waker` gives the foundation's watcher (``run_watch``) an object
    whose ``poll()`` just sends :class:`WakeUp` to the runtime, so a change is read at once."""

    controls: frozenset[str] = frozenset()

    def __init__(self, engine: WatchEngine, poll_interval: float = 1.0) -> None:
        self.engine = engine
        self.poll_interval = poll_interval
        self.now = engine.clock.now()
        self._last_poll = -float("inf")
        self.ring = engine.ring  # one ring: the engine's notices and the router's events rebuilt here
        self._told_waiting = False
        self.history_upto = 0  # events of the log's backlog (its first read): history, not news
        self.advance()

    def emit(self, time: float, kind: str, message: str, level: str = "info", route: str | None = None,
             job: str | None = None) -> None:
        self.ring.emit(time, kind, message, level, route, job)

    def next_time(self) -> float:
        return self._last_poll + self.poll_interval

    def why_not(self, job: str, now: float) -> WhyNot:
        """The followed queue's why-not (:meth:`WatchEngine.why_not`), asked on the runtime's thread."""
        return self.engine.why_not(job, now)

    def ledger(self, now: float):
        """The followed queue's ledger (:meth:`WatchEngine.ledger`), asked on the runtime's thread."""
        return self.engine.ledger(now)

    def step(self, t: float) -> None:
        if t >= self.next_time():
            self._poll(t)
        self.now = max(self.now, t)

    def _drain(self) -> None:
        """The router's events rebuilt from the log (engine.views.figures.LiveFigures) into the ring."""
        figures = self.engine.figures
        for e in figures.events:
            self.ring.record(e.to_snapshot_event(self.ring.next_seq()))
        figures.events.clear()

    def _poll(self, t: float) -> None:
        backlog = self._last_poll == -float("inf")
        generation = self.engine.generation
        self.engine.read(self.engine.follower.poll())
        self._drain()
        if backlog or self.engine.generation != generation:
            # what the log held when it was first read (or read again from its start): logged on
            # the Events panel, never toasted as if it had just happened
            self.history_upto = self.ring.seq
        self.engine.publish()  # after the history mark: a replaced log is news
        self._last_poll = t
        if self.engine.waiting and not self._told_waiting:
            self.emit(self.engine.clock.now(), "log", f"{self.engine.setup.queue_log}: {WAITING}")
        self._told_waiting = self.engine.waiting
        self.advance()

    def advance(self) -> None:
        """The engine advanced to its clock's now (windows closed, crondor run, notices and the
        router's events in the ring); what :meth:`snapshot` reads is kept in ``settled``."""
        self.engine.advance()
        self._drain()  # windows the advance closed
        self.settled = (self.ring.recent(), self.history_upto)

    def handle(self, command: object) -> str | None:
        if isinstance(command, C.WakeUp):
            self._poll(self.engine.clock.now())
            return None
        return f"{type(command).__name__} is not available in watch mode (read-only)"

    def job_ad(self, job: str) -> dict[str, str]:
        return self.engine.job_ad(job)

    def snapshot(self, seq: int = 0, *, speed: float = 1.0, paused: bool = False, engine_state: str = "running",
                 clock: str = "real", jobs: tuple = (), controls: frozenset[str] | None = None,
                 error: str | None = None) -> Snapshot:
        # the time and its "virtual"/"real" label are the log's clock's (engine.clock.LogClock), not
        # the runtime's: a log written in virtual time (a demo recording) is watched on its own clock
        events, history_upto = self.settled
        return self.engine.snapshot(seq, speed=speed, paused=paused, engine_state=engine_state, events=events,
                                    history_upto=history_upto, error=error,
                                    controls=CONTROLS if controls is None else controls)

    def waker(self, runtime: Any) -> Any:
        feed_path = self.engine.follower.path

        class _Waker:
            path = feed_path

            @staticmethod
            def poll() -> None:
                runtime.send(C.WakeUp())

        return _Waker()
