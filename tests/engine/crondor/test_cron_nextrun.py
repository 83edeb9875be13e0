"""Next runs and the schedd prediction against HTCondor's observed vectors (htcondor.md §2.6,
§6 OTEST test_cron_minute) and the oracle tests/data/crondor/crontab_oracle.json."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.helpers.paths import TESTS
from engine.crondor import (
    CronError,
    InvalidSchedule,
    NeverFires,
    next_run,
    next_runs,
    parse_schedule,
    schedd_next_run,
    schedd_runs,
)
from engine.crondor import get_zone

ORACLE = json.loads((TESTS / "data" / "crondor" / "crontab_oracle.json").read_text())


def ts(text: str, tz: str = "UTC") -> int:
    """'2025-01-15 10:00' (or with ':ss', or with an explicit offset) in ``tz``."""
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=ZoneInfo(tz))
    return int(dt.timestamp())


def sched(*fields):
    return parse_schedule(*(tuple(None if f == "-" else f for f in fields) + (None,) * (5 - len(fields))))


# (id, tz, start, fields, correct runs, schedd runs or None when identical)
# Expected times carry explicit offsets where DST matters.
VECTORS = [
    ("1", "UTC", "2025-01-15 10:30", (), ["2025-01-15 10:31", "2025-01-15 10:32", "2025-01-15 10:33"], None),
    ("2", "UTC", "2025-01-15 10:30:30", (), ["2025-01-15 10:31"], None),
    ("3", "UTC", "2025-01-15 10:31", ("*/15",), ["2025-01-15 10:45", "2025-01-15 11:00", "2025-01-15 11:15",
                                                 "2025-01-15 11:30"], None),
    ("4", "UTC", "2025-01-15 10:00", ("1-10/3", "10"), ["2025-01-15 10:03", "2025-01-15 10:06",
                                                        "2025-01-15 10:09", "2025-01-16 10:03"], None),
    ("5", "UTC", "2025-01-15 10:00", ("0", "0", "1", "*/3"), ["2025-03-01 00:00", "2025-06-01 00:00",
                                                              "2025-09-01 00:00", "2025-12-01 00:00"], None),
    ("6", "UTC", "2025-01-01 00:00", ("0", "0", "*/5"), [f"2025-01-{d:02d} 00:00" for d in (5, 10, 15, 20, 25, 30)]
     + ["2025-02-05 00:00"], None),
    ("7", "UTC", "2025-01-15 10:05", ("0", "*/2"), ["2025-01-15 12:00", "2025-01-15 14:00", "2025-01-15 16:00"], None),
    ("8", "UTC", "2025-01-15 10:00", ("0", "0", "-", "-", "1"),
     ["2025-01-20 00:00", "2025-01-27 00:00", "2025-02-03 00:00", "2025-02-10 00:00"],
     ["2025-01-20 00:00", "2025-01-27 00:00", "2025-01-31 00:00", "2025-01-31 00:02"]),
    ("9", "UTC", "2025-01-28 10:00", ("0", "0", "-", "-", "1"), ["2025-02-03 00:00"], ["2025-01-31 00:00"]),
    ("10", "UTC", "2025-01-15 10:00", ("0", "0", "-", "-", "7"), ["2025-01-19 00:00", "2025-01-26 00:00",
                                                                  "2025-02-02 00:00"],
     ["2025-01-19 00:00", "2025-01-26 00:00", "2025-01-31 00:00"]),
    ("11", "UTC", "2025-01-31 10:00", ("0", "9", "-", "-", "1-5"), ["2025-02-03 09:00"], ["2025-01-31 10:02"]),
    ("12", "UTC", "2025-01-16 10:00", ("0", "9", "-", "-", "1-5"), ["2025-01-17 09:00", "2025-01-20 09:00",
                                                                    "2025-01-21 09:00"], None),
    ("12b", "UTC", "2025-01-15 10:00", ("0", "0", "-", "3", "1"), ["2025-03-03 00:00", "2025-03-10 00:00"],
     ["2025-02-28 00:00", "2025-02-28 00:02"]),
    ("13", "UTC", "2025-01-01 00:00", ("0", "0", "13", "-", "5"),
     [f"2025-01-{d:02d} 00:00" for d in (3, 10, 13, 17, 24, 31)] + ["2025-02-07 00:00", "2025-02-13 00:00"], None),
    ("14", "UTC", "2025-09-01 00:00", ("0", "12", "1,15", "-", "6"),
     [f"2025-09-{d:02d} 12:00" for d in (1, 6, 13, 15, 20, 27)], None),
    ("15", "UTC", "2025-01-01 00:00", ("0", "0", "15", "-", "0-6"), ["2025-01-02 00:00", "2025-01-03 00:00",
                                                                      "2025-01-04 00:00"], None),
    ("16", "UTC", "2025-01-01 00:00", ("0", "0", "15", "-", "*"), ["2025-01-15 00:00", "2025-02-15 00:00",
                                                                    "2025-03-15 00:00"], None),
    ("17", "UTC", "2025-01-15 10:00", ("0", "0", "-", "-", "*/2"), ["2025-01-16 00:00", "2025-01-17 00:00"], None),
    ("18", "UTC", "2025-01-15 10:00", ("0", "0", "-", "-", "5-1"), ["2025-01-16 00:00", "2025-01-17 00:00"], None),
    ("19", "UTC", "2025-01-31 00:30", ("0", "0", "31"), ["2025-03-31 00:00", "2025-05-31 00:00",
                                                         "2025-07-31 00:00", "2025-08-31 00:00"], None),
    ("20", "UTC", "2025-01-01 00:00", ("0", "12", "29", "2"), ["2028-02-29 12:00", "2032-02-29 12:00"], None),
    ("21", "UTC", "2025-12-31 23:59:30", ("0", "0", "1", "1"), ["2026-01-01 00:00", "2027-01-01 00:00"], None),
    ("22", "UTC", "2025-01-15 10:00", ("75",), ["2025-01-15 10:01", "2025-01-15 10:02"], None),
    ("23", "UTC", "2025-01-15 10:00", ("0", "24"), ["2025-01-15 11:00", "2025-01-15 12:00", "2025-01-15 13:00"], None),
    ("24", "UTC", "2025-01-15 10:00", ("0", "0", "0"), ["2025-01-16 00:00", "2025-01-17 00:00"], None),
    ("25", "UTC", "2025-01-15 10:00", ("0", "0", "-", "-", "8"), ["2025-01-16 00:00", "2025-01-17 00:00"], None),
    ("26", "UTC", "2025-01-15 10:00", ("50-70",), ["2025-01-15 10:50", "2025-01-15 10:51", "2025-01-15 10:52"], None),
    ("27", "UTC", "2025-01-15 10:00", ("-5", "11"), ["2025-01-15 11:00", "2025-01-15 11:01", "2025-01-15 11:02"], None),
    ("28", "UTC", "2025-01-15 10:00", ("1.5", "11"), ["2025-01-15 11:01"], None),
    ("29", "UTC", "2025-01-15 10:00", ("5, 10 ,,20", "11"), ["2025-01-15 11:05", "2025-01-15 11:10",
                                                             "2025-01-15 11:20", "2025-01-16 11:05"], None),
    ("30", "UTC", "2025-01-15 09:30", ("*/-5", "10"), ["2025-01-15 10:00", "2025-01-15 10:05", "2025-01-15 10:10"],
     None),
    ("31", "UTC", "2025-01-15 09:30", ("0,15,30,45",), ["2025-01-15 09:45", "2025-01-15 10:00",
                                                        "2025-01-15 10:15"], None),
    ("32", "UTC", "2025-01-15 09:30", ("0", "*"), ["2025-01-15 10:00", "2025-01-15 11:00"], None),
    ("33", "UTC", "2025-01-15 09:30", ("*/10,*/6", "0-11", "18", "1", "*"),
     [f"2025-01-18 00:{m:02d}" for m in (0, 6, 10, 12, 18, 20)], None),
    ("34", "America/Chicago", "2025-03-08 12:00", ("30", "2"),
     ["2025-03-09 03:30-05:00", "2025-03-10 02:30-05:00", "2025-03-11 02:30-05:00"], None),
    ("35", "America/Chicago", "2025-11-01 12:00", ("30", "1"), ["2025-11-02 01:30-05:00", "2025-11-03 01:30-06:00"],
     None),
    ("36", "America/Chicago", "2025-11-02 00:50", ("*/30",),
     ["2025-11-02 01:00-05:00", "2025-11-02 01:30-05:00", "2025-11-02 02:00-06:00", "2025-11-02 02:30-06:00",
      "2025-11-02 03:00-06:00", "2025-11-02 03:30-06:00"], None),
    ("37", "America/Chicago", "2025-03-09 01:20", ("*/30",),
     ["2025-03-09 01:30-06:00", "2025-03-09 03:00-05:00", "2025-03-09 03:30-05:00", "2025-03-09 04:00-05:00"], None),
]


@pytest.mark.parametrize("vid, tz, start, fields, runs, schedd", VECTORS, ids=[v[0] for v in VECTORS])
def test_htcondor_md_2_6_vectors(vid, tz, start, fields, runs, schedd):
    """htcondor.md §2.6: results of HTCondor 25.14's own crontab code, chained."""
    s = sched(*fields)
    after = ts(start, tz)
    expected = [ts(r, tz) for r in runs]
    assert next_runs(s, after, len(expected), tz) == expected
    predicted = [r.time for r in schedd_runs(s, after, len(schedd or runs), tz)]
    assert predicted == [ts(r, tz) for r in (schedd or runs)]


