"""``routedeck router-q``: what ``condor_router_q`` prints, from a ``job_queue.log``.

``condor_router_q`` is a shell wrapper around ``condor_q`` (htcondor.md §1.9):

- Base constraint ``RouteName =!= UNDEFINED`` (routed copies, not sources). Options, only at the
  front: ``-S`` summary; ``-R`` / ``-I`` / ``-H`` summary of running / not running / held;
  ``-idle``, ``-held``, ``-constraint X``, ``-route NAME`` (alias ``-site``) narrow the list.
- Summary: the header ``printf "%7s %2s %-20s %s" JOBS ST Route GridResource``, then one line
  ``"%2s %-20s %s"`` (status letter ``UIRXCHE``, RouteName, GridResource) per job, through
  ``sort | uniq -c | sort -k 3``: a count (``%7d`` and a space, as GNU ``uniq -c``) per distinct
  line, ordered by the text from the third field on (the C locale's byte order; ties by the whole
  line, as ``sort`` does).
- Without a summary the real tool runs ``condor_q``; RouteDeck prints ``condor_q -nobatch``'s
  classic table (ID, OWNER, SUBMITTED, RUN_TIME, ST, PRI, SIZE, CMD) and its totals line, with
  times in the zone given by ``--tz`` (default UTC) and RUN_TIME at the log's last commit time.
- A value router-q shows that is not of its type (a string JobStatus, a list RouteName, a word
  QDate: ``VALUES``, read with ``engine.queue.job.value_as``) is shown as ``?`` and named on
  stderr with its job id and text; checked on every job with a RouteName (the jobs the base
  constraint is about), before the options narrow them.
- The log is ``LOG`` or ``--queue-log LOG`` (as ``queue`` and ``watch``). Exit status (the rule
  of every command that reads a log, engine.cli.args "What the input decides"): 0; 1 when the
  log has a fatal problem (the table is printed all the same, from the state the schedd's rules
  keep) or a value router-q shows is not of its type; 2 usage, an unreadable log or a file that
  is not a job queue log (one line on stderr, nothing on stdout). An empty file or one of blank
  lines is an empty queue: 0 jobs, exit 0.
"""

from __future__ import annotations

import argparse
import math
import sys
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo

from engine.classad import ClassAdError, evaluate, is_true, parse_expr
from engine.cli import args as argcheck
from engine.contract.codes import STATUS_LETTERS, JobStatus
from engine.queue.job import INTEGER, NUMBER, STRING, bad_values, value_as

LETTERS = STATUS_LETTERS  # "UIRXCHE"[JobStatus]
BAD = "?"  # a value shown that is not of its type (named on stderr)

# what router-q shows, by the type it shows it as: the summary's columns, then the table's
SUMMARY_VALUES = {"JobStatus": INTEGER, "RouteName": STRING, "GridResource": STRING}
VALUES = {**SUMMARY_VALUES, "Owner": STRING, "QDate": INTEGER, "JobCurrentStartDate": INTEGER,
          "RemoteWallClockTime": NUMBER, "JobPrio": INTEGER, "ImageSize": NUMBER, "Cmd": STRING,
          "Args": STRING, "Arguments": STRING}


def _str(attrs: dict[str, str], name: str) -> str | None:
    return value_as(attrs.get(name), STRING)


def _int(attrs: dict[str, str], name: str) -> int | None:
    return value_as(attrs.get(name), INTEGER)


def _num(attrs: dict[str, str], name: str) -> float | None:
    return value_as(attrs.get(name), NUMBER)


def _shown(attrs: dict[str, str], name: str) -> str:
    """A string column: its value, ``?`` when it is not a string, empty when missing."""
    v = _str(attrs, name)
    return v if v is not None else (BAD if attrs.get(name) is not None else "")


