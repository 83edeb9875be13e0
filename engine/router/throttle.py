"""Per-route statistics and the failure-rate throttle, exactly as HTCondor's ``JobRoute``.

Source: htcondor.md §1.5 (``JobRoute::AdjustFailureThrottles``, ``AcceptingMoreJobs``,
``CopyState`` in ``src/condor_job_router/JobRouter.cpp``).

Design decisions and invariants:

- :class:`RouteStats` holds what HTCondor keeps per route: the *current* counts (``num_jobs``,
  ``num_running``; recomputed from the tracked jobs by the router on every poll) and the
  *recent* window (``recent_routed/succeeded/failed``, ``stats_begin_time``, ``throttle``).
  ``idle`` is derived: ``num_jobs - num_running`` (held copies and not-yet-submitted jobs count
  as idle, as in HTCondor).
- :meth:`RouteStats.adjust_failure_throttle` is the §1.5 pseudo-code line by line, including
  its quirks: the acceleration factor ``a`` is only normalised when it is positive; a throttle
  of 0 ("none") stays 0 when accelerated; the throttle is removed once it exceeds
  ``600 * threshold * 10000``; a throttle in (0, 1) becomes 1 when nothing failed; a change
  smaller than 0.0001 is not applied (``fabs(new - old) > 0.0001``). HTCondor keeps ``a`` in a
  C ``float``; we round it through IEEE single precision the same way so figures agree to the
  last digit. Every adjustment returns a :class:`ThrottleAdjustment` with the intermediate
  numbers, so tests and the UI can show the computation step by step.
- The window is tumbling: nothing happens until ``now - stats_begin_time >= 600``; then the
  counters reset and ``stats_begin_time = now`` (not ``+600``: a late poll stretches the window,
  and the rate divides by the real ``delta``).
- :func:`accepting` checks HTCondor's three conditions in HTCondor's order (throttle, idle
  limit, MaxJobs) and returns a human reason with the numbers. MaxJobs ≤ 0 reads "disabled".
- :class:`StatsBook` keeps one :class:`RouteStats` per route *name* (case-insensitive, like
  ``RoutingTable``) across table swaps (``CopyState``); a new route starts its window at the
  time it was added; a dropped route's state is forgotten (HTCondor deletes the ``JobRoute``).
- A short history of closed windows (:class:`WindowRecord`, the last ``HISTORY`` windows) is
  kept for sparklines; it is RouteDeck's addition and never feeds back into the throttle.
"""

from __future__ import annotations

from datetime import datetime, timezone

import math
import struct
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

THROTTLE_UPDATE_INTERVAL = 600  # seconds; JobRouter.cpp
HISTORY = 48  # closed windows kept for the UI (8 hours of 10-minute windows)


def _f32(x: float) -> float:
    """Round through IEEE single precision (HTCondor stores the acceleration in a C float)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def throttle_desc(throttle: float) -> str:
    """HTCondor's ``ThrottleDesc``: ``"none"`` or ``"%g jobs/sec"`` of ``throttle/600``."""
    if throttle <= 0:
        return "none"
    return "%g jobs/sec" % (throttle / THROTTLE_UPDATE_INTERVAL)


@dataclass(frozen=True)
class ThrottleAdjustment:
    """One run of ``AdjustFailureThrottles`` that closed a window, with every intermediate."""

    route: str
    time: float
    delta: float  # seconds the window lasted
    recent_routed: int
    recent_succeeded: int
    recent_failed: int
    num_jobs: int
    threshold: float
    rate: float  # recent_failed / delta
    branch: str  # "decelerate" | "accelerate"
    ratio: float | None  # decelerate: failed / (failed + num_jobs + succeeded)
    accel: float | None  # accelerate: the factor a (after +2.0)
    old_throttle: float
    computed: float  # the new throttle before the 0.0001 change test
    new_throttle: float  # what the route has now
    removed: bool  # accelerate branch hit the 600*threshold*10000 cap
    floored: bool  # 0 < t < 1 with no failures -> 1

    def explain(self) -> str:
        if self.branch == "decelerate":
            return (
                f"rate {self.recent_failed}/{self.delta:g} s = {self.rate:.6g}/s > threshold "
                f"{self.threshold:g}: ratio = {self.recent_failed}/({self.recent_failed}+"
                f"{self.num_jobs}+{self.recent_succeeded}) = {self.ratio:.6g}; throttle = 600*"
                f"{self.threshold:g}/{self.ratio:.6g} = {self.computed:.6g} jobs per 600 s"
            )
        text = (
            f"rate {self.rate:.6g}/s <= threshold {self.threshold:g} (or no failures): "
            f"a = {self.accel:.6g}; throttle {self.old_throttle:.6g} -> {self.computed:.6g}"
        )
        if self.removed:
            text += " (above 600*threshold*10000: throttle removed)"
        if self.floored:
            text += " (raised to 1: let at least one job through)"
        return text


