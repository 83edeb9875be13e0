"""``routedeck queue LOG``: what a job_queue.log holds, headless.

Design decisions and invariants:

- The log is read with the schedd's startup rules (htcondor.md §3.3) unless ``--follower-rules``
  asks for the router's (§3.5, an unfinished last transaction applied). Problems go to stderr
  (or into ``problems`` with ``--json``); loading never stops at bad input.
- A job's status is the schedd's (``engine.queue.job.schedd_status``, the rule every view uses):
  an ad without an integer ``JobStatus`` is Idle, or its ``InitialJobStatus`` (qmgmt.cpp
  ``InitJobQueue``), with either reading rule.
- Plain output: one summary line, counts by JobStatus, then jobs by owner and status.
  ``--json`` prints ``{"total_jobs", "by_status", "by_owner", "records", "problems"}``
  (``records``: the non-job records by kind — user, project, jobset, cluster_private, other);
  a status count is ``{"status": name, "status_code": code, "jobs": n}`` as every ``--json``
  gives a status (engine.cli.jsonout.status_counts), ``by_status`` a list of them in code order,
  ``by_owner`` a list of ``{"owner", "jobs", "by_status"}`` in owner order.
- ``--jobs`` lists the jobs instead (one ``ID STATUS OWNER`` line each, in job id order; with
  ``--json`` a ``jobs`` list of the rows every ``--json`` uses, engine.cli.jsonout: status by
  name and code, null when unknown).
- ``--long JOBID`` prints the effective ad (cluster attributes overlaid by the proc's) as sorted
  ``Name = value`` lines like ``condor_q -l``; ``JOBID`` may be ``c.p`` or a cluster ``c``. With
  ``--json`` the ad is an object of attribute → ClassAd value text (a list for a cluster).
- ``--constraint EXPR`` keeps the jobs for which EXPR is true in the job's effective ad, with
  ``time()``/``CurrentTime`` bound to the wall clock read here (this shell is the only reader).
- Exit status (the rule of every command that reads a log, engine.cli.args "What the input
  decides"): 0; 1 when ``--long`` finds no job, the log has a fatal problem (the schedd would
  refuse it; the counts are of the state its rules keep) or a JobStatus or Owner counted is not
  of its type (an integer, a string: each named on stderr with its job id, also with
  ``--json``); 2 for an unreadable log, a file that is not a job queue log (bytes other than
  blanks and no valid record: one line, nothing on stdout) or a constraint that does not parse.
  An empty file or one of blank lines is an empty queue (0 jobs, exit 0), as the schedd reads it.
- The log is ``LOG`` or ``--queue-log LOG``, as in ``router-q`` and ``watch``.
"""

from __future__ import annotations

import sys
from typing import Any

from engine.classad import ClassAdError, evaluate, format_ad, is_true, parse_expr
from engine.clock import SystemClock
from engine.cli import args as argcheck
from engine.cli.jsonout import emit, job_json, status_counts
from engine.contract.codes import JobStatus
from engine.queue.job import INTEGER, STRING, bad_values
from engine.queue.reader import load_log
from engine.queue.result import FOLLOW, OWNER


COUNTED = {"JobStatus": INTEGER, "Owner": STRING}  # what the counts and --jobs are made of
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
    return job_json(job.key, job.schedd_status, None if owner == "undefined" else owner, kind, _text(job, "RouteName"),
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
    status, why = argcheck.load_verdict(res)
    if status == argcheck.USAGE:
        return argcheck.usage_error("queue", why)
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
    if args.long is None:  # the counts and --jobs show these values: one not of its type is a finding
        bad = bad_values(jobs, COUNTED)
        for line in argcheck.bad_value_lines(bad, args.log):
            print(f"routedeck queue: {line}", file=sys.stderr)
        status = argcheck.worst(status, argcheck.FINDINGS if bad else argcheck.OK)
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
            emit({"ad": ads[0] if "." in args.long else ads, "problems": problems})
        else:
            print("\n".join(format_ad(j.attrs) for j in chosen), end="")
        return status
    if getattr(args, "jobs", False):
        rows = [_job_row(j) for j in sorted(jobs, key=lambda j: j.id)]
        if args.json:
            emit({"total_jobs": len(jobs), "jobs": rows, "problems": problems})
        else:
            for r in rows:
                print(f"{r['job']:<12} {r['status'] or r['status_code']:<20} {r['owner'] or ''}")
        return status
    by_status: dict[int, int] = {}
    by_owner: dict[str, dict[int, int]] = {}
    for j in jobs:
        s = j.schedd_status
        by_status[s] = by_status.get(s, 0) + 1
        row = by_owner.setdefault(_owner(j), {})
        row[s] = row.get(s, 0) + 1
    if args.json:
        emit({"total_jobs": len(jobs), "by_status": status_counts(by_status),
              "by_owner": [{"owner": o, "jobs": sum(by_owner[o].values()), "by_status": status_counts(by_owner[o])}
                           for o in sorted(by_owner)],
              "records": res.queue.record_kinds(), "problems": problems})
        return status
    print(_table(args.log, res, len(jobs), by_status, by_owner), end="")
    return status


def _table(log: str, res, n: int, by_status: dict[int, int], by_owner: dict[str, dict[int, int]]) -> str:
    q = res.queue
    seq = f"log sequence {q.seq}" if q.seq is not None else "no 107 record"
    lines = [f"{log}: {n} jobs ({seq}, {len(res.problems)} problems)"]
    kinds = q.record_kinds()
    if kinds:  # 25.x records beside the jobs (htcondor.md §3.1): loaded, not counted as jobs
        lines.append("other records: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(kinds.items())))
    lines.append("")
    cols = sorted(by_status)
    lines.append(f"{'JobStatus':<24}{'Jobs':>8}")
    for k in cols:
        lines.append(f"{(str(k) + ' ' + (STATUS_NAMES.get(k) or '')).strip():<24}{by_status[k]:>8}")
    if by_owner:
        heads = [STATUS_NAMES.get(k) or str(k) for k in cols]
        width = max(8, *(len(h) + 2 for h in heads))
        owner_w = max(12, *(len(o) + 2 for o in by_owner))
        lines += ["", f"{'Owner':<{owner_w}}" + "".join(f"{h:>{width}}" for h in heads) + f"{'Total':>{width}}"]
        for owner in sorted(by_owner):
            row = by_owner[owner]
            lines.append(f"{owner:<{owner_w}}" + "".join(f"{row.get(k, 0):>{width}}" for k in cols)
                         + f"{sum(row.values()):>{width}}")
    return "\n".join(lines) + "\n"
