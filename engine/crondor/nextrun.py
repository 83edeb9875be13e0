"""Next run of a crondor schedule: the correct answer (htcondor.md §2.3, product.md §4).

Design decisions and invariants:

- Start at the next whole minute strictly after ``after`` (``ts += 60 - ts % 60``), break it
  into *local wall-clock* fields of the zone, and find the smallest matching wall time at or
  after those fields, searching month, then day, then hour, then minute, as HTCondor's
  ``matchFields`` does. The wall time is turned into a time with glibc ``mktime`` semantics
  (:meth:`ZoneRules.resolve`): a time in the spring gap moves forward; in the repeated autumn
  hour the first occurrence is used. A match that resolves *before* the start (only possible when
  the start lies in the second occurrence of a repeated hour) is skipped, and the search goes on
  from the next wall minute; so the repeated hour's matches are skipped, as observed in §2.6
  #34–#37. Results are always ``> after``.
- Day selection follows the documented rule: day of month OR day of week when both are
  restricted, the weekday list alone when only the weekday is restricted. HTCondor >= 10.3
  differs (day-0 defect); :mod:`engine.crondor.schedd` predicts that.
- Leap years via ``date``; days beyond the month's length are skipped. A schedule that can never
  fire (day 30 only in February, 31 only in April) is detected up front
  (:func:`never_fires`) and raises :class:`NeverFires`; the search never loops on it.
- Speed: every field is a bit mask, month facts are cached, and wall times are plain integers
  ("wall seconds", local time counted like epoch seconds). No ``datetime`` arithmetic in the loop.
- Pure: no clock reads; ``after`` is passed in.
"""

from __future__ import annotations

import functools
from datetime import date

from .fields import Schedule
from .zones import get_zone

_EPOCH_ORD = date(1970, 1, 1).toordinal()
_DIM_MASK = tuple((1 << (n + 1)) - 2 for n in range(32))  # bits 1..n
_MAX_MONTH_STEPS = 12 * 401  # any schedule that can fire does so within 8 years; 400 is a guard
_MAX_DAYS_IN = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class CronError(ValueError):
    """A schedule that cannot produce run times; ``text`` is HTCondor's error text, if any."""

    def __init__(self, message: str, text: str | None = None) -> None:
        super().__init__(message)
        self.text = text


class InvalidSchedule(CronError):
    pass


class NeverFires(CronError):
    pass


@functools.lru_cache(maxsize=8192)
def month_info(year: int, month: int) -> tuple[int, int, int]:
    """(days from 1970-01-01 to the 1st, weekday of the 1st with Sunday = 0, days in month)."""
    o = date(year, month, 1).toordinal()
    nxt = date(year + 1, 1, 1).toordinal() if month == 12 else date(year, month + 1, 1).toordinal()
    return o - _EPOCH_ORD, o % 7, nxt - o  # toordinal(0001-01-01, a Monday) = 1, so o % 7 == 0 is Sunday


def day_mask(s: Schedule, first_weekday: int, dim: int) -> int:
    """Allowed days (bits 1..dim) of a month whose 1st falls on ``first_weekday``."""
    rule = s.day_rule
    if rule == "dom":
        m = s.dom_mask
    elif rule == "dow":
        m = s.dow_day_masks[first_weekday]
    else:
        m = s.dom_mask | s.dow_day_masks[first_weekday]
    return m & _DIM_MASK[dim]


def never_fires(s: Schedule) -> bool:
    """True when no date ever matches (only possible with no weekday restriction)."""
    if s.day_rule != "dom":
        return False
    first_day = (s.dom_mask & -s.dom_mask).bit_length() - 1
    return all(first_day > _MAX_DAYS_IN[m] for m in s.months)


def civil(days: int) -> tuple[int, int, int]:
    d = date.fromordinal(days + _EPOCH_ORD)
    return d.year, d.month, d.day


def round_up_minute(after: float) -> int:
    """The next whole minute strictly after ``after`` (floor, then ``+= 60 - t % 60``)."""
    t = int(after // 1)
    return t + 60 - t % 60


def next_wall(s: Schedule, y: int, mo: int, d: int, h: int, mi: int, day0: bool = False) -> int:
    """Smallest matching wall time >= (y, mo, d, h, mi), in wall seconds.

    With ``day0`` (the HTCondor >= 10.3 defect), once the search leaves the starting month the
    day chosen is 0, i.e. the last day of the month before, as ``mktime`` normalises it.
    """
    mm, hours, mins = s.month_mask, s.hour_mask, s.minute_mask
    if (mm >> mo) & 1:
        base, first, dim = month_info(y, mo)
        dmask = day_mask(s, first, dim)
        if (dmask >> d) & 1:
            if (hours >> h) & 1:
                x = mins >> mi
                if x:
                    return (base + d - 1) * 86400 + h * 3600 + (mi + ((x & -x).bit_length() - 1)) * 60
            x = hours >> (h + 1)
            if x:
                return (base + d - 1) * 86400 + (h + (x & -x).bit_length()) * 3600 + s.minute0 * 60
        x = dmask >> (d + 1)
        if x:
            return (base + d + (x & -x).bit_length() - 1) * 86400 + s.hour0 * 3600 + s.minute0 * 60
    for _ in range(_MAX_MONTH_STEPS):
        x = mm >> (mo + 1)
        if x:
            mo += (x & -x).bit_length()
        else:
            y += 1
            mo = s.month0
            if y > 9999:
                raise CronError("no run before the year 10000")
        base, first, dim = month_info(y, mo)
        if day0:
            return (base - 1) * 86400 + s.hour0 * 3600 + s.minute0 * 60
        dmask = day_mask(s, first, dim)
        if dmask:
            return (base + (dmask & -dmask).bit_length() - 2) * 86400 + s.hour0 * 3600 + s.minute0 * 60
    raise NeverFires("no matching date within 400 years")


def check_runnable(s: Schedule) -> None:
    if not s.valid:
        raise InvalidSchedule(f"invalid cron schedule: {s.error or '(no error text)'}", s.error)
    if never_fires(s):
        raise NeverFires("the schedule never fires: no month in CronMonth has the days in CronDayOfMonth")


def next_run(s: Schedule, after: float, zone=None) -> int:
    """The next run strictly after ``after`` (epoch seconds) in ``zone`` (default: local)."""
    check_runnable(s)
    z = get_zone(zone)
    ts = round_up_minute(after)
    wall = ts + z.offset_at(ts)
    while True:
        days, sec = divmod(wall, 86400)
        d = date.fromordinal(days + _EPOCH_ORD)
        w = next_wall(s, d.year, d.month, d.day, sec // 3600, sec % 3600 // 60)
        u = z.resolve(w)
        if u >= ts:
            return u
        wall = w + 60  # a match in the repeated hour that maps before the start: skip it


def next_runs(s: Schedule, after: float, n: int, zone=None) -> list[int]:
    """``n`` runs, chained: each run is the ``after`` of the next."""
    z = get_zone(zone)
    out = []
    t = after
    for _ in range(n):
        t = next_run(s, t, z)
        out.append(t)
    return out
