"""``routedeck queue LOG``: what a job_queue.log holds, headless.

Design decisions and invariants:

- The log is read with the schedd's startup rules (htcondor.md §3.3) unless ``--follower-rules``
  asks for the router's (§3.5, an unfinished last transaction applied). Problems go to stderr
  (or into ``problems`` with ``--json``); loading never stops at bad input.
- Plain output: one summary line, counts by JobStatus, then jobs by owner and status.
  ``--json`` prints ``{"total_jobs", "by_status", "by_owner", "records", "problems"}``
  (``records``: the non-job records by kind — user, project, jobset, cluster_private, other);
  ``by_status`` keys are the JobStatus numbers as strings (``"undefined"`` for a missing or
  non-integer status).
- ``--jobs`` lists the jobs instead (one ``ID STATUS OWNER`` line each, in job id order; with
  ``--json`` a ``jobs`` list of the rows every ``--json`` uses, engine.cli.jsonout: status by
  name and code, null when unknown).
- ``--long JOBID`` prints the effective ad (cluster attributes overlaid by the proc's) as sorted
  ``Name = value`` lines like ``condor_q -l``; ``JOBID`` may be ``c.p`` or a cluster ``c``. With
  ``--json`` the ad is an object of attribute → ClassAd value text (a list for a cluster).
- ``--constraint EXPR`` keeps the jobs for which EXPR is true in the job's effective ad, with
  ``time()``/``CurrentTime`` bound to the wall clock read here (this shell is the only reader).
- Exit status: 0; 1 when ``--long`` finds no job or the log has a fatal problem (the schedd would
  refuse it); 2 for an unreadable log, a file with no valid record at all (empty or not a job
  queue log: one line, nothing on stdout) or a constraint that does not parse.
- The log is ``LOG`` or ``--queue-log LOG``, as in ``router-q`` and ``watch``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from engine.classad import ClassAdError, evaluate, format_ad, is_true, parse_expr
from engine.clock import SystemClock
from engine.cli import args as argcheck
from engine.cli.jsonout import job_json
from engine.contract.codes import JobStatus
from engine.queue.reader import load_log
from engine.queue.result import FOLLOW, OWNER

# the table's status names: in words ("Transferring Output"); 0 (Unexpanded) is shown by number only
STATUS_NAMES = {int(s): s.words for s in JobStatus if s is not JobStatus.UNEXPANDED}


def register(subparsers) -> None:
    p = subparsers.add_parser("queue", help="counts, job ids and ads of a job_queue.log",
                              description="Read a job_queue.log with the schedd's rules and print job counts "
                                          "by JobStatus and owner (--jobs: the job ids; --long: one job's ad).")
    argcheck.add_log_argument(p, "path to a job_queue.log")
    p.add_argument("--jobs", action="store_true", help="list the jobs: id, status, owner")
    p.add_argument("--long", "-l", metavar="JOBID", type=argcheck.job_id, help="print the effective ad of job c.p (or of every proc of cluster c)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--constraint", metavar="EXPR", help="only jobs for which EXPR is true")
    p.add_argument("--follower-rules", action="store_true",
                   help="read as the job router follows a live log (unfinished transaction applied)")
    p.set_defaults(func=run)


def _status_key(s: int | None) -> str:
    return "undefined" if s is None else str(s)


def _owner(job) -> str:
    text = job.get("Owner")
    if text is None:
        return "undefined"
    if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in text[1:-1]:
        return text[1:-1]
    return text


def _text(job, name: str) -> str | None:
    t = job.get(name)
    if t is not None and len(t) >= 2 and t[0] == t[-1] == '"':
        return t[1:-1]
    return None


def _job_row(job) -> dict[str, Any]:
    """The job as every ``--json`` shows one (engine.cli.jsonout.job_json); the kind as the
    dashboard's (engine.views.build): routed copy, source of a routed copy, or plain."""
    routed_from, routed_to = _text(job, "RoutedFromJobId"), _text(job, "RoutedToJobId")
    kind = "routed" if routed_from else ("source" if routed_to or _text(job, "Managed") == "External" else "plain")
    owner = _owner(job)
    return job_json(job.key, job.status, None if owner == "undefined" else owner, kind, _text(job, "RouteName"),
                    routed_to, routed_from)


def _select(queue, constraint: str | None, now: float) -> list:
    jobs = queue.jobs()
    if constraint is None:
        return jobs
    expr = parse_expr(constraint)
    return [j for j in jobs if is_true(evaluate(expr, j.classad(), now=now))]


def _wanted(jobs: list, jobid: str) -> list | None:
    try:
        if "." in jobid:
            c, p = (int(x) for x in jobid.split(".", 1))
            return [j for j in jobs if j.id == (c, p)]
        c = int(jobid)
    except ValueError:
        return None
    return [j for j in jobs if j.id[0] == c]


