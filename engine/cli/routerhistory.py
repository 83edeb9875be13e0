"""``routedeck router-history``: what ``condor_router_history`` prints, from history files.

The real script (``src/condor_job_router/condor_router_history``, htcondor.md §1.9):

- Reads every file whose name starts with ``history`` in SPOOL with mtime >= the start (here:
  the ``--history`` files, or such files in a ``--history`` directory). Ads end at lines starting
  with ``***``; each line is split at its first ``=``, names lower-cased, values stripped; jobs
  are keyed ``clusterid.procid`` (a later ad with the same key replaces an earlier one).
- A job counts if it has ``RouteName`` (or the legacy ``RoutedFromRoute``) and
  ``start <= CompletionDate <= end``; ``end`` = now − ``--age`` days, ``start`` = ``--start``
  ("YYYY-MM-DD HH:MM", local time) or end − ``--days`` (default 1).
- Status letter ``"UIRXCHE"[JobStatus]``; run time = ``round(RemoteWallClockTime)`` seconds; hours
  accumulated per route and letter.
- Output: ``Routed job history from <start> to <end>`` (``%Y-%m-%d %H:%M``, local), a blank line;
  then either ``--show_records`` lines (``JobID Status Site Runtime`` header, one ``id letter
  route seconds`` line per job, each print ending with a space) or the summary table — it
  replaces the summary (``show_summary = not show_records``).
- Summary rows sorted by completed hours, descending, then ``TOTAL``. Where the Python 3 script
  would crash (comparing ``None`` hours or equal hours, which compares two objects), RouteDeck
  orders routes without completed hours last and ties by route name, descending, as
  ``sort(); reverse()`` would for the comparable part.

``now`` is ``--now`` (epoch) or the system clock; the local zone is ``--tz`` (default: the
machine's). Nothing else here reads a clock.

RouteDeck's additions (the real tool prints an empty table without a word): when routed jobs
in the files completed outside the window, stderr says how many and when, and suggests the
``--start`` that covers them. Exit status: 0; 2 usage or an unreadable ``--history`` (one line on
stderr, nothing on stdout).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

from engine.cli import args as argcheck
from engine.contract.codes import STATUS_LETTERS

LETTERS = STATUS_LETTERS  # "UIRXCHE"[JobStatus]


def read_history_file(path: Path, ads: dict[str, dict[str, str]]) -> None:
    current: dict[str, str] = {}

    def flush() -> None:
        c, p = current.get("clusterid"), current.get("procid")
        if c and p:
            ads[c + "." + p] = current

    with open(path, "r", errors="replace") as fh:
        for line in fh:
            if line.startswith("***"):
                flush()
                current = {}
                continue
            fields = line.split("=", 1)
            if len(fields) == 2:
                current[fields[0].lower().strip()] = fields[1].strip()
    flush()


def history_files(paths: list[str], start: float) -> list[Path]:
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            for name in sorted(os.listdir(p)):
                f = p / name
                if name.startswith("history") and f.is_file() and f.stat().st_mtime >= start:
                    out.append(f)
        else:
            out.append(p)
    return out


class Summary:
    def __init__(self, name: str) -> None:
        self.name = name
        self.hours: dict[str, float] = {}
        self.jobs: dict[str, int] = {}


def collect(ads: dict[str, dict[str, str]], start: float, end: float, show_iwd: bool = False
            ) -> tuple[dict[str, Summary], list[str]]:
    sites: dict[str, Summary] = {}
    records: list[str] = []
    for jobid, ad in ads.items():
        route = ad.get("routename") or ad.get("routedfromroute")
        if not route:
            continue
        route = route.replace('"', "")
        try:
            cdate = float(ad.get("completiondate", ""))
            code = LETTERS[int(ad.get("jobstatus", ""))]
        except (ValueError, IndexError):
            continue  # the real script would stop with a traceback here
        if cdate < start or cdate > end:
            continue
        try:
            wall = int(round(float(ad.get("remotewallclocktime", 0))))
        except ValueError:
            wall = 0
        s = sites.setdefault(route, Summary(route))
        s.hours[code] = s.hours.get(code, 0) + wall / 3600
        s.jobs[code] = s.jobs.get(code, 0) + 1
        line = f"{jobid} {code} {route} {wall} "
        if show_iwd:
            iwd = ad.get("submit_iwd", "")
            if len(iwd) > 1 and iwd[0] == '"' and iwd[-1] == '"':
                iwd = iwd[1:-1]
            line += f"{iwd} "
        records.append(line)
    return sites, records


def outside_window(ads: dict[str, dict[str, str]], start: float, end: float) -> tuple[int, float, float] | None:
    """(count, first, last completion) of the routed jobs that ``collect`` skipped for their
    CompletionDate, or None when there are none."""
    dates = []
    for ad in ads.values():
        if not (ad.get("routename") or ad.get("routedfromroute")):
            continue
        try:
            cdate = float(ad.get("completiondate", ""))
        except ValueError:
            continue
        if math.isfinite(cdate) and (cdate < start or cdate > end) and cdate > 0:
            dates.append(cdate)
    return (len(dates), min(dates), max(dates)) if dates else None


def summary_lines(sites: dict[str, Summary]) -> list[str]:
    total = Summary("TOTAL")
    for s in sites.values():
        for k, v in s.hours.items():
            total.hours[k] = total.hours.get(k, 0) + v
        for k, v in s.jobs.items():
            total.jobs[k] = total.jobs.get(k, 0) + v
    ordered = sorted(sites.values(), key=lambda s: (s.hours.get("C") is not None, s.hours.get("C") or 0.0, s.name),
                     reverse=True)
    out = ["%-15s %5s %7s %7s" % ("Site", "Hours", "Jobs", "Runs"),
           "%-15s %5s %7s %5s" % ("", "", "Completed", "Aborted"),
           "-" * 55]
    for s in ordered + [total]:
        c_hours = int(round(s.hours.get("C", 0)))
        c_jobs = s.jobs.get("C", 0)
        x_jobs = sum(v for k, v in s.jobs.items() if k != "C")
        if s.name == "TOTAL":
            out.append("-" * 55)
        out.append("%-15s %5s %7s %5s" % (s.name, c_hours, c_jobs, x_jobs))
    return out


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "router-history", help="condor_router_history: routed jobs per route from history files",
        description="What condor_router_history prints (htcondor.md §1.9), from history files.")
    p.add_argument("--history", action="append", required=True, type=argcheck.path,
                   help="a history file, or a directory holding history* files (repeatable)")
    p.add_argument("--days", type=float, default=1.0, help="how many days the report covers (default 1)")
    p.add_argument("--age", type=float, default=0.0, help="how many days ago the end time is")
    p.add_argument("--start", help='start of the report, "YYYY-MM-DD HH:MM" local time')
    p.add_argument("--show-records", "--show_records", dest="show_records", action="store_true",
                   help="one line per job instead of the summary (as the real tool)")
    p.add_argument("--show-iwd", "--show_iwd", dest="show_iwd", action="store_true",
                   help="with --show-records, add the submit directory")
    p.add_argument("--now", type=float, default=None, help="the current time, epoch seconds (default: the clock)")
    p.add_argument("--tz", default=None, type=argcheck.zone, help="local time zone (default: the machine's)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        tz: tzinfo | None = None if args.tz is None else (timezone.utc if args.tz.upper() == "UTC" else ZoneInfo(args.tz))
    except Exception:  # noqa: BLE001 - ZoneInfo refuses a bad name several ways; each is a usage error
        print(f"routedeck router-history: unknown time zone {args.tz!r}", file=sys.stderr)
        return 2
    nums = [args.days, args.age] + ([args.now] if args.now is not None else [])
    if not all(math.isfinite(x) and abs(x) < 1e11 for x in nums):
        print("routedeck router-history: --days, --age and --now must be finite numbers", file=sys.stderr)
        return 2
    if args.now is None:
        from engine.clock import SystemClock  # noqa: PLC0415

        now = SystemClock().now()
    else:
        now = args.now
    end = now - 3600 * 24 * args.age
    start = end - 3600 * 24 * args.days
    if args.start:
        try:
            naive = datetime.strptime(args.start, "%Y-%m-%d %H:%M")
        except ValueError:
            print(f'routedeck router-history: --start must be "YYYY-MM-DD HH:MM", not {args.start!r}', file=sys.stderr)
            return 1
        start = (naive.replace(tzinfo=tz) if tz else naive).timestamp()

    def fmt(t: float) -> str:
        return datetime.fromtimestamp(t, tz).strftime("%Y-%m-%d %H:%M")

    for given in args.history:
        if why := argcheck.unreadable(given, directory=True):
            return argcheck.usage_error("router-history", why)
    ads: dict[str, dict[str, str]] = {}
    for f in history_files(args.history, start):
        try:
            read_history_file(f, ads)
        except OSError as exc:
            return argcheck.usage_error("router-history", f"cannot read {f}: {exc.strerror}")
    print(f"Routed job history from {fmt(start)} to {fmt(end)}")
    print()
    sites, records = collect(ads, start, end, args.show_iwd)
    outside = outside_window(ads, start, end)
    if outside:
        n, first, last = outside
        print(f"routedeck router-history: {n} routed job{'s' if n != 1 else ''} in the history completed outside "
              f"this window, from {fmt(first)} to {fmt(last)}: try --start \"{fmt(first)}\""
              f"{' --now %d' % math.ceil(last + 60) if last > end else ''}",
              file=sys.stderr)
    if args.show_records:
        print("JobID Status Site Runtime " + ("IWD " if args.show_iwd else ""))
        for line in records:
            print(line)
    else:
        print("\n".join(summary_lines(sites)))
    return 0
