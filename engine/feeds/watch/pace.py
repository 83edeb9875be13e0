"""How fast a watched log's own clock runs (``Snapshot.log_rate``).

Watch has no speed: it is live. What it can say is how fast the log's own clock (its
transactions' ``106 #`` times) advances against the injected clock — a log written by
``routedeck demo --speed 30`` runs at ×30 — measured by :class:`LogPace` from the transactions
already read, and put in ``Snapshot.log_rate`` only when clearly not real time.
"""

from __future__ import annotations

from collections import deque

PACE_WINDOW = 20.0  # seconds of the injected clock the log's pace is measured over
PACE_MIN_SPAN = 5.0  # ... at least this many between two readings (a poll's latency is a second or less)
PACE_CLEAR = 1.5  # a pace within this factor of real time is real time: nothing to say


class LogPace:
    """How fast a watched log's clock advances: log seconds per second of the injected clock.

    ``saw(now, newest)`` is told, after each poll, the newest transaction time read so far and
    the clock's time. Only polls that read newer transactions count (an idle schedd writes
    nothing: that is not a log clock standing still), and a backlog read in one poll is a single
    reading (its hours of log time took no clock time to write). The pace is the log time between
    the oldest reading of the last ``PACE_WINDOW`` seconds and the newest, over the clock time
    between them; none while they are less than ``PACE_MIN_SPAN`` apart or the newest is older
    than the window (the log stopped: no pace to claim; when it resumes, the pace is measured
    afresh, not across the pause)."""

    def __init__(self) -> None:
        self.readings: deque[tuple[float, float]] = deque()  # (clock time, newest log time)

    def saw(self, now: float, newest: float | None) -> None:
        r = self.readings
        if newest is None or (r and newest <= r[-1][1]):
            return
        if r and now <= r[-1][0]:
            r[-1] = (r[-1][0], newest)  # more read at the same instant: one reading
        else:
            r.append((now, newest))
        while r[0][0] < now - PACE_WINDOW:
            r.popleft()  # only the window's readings: after a pause the log's pace starts again

    def rate(self, now: float) -> float | None:
        r = self.readings
        if len(r) < 2 or now - r[-1][0] > PACE_WINDOW:
            return None
        (t0, log0), (t1, log1) = r[0], r[-1]
        if t1 - t0 < PACE_MIN_SPAN:
            return None
        return (log1 - log0) / (t1 - t0)

    def shown(self, now: float) -> float | None:
        """The pace when it is clearly not real time (``PACE_CLEAR``), else None."""
        rate = self.rate(now)
        if rate is None or 1 / PACE_CLEAR <= rate <= PACE_CLEAR:
            return None
        return rate

    def reset(self) -> None:
        self.readings.clear()
