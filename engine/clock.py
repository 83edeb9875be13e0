"""Clocks: the only place in the engine that reads real time.

Everything else takes ``now`` (float epoch seconds) or a :class:`Clock`. The clocks:

- :class:`SystemClock` — the wall clock, for ``watch`` mode.
- :class:`ManualClock` — moved only by ``set``/``advance``, never backwards; tests and replay.
- :class:`VirtualClock` — runs from a chosen start at ``speed`` × real time and can be paused;
  the demo uses it so a 600 s throttle window passes in seconds.
- :class:`LogClock` — watch: the followed log's own clock when its times are virtual.

Invariant: ``now()`` of any clock never decreases.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Current time, epoch seconds."""
        ...


class ClockError(ValueError):
    """Raised when a clock is asked to go backwards or to run at an invalid speed."""


class SystemClock:
    """The wall clock (monotonic-guarded so it never steps backwards)."""

    def __init__(self) -> None:
        self._last = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        t = time.time()
        with self._lock:
            if t < self._last:
                t = self._last
            self._last = t
        return t


class ManualClock:
    """A clock that only moves when told to; refuses to go backwards."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def set(self, t: float) -> None:
        if t < self._now:
            raise ClockError(f"ManualClock cannot go backwards: {t} < {self._now}")
        self._now = float(t)

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ClockError(f"ManualClock cannot advance by a negative amount: {seconds}")
        self._now += seconds
        return self._now


class VirtualClock:
    """Virtual time = start + speed × elapsed real (monotonic) time, pausable.

    ``speed`` and pause changes re-anchor the clock, so virtual time is continuous across them.
    ``jump_to`` moves virtual time forward (used by "step" and by maximum-speed runs).
    """

    def __init__(self, start: float, speed: float = 1.0, paused: bool = False) -> None:
        if speed <= 0:
            raise ClockError(f"speed must be positive, not {speed}")
        self._lock = threading.Lock()
        self._anchor_virtual = float(start)
        self._anchor_real = time.monotonic()
        self._speed = float(speed)
        self._paused = paused

    def _current(self, real: float) -> float:
        if self._paused:
            return self._anchor_virtual
        return self._anchor_virtual + (real - self._anchor_real) * self._speed

    def _reanchor(self) -> None:
        real = time.monotonic()
        self._anchor_virtual = self._current(real)
        self._anchor_real = real

    def now(self) -> float:
        with self._lock:
            return self._current(time.monotonic())

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def paused(self) -> bool:
        return self._paused

    def set_speed(self, speed: float) -> None:
        if speed <= 0:
            raise ClockError(f"speed must be positive, not {speed}")
        with self._lock:
            self._reanchor()
            self._speed = float(speed)

    def pause(self) -> None:
        with self._lock:
            self._reanchor()
            self._paused = True

    def resume(self) -> None:
        with self._lock:
            self._reanchor()
            self._paused = False

    def jump_to(self, t: float) -> None:
        with self._lock:
            self._reanchor()
            if t < self._anchor_virtual:
                raise ClockError(f"VirtualClock cannot go backwards: {t} < {self._anchor_virtual}")
            self._anchor_virtual = float(t)

    def real_seconds_until(self, t: float) -> float:
        """Real seconds to wait until virtual time reaches ``t`` (inf while paused)."""
        with self._lock:
            if self._paused:
                return float("inf")
            return max(0.0, (t - self._current(time.monotonic())) / self._speed)


LOG_CLOCK_SKEW = 3600.0  # a log whose times are this far from the base clock is on its own clock


class LogClock:
    """The clock of a followed log (watch): a log written in virtual time (a demo recording) is
    watched on the log's own clock, a live schedd's log on the base clock.

    ``saw(t)`` is told the time of each transaction read (its ``106 #`` comment). While the log's
    newest time lies within ``LOG_CLOCK_SKEW`` of the base clock, ``now()`` is the base clock;
    otherwise ``now()`` is the newest log time plus the base clock's seconds since it was read.
    Never goes backwards, except once when the log is first found on its own clock: until then
    ``now()`` was the base clock (nothing read yet), and the log's time must replace it, or a
    demo recording watched today would show today's time (``_last`` kept it) for ever."""

    def __init__(self, base: Clock) -> None:
        self.base = base
        self._log: float | None = None
        self._read_at = 0.0
        self._last = float("-inf")
        self.on_log = False  # True once the log's times were found far from the base clock

    def saw(self, t: float) -> None:
        base = self.base.now()
        if self._log is None or t >= self._log:
            self._log, self._read_at = t, base
            # judged on the newest time (a log read from its start begins with old ones)
            on_log = abs(t - base) > LOG_CLOCK_SKEW
            if on_log != self.on_log:
                self._last = float("-inf")  # a switch of clocks: the other clock's times do not bind
            self.on_log = on_log

    def now(self) -> float:
        base = self.base.now()
        t = self._log + (base - self._read_at) if self.on_log and self._log is not None else base
        self._last = max(self._last, t)
        return self._last


def stopwatch() -> Callable[[], float]:
    """Seconds of real time since the call (monotonic). Only for *reporting* how long a real
    process ran (a hook's duration on the Hooks screen); nothing the engine decides reads it.
    Tests replace ``engine.hookrun.stopwatch`` to freeze the figure."""
    t0 = time.monotonic()
    return lambda: time.monotonic() - t0


def duration(seconds: float) -> str:
    """How a span of time is written, on the screens and by the headless commands (one format):
    ``4m12s``, ``1h27m53s``, ``1d11h``; negative values get a minus sign."""
    sign = "-" if seconds < 0 else ""
    s = int(abs(seconds))
    d, s = divmod(s, 86_400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    if d:
        return f"{sign}{d}d{h}h"
    if h:
        return f"{sign}{h}h{m:02d}m{s:02d}s"
    if m:
        return f"{sign}{m}m{s:02d}s"
    return f"{sign}{s}s"