def test_schedd_fallback_is_now_plus_120_with_now_injected():
    """htcondor.md §2.3 item 5: 'in the past' -> time(NULL)+120; §2.6 #11."""
    s = sched("0", "9", "-", "-", "1-5")
    after = ts("2025-01-31 10:00")
    r = schedd_next_run(s, after, "UTC", now=after + 37)
    assert r.fallback and r.time == after + 37 + 120
    assert not schedd_next_run(s, ts("2025-01-16 10:00"), "UTC").fallback


def test_htcondors_unit_test_vector_exactly():
    """htcondor.md §6: OTEST test_cron_minute, nextRunTime(when, false) chained from 0."""
    expected = [360, 420, 540, 2400, 2460, 2520, 3960, 4020, 4140, 6000, 6060, 6120, 7560, 7620, 7740,
                9600, 9660, 9720, 36360, 36420]
    s = parse_schedule("6,7,9,40-42", "0-2,10, 23")
    assert next_runs(s, 0, 20, "UTC") == expected
    assert [r.time for r in schedd_runs(s, 0, 20, "UTC")] == expected


VALID = [c for c in ORACLE["cases"] if c["regex_valid"] and c["init_valid"] and c["exit_code"] == 0]
# Fresh-process glibc picks the *second* 03:00 of 2021-10-31 in Europe/Riga (east of UTC, see
# engine/crondor/zones.py); RouteDeck's correct runs use the first occurrence by decision.
FRESH_PROCESS_SECOND_OCCURRENCE = {"dst_Europe/Riga_fall_0_*_*_*_*", "dst_Europe/Riga_fall_0_3_*_*_*"}


