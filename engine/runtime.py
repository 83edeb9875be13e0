"""The engine thread: one loop that advances an :class:`~engine.feeds.demo.Simulation` (or any other feed) on a clock, takes
commands from a thread-safe queue and publishes immutable snapshots (product.md §3).

Design decisions and invariants:

- This is the ONE place in the engine that waits: a ``threading.Event`` wait on the command
  queue, with a timeout computed from the clock (until the engine's next action, or the next
  snapshot, whichever is sooner). A command wakes it at once.
- The engine thread never blocks on a consumer. Snapshots go through :class:`Mailbox`, a
  single-slot holder: a newer snapshot replaces one the consumer has not taken yet ("replaceable
  in flight"); ``publish`` callbacks are called from the engine thread and must not block (the
  Textual side uses ``post_message``, which does not). Events carry sequence numbers, so a
  consumer that missed snapshots still sees every recent event in the ring.
- Snapshots are published at a bounded rate: at most one per ``snapshot_interval`` real seconds,
  plus one after every command. With ``every_virtual`` set, snapshots are published exactly at
  virtual times ``start + k * every_virtual`` (the engine is stepped to each such time first),
  which makes a headless run's output deterministic for a seed.
- Speeds: a :class:`~engine.clock.VirtualClock` speed factor, or ``"max"`` — then the loop jumps
  the clock from one engine action to the next without waiting.
- Queries (:meth:`Runtime.query`): a consumer thread that needs more than a snapshot (a full job
  ad, the router's why-not) hands a function to the engine thread, which runs it between two
  steps — the only moment the engine's containers are consistent — and puts the result in a
  ``concurrent.futures.Future``. The consumer waits on the future; the engine thread never waits
  for the consumer. A query wakes a paused or idle loop; when the loop ends (stop, crash, until)
  every pending query fails with :class:`EngineNotRunning`.
- ``services`` (the ``--metrics`` server) are started after the loop and stopped after it; they
  read ``latest()`` only, never the engine. ``listeners`` are called with each published snapshot
  on the engine thread (the metrics server's ``published``, which only hands it over: never blocks).
- Stopping is prompt: ``stop()`` sets a flag and wakes the loop; the thread finishes the engine
  action it is doing (a demo catching up many polls is stepped action by action, see
  ``_step_engine``) and exits; ``stop`` joins it. A crash in the engine is caught, published as a snapshot
  with ``engine_state == "crashed"`` and its text, and ends the loop.
"""

from __future__ import annotations

import concurrent.futures
import math
import queue as _queue
import threading
import time
import traceback
from typing import Any, Callable

from engine.contract import commands as C
from engine.contract import snapshot as S
from engine.contract.feed import FeedBase
from engine.clock import Clock, VirtualClock

MAX_SPEED = "max"


def feed_controls(feed: FeedBase) -> frozenset[str]:
    """What the UI may offer for ``feed`` (``Snapshot.controls``): the feed's own controls, with
    ``execute`` only when it has an embedded execute node (``feed.startd``)."""
    own = frozenset(feed.controls) - {S.EXECUTE}
    return own | {S.EXECUTE} if feed.startd is not None else own


class EngineNotRunning(RuntimeError):
    """A query to an engine thread that is not running (not started, stopped or crashed)."""


