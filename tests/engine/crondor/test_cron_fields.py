"""Crondor field parsing against HTCondor (htcondor.md §2.2, §2.6 "Invalid cases", §6; the
oracle tests/data/crondor/crontab_oracle.json, produced by HTCondor 25.14.1's own CronTab)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.paths import TESTS
from engine.crondor.fields import ATTRS, DOW, LIMITS, atoi, expand_field, parse_schedule, ranges_text

ORACLE = json.loads((TESTS / "data" / "crondor" / "crontab_oracle.json").read_text())
CASES = [c for c in ORACLE["cases"] if "ranges" in c]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_expanded_ranges_match_the_oracle(case):
    """crontab_oracle.json: 'ranges' is the CronTab's expanded list per attribute."""
    s = parse_schedule(*case["fields"])
    for i, attr in enumerate(ATTRS):
        assert ranges_text(s.fields[i].values) == case["ranges"][attr], attr


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_validity_and_error_text_match_the_oracle(case):
    """crontab_oracle.json: regex_valid / init_valid, and validate()'s or getError()'s text."""
    s = parse_schedule(*case["fields"])
    assert s.valid == bool(case["regex_valid"] and case["init_valid"])
    if not s.valid:
        texts = case.get("validate_error") if not case["regex_valid"] else case.get("error_log")
        assert s.error == "".join(texts or [])


@pytest.mark.parametrize(
    "fields, error",
    [
        # htcondor.md §2.6 "Invalid cases"
        (("10-5",), "Invalid cron attribute: 10-5"),
        ((None, None, None, "12-3"), "Invalid cron attribute: 12-3"),
        (("5-",), "Invalid cron attribute: 5-"),
        (("2/3",), "Invalid cron attribute: 2/3"),
        (("*/0",), ""),
        (("MON",), "Invalid parameter value 'MON' for CronMinute"),
        (("x", "y"), "Invalid parameter value 'x' for CronMinuteInvalid parameter value 'y' for CronHour"),
        # §2.2 item 4: the text is the field with spaces removed
        (("1 0-5",), "Invalid cron attribute: 10-5"),
        # §2.2 item 5: expansion errors of several fields concatenate with no separator
        (("10-5", "30-1"), "Invalid cron attribute: 10-5Invalid cron attribute: 30-1"),
        # the schedd runs validate() first: with a character error, only those are reported (§2.4)
        (("10-5", "y"), "Invalid parameter value 'y' for CronHour"),
        # §6 test_invalid_cron (HTCONDOR-1624)
        (("1/10",), "Invalid cron attribute: 1/10"),
    ],
)
def test_invalid_schedules_give_htcondors_error_text(fields, error):
    s = parse_schedule(*(fields + (None,) * (5 - len(fields))))
    assert not s.valid
    assert s.error == error


def test_empty_day_of_week_is_not_an_error_but_other_empty_fields_are():
    """htcondor.md §2.2 item 4 / §6: empty DOW means not restricted; empty elsewhere is invalid."""
    assert parse_schedule("0", "0", None, None, "").valid
    assert parse_schedule("0", "0", None, None, "5-1").valid  # §2.6 #18
    assert not parse_schedule("0", "0", "", None, None).valid


@pytest.mark.parametrize(
    "idx, text, values",
    [
        (0, "1-10/3", [3, 6, 9]),  # §2.2 item 3: absolute steps
        (3, "*/3", [3, 6, 9, 12]),
        (2, "*/5", [5, 10, 15, 20, 25, 30]),
        (0, "50-70", list(range(50, 60))),  # clamped
        (0, "-5", list(range(0, 6))),
        (0, "75", list(range(60))),  # out of range single value = whole field
        (2, "0", list(range(1, 32))),
        (4, "8", list(range(7))),
        (4, "7-7/5", [0]),  # 7 folded to 0 before the step test
        (4, "6-7/2", [0, 6]),
        (4, "*/2", []),  # DOW items containing * add nothing
        (4, "*-3", [0, 1, 2, 3]),  # ...but a range is checked first
        (0, "1.5", [1]),
        (0, "5, 10 ,,20", [5, 10, 20]),
        (0, "*/-5", list(range(0, 60, 5))),
        (0, "*/10,*/6", [0, 6, 10, 12, 18, 20, 24, 30, 36, 40, 42, 48, 50, 54]),  # §2.6 #33
    ],
)
def test_field_expansion_quirks(idx, text, values):
    """htcondor.md §2.2 items 1–3 and the §2.6 vectors that exercise them."""
    assert list(expand_field(text, idx).values) == values


@pytest.mark.parametrize(
    "text, value",
    [("1.5", 1), ("", 0), ("*", 0), ("-5", -5), ("007", 7), ("99999999999", 1215752191), ("9" * 30, -1)],
)
def test_atoi_is_glibcs(text, value):
    """glibc atoi = (int) strtol: leading digits, saturating at LONG_MAX, low 32 bits kept."""
    assert atoi(text) == value


# --- a literal reading of htcondor.md §2.2, to cross-check the implementation on random text --


def reference_expand(text: str, idx: int):
    """Returns (values or None when invalid). Written from the spec's prose, step by step."""
    fmin, fmax = LIMITS[idx]
    for ch in text:
        if not (ch.isdigit() or ch in ",-./* "):
            return None
    out = set()
    for tok in text.replace(" ", "").split(","):
        if tok == "":
            continue
        step = 1
        if "/" in tok:
            step = atoi(tok[tok.index("/") + 1 :])
            if step == 0:
                return None
            tok = tok[: tok.index("/")]
        if "-" in tok:
            i = tok.index("-")
            lo, hi = max(atoi(tok[:i]), fmin), min(atoi(tok[i + 1 :]), fmax)
        elif "*" in tok:
            if idx == DOW:
                continue
            lo, hi = fmin, fmax
        else:
            v = atoi(tok)
            lo, hi = (v, v) if fmin <= v <= fmax else (fmin, fmax)
        for v in range(lo, hi + 1):
            if idx == DOW and v == 7:
                v = 0
            if int(v) % step == 0:
                out.add(v)
    if not out and idx != DOW:
        return None
    return sorted(out)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789,-/*. x", max_size=10), st.integers(0, 4))
def test_expansion_matches_a_literal_reading_of_the_spec(text, idx):
    f = expand_field(text, idx)
    expected = reference_expand(text, idx)
    if expected is None:
        assert not f.ok
    else:
        assert f.ok and list(f.values) == expected


def test_absent_fields_mean_star_and_parsing_is_cached():
    """htcondor.md §2.1: an absent attribute is read as '*'."""
    assert parse_schedule().minutes == tuple(range(60))
    assert parse_schedule().absent and not parse_schedule("*").absent
    assert parse_schedule("5", None) is parse_schedule("5", None)
