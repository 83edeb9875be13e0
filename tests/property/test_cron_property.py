"""Property tests for crondor next runs (htcondor.md §2.3).

- ``next_run`` against a brute-force reference that walks wall-clock minutes with ``zoneinfo``
  (gap times moved forward, repeated-hour times read as the first occurrence: §2.3 item 7),
  over random schedules, starts and zones, including Lord Howe's 30-minute DST.
- ``schedd_next_run`` against a literal Python port of HTCondor's recursive ``matchFields``
  with the ``std::vector<int>(31)`` day list (§2.3 item 4).
- ``glibc_mktime`` against the real glibc ``mktime`` through ctypes (Linux only).
"""

from __future__ import annotations

import ctypes
import functools
import ctypes.util
import os
import sys
import time
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engine.crondor import never_fires, next_run, parse_schedule, schedd_next_run
from engine.crondor.zones import MktimeState, get_zone, glibc_mktime

ZONES = ["UTC", "America/Chicago", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe"]
LIMITS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))


# Strategies are built once, not at each draw (building and validating one again at every draw
# was a third of these tests' CPU); the draws, and so the examples, are the same.
_KIND = st.sampled_from(["absent", "star", "list", "list", "list"])
_STAR = st.sampled_from(["*", "*/2", "*/3", "*/5", "*/7"])
_FORM = st.sampled_from(["single", "range", "step"])
_ITEMS, _STEP = st.integers(1, 3), st.integers(1, 6)


@functools.cache
def _between(lo: int, hi: int):
    return st.integers(lo, hi)


@st.composite
def field(draw, idx):
    lo, hi = LIMITS[idx]
    kind = draw(_KIND)
    if kind == "absent":
        return None
    if kind == "star":
        return draw(_STAR)
    items = []
    for _ in range(draw(_ITEMS)):
        a = draw(_between(lo, hi))
        form = draw(_FORM)
        if form == "single":
            items.append(str(a))
        else:
            b = draw(_between(a, hi))
            items.append(f"{a}-{b}" + (f"/{draw(_STEP)}" if form == "step" else ""))
    return ",".join(items)


_FIELDS = [field(i) for i in range(5)]


@st.composite
def schedules(draw):
    fields = [draw(f) for f in _FIELDS]
    s = parse_schedule(*fields)
    assume(s.valid and not never_fires(s))
    return s


@functools.lru_cache(maxsize=None)
def transition_near(tz: str, year: int, which: int) -> int:
    """The UTC instant of one of the zone's offset changes in ``year`` (or Jan 1 if none)."""
    zi = ZoneInfo(tz)
    t = int(datetime(year, 1, 1, tzinfo=zi).timestamp())
    off = datetime.fromtimestamp(t, zi).utcoffset()
    found = []
    for h in range(6, 366 * 24, 6):
        u = t + h * 3600
        o = datetime.fromtimestamp(u, zi).utcoffset()
        if o != off:
            lo, hi = u - 6 * 3600, u  # bisect to the exact instant of the change
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if datetime.fromtimestamp(mid, zi).utcoffset() == off:
                    lo = mid
                else:
                    hi = mid
            found.append(hi)
            off = o
    return found[which % len(found)] if found else t


@st.composite
def starts(draw, tz):
    year = draw(_YEAR)
    if draw(st.booleans()):
        base = transition_near(tz, year, draw(_WHICH))
        spread = draw(_SPREAD)
        return base + draw(_between(-spread, spread))
    return int(datetime(year, 1, 1, tzinfo=ZoneInfo("UTC")).timestamp()) + draw(_IN_A_YEAR)


_YEAR, _WHICH, _IN_A_YEAR = st.integers(1995, 2045), st.integers(0, 1), st.integers(0, 365 * 86400)
_SPREAD = st.sampled_from([3 * 3600, 3 * 3600, 2 * 86400])
_ZONE, _SCHEDULES = st.sampled_from(ZONES), schedules()
_STARTS = {tz: starts(tz) for tz in ZONES}