@pytest.mark.parametrize("case", VALID, ids=[c["name"] for c in VALID])
def test_oracle_cases(case):
    """crontab_oracle.json: schedd_runs reproduce every value not marked as wall-clock
    dependent, and fall back exactly where HTCondor did; the correct runs match wherever the
    weekday defect does not apply, and otherwise up to the first bogus day."""
    s = parse_schedule(*case["fields"])
    expected, flags, tz = case["next_epochs"], case["next_flags"], case["tz"]
    cut = next((i for i, f in enumerate(flags) if f), len(flags))
    predicted = schedd_runs(s, case["start_epoch"], len(expected), tz)
    assert [r.time for r in predicted[:cut]] == expected[:cut]
    assert not any(r.fallback for r in predicted[:cut])
    if cut < len(flags):
        assert flags[cut].startswith("FALLBACK") and predicted[cut].fallback
    runs = next_runs(s, case["start_epoch"], len(expected), tz)
    if case["name"] in FRESH_PROCESS_SECOND_OCCURRENCE:
        assert runs[0] == expected[0] - 3600 and runs[1:] == expected[1:]
    elif not s.schedd_defect:
        assert runs == expected
    else:
        first_bogus = next(i for i, (a, b) in enumerate(zip(runs, expected)) if a != b)
        assert runs[:first_bogus] == expected[:first_bogus]
        for r in runs:
            weekday = (datetime.fromtimestamp(r, ZoneInfo(tz)).weekday() + 1) % 7
            assert weekday in s.dows