@dataclass(frozen=True)
class WindowRecord:
    """A closed 600-second window, for the UI's sparklines."""

    end: float
    routed: int
    succeeded: int
    failed: int
    rate: float
    throttle: float  # throttle after the window closed (0 = none)


@dataclass
class RouteStats:
    """HTCondor's per-route counters (``JobRoute``), keyed by route name."""

    name: str
    stats_begin_time: float
    num_jobs: int = 0
    num_running: int = 0
    num_held: int = 0  # routed copies on hold (UI only; HTCondor counts them as idle)
    recent_routed: int = 0
    recent_succeeded: int = 0
    recent_failed: int = 0
    throttle: float = 0.0
    history: deque = field(default_factory=lambda: deque(maxlen=HISTORY))
    # the recent_* figures of every window closed so far, summed: with the open window's they
    # make counters that never go back (routedeck_route_jobs_*_total, engine.metrics)
    closed_routed: int = 0
    closed_succeeded: int = 0
    closed_failed: int = 0

    @property
    def totals(self) -> tuple[int, int, int]:
        """(started, succeeded, failed) since these statistics began: closed windows + the open one."""
        return (self.closed_routed + self.recent_routed, self.closed_succeeded + self.recent_succeeded,
                self.closed_failed + self.recent_failed)

    @property
    def idle(self) -> int:
        return self.num_jobs - self.num_running

    def reset_current(self) -> None:
        self.num_jobs = self.num_running = self.num_held = 0

    def copy_state_from(self, other: "RouteStats") -> None:
        """``JobRoute::CopyState``: only the state that cannot be recomputed from jobs."""
        self.recent_routed = other.recent_routed
        self.stats_begin_time = other.stats_begin_time
        self.recent_failed = other.recent_failed
        self.recent_succeeded = other.recent_succeeded
        self.throttle = other.throttle
        self.history = other.history
        self.closed_routed, self.closed_succeeded, self.closed_failed = (
            other.closed_routed, other.closed_succeeded, other.closed_failed)

    def failure_rate(self, now: float) -> float:
        """Failures per second in the current (open) window."""
        delta = now - self.stats_begin_time
        return self.recent_failed / delta if delta > 0 else 0.0

    def next_reevaluation(self) -> float:
        return self.stats_begin_time + THROTTLE_UPDATE_INTERVAL

    def adjust_failure_throttle(self, now: float, threshold: float) -> ThrottleAdjustment | None:
        """``AdjustFailureThrottles``; returns None while the window is still open."""
        delta = now - self.stats_begin_time
        if delta < THROTTLE_UPDATE_INTERVAL:
            return None
        old = self.throttle
        failed, succeeded = self.recent_failed, self.recent_succeeded
        computed, rate, branch, ratio, accel, removed, floored = next_throttle(
            old, delta, failed, succeeded, self.num_jobs, threshold)
        if math.fabs(computed - old) > 0.0001:
            self.throttle = computed
        record = ThrottleAdjustment(
            route=self.name, time=now, delta=delta, recent_routed=self.recent_routed,
            recent_succeeded=succeeded, recent_failed=failed, num_jobs=self.num_jobs,
            threshold=threshold, rate=rate, branch=branch, ratio=ratio, accel=accel,
            old_throttle=old, computed=computed, new_throttle=self.throttle,
            removed=removed, floored=floored,
        )
        self.history.append(WindowRecord(now, self.recent_routed, succeeded, failed, rate, self.throttle))
        self.stats_begin_time = now
        self.closed_routed += self.recent_routed
        self.closed_succeeded += succeeded
        self.closed_failed += failed
        self.recent_routed = 0
        self.recent_failed = 0
        self.recent_succeeded = 0
        return record


