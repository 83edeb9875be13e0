"""The time of each replay step.

Source: product.md §2 "Record times"; htcondor.md §3.2 (``106 # <ISO-8601 local time with
microseconds>[ NONDURABLE]`` when ``SCHEDD_JOB_QUEUE_TIMESTAMPS`` is on) and §3.1 (the 107's
``CreationTimestamp``). Design decisions and invariants:

- A step's time comes, in this order of preference, from its ``106 #`` comment (``COMMENT``);
  else from the largest epoch value among the time attributes the step sets (``SET``:
  ``EnteredCurrentStatus``, ``QDate``, ``JobCurrentStartDate``, … — a transaction happens no
  earlier than the latest time it writes); else it is carried from the step before
  (``CARRIED``). Leading steps with no time take the log's ``CreationTimestamp`` when there is
  one, else the first time found later.
- Times are made non-decreasing (a step is never earlier than the one before) so that "seek to
  a time" is a bisection; a clamped step keeps its source flag.
- The comment's time is local time without an offset (HTCondor writes the schedd's local
  time). It is read in ``tz`` (an IANA name; default: this machine's zone, which is what an
  admin replaying a log on the schedd host expects). An explicit offset in the text wins.
- Only plain numeric values count as times (an expression such as ``time()`` does not), and
  only values after 1990 (epoch 631152000), so a stray 0 never pulls a time to 1970.
"""

from __future__ import annotations

import functools
import re
from array import array
from datetime import datetime
from zoneinfo import ZoneInfo

COMMENT, SET, CARRIED = 0, 1, 2
SOURCE_NAMES = {COMMENT: "comment", SET: "inferred", CARRIED: "carried"}

# Attributes the schedd, shadow and router set to "now" when something happens (lower-case).
TIME_ATTRS = frozenset(
    name.lower()
    for name in (
        "EnteredCurrentStatus", "QDate", "JobCurrentStartDate", "JobStartDate", "CompletionDate",
        "JobCurrentStartExecutingDate", "LastMatchTime", "ShadowBday", "LastHoldTime",
        "LastReleaseTime", "LastSuspensionTime", "LastVacateTime", "JobLastStartDate",
        "LastJobLeaseRenewal", "JobFinishedHookDone", "LastRemoteStatusUpdate", "LastRejMatchTime",
        "StageInStart", "StageInFinish", "StageOutStart", "StageOutFinish", "JobLeaseExpiration",
    )
)
MIN_EPOCH = 631152000.0  # 1990-01-01


# a naive ISO time as the schedd writes it: (the minute, the seconds)
_MINUTE_SECONDS = r"(\d{4}-\d\d-\d\dT\d\d:\d\d):(\d\d(?:\.\d{1,6})?)"
_ISO_NAIVE = re.compile(_MINUTE_SECONDS + r"\Z")
# the comment as the schedd writes it; also matched inside ``engine.queue.steps.PLAIN_TXN`` (its
# groups 3 and 4), whose time is then ``stamp_time``'s
STAMP = "# " + _MINUTE_SECONDS
_STAMP_LINE = re.compile("106 " + STAMP).fullmatch


@functools.lru_cache(maxsize=4096)
def _minute(prefix: str, tz: str | None) -> float | None:
    """Epoch seconds of a naive ``YYYY-MM-DDTHH:MM`` in ``tz`` (this machine's zone when None);
    a zone's offset does not change within a minute."""
    try:
        moment = datetime.fromisoformat(prefix)
    except ValueError:
        return None
    moment = moment.replace(tzinfo=ZoneInfo(tz)) if tz else moment.astimezone()
    return moment.timestamp()


def minute_time(minute: str, tz: str | None = None) -> float | None:
    """Epoch seconds of a ``STAMP``'s minute (``YYYY-MM-DDTHH:MM``), or None when it is no date:
    :func:`stamp_time` is this plus the seconds (a caller reading many stamps of few minutes
    keeps these)."""
    return _minute(minute, tz)


def stamp_time(minute: str, seconds: str, tz: str | None = None) -> float | None:
    """Epoch seconds of a ``STAMP``'s (minute, seconds), or None when the minute is no date
    (:func:`parse_comment_time` then reads the whole comment)."""
    base = _minute(minute, tz)
    return None if base is None else base + float(seconds)


def parse_comment_time(comment: str, tz: str | None = None) -> float | None:
    """Epoch seconds of a ``106`` line's ``# <time>[ NONDURABLE]`` comment, or None."""
    m = _STAMP_LINE(comment)
    if m is not None:  # the line as the schedd writes it: what the steps below come to, at once
        t = stamp_time(m.group(1), m.group(2), tz)
        if t is not None:
            return t
    text = comment.strip()
    if text.startswith("106"):
        text = text[3:].strip()
    if not text.startswith("#"):
        return None
    text = text[1:].strip()
    if text.endswith("NONDURABLE"):
        text = text[: -len("NONDURABLE")].strip()
    if not text:
        return None
    m = _ISO_NAIVE.match(text)
    if m is not None:  # the common form: one parse per minute, the seconds added
        t = stamp_time(m.group(1), m.group(2), tz)
        if t is not None:
            return t
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        if tz:
            moment = moment.replace(tzinfo=ZoneInfo(tz))
        else:
            moment = moment.astimezone()  # naive = this machine's local time
    return moment.timestamp()


def _time_value(value: str) -> float | None:
    try:
        t = float(value)
    except ValueError:
        return None
    return t if t >= MIN_EPOCH else None


def step_time(records: list, end_line: str | None, tz: str | None = None) -> tuple[float | None, int]:
    """A step's own time and where it comes from (module docstring): (its ``106 #`` comment's
    time, ``COMMENT``), else (the largest time attribute it sets, ``SET``), else (None,
    ``CARRIED``). ``records``: ``(op, key, name, value)`` tuples."""
    t = parse_comment_time(end_line, tz) if end_line and "#" in end_line else None
    if t is not None:
        return t, COMMENT
    best = None
    for op, _key, name, value in records:
        if op == 103 and name.lower() in TIME_ATTRS:
            v = _time_value(value)
            if v is not None and (best is None or v > best):
                best = v
    return best, (CARRIED if best is None else SET)


class TimeInference:
    """Collects one time per step during the index pass; ``finish`` returns the arrays."""

    def __init__(self, creation_timestamp: float | None = None, tz: str | None = None) -> None:
        self._creation = creation_timestamp
        self._tz = tz
        self._times: list[float | None] = []
        self._sources = bytearray()
        self.comments = 0

    def add_step(self, records: list, end_line: str | None) -> None:
        t, source = step_time(records, end_line, self._tz)
        if source == COMMENT:
            self.comments += 1
        self._times.append(t)
        self._sources.append(source)

    def finish(self) -> tuple[array, bytearray]:
        times = array("d")
        first = self._creation
        if first is None:
            first = next((t for t in self._times if t is not None), 0.0)
        last = first
        for t in self._times:
            if t is None or t < last:
                t = last
            times.append(t)
            last = t
        return times, self._sources