def build_constraint(opts: list[str]) -> tuple[str, bool, list[str]]:
    """The shell script's option loop: (constraint, summary?, remaining arguments)."""
    c = "RouteName =!= UNDEFINED"
    summary = False
    i = 0
    while i < len(opts):
        o = opts[i]
        if o == "-S":
            summary = True
        elif o == "-R":
            summary, c = True, c + " && JobStatus == 2"
        elif o == "-I":
            summary, c = True, c + " && JobStatus != 2"
        elif o == "-H":
            summary, c = True, c + " && JobStatus == 5"
        elif o == "-idle":
            c += " && JobStatus == 1"
        elif o == "-held":
            c += " && JobStatus == 5"
        elif o == "-constraint" and i + 1 < len(opts):
            c += f" && ({opts[i + 1]})"
            i += 1
        elif o in ("-route", "-site") and i + 1 < len(opts):
            c += f' && RouteName =?= "{opts[i + 1]}"'
            i += 1
        else:
            break
        i += 1
    return c, summary, opts[i:]


def _field3_key(line: str) -> str:
    """``sort -k 3`` key: from the start of field 3 (its leading blanks included) to the end."""
    i, n = 0, len(line)
    for _ in range(2):
        while i < n and line[i] in " \t":
            i += 1
        while i < n and line[i] not in " \t":
            i += 1
    return line[i:]


def summary_lines(jobs: list[dict[str, str]]) -> list[str]:
    lines = []
    for a in jobs:
        st = _int(a, "JobStatus")
        letter = LETTERS[st] if st is not None and 0 <= st < len(LETTERS) else (BAD if "JobStatus" in a else "")
        lines.append("%2s %-20s %s" % (letter, _shown(a, "RouteName"), _shown(a, "GridResource")))
    counted: list[str] = []
    for line in sorted(set(lines), key=lambda s: s.encode()):
        counted.append("%7d %s" % (lines.count(line), line))
    counted.sort(key=lambda s: (_field3_key(s).encode(), s.encode()))
    return ["%7s %2s %-20s %s" % ("JOBS", "ST", "Route", "GridResource")] + counted


def _run_time(a: dict[str, str], now: float) -> str:
    secs = _num(a, "RemoteWallClockTime") or 0.0
    if _int(a, "JobStatus") == JobStatus.RUNNING and _int(a, "JobCurrentStartDate") is not None:
        secs += max(0.0, now - (_int(a, "JobCurrentStartDate") or 0))
    s = int(secs)
    return "%d+%02d:%02d:%02d" % (s // 86400, s % 86400 // 3600, s % 3600 // 60, s % 60)


def table_lines(jobs: list[tuple[str, dict[str, str]]], now: float, tz: Any) -> list[str]:
    out = [" ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD"]
    counts = {k: 0 for k in (4, 3, 1, 2, 5, 7)}
    for key, a in jobs:
        c, p = key.split(".")
        q = _int(a, "QDate")
        sub = datetime.fromtimestamp(q, tz).strftime("%m/%d %H:%M") if q is not None else "??/?? ??:??"
        st = _int(a, "JobStatus")
        letter = LETTERS[st] if st is not None and 0 <= st < len(LETTERS) else "?"
        if st in counts:
            counts[st] += 1
        image = _num(a, "ImageSize") if "ImageSize" in a else 0.0
        size = BAD if image is None else "%.1f" % (image / 1024.0)
        prio = _int(a, "JobPrio") if "JobPrio" in a else 0
        cmd = _shown(a, "Cmd").rsplit("/", 1)[-1]
        args = _shown(a, "Args") or _shown(a, "Arguments")
        out.append("%4s.%-3s %-14s %-11s %-12s %-2s %-3s %-4s %s" % (
            c, p, _shown(a, "Owner")[:14], sub, _run_time(a, now), letter, BAD if prio is None else prio,
            size, (cmd + (" " + args if args else ""))[:40]))
    out.append("")
    out.append("Total for query: %d jobs; %d completed, %d removed, %d idle, %d running, %d held, %d suspended"
               % (len(jobs), counts[4], counts[3], counts[1], counts[2], counts[5], counts[7]))
    return out


def select(queue: Any, constraint: str, now: float) -> list[tuple[str, dict[str, str]]]:
    expr = parse_expr(constraint)
    out = []
    for job in queue.jobs():
        if is_true(evaluate(expr, my=job.classad(), now=now)):
            out.append((job.key, job.attrs))
    return out


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "router-q", help="condor_router_q: routed jobs of a job_queue.log (-S summary per route)",
        description="What condor_router_q prints (htcondor.md §1.9), read from a job_queue.log. "
                    "Options as the real tool: -S, -R, -I, -H, -idle, -held, -constraint X, -route NAME.")
    argcheck.add_log_argument(p, "the job_queue.log to read")
    p.add_argument("--tz", default="UTC", type=argcheck.zone, help="time zone for SUBMITTED (default UTC)")
    p.add_argument("--now", type=float, default=None, help="time for RUN_TIME (default: the log's last commit)")
    p.add_argument("-S", dest="S", action="store_true", help="summarize the state of jobs on each route")
    p.add_argument("-R", dest="R", action="store_true", help="summarize running jobs on each route")
    p.add_argument("-I", dest="I", action="store_true", help="summarize idle jobs on each route")
    p.add_argument("-H", dest="H", action="store_true", help="summarize held jobs on each route")
    p.add_argument("-idle", dest="idle", action="store_true", help="show only idle jobs")
    p.add_argument("-held", dest="held", action="store_true", help="show only held jobs")
    p.add_argument("-constraint", dest="constraint", action="append", default=[], help="jobs matching X")
    p.add_argument("-route", "-site", dest="route", action="append", default=[], help="only jobs on route NAME")
    p.set_defaults(func=run)