def next_throttle(old: float, delta: float, failed: int, succeeded: int, num_jobs: int,
                  threshold: float) -> tuple:
    """The arithmetic of ``AdjustFailureThrottles`` for one closed window of ``delta`` seconds:
    (computed throttle, failure rate, branch, ratio, acceleration, removed, floored); the
    throttle becomes the computed one when it differs by more than 0.0001
    (:meth:`RouteStats.adjust_failure_throttle`; ``engine.record.counts.fold`` folds only this)."""
    new = old
    rate = failed * 1.0 / delta
    ratio = accel = None
    removed = floored = False
    if rate > threshold and failed:
        branch = "decelerate"
        non_failures = num_jobs + succeeded
        ratio = failed / (failed + non_failures)
        new = THROTTLE_UPDATE_INTERVAL * threshold / ratio
    else:
        branch = "accelerate"
        a = _f32(3.0 * succeeded - 2.0 * failed)
        if a > 0:
            a = _f32(a / (succeeded + failed))
        a = _f32(a + 2.0)
        accel = a
        if a > 1.0:
            new = new * a
        if new > THROTTLE_UPDATE_INTERVAL * threshold * 10000:
            new = 0.0
            removed = True
        if 0 < new < 1 and failed == 0:
            new = 1.0
            floored = True
    return new, rate, branch, ratio, accel, removed, floored


# ------------------------------------------------------------------------------------------
# accepting more jobs


def _route_limits(route: Any) -> tuple[int, int]:
    return int(getattr(route, "max_jobs", 100)), int(getattr(route, "max_idle_jobs", 50))


def accepting(route: Any, stats: RouteStats) -> tuple[bool, str | None]:
    """``JobRoute::AcceptingMoreJobs`` with the reason when it is false (htcondor.md §1.5)."""
    ok, _state, reason = route_state(route, stats)
    return ok, reason


def _utc(t: float) -> str:
    """A moment as operators read it (issue 29: the reason showed raw epoch seconds)."""
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def route_state(route: Any, stats: RouteStats) -> tuple[bool, str, str | None]:
    """(accepting, state for the board, reason with the numbers)."""
    max_jobs, max_idle = _route_limits(route)
    if stats.throttle > 0 and stats.throttle <= stats.recent_routed:
        return False, "throttled", (
            f"throttled: {stats.recent_routed} routed ≥ throttle {stats.throttle:.3g} per "
            f"{THROTTLE_UPDATE_INTERVAL} s (until the window closes at "
            f"{_utc(stats.stats_begin_time + THROTTLE_UPDATE_INTERVAL)})"
        )
    if max_idle >= 0 and max_idle <= stats.idle:
        return False, "idle-limit", f"idle limit: {stats.idle} idle ≥ MaxIdleJobs {max_idle}"
    if not stats.num_jobs < max_jobs:
        if max_jobs <= 0:
            return False, "disabled", f"disabled: MaxJobs {max_jobs} ≤ 0"
        return False, "full", f"full: {stats.num_jobs} ≥ MaxJobs {max_jobs}"
    return True, "accepting", None


def count_limit(route: Any, stats: RouteStats) -> int:
    """The smallest ``num_jobs`` at which :func:`route_state` can say "full" or "idle-limit"
    (``num_running`` fixed): below it, with no throttle, the route accepts. The router's choice
    loop asks ``route_state`` again only from there on."""
    max_jobs, max_idle = _route_limits(route)
    return min(max_jobs, max_idle + stats.num_running) if max_idle >= 0 else max_jobs


# ------------------------------------------------------------------------------------------
# per-name book kept across table swaps


class StatsBook:
    """One :class:`RouteStats` per route name, surviving table swaps (``CopyState``)."""

    def __init__(self) -> None:
        self._by_key: dict[str, RouteStats] = {}

    def sync(self, names: Iterable[str], now: float) -> None:
        """Make the book hold exactly ``names``: keep existing state, start new routes at ``now``."""
        fresh: dict[str, RouteStats] = {}
        for name in names:
            key = name.lower()
            old = self._by_key.get(key)
            stats = RouteStats(name=name, stats_begin_time=now)
            if old is not None:
                stats.copy_state_from(old)
            fresh[key] = stats
        self._by_key = fresh

    def get(self, name: str) -> RouteStats | None:
        return self._by_key.get(name.lower()) if name else None

    def __iter__(self):
        return iter(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)
