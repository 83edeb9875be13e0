"""The cyclic GC's full collections taken off the key path (issue 14 item 3).

CPython starts a full (generation-2) collection on its own when enough objects have moved to the
oldest generation; it stops every thread (the UI's included) for as long as it scans the heap —
40-150 ms here even after :func:`tui.shell.prewarm.freeze_startup_heap`, and it landed on whatever
screen switch was under way (``bench/tui.py --part screens``: switches of 51-120 ms, all full
collections). While the app runs, the automatic full collections are turned off (the third
threshold raised out of reach; generations 0 and 1 stay automatic: they scan only the young
objects and take well under a millisecond) and :class:`IdleCollector` decides when to run one:

- when the UI is idle — no key for ``idle_after`` seconds and no screen being built — and the
  oldest generation has as much pending as CPython's own trigger wants (``full_after`` young
  collections since the last full one: CPython's default third threshold, 10);
- anyway, idle or not, once ``cap`` young collections have passed without a full one, so a long
  session that never pauses cannot grow without bound (counted in ``forced``);
- generation 1 (cheap) when idle and any young collection is pending, so the next key does not
  meet an automatic one.

What a full collection leaves alive is frozen (``gc.freeze``: the engine's jobs and ads, the screens'
widgets, which live on), so the next one scans only what came after it: a full collection scanned
~26,000 such objects for nothing (it found 15 objects of garbage) and took 30-35 ms of the UI
thread's CPU under load; a cycle among frozen objects that dies would never be freed, so every
``DEEP_EVERY``-th idle full collection unfreezes first and scans everything (the start-up heap
of :func:`tui.shell.prewarm.freeze_startup_heap` included, frozen again after it).

The decision (:meth:`IdleCollector.decide`) is a pure function of the time and the GC's counts;
the app's timer (:class:`IdleGC`) reads the clock and the counts, runs the collection and keeps
the tally. The thresholds are process-wide: they are put back when the app exits.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field

TICK = 0.1  # seconds between two looks at the idle state
IDLE_AFTER = 0.3  # seconds without a key before the UI counts as idle
FULL_AFTER = 10  # young collections before an idle full one (CPython's default third threshold)
CAP = 100  # young collections before a full one runs even on a busy UI
OUT_OF_REACH = 1_000_000_000  # third threshold while the app runs: no automatic full collection
DEEP_EVERY = 30  # every this many idle full collections (a few minutes), one over the frozen heap too


@dataclass
class IdleCollector:
    """When to collect, from the time (seconds, any clock) and ``gc.get_count()``-like counts.

    ``count[1]`` is the young (generation-0) collections since the last generation-1 one,
    ``count[2]`` the generation-1 collections since the last full one. Invariant: a full
    collection is never deferred past ``cap`` generation-1 collections."""

    idle_after: float = IDLE_AFTER
    full_after: int = FULL_AFTER
    cap: int = CAP
    last_key: float = float("-inf")
    collections: dict = field(default_factory=lambda: {"idle-1": 0, "idle-2": 0, "forced-2": 0, "deep-2": 0})
    longest: dict = field(default_factory=dict)  # why -> the longest such collection, CPU seconds

    def key(self, now: float) -> None:
        self.last_key = now

    def idle(self, now: float, building: bool) -> bool:
        return not building and now >= self.last_key + self.idle_after

    def decide(self, now: float, count: tuple[int, int, int], building: bool = False) -> tuple[int, str] | None:
        """``(generation, why)`` to collect now, or None to wait."""
        pending_full = count[2]
        if pending_full >= self.cap:
            return 2, "forced-2"
        if not self.idle(now, building):
            return None
        if pending_full >= self.full_after:
            deep = (self.collections["idle-2"] + self.collections["deep-2"] + 1) % DEEP_EVERY == 0
            return 2, "deep-2" if deep else "idle-2"
        if count[1] > 0:
            return 1, "idle-1"
        return None

    @property
    def forced(self) -> int:
        return self.collections["forced-2"]


class IdleGC:
    """Mixed into :class:`tui.app.RouteDeckApp`: the timer that runs :class:`IdleCollector`."""

    idle_collector: IdleCollector | None = None
    _gc_threshold: tuple[int, int, int] | None = None
    _idle_froze = False  # a full collection of this app froze what survived it
    # the shell's clock and the GC it drives (a test puts a manual clock and a recorder here)
    idle_gc_clock = staticmethod(time.monotonic)
    idle_gc_counts = staticmethod(gc.get_count)
    idle_gc_collect = staticmethod(gc.collect)
    idle_gc_freeze = staticmethod(gc.freeze)
    idle_gc_unfreeze = staticmethod(gc.unfreeze)

    def idle_gc_start(self) -> None:
        """Called once the start-up heap is frozen: automatic full collections off, the timer on."""
        if self.idle_collector is not None:
            return
        self.idle_collector = IdleCollector()
        self._gc_threshold = gc.get_threshold()
        t0, t1, _ = self._gc_threshold
        gc.set_threshold(t0, t1, OUT_OF_REACH)
        self._idle_gc_timer = self.set_interval(TICK, self._idle_gc_tick, name="idle-gc")

    def idle_gc_stop(self) -> None:
        timer = getattr(self, "_idle_gc_timer", None)
        if timer is not None:
            timer.stop()
        if self._gc_threshold is not None:
            gc.set_threshold(*self._gc_threshold)
            self._gc_threshold = None
        if self._idle_froze:
            # What this app froze (its screens, say) would never be freed once the app is gone: the
            # frozen heap goes back to the GC, and the next app in this process freezes its own
            # start-up heap again (tui.shell.prewarm.freeze_startup_heap).
            from tui.shell import prewarm  # noqa: PLC0415

            self._idle_froze = False
            self.idle_gc_unfreeze()
            prewarm.startup_heap_thawed()

    def idle_gc_key(self) -> None:
        if self.idle_collector is not None:
            self.idle_collector.key(self.idle_gc_clock())

    def idle_gc_building(self) -> bool:
        """A screen is being built or shown for the first time: not idle."""
        stack = self.screen_stack
        if not stack:
            return True  # starting or closing
        screen = stack[-1]
        return not screen.is_mounted or bool(getattr(screen, "_dirty_widgets", None))

    def _idle_gc_tick(self) -> None:
        collector = self.idle_collector
        if collector is None or self._gc_threshold is None:
            return
        decision = collector.decide(self.idle_gc_clock(), self.idle_gc_counts(), self.idle_gc_building())
        if decision is not None:
            generation, why = decision
            t = time.thread_time()
            if why == "deep-2":
                self.idle_gc_unfreeze()
            self.idle_gc_collect(generation)
            if generation == 2:
                self.idle_gc_freeze()  # what survived lives on: the next full collection skips it
                self._idle_froze = True
            collector.collections[why] += 1
            spent = time.thread_time() - t  # (CPU time of this thread: what the UI did not get)
            collector.longest[why] = max(collector.longest.get(why, 0.0), spent)

    async def on_event(self, event) -> None:
        from textual import events  # noqa: PLC0415

        if isinstance(event, events.Key) and not event.is_forwarded:
            self.idle_gc_key()
        await super().on_event(event)
