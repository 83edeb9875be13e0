"""Crondor lints and the plain-words explanation. Each lint case names the HTCondor fact it
reports (htcondor.md §2.2–§2.6) and, where cron differs, the Vixie/cronie rule (entry.c, cron.c:
steps from the range start, no out-of-range values, DOM_STAR/DOW_STAR decide AND vs OR)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from engine.crondor import (
    describe,
    explain,
    lint_deferral,
    lint_runs,
    lint_schedule,
    next_runs,
    parse_schedule,
    schedd_runs,
)
from engine.crondor.unixcron import cron_field, cron_item


def sched(*fields):
    return parse_schedule(*(fields + (None,) * (5 - len(fields))))


def codes(lints):
    return {lint.code: lint for lint in lints}


CASES = [
    # (fields, code, level, substrings the message must contain)
    (("1-10/3", "10"), "step-from-zero", "warning", ["3, 6 and 9", "1, 4, 7 and 10"]),  # §2.2 item 3
    (("0", "0", "*/5"), "step-from-zero", "warning", ["5, 10", "1, 6, 11"]),
    (("0", "0", "1", "*/3"), "step-from-zero", "warning", ["March, June", "January, April"]),
    (("75",), "out-of-range", "warning", ["every minute", "rejects"]),  # §2.6 #22
    (("0", "0", "0"), "out-of-range", "warning", ["every day"]),  # §2.6 #24
    (("50-70",), "clamped-range", "warning", ["50-59", "rejects"]),  # §2.6 #26
    (("-5", "11"), "open-range", "warning", ["0-5"]),  # §2.6 #27
    (("1.5", "11"), "dot", "warning", ["counts as 1", "rejects '.'"]),  # §2.6 #28
    (("5, 10 ,,20", "11"), "spaces", "warning", ["'5,10,,20'", "space separates fields"]),  # §2.6 #29
    (("5, 10 ,,20", "11"), "empty-item", "warning", ["skips empty"]),
    (("*/-5", "10"), "negative-step", "warning", ["acts like /5"]),  # §2.6 #30
    (("0", "0", None, None, "*/2"), "dow-star-ignored", "warning", ["ignores", "Sunday, Tuesday"]),  # #17
    (("0", "0", None, None, "5-1"), "reversed-range", "warning", ["every day", "rejects a reversed"]),  # #18
    (("10-5",), "reversed-range", "error", ["Invalid cron attribute: 10-5"]),  # §2.6 invalid cases
    (("*/0",), "step-zero", "error", ["'Invalid cron schedule parameters: '"]),
    (("5/15",), "single-step", "error", ["Invalid cron attribute: 5/15", "cronsim reads it as 5-59/15"]),
    (("30/15",), "single-step", "warning", ["30", "reject a single value with a step"]),
    (("",), "empty-field", "error", ["code 25"]),
    (("0", "0", None, None, ""), "empty-field", "warning", ["no weekday restriction"]),
    (("0", "0", None, None, "MON"), "bad-chars", "error", ["code 25", "accepts names"]),  # oracle names_MON
    (("0", "0", "?"), "bad-chars", "error", ["Invalid parameter value '?' for CronDayOfMonth", "rejects it too"]),
    (("0", "0", None, None, "1"), "weekday-defect", "warning", ["Monday only", "last day of that month"]),  # §2.3.4
    (("0", "0", "1-31", None, "1"), "dom-full-explicit", "warning", ["treats like '*'", "every day"]),
    (("0", "0", "*/2", None, "1"), "dom-star-and", "warning", ["OR on Monday", "ANDs"]),  # oracle cronsim_*
    (("0", "0", "13", None, "5"), "dom-or-dow", "warning", ["day 13 of the month OR on Friday"]),  # §2.6 #13
    (("0", "0", "15", None, "0-6"), "dow-all", "warning", ["every day"]),  # §2.6 #15
    (("0", "0", "30", "2"), "never-fires", "error", ["recurses without end", "never runs"]),  # §2.3 item 6
    (("0", "0", "31"), "dead-months", "warning", ["February, April, June, September and November"]),
    (("0", "12", "29", "2"), "leap-only", "warning", ["leap years"]),  # §2.6 #20
]


@pytest.mark.parametrize("fields, code, level, parts", CASES, ids=[f"{c[1]}:{'|'.join(map(str, c[0]))}" for c in CASES])
def test_lint_reports_what_htcondor_does(fields, code, level, parts):
    found = codes(lint_schedule(sched(*fields)))
    assert code in found, sorted(found)
    lint = found[code]
    assert lint.level == level
    assert "HTCondor" in lint.message
    for part in parts:
        assert part in lint.message


def test_every_lint_that_differs_from_cron_says_what_cron_does():
    # Source: RouteDeck lint wording (product.md); the cron rules themselves: cronie entry.c (module docstring)
    for fields, code, _level, _parts in CASES:
        lint = codes(lint_schedule(sched(*fields)))[code]
        assert "cron" in lint.message.lower(), code


def test_a_plain_schedule_has_no_lints():
    # Source: htcondor.md §2.2 (these fields parse the same in HTCondor and cron; no lint is due)
    assert lint_schedule(sched("0", "9", "1,15")) == []
    assert lint_schedule(sched("*/15", "*/3", None, None, "*")) == []


def test_non_string_attribute_lint():
    """htcondor.md §2.2 item 6: a non-string attribute is read as '*'."""
    lint = codes(lint_schedule(sched(), non_string=("CronMinute",)))["non-string"]
    assert "every minute" in lint.message


def test_schedd_difference_lint_shows_both_times():
    """product.md §4: the weekday defect is a warning that shows both times (§2.6 #8)."""
    s = sched("0", "0", None, None, "1")
    after = int(datetime(2025, 1, 15, 10, tzinfo=ZoneInfo("UTC")).timestamp())
    lint = codes(lint_runs(next_runs(s, after, 4, "UTC"), schedd_runs(s, after, 4, "UTC"), "UTC"))["schedd-differs"]
    assert "Run 3" in lint.message
    assert "2025-01-31 00:00 UTC (Fri)" in lint.message and "2025-02-03 00:00 UTC (Mon)" in lint.message
    after = int(datetime(2025, 1, 31, 10, tzinfo=ZoneInfo("UTC")).timestamp())  # §2.6 #11
    s = sched("0", "9", None, None, "1-5")
    lint = codes(lint_runs(next_runs(s, after, 1, "UTC"), schedd_runs(s, after, 1, "UTC"), "UTC"))["schedd-differs"]
    assert "now + 120 s" in lint.message and "Run 1" in lint.message


def test_one_instance_lint_for_frequent_schedules():
    """htcondor.md §2.4: DeferralTime is recomputed only for Idle jobs."""
    runs = next_runs(sched("*/2"), 0, 3, "UTC")
    assert "one-instance" in codes(lint_runs(runs, [], "UTC"))
    runs = next_runs(sched("0"), 0, 3, "UTC")
    assert "one-instance" not in codes(lint_runs(runs, [], "UTC"))


def test_dst_lints_name_the_gap_and_the_repeated_hour():
    """htcondor.md §2.3 item 7 and §2.6 #34/#36: gap moves forward; repeated hour runs once."""
    after = int(datetime(2025, 1, 15, tzinfo=ZoneInfo("UTC")).timestamp())
    found = codes(lint_schedule(sched("30", "2"), "America/Chicago", after))
    assert "2025-03-09 02:30" in found["dst-gap"].message and "03:30 CDT" in found["dst-gap"].message
    assert "dst-repeat" not in found  # 02:30 is not repeated in Chicago
    found = codes(lint_schedule(sched("30", "1"), "America/Chicago", after))
    assert "2025-11-02 01:30" in found["dst-repeat"].message
    assert codes(lint_schedule(sched("30", "1"), "UTC", after)) == {}
    # Lord Howe's change is 30 minutes (02:00 -> 02:30 in October)
    found = codes(lint_schedule(sched("15", "2"), "Australia/Lord_Howe", after))
    assert "dst-gap" in found and "02:45" in found["dst-gap"].message


def test_window_zero_with_long_prep_time():
    """htcondor.md §2.5: late start with window 0 -> hold code 20."""
    (lint,) = lint_deferral(0, 3600)
    assert "code 20" in lint.message and "3900 s" in lint.message
    assert lint_deferral(0, 300) == [] and lint_deferral(60, 3600) == []


@pytest.mark.parametrize(
    "item, idx, values",
    [("1-10/3", 0, {1, 4, 7, 10}), ("*/5", 2, {1, 6, 11, 16, 21, 26, 31}), ("mon-fri", 4, {1, 2, 3, 4, 5}),
     ("7", 4, {0}), ("5/15", 0, None), ("10-5", 0, None), ("75", 0, None), ("*/0", 0, None), ("1.5", 0, None)],
)
def test_unix_cron_model(item, idx, values):
    """cronie src/entry.c get_range: steps from the range start; N/S, N>M, out-of-range, step 0 rejected."""
    got = cron_item(item, idx)
    assert (None if got is None else set(got)) == values


def test_unix_cron_rejects_spaces_and_empty_items():
    # Source: cronie src/entry.c get_list (Unix cron model; no HTCondor behaviour)
    assert cron_field("0-2,10, 23", 1) is None and cron_field("1,,2", 0) is None
    assert cron_field(" 5 ", 0) == frozenset({5})


@pytest.mark.parametrize(
    "fields, text",
    [
        ((), "Every minute."),
        (("0", "9", None, None, "1-5"), "At 09:00, on Monday–Friday."),
        (("1-10/3", "10"), "At 10:03, 10:06 and 10:09, every day."),
        (("0", "0", "13", None, "5"), "At 00:00, on day 13 of the month or on Friday."),
        (("*/10,*/6", "0-11", "18", "1"), "At minutes 0, 6, 10, 12, 18, 20, 24, 30, 36, 40, 42, 48, 50 and 54 "
                                          "past hours 0-11, on day 18 of the month, in January."),
        (("0", "0", "1", "*/3"), "At 00:00, on day 1 of the month, in March, June, September and December."),
        (("5", "*"), "At minute 5 of every hour, every day."),
    ],
)
def test_describe(fields, text):
    # Source: RouteDeck plain-words description (no HTCondor behaviour)
    assert describe(sched(*fields)) == text


def test_explain_mentions_the_defect_the_zone_and_invalid_schedules():
    # Source: htcondor.md §2.3 (day-0 defect, impossible schedule), §2.4 (hold code 25 text)
    text = explain(sched("0", "0", None, None, "1"), "America/Chicago")
    assert "America/Chicago" in text and "day-0 defect" in text
    text = explain(sched("*/0"))
    assert "code 25" in text and "'Invalid cron schedule parameters: '" in text
    assert "never happens" in explain(sched("0", "0", "30", "2"), "UTC")