INVALID = [c for c in ORACLE["cases"] if not (c["regex_valid"] and c["init_valid"])]


@pytest.mark.parametrize("case", INVALID, ids=[c["name"] for c in INVALID])
def test_invalid_oracle_cases_produce_no_runs(case):
    # Source: tests/data/crondor crontab_oracle.json (htcondor.md §2.6): invalid cases
    s = parse_schedule(*case["fields"])
    with pytest.raises(InvalidSchedule):
        next_run(s, case["start_epoch"], case["tz"])
    with pytest.raises(InvalidSchedule):
        schedd_next_run(s, case["start_epoch"], case["tz"])


@pytest.mark.parametrize("fields", [("0", "0", "30", "2"), ("0", "0", "31", "4"), ("0", "0", "30-31", "2")])
def test_impossible_dates_are_reported_not_looped_on(fields):
    """crontab_oracle.json dom30_feb_never / dom31_apr_never: HTCondor never returned (TIMEOUT)."""
    s = sched(*fields)
    with pytest.raises(NeverFires):
        next_run(s, 0, "UTC")
    with pytest.raises(NeverFires):
        schedd_next_run(s, 0, "UTC")


def test_runs_are_strictly_after_and_stop_at_year_9999():
    # Source: htcondor.md §2.3 (the result is strictly after the current minute); stopping at 9999 is RouteDeck's (Python dates)
    s = sched("0", "0", "29", "2")
    assert next_run(s, ts("2028-02-29 00:00"), "UTC") == ts("2032-02-29 00:00")
    with pytest.raises(CronError):
        next_run(s, ts("9996-03-01 00:00"), "UTC")


def test_leap_years_follow_the_gregorian_rule():
    """htcondor.md §2.3 item 3: daysInMonth with the 4/100/400 rule (2100 is not leap, 2400 is)."""
    s = sched("0", "0", "29", "2")
    assert next_runs(s, ts("2096-03-01 00:00"), 2, "UTC") == [ts("2104-02-29 00:00"), ts("2108-02-29 00:00")]
    start = datetime(2399, 1, 1, tzinfo=ZoneInfo("UTC"))
    assert next_run(s, int(start.timestamp()), "UTC") == int((start + timedelta(days=365 + 59)).timestamp())


def test_default_zone_is_the_local_zone(monkeypatch):
    """htcondor.md §2.3 item 2: the schedd uses its local time zone (TZ, else /etc/localtime)."""
    monkeypatch.setenv("TZ", "America/Chicago")
    assert get_zone(None).name == "America/Chicago"
    s = sched("30", "2")
    after = ts("2025-03-08 12:00", "America/Chicago")
    assert next_run(s, after) == next_run(s, after, "America/Chicago") == ts("2025-03-09 03:30-05:00")


def test_chained_runs_in_one_zone_span_do_not_search_the_transitions(monkeypatch):
    """Issue 30: what a zone cost over UTC was a bisect of its transitions per lookup; runs inside
    one span between two transitions now reuse the last answer, with the same results."""
    import engine.crondor.zones as zones  # noqa: PLC0415 - the module whose bisect is counted

    z = zones.ZoneRules(ZoneInfo("America/Chicago"), "America/Chicago")
    s = sched("0", "*")
    start = ts("2025-01-10 00:00", "America/Chicago")
    expected = [start + 3600 * (k + 1) for k in range(200)]  # January: no transition in the way
    calls = []
    real = zones.bisect.bisect_right
    monkeypatch.setattr(zones.bisect, "bisect_right", lambda *a: calls.append(a) or real(*a))
    assert next_runs(s, start, 200, z) == expected
    assert len(calls) <= 4
    # across the spring change the answers are still the zone's own
    spring = ts("2025-03-09 00:30", "America/Chicago")
    assert next_runs(s, spring, 3, z) == [ts("2025-03-09 01:00", "America/Chicago"),
                                         ts("2025-03-09 03:00", "America/Chicago"),
                                         ts("2025-03-09 04:00", "America/Chicago")]