def options_of(args: argparse.Namespace) -> list[str]:
    """The flags as the shell script's option list (its constraint does not depend on order)."""
    opts = [f for f in ("S", "R", "I", "H") if getattr(args, f, False)]
    opts = ["-" + f for f in opts]
    opts += ["-idle"] if getattr(args, "idle", False) else []
    opts += ["-held"] if getattr(args, "held", False) else []
    for c in getattr(args, "constraint", []):
        opts += ["-constraint", c]
    for r in getattr(args, "route", []):
        opts += ["-route", r]
    return opts


def run(args: argparse.Namespace) -> int:
    from engine.feeds.demo_state import last_commit_time, latest_job_time  # noqa: PLC0415
    from engine.queue.reader import load_log  # noqa: PLC0415
    from engine.queue.result import OWNER  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    try:
        log = argcheck.log_of(args, "router-q", readable=True)
    except argcheck.UsageError as exc:
        return argcheck.usage_error("router-q", exc)
    if args.now is not None and not (math.isfinite(args.now) and abs(args.now) < 1e11):
        print("routedeck router-q: --now must be a finite epoch time", file=sys.stderr)
        return 2
    constraint, summary, rest = build_constraint(options_of(args))
    if rest:
        print(f"routedeck router-q: unsupported option(s): {' '.join(rest)}", file=sys.stderr)
        return 2
    try:
        parse_expr(constraint)
    except ClassAdError as exc:
        print(f"routedeck router-q: bad -constraint: {exc}", file=sys.stderr)
        return 2
    try:
        tz = timezone.utc if args.tz.upper() == "UTC" else ZoneInfo(args.tz)
    except Exception:  # noqa: BLE001 - ZoneInfo refuses a bad name several ways; each is a usage error
        print(f"routedeck router-q: unknown time zone {args.tz!r}", file=sys.stderr)
        return 2
    res = load_log(log, mode=OWNER)
    status, why = argcheck.load_verdict(res)
    if status == argcheck.USAGE:
        return argcheck.usage_error("router-q", why)
    if why:  # a fatal problem: the table is of the state the schedd's rules keep
        print(f"routedeck router-q: {why}", file=sys.stderr)
    now = args.now if args.now is not None else (last_commit_time(Path(log))
                                                 or latest_job_time(res.queue) or 0.0)
    jobs = select(res.queue, constraint, now)
    lines = summary_lines([a for _, a in jobs]) if summary else table_lines(jobs, now, tz)
    print("\n".join(lines))
    routed = [j for j in res.queue.jobs() if j.get("RouteName") is not None]
    bad = bad_values(routed, SUMMARY_VALUES if summary else VALUES)
    for line in argcheck.bad_value_lines(bad, log):
        print(f"routedeck router-q: {line}", file=sys.stderr)
    return argcheck.worst(status, argcheck.FINDINGS if bad else argcheck.OK)