def run(args) -> int:
    try:
        log = argcheck.log_of(args, "queue", readable=True)
    except argcheck.UsageError as exc:
        return argcheck.usage_error("queue", exc)
    args.log = log
    res = load_log(args.log, mode=FOLLOW if args.follower_rules else OWNER)
    unreadable = any(p.record == 0 and p.severity == "fatal" for p in res.problems)
    if unreadable:
        print(f"routedeck queue: {res.problems[0]}", file=sys.stderr)
        return 2
    if res.not_a_log():
        print(f"routedeck queue: {res.not_a_log()}", file=sys.stderr)
        return 2
    if args.constraint is not None:
        try:
            parse_expr(args.constraint)
        except ClassAdError as exc:
            print(f"routedeck queue: --constraint: {exc}", file=sys.stderr)
            return 2
    jobs = _select(res.queue, args.constraint, SystemClock().now())
    problems = [p.as_dict() for p in res.problems]
    if not args.json:
        for p in res.problems:
            print(f"routedeck queue: {p}", file=sys.stderr)
        if res.dropped_problems:
            print(f"routedeck queue: … and {res.dropped_problems} more problems", file=sys.stderr)
    status = 1 if res.fatal else 0
    if args.long is not None:
        chosen = _wanted(jobs, args.long)
        if chosen is None:
            print(f"routedeck queue: --long: not a job id: {args.long!r}", file=sys.stderr)
            return 2
        if not chosen:
            print(f"routedeck queue: no job {args.long} in {args.log}", file=sys.stderr)
            return 1
        if args.json:
            ads: Any = [j.attrs for j in chosen]
            out = {"ad": ads[0] if "." in args.long else ads, "problems": problems}
            print(json.dumps(out, indent=2))
        else:
            print("\n".join(format_ad(j.attrs) for j in chosen), end="")
        return status
    if getattr(args, "jobs", False):
        rows = [_job_row(j) for j in sorted(jobs, key=lambda j: j.id)]
        if args.json:
            print(json.dumps({"total_jobs": len(jobs), "jobs": rows, "problems": problems}, indent=2))
        else:
            for r in rows:
                print(f"{r['job']:<12} {r['status'] or r['status_code'] or 'undefined':<20} {r['owner'] or ''}")
        return status
    by_status: dict[str, int] = {}
    by_owner: dict[str, dict[str, int]] = {}
    for j in jobs:
        s = _status_key(j.status)
        by_status[s] = by_status.get(s, 0) + 1
        row = by_owner.setdefault(_owner(j), {})
        row[s] = row.get(s, 0) + 1
    if args.json:
        print(json.dumps({"total_jobs": len(jobs), "by_status": by_status, "by_owner": by_owner,
                          "records": res.queue.record_kinds(), "problems": problems}, indent=2, sort_keys=True))
        return status
    print(_table(args.log, res, len(jobs), by_status, by_owner), end="")
    return status


def _sort_status(keys) -> list[str]:
    return sorted(keys, key=lambda k: (k == "undefined", int(k) if k != "undefined" else 0))


def _table(log: str, res, n: int, by_status: dict[str, int], by_owner: dict[str, dict[str, int]]) -> str:
    q = res.queue
    seq = f"log sequence {q.seq}" if q.seq is not None else "no 107 record"
    lines = [f"{log}: {n} jobs ({seq}, {len(res.problems)} problems)"]
    kinds = q.record_kinds()
    if kinds:  # 25.x records beside the jobs (htcondor.md §3.1): loaded, not counted as jobs
        lines.append("other records: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(kinds.items())))
    lines.append("")
    cols = _sort_status(by_status)
    lines.append(f"{'JobStatus':<24}{'Jobs':>8}")
    for k in cols:
        name = STATUS_NAMES.get(int(k), "") if k != "undefined" else ""
        lines.append(f"{(k + ' ' + name).strip():<24}{by_status[k]:>8}")
    if by_owner:
        heads = [STATUS_NAMES.get(int(k), k) if k != "undefined" else "undefined" for k in cols]
        width = max(8, *(len(h) + 2 for h in heads))
        owner_w = max(12, *(len(o) + 2 for o in by_owner))
        lines += ["", f"{'Owner':<{owner_w}}" + "".join(f"{h:>{width}}" for h in heads) + f"{'Total':>{width}}"]
        for owner in sorted(by_owner):
            row = by_owner[owner]
            lines.append(f"{owner:<{owner_w}}" + "".join(f"{row.get(k, 0):>{width}}" for k in cols)
                         + f"{sum(row.values()):>{width}}")
    return "\n".join(lines) + "\n"
