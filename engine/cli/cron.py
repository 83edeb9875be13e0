"""``routedeck cron next`` / ``routedeck cron explain``: a crondor schedule, headless.

Design decisions and invariants:

- An absent field option means the attribute is absent (HTCondor reads it as ``*``); the text
  of a given option is used verbatim, spaces included, as the job attribute's string.
- ``SCHEDULE``, a crontab line's five fields in one argument (``'*/15 * * * *'``: minute, hour,
  day of month, month, day of week), sets all five attributes; it cannot be combined with the
  field options (a usage error).
- ``next`` chains runs: each run is the ``after`` of the next. ``schedd_runs`` chains the
  prediction the same way, in one fresh schedd process, with each step's ``after`` standing for
  the wall clock read by HTCondor's ``now + 120`` fallback.
- ``--json`` prints exactly ``{"runs", "schedd_runs", "schedd_fallback", "lints", "error"}``;
  ``error`` is HTCondor's error text (possibly ``""``, e.g. for ``*/0``) or null.
- Exit status: 0; 1 when the schedule is invalid or can never fire; 2 for bad options.
- This shell is the only place that reads the clock (``SystemClock``), for the default
  ``--after``.
"""

from __future__ import annotations

import argparse
import math
import sys
from datetime import datetime

from engine.clock import SystemClock
from engine.cli import args as argcheck
from engine.cli.jsonout import emit
from engine.crondor import (
    ATTRS,
    CronError,
    ZoneError,
    explain,
    format_time,
    get_zone,
    lint_deferral,
    lint_runs,
    lint_schedule,
    never_fires,
    next_runs,
    parse_schedule,
    schedd_runs,
)

_FIELD_OPTS = (("--minute", "M"), ("--hour", "H"), ("--dom", "D"), ("--month", "MO"), ("--dow", "W"))
_MAX_N = 1000


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("schedule", nargs="?", metavar="SCHEDULE",
                   help="the five fields of a crontab line in one argument, e.g. '*/15 * * * *' "
                        "(or give them one by one with --minute … --dow)")
    for (opt, meta), attr in zip(_FIELD_OPTS, ATTRS):
        p.add_argument(opt, metavar=meta, default=None, help=f"{attr} (absent when not given)")
    p.add_argument("--after", metavar="EPOCH|ISO", help="start time (default: now); ISO without offset is in --tz")
    p.add_argument("--tz", metavar="ZONE", type=argcheck.zone, help="IANA time zone of the schedd (default: the local zone)")
    p.add_argument("--window", type=int, default=None, help="DeferralWindow, for lints (default 0)")
    p.add_argument("--prep-time", type=int, default=None, help="DeferralPrepTime, for lints (default 300)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def register(subparsers) -> None:
    cron = subparsers.add_parser("cron", help="crondor schedules: next runs, schedd prediction, lints",
                                 description="A crondor schedule (the job attributes CronMinute, CronHour, "
                                             "CronDayOfMonth, CronMonth, CronDayOfWeek): its next runs, what an "
                                             "HTCondor schedd would pick, and lints.")
    # required, as hook's: ``routedeck cron`` alone is a usage error in one line (it printed the help)
    sub = cron.add_subparsers(dest="cron_command", required=True, metavar="{next,explain}")
    nxt = sub.add_parser("next", help="next N runs of a schedule, the schedd's predicted picks, lints",
                         description="The next N runs of a crondor schedule in a time zone, the runs an HTCondor "
                                     ">= 10.3 schedd would pick, and lints.")
    _add_common(nxt)
    nxt.add_argument("-n", type=int, default=5, help="number of runs (default 5)")
    nxt.set_defaults(func=run)
    exp = sub.add_parser("explain", help="the schedule in plain words, with lints",
                         description="A crondor schedule in plain words, with lints.")
    _add_common(exp)
    exp.set_defaults(func=run)


_FIRST_EPOCH = -62135596800 + 86400  # 0001-01-02 UTC: a zone offset cannot go before year 1
_LAST_EPOCH = 253402300799 - 86400 * 366  # a year before 9999-12-31: next runs need room


def parse_after(text: str | None, zone) -> float:
    if text is None:
        return SystemClock().now()
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None:
        try:
            dt = datetime.fromisoformat(text)
        except ValueError as exc:
            raise ValueError(f"--after: {text!r} is neither epoch seconds nor an ISO 8601 time") from exc
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=zone.tzinfo, fold=0)
        value = dt.timestamp()
    # the calendar code works in years 1..9999 (Python's datetime); nan/inf have no date at all
    if not (math.isfinite(value) and _FIRST_EPOCH <= value <= _LAST_EPOCH):
        raise ValueError(f"--after: {text!r} is outside years 1-9998 (epoch seconds {_FIRST_EPOCH}..{_LAST_EPOCH})")
    return value