def day_ok(s, d: date) -> bool:
    if d.month not in s.months:
        return False
    dom = d.day in s.doms
    dow = (d.weekday() + 1) % 7 in s.dows
    if not s.dows:
        return dom
    if len(s.doms) == 31:
        return dow
    return dom or dow


def brute_next(s, after: int, tz: str) -> int:
    zi = ZoneInfo(tz)
    start = after + 60 - after % 60
    local = datetime.fromtimestamp(start, zi).replace(tzinfo=None)
    day = local.date()
    for _ in range(366 * 12):
        if day_ok(s, day):
            for minute in range(1440):
                wall = datetime(day.year, day.month, day.day) + timedelta(minutes=minute)
                if wall < local or wall.hour not in s.hours or wall.minute not in s.minutes:
                    continue
                u = int(wall.replace(tzinfo=zi, fold=0).timestamp())
                if u >= start:
                    return u
        day += timedelta(days=1)
    raise AssertionError("no run within 12 years")


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.data())
def test_next_run_matches_a_minute_by_minute_reference(data):
    tz = data.draw(_ZONE)
    s = data.draw(_SCHEDULES)
    after = data.draw(_STARTS[tz])
    assert next_run(s, after, tz) == brute_next(s, after, tz)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(ZONES[1:]), st.integers(1995, 2045), st.integers(0, 1), st.integers(-7200, 7200))
def test_every_minute_around_dst_changes(tz, year, which, delta):
    """Dense check right at the changes, where the reference and the engine differ most easily."""
    s = parse_schedule()
    t = transition_near(tz, year, which) + delta
    assert next_run(s, t, tz) == brute_next(s, t, tz)


# --- HTCondor's matchFields, transcribed (condor_crontab.cpp, HEAD with std::vector) ---------


def days_in_month(m: int, y: int) -> int:
    return ((date(y + (m == 12), m % 12 + 1, 1)) - date(y, m, 1)).days


def match_fields(s, cur, match, idx, use_first):
    """cur/match: [min, hour, dom, month, dow, year]; idx 3 = month, 2 = dom, 1 = hour, 0 = min."""
    ranges = [list(s.minutes), list(s.hours), list(s.doms), list(s.months), list(s.dows)]
    next_use_first = use_first
    match[idx] = -1
    if idx == 2:
        if len(ranges[2]) == 31:
            cur_range = list(ranges[2]) if len(ranges[4]) in (7, 0) else [0] * 31  # the defect
        else:
            cur_range = list(ranges[2])
        first_day = (date(match[5], match[3], 1).weekday() + 1) % 7
        for dow in ranges[4]:
            day = dow - first_day + 1
            while day <= 31:
                if day > 0 and day not in cur_range:
                    cur_range.append(day)
                day += 7
        cur_range.sort()
    else:
        cur_range = ranges[idx]
    ret = False
    for value in cur_range:
        if use_first or value >= cur[idx]:
            if value > cur[idx]:
                next_use_first = True
            if idx == 2 and value > days_in_month(match[3], match[5]):
                continue
            match[idx] = value
            if idx == 0:
                ret = True
                break
            ret = match_fields(s, cur, match, idx - 1, next_use_first)
            next_use_first = True
            if ret:
                break
    if not ret and idx == 3:
        match[5] += 1
        ret = match_fields(s, cur, match, idx, True)
    return ret


def ported_next_run_time(s, timestamp: int, tz: str, now: int) -> int:
    timestamp += 60 - timestamp % 60
    tm = datetime.fromtimestamp(timestamp, ZoneInfo(tz))
    cur = [tm.minute, tm.hour, tm.day, tm.month, (tm.weekday() + 1) % 7, tm.year]
    match = [0, 0, 0, 0, -1, tm.year]
    assert match_fields(s, cur, match, 3, False)
    wall = datetime(match[5], match[3], 1) + timedelta(days=match[2] - 1, hours=match[1], minutes=match[0])
    epoch_wall = int((wall - datetime(1970, 1, 1)).total_seconds())
    runtime = glibc_mktime(get_zone(tz), epoch_wall, MktimeState())  # checked against glibc below
    return now + 120 if runtime < timestamp else runtime


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.data())
def test_schedd_prediction_matches_a_port_of_match_fields(data):
    tz = data.draw(_ZONE)
    s = data.draw(_SCHEDULES)
    after = data.draw(_STARTS[tz])
    r = schedd_next_run(s, after, tz, now=after)
    assert r.time == ported_next_run_time(s, after, tz, after)


