"""A crondor schedule in plain words, and the small formatting helpers lints and the CLI share.

Design decisions and invariants:

- The text describes what the *expanded* values mean (after HTCondor's parsing quirks), not
  what was typed: ``1-10/3`` is explained as minutes 3, 6 and 9.
- Day selection is described with RouteDeck's rule (product.md §4); when the HTCondor >= 10.3
  schedd would differ (day-0 defect) the text says so in a second sentence.
- Times are shown in the schedule's zone with the zone abbreviation and weekday, e.g.
  ``2025-01-20 00:00 CST (Mon)``.
"""

from __future__ import annotations

from datetime import datetime

from .fields import ATTRS, Schedule
from .nextrun import never_fires
from .zones import get_zone

WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
MONTHS = (
    "",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def format_time(u: int, zone=None) -> str:
    z = get_zone(zone)
    return datetime.fromtimestamp(u, z.tzinfo).strftime("%Y-%m-%d %H:%M %Z (%a)")


def spans(values) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for v in sorted(values):
        if out and v == out[-1][1] + 1:
            out[-1] = (out[-1][0], v)
        else:
            out.append((v, v))
    return out


def join_words(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def compress(values, names=None, sep: str = "-") -> str:
    """``[1,2,3,5]`` -> ``"1-3 and 5"``; with names, ``"Monday-Wednesday and Friday"``."""

    def name(v: int) -> str:
        return names[v] if names else str(v)

    parts = []
    for a, b in spans(values):
        if a == b:
            parts.append(name(a))
        elif b == a + 1:
            parts.extend([name(a), name(b)])
        else:
            parts.append(f"{name(a)}{sep}{name(b)}")
    return join_words(parts)


def weekday_list(values) -> str:
    return compress(values, WEEKDAYS, "–")


def month_list(values) -> str:
    return compress(values, MONTHS, "–")


def _time_part(s: Schedule) -> str:
    mins, hours = s.minutes, s.hours
    if len(mins) == 60 and len(hours) == 24:
        return "every minute"
    if len(mins) * len(hours) <= 6:
        return "at " + join_words([f"{h:02d}:{m:02d}" for h in hours for m in mins])
    if len(mins) == 60:
        m_text = "every minute"
    elif len(mins) == 1:
        m_text = f"at minute {mins[0]}"
    else:
        m_text = f"at minutes {compress(mins)}"
    if len(hours) == 24:
        return f"{m_text} of every hour"
    word = "hour" if len(hours) == 1 else "hours"
    return f"{m_text} past {word} {compress(hours)}"


def _day_part(s: Schedule) -> str:
    doms, dows = s.doms, s.dows
    if s.day_rule == "dom":
        return "every day" if len(doms) == 31 else f"on day {compress(doms)} of the month"
    if s.day_rule == "dow" or len(dows) == 7:
        return "every day" if len(dows) == 7 else f"on {weekday_list(dows)}"
    return f"on day {compress(doms)} of the month or on {weekday_list(dows)}"


def describe(s: Schedule) -> str:
    """One sentence for a valid schedule (no zone)."""
    time_part, day_part = _time_part(s), _day_part(s)
    text = time_part if (time_part, day_part) == ("every minute", "every day") else f"{time_part}, {day_part}"
    if len(s.months) < 12:
        text += f", in {month_list(s.months)}"
    return text[0].upper() + text[1:] + "."


def explain(s: Schedule, zone=None) -> str:
    """The schedule in plain words, with the zone and HTCondor caveats."""
    given = ", ".join(f"{a} = {t!r}" for a, t in zip(ATTRS, s.texts) if t is not None) or "no cron attribute"
    lines = [f"Schedule: {given}."]
    if not s.valid:
        lines.append(
            "Invalid: HTCondor's schedd puts the job on hold (code 25) with the reason "
            f"'Invalid cron schedule parameters: {s.error}'."
        )
        return "\n".join(lines)
    if s.absent:
        lines.append("No cron attribute is set, so this is not a cron job; as a schedule it means every minute.")
    name = get_zone(zone).name
    lines.append(f"{describe(s)} Times are wall-clock times in {name}.")
    if never_fires(s):
        lines.append(
            f"This never happens: day {compress(s.doms)} does not exist in {month_list(s.months)}; "
            "a real schedd would recurse without end on it."
        )
    if s.schedd_defect:
        lines.append(
            "A real HTCondor >= 10.3 schedd also fires on the last day of a month once the month's "
            "last matching weekday has passed (day-0 defect), at the first listed hour and minute."
        )
    if s.day_rule == "union":
        lines.append("Day of month and day of week are combined with OR, as in Unix cron.")
    return "\n".join(lines)