def _fields(args) -> tuple:
    """The five field texts: from SCHEDULE or from the field options (argcheck.UsageError)."""
    texts = (args.minute, args.hour, args.dom, args.month, args.dow)
    schedule = getattr(args, "schedule", None)
    if schedule is None:
        return texts
    if any(t is not None for t in texts):
        raise argcheck.UsageError("give SCHEDULE or the field options (--minute … --dow), not both")
    fields = schedule.split()
    if len(fields) != 5:
        raise argcheck.UsageError(f"SCHEDULE needs the five fields of a crontab line (minute hour day-of-month "
                                  f"month day-of-week), e.g. '*/15 * * * *'; {schedule[:80]!r} has {len(fields)}")
    return tuple(fields)


def run(args) -> int:
    try:
        texts = _fields(args)
    except argcheck.UsageError as exc:
        return argcheck.usage_error("cron", exc)
    try:
        zone = get_zone(args.tz)
        after = parse_after(args.after, zone)
    except (ZoneError, ValueError) as exc:
        print(f"routedeck cron: {exc}", file=sys.stderr)
        return 2
    sched = parse_schedule(*texts)
    lints = lint_schedule(sched, zone, after)
    window = 0 if args.window is None else args.window
    prep = 300 if args.prep_time is None else args.prep_time
    lints += lint_deferral(window, prep)
    bad = not sched.valid or never_fires(sched)
    if args.cron_command == "explain":
        return _explain(args, sched, zone, lints, bad)
    n = args.n
    if not 1 <= n <= _MAX_N:
        print(f"routedeck cron: -n must be between 1 and {_MAX_N}", file=sys.stderr)
        return 2
    runs, predicted = [], []
    if not bad:
        try:
            runs = next_runs(sched, after, n, zone)
            predicted = schedd_runs(sched, after, n, zone)
        except CronError as exc:  # only past the year 9999
            print(f"routedeck cron: {exc}", file=sys.stderr)
        lints += lint_runs(runs, predicted, zone)
    if args.json:
        emit({
            "runs": runs,
            "schedd_runs": [r.time for r in predicted],
            "schedd_fallback": any(r.fallback for r in predicted),
            "lints": [lint.as_json() for lint in lints],
            "error": sched.error,
        })
        return 1 if bad else 0
    out = [_header(sched, zone, after)]
    if not sched.valid:
        out.append(f"error: invalid schedule; the schedd holds the job (code 25): "
                   f"'Invalid cron schedule parameters: {sched.error}'")
    elif runs:
        out.append(_table(runs, predicted, zone))
    out.extend(f"{lint.level}: {lint.message}" for lint in lints)
    print("\n".join(out))
    return 1 if bad else 0


def _header(sched, zone, after: float) -> str:
    given = ", ".join(f"{a} = {t!r}" for a, t in zip(ATTRS, sched.texts) if t is not None)
    return (f"Schedule: {given or 'no cron attribute (every minute)'}\n"
            f"Zone: {zone.name}; after {format_time(int(after // 1), zone)} [{int(after // 1)}]")


def _table(runs, predicted, zone) -> str:
    rows = [f"{'#':>3}  {'next run':<28} {'epoch':>11}  schedd (HTCondor >= 10.3)"]
    diverged = False
    for i, (ours, theirs) in enumerate(zip(runs, predicted), 1):
        diverged = diverged or ours != theirs.time
        if not diverged:
            other = "same"
        else:
            other = f"{format_time(theirs.time, zone)} [{theirs.time}]"
            if theirs.fallback:
                other += " now+120"
        rows.append(f"{i:>3}  {format_time(ours, zone):<28} {ours:>11}  {other}")
    return "\n".join(rows)


def _explain(args, sched, zone, lints, bad: bool) -> int:
    text = explain(sched, zone)
    if args.json:
        emit({"text": text, "lints": [lint.as_json() for lint in lints], "error": sched.error})
    else:
        print("\n".join([text] + [f"{lint.level}: {lint.message}" for lint in lints]))
    return 1 if bad else 0