# --- glibc mktime through ctypes ----------------------------------------------------------------


class TM(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int) for n in ("sec", "min", "hour", "mday", "mon", "year", "wday", "yday", "isdst")] + [
        ("gmtoff", ctypes.c_long),
        ("zone", ctypes.c_char_p),
    ]


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version.restype = ctypes.c_char_p
        libc.gnu_get_libc_version()
    except (OSError, AttributeError):
        return None
    libc.mktime.restype = ctypes.c_long
    libc.mktime.argtypes = [ctypes.POINTER(TM)]
    return libc


LIBC = _libc()


def real_mktime(wall: datetime) -> int:
    tm = TM(0, wall.minute, wall.hour, wall.day, wall.month - 1, wall.year - 1900, 0, 0, -1, 0, None)
    return LIBC.mktime(ctypes.byref(tm))


@pytest.fixture
def glibc_tz():
    saved = os.environ.get("TZ")

    def use(tz):
        os.environ["TZ"] = tz
        time.tzset()
        LIBC.tzset()

    yield use
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()
    LIBC.tzset()


@pytest.mark.skipif(LIBC is None, reason="needs glibc")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(ZONES[1:]), st.integers(1995, 2040), st.integers(0, 1), st.integers(-3 * 3600, 3 * 3600),
       st.integers(-400, 400))
def test_glibc_mktime_emulation_matches_real_glibc(glibc_tz, tz, year, which, delta, prior_days):
    """Gap times and repeated-hour times, after a previous mktime call at a random other date
    (that call sets glibc's offset guess; see engine/crondor/zones.py)."""
    glibc_tz(tz)
    zone = get_zone(tz)
    t = transition_near(tz, year, which) + delta
    wall_dt = datetime.fromtimestamp(t - t % 60, ZoneInfo(tz)).replace(tzinfo=None)
    # noon of another day is never ambiguous, so both sides start from the same glibc state
    prior = datetime.combine(wall_dt.date() + timedelta(days=prior_days), datetime.min.time()).replace(hour=12)
    state = MktimeState()
    prior_wall = int((prior - datetime(1970, 1, 1)).total_seconds())
    assert glibc_mktime(zone, prior_wall, state) == real_mktime(prior)
    for shift in (0, 1800, 3600, -1800):  # also nearby wall times that fall in the gap / repeat
        w = wall_dt + timedelta(seconds=shift)
        wall = int((w - datetime(1970, 1, 1)).total_seconds())
        assert glibc_mktime(zone, wall, state) == real_mktime(w), (tz, w)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ZONES), st.integers(-2_200_000_000, 10_400_000_000))
def test_zone_rules_agree_with_zoneinfo_far_from_now(tz, u):
    """ZoneRules (sampled transitions, engine/crondor/zones.py) vs zoneinfo, 1900–2300: the
    offset at an instant, and fold=0 resolution of the wall time there and an hour later."""
    zi, zone = ZoneInfo(tz), get_zone(tz)
    assert zone.offset_at(u) == int(datetime.fromtimestamp(u, zi).utcoffset().total_seconds())
    for wall_dt in (datetime.fromtimestamp(u, zi).replace(tzinfo=None),
                    datetime.fromtimestamp(u, zi).replace(tzinfo=None) + timedelta(minutes=30)):
        wall = int((wall_dt - datetime(1970, 1, 1)).total_seconds())
        assert zone.resolve(wall) == int(wall_dt.replace(tzinfo=zi, fold=0).timestamp())
