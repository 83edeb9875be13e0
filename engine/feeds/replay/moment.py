"""Where to go in a recording: one parser for ``replay --at``, ``replay --reroute --at``,
``replay --transaction`` and the dashboard's ``:seek`` (issue 11 items 15 and 16).

Design decisions and invariants:

- Transactions are numbered for people 1..N in the order of the log; 0 is "before the first"
  (the empty queue). Internally a step is its 0-based index and -1 is before the first:
  :func:`transaction_number` and :func:`step_of_transaction` convert, for every output (text,
  ``--json``, the replay bar) and every input (``--transaction N``, ``#N``).
- A moment is one of: ``start`` / ``end`` (the first / last transaction's time); ``#N``
  (transaction N); ``+S`` (S seconds after the log's first transaction) / ``-S`` (S seconds
  before its last), S also a duration in the replay bar's own form (``+1h30m``, ``-45m``,
  ``+1d15h``, ``+9m05s``: days, hours, minutes, seconds in that order, each optional); ``HH:MM`` or ``HH:MM:SS`` (that clock time on the log's day: the first day
  from the log's first to its last transaction on which the time falls inside the log); an
  ISO-8601 date-time (``2026-11-21T01:30``, a space instead of ``T``, an offset or ``Z``) or date
  (its midnight; on the day the log begins, the log's start); or epoch seconds (an unsigned
  number). Signed numbers are always offsets, so ``-300`` never means 1969.
- A clock time or date without an offset is in ``tz`` (an IANA name; None = this machine's zone,
  the zone the caller shows times in).
- A time outside the log is refused with its range in words (``MomentError``, one line) —
  never clamped silently to the start or end.
- Pure: nothing here reads a clock; the log's start, end and number of transactions are passed in.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime, time as dtime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

if TYPE_CHECKING:  # the command itself is made where a moment is parsed (kept off every command's start-up)
    from engine.contract.commands import Seek

FORMS = ("start, end, #N (transaction N; #0 = before the first), +S / -S (seconds or a duration such as "
         "1h30m, after the start / before the end), HH:MM[:SS] (on the log's day), an ISO date or date-time, "
         "or epoch seconds")

_CLOCK = re.compile(r"([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}(?:\.[0-9]+)?))?")
_OFFSET = re.compile(r"[+-][0-9]+(?:\.[0-9]*)?|[+-]\.[0-9]+")
# a duration as tui.text.format.duration writes it (``1d15h``, ``1h29m58s``, ``9m05s``), any part optional
_DURATION = re.compile(r"([+-])(?=[0-9.]+[dhms])(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?"
                       r"(?:([0-9]+(?:\.[0-9]*)?|\.[0-9]+)s)?")
_EPOCH = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_MAX_TEXT = 100
# datetime works within years 1..9999; a moment outside cannot be shown (nor be in a log)
_FIRST, _LAST = -62135596800.0 + 86400, 253402300799.0 - 86400


class MomentError(ValueError):
    """A moment that does not parse or is outside the log; the message is one line."""


def transaction_number(step: int) -> int:
    """The number people see for a step index (-1 → 0, before the first)."""
    return step + 1


def step_of_transaction(n: int, transactions: int) -> int:
    """The step index of transaction ``n`` (1..N; 0 = before the first), or MomentError in words."""
    if not 0 <= n <= transactions:
        raise MomentError(f"transaction {n} is outside the log, which has {_count(transactions)} transaction"
                          f"{'s' if transactions != 1 else ''}: give 1 to {_count(transactions)}"
                          ", or 0 for before the first")
    return n - 1


def zone_of(tz: str | None) -> tzinfo | None:
    if not tz:
        return None
    if tz.upper() == "UTC":
        return timezone.utc
    return ZoneInfo(tz)


def format_moment(t: float, tz: str | None) -> str:
    """``YYYY-MM-DD HH:MM:SS ZONE`` in ``tz`` (None = this machine's zone)."""
    moment = datetime.fromtimestamp(t, zone_of(tz)) if zone_of(tz) else datetime.fromtimestamp(t).astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S %Z").strip()


def log_range(start: float, end: float, tz: str | None) -> str:
    """``the log runs from … to … (3 h 0 min)``: the range said in words."""
    return f"the log runs from {format_moment(start, tz)} to {format_moment(end, tz)} ({_span(end - start)})"


def parse_moment(text: str, *, start: float, end: float, transactions: int, tz: str | None) -> Seek:
    """``text`` (see the module docstring) → ``Seek`` (a step index or a time within [start, end])."""
    from engine.contract.commands import Seek  # noqa: PLC0415 - kept off every command's start-up (the parsers' help)

    t = " ".join(text.split())
    if not t:
        raise MomentError(f"no time given; give {FORMS}")
    if len(t) > _MAX_TEXT:
        raise MomentError(f"not a time: {t[:_MAX_TEXT]!r}…; give {FORMS}")
    low = t.lower()
    if low == "start":
        return Seek(time=start)
    if low == "end":
        return Seek(time=end)
    if t.startswith("#"):
        try:
            n = int(t[1:])
        except ValueError:
            raise MomentError(f"not a transaction number: {t!r} (give #N, N from 0 to {_count(transactions)})") from None
        return Seek(transaction=step_of_transaction(n, transactions))
    duration = _DURATION.fullmatch(t.replace(" ", "")) if t[0] in "+-" else None
    if _OFFSET.fullmatch(t) or duration:
        if duration:
            d, h, mi, s = (float(x or 0) for x in duration.groups()[1:])
            secs = (d * 86400 + h * 3600 + mi * 60 + s) * (-1 if t[0] == "-" else 1)
        else:
            secs = float(t)
        if not math.isfinite(secs) or abs(secs) > _LAST:
            raise MomentError(f"{t!r}: too many seconds; {log_range(start, end, tz)}")
        at = start + secs if t[0] == "+" else end + secs
        where = "after the start" if t[0] == "+" else "before the end"
        return Seek(time=_inside(at, start, end, tz, f"{t} ({_span(abs(secs))} {where}, {{when}})"))
    if _EPOCH.fullmatch(t):
        secs = float(t)
        if not _FIRST <= secs <= _LAST:
            raise MomentError(f"{t!r}: epoch seconds outside years 1-9999; {log_range(start, end, tz)}")
        hint = f" (for seconds after the start, write +{t})" if secs < start else ""
        return Seek(time=_inside(secs, start, end, tz, f"{t} ({{when}})", hint))
    clock = _CLOCK.fullmatch(t)
    if clock:
        return Seek(time=_clock_time(t, clock, start, end, tz))
    at = _iso(t, tz)
    if _DATE.fullmatch(t) and at < start < at + 86400:
        at = start  # a day the log begins on: from its first transaction
    return Seek(time=_inside(at, start, end, tz, f"{t} ({{when}})"))


def _clock_time(text: str, m: re.Match, start: float, end: float, tz: str | None) -> float:
    h, mi, s = int(m[1]), int(m[2]), float(m[3] or 0)
    if h > 23 or mi > 59 or s >= 60:
        raise MomentError(f"not a clock time: {text!r} (HH:MM or HH:MM:SS, 00:00 to 23:59:59)")
    zone = zone_of(tz)
    first = _local(start, zone).date()
    last = _local(end, zone).date()
    day = first
    while day <= last:
        at = _at(day, h, mi, s, zone)
        if start <= at <= end:
            return at
        day += timedelta(days=1)
    return _inside(_at(first, h, mi, s, zone), start, end, tz, f"{text} ({{when}})")


def _local(t: float, zone: tzinfo | None) -> datetime:
    return datetime.fromtimestamp(t, zone) if zone else datetime.fromtimestamp(t).astimezone()


def _at(day: date, h: int, mi: int, s: float, zone: tzinfo | None) -> float:
    whole = int(s)
    moment = datetime.combine(day, dtime(h, mi, whole, int(round((s - whole) * 1e6)) % 1000000))
    return (moment.replace(tzinfo=zone) if zone else moment.astimezone()).timestamp()


def _iso(text: str, tz: str | None) -> float:
    t = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    try:
        moment = datetime.fromisoformat(t)
    except ValueError:
        raise MomentError(f"not a time: {text!r}; give {FORMS}") from None
    if moment.tzinfo is None:
        zone = zone_of(tz)
        moment = moment.replace(tzinfo=zone) if zone else moment.astimezone()
    try:
        return moment.timestamp()
    except (OverflowError, ValueError):
        raise MomentError(f"{text!r} cannot be a time in a log") from None


def _inside(at: float, start: float, end: float, tz: str | None, said: str, hint: str = "") -> float:
    if start <= at <= end:
        return at
    when = format_moment(at, tz) if _FIRST <= at <= _LAST else "out of range"
    side = "before the start" if at < start else "after the end"
    raise MomentError(f"{said.format(when=when)} is {side} of the recording: {log_range(start, end, tz)}{hint}")


def _count(n: int) -> str:
    return f"{n:,}"


def _span(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    d, rest = divmod(s, 86400)
    h, rest = divmod(rest, 3600)
    m, sec = divmod(rest, 60)
    parts = ([f"{d} d"] if d else []) + ([f"{h} h"] if h or d else []) + [f"{m} min"]
    if sec and not d:
        parts.append(f"{sec} s")
    return " ".join(parts)
