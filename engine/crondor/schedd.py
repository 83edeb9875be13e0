"""What a real HTCondor >= 10.3 schedd computes for a schedule (bug-compatible prediction).

Design decisions and invariants (htcondor.md §2.3 items 1–5, §2.6):

- Same search as :mod:`engine.crondor.nextrun` (month, day, hour, minute on local wall-clock
  fields), with HTCondor's two observable differences:
  1. **Day-0 defect** (since 10.3, ``new std::vector<int>(31)``): when the day of month is
     unrestricted and the day of week has 1–6 days, the day list holds 31 zeros. They are skipped
     in the starting month but chosen as soon as the search moves to a later month; ``mktime``
     turns day 0 into the last day of the month before, at the first allowed hour:minute.
  2. **Past-time fallback**: when the ``mktime`` result is earlier than the rounded start
     (day 0 in the past, or a start inside the repeated autumn hour), HTCondor returns
     ``time(NULL) + 120``. That is a wall-clock read; here it is ``now + 120`` with ``now``
     passed in (the schedd's evaluation time; for a chain, the ``after`` of that step).
- ``mktime`` is emulated with glibc's state (:class:`MktimeState`): the occurrence picked in a
  repeated autumn hour depends on the previous ``mktime`` call in the schedd process. A chain
  (:func:`schedd_runs`) starts from a fresh process, as the oracle harness did; the embedded
  schedd keeps one state for all its jobs, as a real schedd process does.
- The start is rounded with C semantics (``ts += 60 - ts % 60`` with a truncating ``%``); for
  times after 1970 this is the same as the correct engine's rounding.
- A schedule that can never fire makes HTCondor recurse without end (crash or hang; §2.3 item 6).
  We raise :class:`NeverFires` instead of predicting a hang.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from .fields import Schedule
from .nextrun import _EPOCH_ORD, check_runnable, next_wall
from .zones import MktimeState, get_zone, glibc_mktime

FALLBACK_SECONDS = 120


@dataclass(frozen=True)
class ScheddRun:
    time: int
    fallback: bool  # True when HTCondor fell back to now + 120


def c_round_up_minute(timestamp: int) -> int:
    r = timestamp % 60 if timestamp >= 0 else -((-timestamp) % 60)  # C's truncating remainder
    return timestamp + 60 - r


def schedd_next_run(
    s: Schedule, after: float, zone=None, now: float | None = None, mktime: MktimeState | None = None
) -> ScheddRun:
    """HTCondor's ``CronTab::nextRunTime(after)`` in ``zone``; ``now`` (default ``after``) stands
    for the wall clock read by the fallback; ``mktime`` is the process's glibc state (default: a
    fresh process)."""
    check_runnable(s)
    z = get_zone(zone)
    ts = c_round_up_minute(int(after // 1))
    wall = ts + z.offset_at(ts)
    days, sec = divmod(wall, 86400)
    d = date.fromordinal(days + _EPOCH_ORD)
    w = next_wall(s, d.year, d.month, d.day, sec // 3600, sec % 3600 // 60, day0=s.schedd_defect)
    u = glibc_mktime(z, w, mktime if mktime is not None else MktimeState())
    if u < ts:
        base = after if now is None else now
        return ScheddRun(int(base // 1) + FALLBACK_SECONDS, True)
    return ScheddRun(u, False)


def schedd_runs(s: Schedule, after: float, n: int, zone=None) -> list[ScheddRun]:
    """``n`` chained schedd runs in one fresh schedd process; each step's fallback uses that
    step's ``after`` as ``now``."""
    z = get_zone(zone)
    state = MktimeState()
    out = []
    t = after
    for _ in range(n):
        r = schedd_next_run(s, t, z, now=t, mktime=state)
        out.append(r)
        t = r.time
    return out
