"""Time zones for crondor: UTC offsets and glibc ``mktime`` resolution, fast.

Design decisions and invariants:

- HTCondor computes next runs on local wall-clock fields and turns them back into a time with
  ``mktime(tm_isdst=-1)`` (htcondor.md §2.3 items 2, 5, 7). We emulate glibc as observed in the
  oracle: a wall time in a spring-forward gap is read with the offset in force *before* the
  change (02:30 becomes 03:30 CDT), and an ambiguous wall time in the repeated autumn hour is the
  *first* occurrence. Both are Python's ``fold=0`` rule.
- Speed: a :class:`ZoneRules` finds the zone's transitions once (sampling ``zoneinfo`` every 6
  hours over whole years, then bisecting to the second) and answers ``offset_at`` and
  ``resolve`` with one ``bisect`` each. Coverage grows on demand in two-year chunks; a lookup
  more than ten years away starts a fresh window instead. Two transitions less than 6 hours
  apart would be seen as one; no real zone has that since 1970. The span between two
  transitions that answered the last lookup is kept (one for ``offset_at``, one for
  ``resolve``): chained next runs stay in one span for months, so most lookups are one range
  check, as cheap as a fixed zone's (issue 30: the zone was what made Chicago slower than UTC).
- ``resolve(W)`` for wall seconds ``W`` (local time counted like epoch seconds): a transition at
  UTC ``t`` from offset ``ob`` to ``oa`` applies to wall times ``>= t + max(ob, oa)``; below
  that (which includes the gap and the repeated hour) ``ob`` is used.
- The schedd prediction needs glibc exactly, and glibc's ``mktime`` is stateful: it starts probing
  from the offset of the *previous* call in the process (0 in a fresh process). Checked against
  glibc 2.36 through ctypes: a gap time always moves forward, whatever the state; an ambiguous
  time resolves to the occurrence the probe lands on (fresh process: first occurrence west of
  UTC, second east of it, e.g. Europe/Riga 03:00 on 2021-10-31 is EET, as in the oracle).
  :class:`MktimeState` carries that state; :func:`glibc_mktime` emulates one call.
- Nothing here reads the clock. The default zone is the process's local zone, read from ``TZ``
  or ``/etc/localtime`` (configuration, not time).
"""

from __future__ import annotations

import bisect
import os
import threading
from datetime import datetime, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_UTC_NAMES = {"UTC", "Etc/UTC", "GMT", "Etc/GMT", "UCT", "Etc/UCT", "Zulu", "Etc/Zulu", "Universal", "Z"}
_STEP = 6 * 3600
_CHUNK = 2 * 366 * 86400
_MARGIN = 2 * 86400
_FAR = 10 * 366 * 86400


class ZoneError(ValueError):
    """An unknown time zone name."""


class FixedZone:
    """A zone with one offset forever (UTC)."""

    def __init__(self, name: str = "UTC", offset: int = 0, tz: tzinfo | None = None) -> None:
        self.name = name
        self.offset = offset
        self.tzinfo = tz or timezone.utc
        self.has_transitions = False

    def offset_at(self, u: int) -> int:
        return self.offset

    def resolve(self, wall: int) -> int:
        return wall - self.offset

    def transitions_between(self, a: int, b: int) -> list[tuple[int, int, int]]:
        return []

    def __repr__(self) -> str:
        return f"FixedZone({self.name!r})"