class Mailbox:
    """A single-slot, replace-in-flight holder: ``put`` never blocks, ``take`` empties it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._item: Any = None
        self.replaced = 0

    def put(self, item: Any) -> None:
        with self._lock:
            if self._item is not None:
                self.replaced += 1
            self._item = item

    def take(self) -> Any:
        with self._lock:
            item, self._item = self._item, None
            return item

    def peek(self) -> Any:
        with self._lock:
            return self._item


class Runtime:
    def __init__(self, feed: FeedBase, clock: Clock, publish: Callable[[S.Snapshot], None] | None = None,
                 snapshot_interval: float = 0.25, *, speed: float | str | None = None,
                 every_virtual: float | None = None, until: float | None = None) -> None:
        self.feed = feed  # the demo, watch or replay feed this loop advances
        self.clock = clock
        self.publish = publish
        self.snapshot_interval = snapshot_interval
        self.every_virtual = every_virtual
        self.until = until
        self.mailbox = Mailbox()
        self.commands: _queue.SimpleQueue = _queue.SimpleQueue()
        self._queries: _queue.SimpleQueue = _queue.SimpleQueue()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._latest: S.Snapshot | None = None
        self._seq = 0
        self.max_speed = speed == MAX_SPEED
        self._user_paused = bool(getattr(clock, "paused", False))
        if speed not in (None, MAX_SPEED) and hasattr(clock, "set_speed"):
            clock.set_speed(float(speed))
        if self.max_speed and hasattr(clock, "pause"):
            clock.pause()  # at maximum speed virtual time moves only by jumps
        self.state = "starting"
        self.error: str | None = None
        # started after the loop and stopped after it ends (the --metrics server: start()/stop())
        self.services: list[Any] = []
        self.listeners: list[Callable[[S.Snapshot], None]] = []  # told of each published snapshot
        self._next_virtual = (feed.now + every_virtual) if every_virtual else None
        self._yield_at = math.inf  # real time at which a catch-up hands control back (_step_engine)
        self._idle_work = True  # until the feed's idle() says it has nothing more to prepare
        self.done = threading.Event()

    # ---------------------------------------------------------------------------- API

    def start(self) -> "Runtime":
        self._thread = threading.Thread(target=self._run, name="routedeck-engine", daemon=True)
        self._thread.start()
        for service in self.services:
            service.start()
        return self

    def send(self, command: Any) -> None:
        self.commands.put(command)
        self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        for service in self.services:
            service.stop()

    def query(self, fn: Callable[[FeedBase], Any], timeout: float | None = 10.0) -> Any:
        """``fn(feed)`` run on the engine thread between two steps; its result (or exception).

        Raises :class:`EngineNotRunning` when the loop is not running or ends before answering,
        and ``TimeoutError`` when no answer came within ``timeout`` seconds (the query is then
        cancelled if it has not started)."""
        if threading.current_thread() is self._thread:
            return fn(self.feed)  # from a publish callback: already between steps
        if self._thread is None or self.done.is_set():
            raise EngineNotRunning(self._not_running())
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self._queries.put((fn, fut))
        self._wake.set()
        if self.done.is_set():  # the loop ended while we queued: it will not drain again
            self._fail_queries()
        try:
            return fut.result(timeout)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            raise TimeoutError(f"the engine did not answer within {timeout} s") from None

    def _not_running(self) -> str:
        if self._thread is None:
            return "the engine is not running (not started)"
        if self.state == "crashed":
            last = (self.error or "").strip().splitlines()[-1:] or ["unknown error"]
            return f"the engine has crashed ({last[0][:300]})"
        return "the engine has stopped"

    def _answer_queries(self) -> None:
        while True:
            try:
                fn, fut = self._queries.get_nowait()
            except _queue.Empty:
                return
            if not fut.set_running_or_notify_cancel():
                continue  # the asker gave up
            try:
                fut.set_result(fn(self.feed))
            except BaseException as exc:  # noqa: BLE001 - the asker gets the query's own error
                fut.set_exception(exc)

    def _fail_queries(self) -> None:
        while True:
            try:
                _fn, fut = self._queries.get_nowait()
            except _queue.Empty:
                return
            if fut.set_running_or_notify_cancel():
                fut.set_exception(EngineNotRunning(self._not_running()))

    @property
    def controls(self) -> frozenset[str]:
        """What the feed offers (:func:`feed_controls`), as its snapshots say: the UI's keys
        before the first snapshot arrives."""
        return feed_controls(self.feed)

    def latest(self) -> S.Snapshot | None:
        return self._latest

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def speed(self) -> float | str:
        return MAX_SPEED if self.max_speed else float(getattr(self.clock, "speed", 1.0))

    @property
    def paused(self) -> bool:
        return self._user_paused

    # ---------------------------------------------------------------------------- loop

    def _snapshot(self) -> S.Snapshot:
        """The feed's one snapshot, with the runtime's part (sequence, speed, pause, state, error,
        controls) given to it: nothing is patched in afterwards."""
        self._seq += 1
        speed = self.speed
        state, error = self.state, self.error
        stalled = self.feed.write_error
        if stalled and state == "running":  # a failed write: nothing moves until it can write
            state, error = "stalled", stalled
        return self.feed.snapshot(
            self._seq, speed=0.0 if speed == MAX_SPEED else float(speed), paused=self.paused,
            engine_state=state, clock="virtual" if isinstance(self.clock, VirtualClock) else "real",
            controls=feed_controls(self.feed), error=error)

    def _publish(self) -> None:
        # the log's grouped sync reaches the disk before a snapshot shows it (issue 30)
        self.feed.sync_log(self.speed, time.monotonic)
        self.feed.advance()  # then the snapshot: a read, which changes nothing
        snap = self._snapshot()
        self._latest = snap
        self.mailbox.put(snap)
        for fn in self.listeners:
            fn(snap)
        if self.publish is not None:
            self.publish(snap)

    def _command(self, cmd: Any) -> None:
        feed = self.feed
        needs = C.control_of(cmd)
        if needs is not None and needs not in feed.controls:
            feed.emit(feed.now, "command-failed", f"{type(cmd).__name__} is not available in this mode", "error")
            return
        if isinstance(cmd, C.Pause):
            self._user_paused = True
            if hasattr(self.clock, "pause"):
                self.clock.pause()
            self.state = "paused"
        elif isinstance(cmd, C.Resume):
            self._user_paused = False
            if hasattr(self.clock, "resume") and not self.max_speed:
                self.clock.resume()
            self.state = "running"
        elif isinstance(cmd, C.Step):
            for _ in range(max(1, cmd.count)):
                t = feed.next_time()
                if self.until is not None and t > self.until:
                    break
                if hasattr(self.clock, "jump_to"):
                    self.clock.jump_to(max(t, self.clock.now()))
                self._step_to(t)
        elif isinstance(cmd, C.SetSpeed):
            if cmd.speed == math.inf or cmd.speed <= 0:
                self.max_speed = True
                if hasattr(self.clock, "pause"):
                    self.clock.pause()
            else:
                self.max_speed = False
                if hasattr(self.clock, "set_speed"):
                    self.clock.set_speed(cmd.speed)
                if not self._user_paused and hasattr(self.clock, "resume"):
                    self.clock.resume()
        elif isinstance(cmd, C.Stop):
            self._stop.set()
        else:
            err = feed.handle(cmd)
            if err:  # a refused table is its own kind: the UI's editor and toasts key on it
                kind = "config-rejected" if isinstance(cmd, C.ApplyRoutes) else "command-failed"
                feed.emit(feed.now, kind, err, "error")

    def _step_to(self, t: float) -> None:
        """Step the engine to ``t``, stopping at every virtual snapshot time on the way."""
        while (self._next_virtual is not None and self._next_virtual <= t
               and (self.until is None or self._next_virtual < self.until)):  # `until` gets the final one
            if not self._step_engine(self._next_virtual):
                return
            self._publish()
            self._next_virtual += self.every_virtual
        self._step_engine(t)

    def _step_engine(self, t: float) -> bool:
        """``feed.step(t)``; a feed whose outcome does not depend on how time is sliced
        (``sliceable``, the demo) is stepped one action time at a time, and a long catch-up
        (an engine behind its clock) hands control back to the loop between two actions when
        ``stop()`` was called, a command or query waits, or a snapshot is due — so none of them
        waits for the catch-up to end. False when interrupted on the way (the loop goes on from
        where the engine is)."""
        feed = self.feed
        if feed.sliceable:
            while True:
                if (self._stop.is_set() or not self.commands.empty() or not self._queries.empty()
                        or time.monotonic() >= self._yield_at):
                    return False
                n = feed.next_time()
                if n >= t:
                    break
                feed.step(n)
                if feed.next_time() <= n:
                    return True  # no progress: a stalled engine (a failed write) waits for the next turn
        feed.step(t)
        return True

    def _run(self) -> None:
        self.state = "paused" if self.paused else "running"
        last_pub = -math.inf
        try:
            self._publish()
            while not self._stop.is_set():
                had_command = False
                while True:
                    try:
                        cmd = self.commands.get_nowait()
                    except _queue.Empty:
                        break
                    had_command = True
                    self._command(cmd)
                self._answer_queries()
                if self._stop.is_set():
                    break
                if self.max_speed and not self.paused:
                    target = self.feed.next_time()
                    if self._next_virtual is not None:
                        target = min(target, self._next_virtual)
                    if self.until is not None:
                        target = min(target, self.until)
                    if hasattr(self.clock, "jump_to"):
                        self.clock.jump_to(max(target, self.clock.now()))
                now = self.clock.now()
                if self.until is not None:
                    now = min(now, self.until)
                if self.every_virtual is None and not self.max_speed:
                    self._yield_at = max(last_pub, time.monotonic()) + self.snapshot_interval
                self._step_to(now)
                if self.until is not None and self.feed.now >= self.until:
                    self.state = "stopped"
                    self._publish()
                    break
                real = time.monotonic()
                if had_command or (self.every_virtual is None and real - last_pub >= self.snapshot_interval):
                    self._publish()
                    last_pub = real
                if self.max_speed and not self.paused:
                    continue
                wait = self.snapshot_interval
                if hasattr(self.clock, "real_seconds_until"):
                    nxt = self.feed.next_time()
                    if self._next_virtual is not None:
                        nxt = min(nxt, self._next_virtual)
                    wait = min(wait, self.clock.real_seconds_until(nxt))
                if wait > 0 and self._idle_work:
                    # background preparation (the replay's checkpoints), one unit per turn so a
                    # command or query waits for one unit at most
                    self._idle_work = self.feed.idle()
                    if self._idle_work:
                        continue
                self._wake.wait(max(0.0, wait))
                self._wake.clear()
        except Exception:  # noqa: BLE001 - the engine crashed: say so, never hang the consumer
            self.state = "crashed"
            self.error = traceback.format_exc(limit=8)
            try:
                self._publish()
            except Exception:  # noqa: BLE001 - the crash is already recorded; a failing publish must not hide it
                pass
        finally:
            if self.state not in ("crashed",):
                self.state = "stopped"
            self.done.set()
            self._fail_queries()
