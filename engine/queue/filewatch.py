"""Waking a :class:`~engine.queue.follower.Follower` when its log changes.

Design decisions and invariants:

- This is the only module of the queue-log package that waits. It watches the log's *directory*
  with ``watchfiles`` (a rotation renames ``job_queue.log.tmp`` over the log, which a watch on the
  file itself would lose), filtered to the log's name, with ``stop_event`` and
  ``yield_on_timeout=True``: it hands control back every quarter second, polls on a change, on
  the first hand-back (the watcher is then known to be running, so nothing written before it
  started is missed) and every ``slow_poll`` seconds, and stops promptly.
- The slow poll is also the fallback: when ``watchfiles`` cannot watch (no inotify slots, the
  directory does not exist yet, an unsupported filesystem) the loop just polls every
  ``slow_poll`` seconds on ``stop_event.wait``.
- Every wake-up is one ``follower.poll()``; its result goes to ``on_poll`` (exceptions from the
  callback propagate: they are the caller's bugs, not the log's).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Callable

from engine.queue.follower import Follower, PollResult

OnPoll = Callable[[PollResult], None]
_TICK = 0.25  # how often watchfiles hands control back, so the slow poll keeps its period


def run_watch(follower: Follower, stop_event: threading.Event, on_poll: OnPoll | None = None, *,
              slow_poll: float = 5.0, debounce: float = 0.05, use_watchfiles: bool = True,
              step: float = 0.01) -> None:
    """Poll ``follower`` now, then on every change of its log and at least every ``slow_poll`` s,
    until ``stop_event`` is set."""

    def wake() -> None:
        result = follower.poll()
        if on_poll is not None:
            on_poll(result)

    watch_path(follower.path, stop_event, wake, slow_poll=slow_poll, debounce=debounce,
               use_watchfiles=use_watchfiles, step=step)


def watch_path(path: Path, stop_event: threading.Event, wake: Callable[[], None], *, slow_poll: float = 5.0,
               debounce: float = 0.05, use_watchfiles: bool = True, step: float = 0.01) -> None:
    """Call ``wake()`` now, then on every change of the file ``path`` and at least every
    ``slow_poll`` s, until ``stop_event`` is set (``run_watch``'s loop, for a caller that reads
    the file itself: ``routedeck record``'s run loop)."""
    wake()
    if use_watchfiles and _watch(path, stop_event, wake, slow_poll, debounce, step):
        return
    while not stop_event.wait(slow_poll):
        wake()


def _watch(path: Path, stop_event: threading.Event, wake: Callable[[], None], slow_poll: float,
           debounce: float, step: float = 0.01) -> bool:
    """Watch with watchfiles; False if it could not be used (the caller then polls)."""
    try:
        import watchfiles  # noqa: PLC0415 - optional: without it the follower polls; ~270 ms of import (anyio)
    except ImportError:
        return False
    name = path.name

    def wanted(_change, changed: str) -> bool:
        return Path(changed).name == name

    tick = min(slow_poll, _TICK)
    first = True
    last = time.monotonic()
    try:
        for changes in watchfiles.watch(
            path.parent, watch_filter=wanted, stop_event=stop_event, yield_on_timeout=True,
            rust_timeout=max(1, int(tick * 1000)), debounce=max(1, int(debounce * 1000)),
            step=max(1, int(step * 1000)), raise_interrupt=False, recursive=False,
        ):
            if stop_event.is_set():
                return True
            now = time.monotonic()
            # The first yield proves the watcher is running: poll once more so that a write made
            # between the initial poll and the watcher's start is not left to the slow poll.
            if changes or first or now - last >= slow_poll:
                first = False
                last = now
                wake()
    except (OSError, RuntimeError):
        return stop_event.is_set()
    return True


class Watcher:
    """``run_watch`` on a daemon thread: ``start()``, ``stop()``."""

    def __init__(self, follower: Follower, on_poll: OnPoll | None = None, *, slow_poll: float = 5.0,
                 debounce: float = 0.05, use_watchfiles: bool = True) -> None:
        self.follower = follower
        self.stop_event = threading.Event()
        self._thread = threading.Thread(
            target=run_watch, name=f"watch {follower.path.name}", daemon=True,
            args=(follower, self.stop_event, on_poll),
            kwargs=dict(slow_poll=slow_poll, debounce=debounce, use_watchfiles=use_watchfiles))

    def start(self) -> "Watcher":
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.stop_event.set()
        self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()