class ZoneRules:
    """Offsets and wall-time resolution of one IANA zone (see the module docstring)."""

    has_transitions = True

    def __init__(self, tz: ZoneInfo, name: str | None = None) -> None:
        self.tzinfo = tz
        self.name = name or str(tz.key or "localtime")
        self._lock = threading.Lock()
        # One tuple, replaced as a whole, so a reader in another thread never mixes versions:
        # (UTC instants of changes, wall thresholds, offs) where offs[k] is the offset before
        # change k and offs[-1] the one after the last.
        self._state: tuple[list[int], list[int], list[int]] = ([], [], [0])
        self._lo = self._hi = None  # covered UTC range, inclusive
        self._safe = (1, 0)  # (lo, hi) inside which lookups need no extension
        # (lo, hi, offset) of the last answer: the offset holds for lo <= x < hi (UTC for
        # offset_at, wall seconds for resolve); empty until the first lookup
        self._uspan = (1, 0, 0)
        self._wspan = (1, 0, 0)

    def _off(self, u: int) -> int:
        return int(datetime.fromtimestamp(u, self.tzinfo).utcoffset().total_seconds())

    def _scan(self, a: int, b: int, o_a: int) -> list[tuple[int, int, int]]:
        """Transitions in (a, b] given the offset at ``a``: [(t, before, after), …]."""
        out = []
        prev, o_prev = a, o_a
        t = a
        while t < b:
            t = min(t + _STEP, b)
            o = self._off(t)
            if o != o_prev:
                lo, hi = prev, t
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    if self._off(mid) == o_prev:
                        lo = mid
                    else:
                        hi = mid
                out.append((hi, o_prev, self._off(hi)))
                o_prev = o
            prev = t
        return out

    def _cover(self, u: int) -> None:
        with self._lock:
            if self._lo is None or not self._lo - _FAR <= u <= self._hi + _FAR:
                # first use, or far away: start a fresh window rather than scan every year between
                lo, hi = u - _CHUNK, u + _CHUNK
                o_lo = self._off(lo)
                found = self._scan(lo, hi, o_lo)
                offs = [o_lo] + [f[2] for f in found]
                self._set(lo, hi, [f[0] for f in found], offs)
                return
            trans, _thr, offs = (list(x) for x in self._state)
            lo, hi = self._lo, self._hi
            while u - _MARGIN < lo:
                new_lo = lo - _CHUNK
                o_new = self._off(new_lo)
                found = self._scan(new_lo, lo, o_new)
                trans = [f[0] for f in found] + trans
                offs = [o_new] + [f[2] for f in found] + offs[1:]
                lo = new_lo
            while u + _MARGIN > hi:
                new_hi = hi + _CHUNK
                found = self._scan(hi, new_hi, offs[-1])
                trans += [f[0] for f in found]
                offs += [f[2] for f in found]
                hi = new_hi
            self._set(lo, hi, trans, offs)

    def _set(self, lo: int, hi: int, trans: list[int], offs: list[int]) -> None:
        thr = [t + max(b, a) for t, b, a in zip(trans, offs, offs[1:])]
        self._state = (trans, thr, offs)
        self._lo, self._hi = lo, hi
        self._safe = (lo + _MARGIN, hi - _MARGIN)

    def offset_at(self, u: int) -> int:
        """UTC offset (seconds east) in force at UTC instant ``u``."""
        lo, hi, off = self._uspan
        if lo <= u < hi:
            return off
        self._uspan = span = self._span(u, 0)
        return span[2]

    def resolve(self, wall: int) -> int:
        """glibc ``mktime(tm_isdst=-1)`` of wall seconds ``wall`` (gap: forward; repeat: first)."""
        lo, hi, off = self._wspan
        if lo <= wall < hi:
            return wall - off
        self._wspan = span = self._span(wall, 1)
        return wall - span[2]

    def _span(self, x: int, which: int) -> tuple[int, int, int]:
        """(lo, hi, offset) around ``x`` inside the covered range: ``which`` 0 bisects the UTC
        instants of changes (``offset_at``), 1 the wall thresholds (``resolve``)."""
        lo, hi = self._safe
        if not lo <= x <= hi:
            self._cover(x)
            lo, hi = self._safe
        state = self._state
        bounds, offs = state[which], state[2]
        i = bisect.bisect_right(bounds, x)
        return (max(lo, bounds[i - 1]) if i else lo, min(hi + 1, bounds[i]) if i < len(bounds) else hi + 1, offs[i])

    def transitions_between(self, a: int, b: int) -> list[tuple[int, int, int]]:
        """[(utc instant, offset before, offset after)] for transitions in [a, b]."""
        self.offset_at(a)
        self.offset_at(b)
        trans, _thr, offs = self._state
        i, j = bisect.bisect_left(trans, a), bisect.bisect_right(trans, b)
        return [(trans[k], offs[k], offs[k + 1]) for k in range(i, j)]

    def __repr__(self) -> str:
        return f"ZoneRules({self.name!r})"


class MktimeState:
    """glibc's process-wide ``localtime_offset`` (``W - t`` of the previous ``mktime`` call)."""

    __slots__ = ("guess",)

    def __init__(self, guess: int = 0) -> None:
        self.guess = guess


def glibc_mktime(zone: FixedZone | ZoneRules, wall: int, state: MktimeState | None = None) -> int:
    """``mktime(tm_isdst=-1)`` of normalised wall seconds, updating ``state`` like glibc."""
    guess = 0 if state is None else state.guess
    t = wall - guess
    for _ in range(6):
        gt = wall - zone.offset_at(t)
        if gt == t:
            break
        t = gt
    else:
        t = zone.resolve(wall)  # no fixed point: a spring-forward gap, always moved forward
    if state is not None:
        state.guess = wall - t
    return t


UTC = FixedZone()
_CACHE: dict[object, FixedZone | ZoneRules] = {}


def local_zone_name() -> str | None:
    """The IANA name of the process's local zone, from ``TZ`` or the ``/etc/localtime`` link."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz:
        return tz
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        return None
    marker = "zoneinfo/"
    if marker in target:
        return target.split(marker, 1)[1]
    return None


def get_zone(zone: object = None) -> FixedZone | ZoneRules:
    """A zone object for a name, a ``ZoneInfo``, an existing zone object, or ``None`` (local)."""
    if isinstance(zone, (FixedZone, ZoneRules)):
        return zone
    if zone is None:
        name = local_zone_name()
        if name is None:
            return _from_localtime_file()
        try:
            return get_zone(name)
        except ZoneError:  # e.g. a POSIX TZ rule string that is not a zone name
            return _from_localtime_file()
    cached = _CACHE.get(zone)
    if cached is not None:
        return cached
    if isinstance(zone, str):
        if zone in _UTC_NAMES:
            result: FixedZone | ZoneRules = FixedZone(zone)
        else:
            try:
                result = ZoneRules(ZoneInfo(zone), zone)
            except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
                raise ZoneError(f"unknown time zone {zone!r}") from exc
    elif isinstance(zone, ZoneInfo):
        result = FixedZone(zone.key, 0, zone) if zone.key in _UTC_NAMES else ZoneRules(zone)
    elif zone is timezone.utc:
        result = UTC
    else:
        raise ZoneError(f"unsupported time zone object {zone!r}")
    _CACHE[zone] = result
    return result


def _from_localtime_file() -> FixedZone | ZoneRules:
    cached = _CACHE.get("<localtime>")
    if cached is not None:
        return cached
    try:
        with open("/etc/localtime", "rb") as fh:
            result: FixedZone | ZoneRules = ZoneRules(ZoneInfo.from_file(fh, key="localtime"), "localtime")
    except OSError:
        result = UTC
    _CACHE["<localtime>"] = result
    return result
