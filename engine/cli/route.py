"""``routedeck route --config CONFIG [--config …] --jobads FILE``: which route each job would take, and the routed ad.

Like ``condor_job_router_info -match-jobs -route-jobs`` (htcondor.md §1.9), plus the capacity and
throttle checks of a running router: the jobs are taken in file order as one polling cycle of a
freshly started router (every route empty, no throttle), so ``MaxJobs``/``MaxIdleJobs`` and
``JOB_ROUTER_MAX_JOBS`` fill up as jobs are assigned. ``--explain`` prints every step of the
decision (umbrella clauses, each route's capacity and requirements) and the routed ad, as
``-log-steps`` does; ``--json`` prints a list of
``{"job": "c.p" or index, "route": name|null, "routed_ad": {attr: text}|null, "steps": […]}``.

Job ads: old syntax (``Name = value`` lines, ads separated by blank lines) or new syntax
(``[ … ]`` ads); ``-`` reads standard input. A job's id is ``ClusterId.ProcId`` when both are
integers, else its 0-based position in the file. ``--ignore-prior-routing`` does what
``condor_job_router_info`` does: delete ``Managed``, ``RoutedBy``, ``StageInStart``,
``StageInFinish`` and set ``JobStatus = 1`` first.

Translate hooks (htcondor.md §1.8): a job whose keyword (its ``HookKeyword``, else
``JOB_ROUTER_HOOK_KEYWORD``) names a ``<KW>_HOOK_TRANSLATE_JOB`` program is routed with the
hook's output only with ``--allow-hooks``; without it nothing runs, the step says
``would run: PATH`` and the job is reported not routed (what the hook would decide is unknown),
as the router does. Each result lists the hook programs in ``hooks``.

Exit status (the rule of every command, engine.cli.args "What the input decides"): 0; 1 when
the config or the routing table has errors (printed to stderr; the jobs are still matched against
what loaded), or when some job ads cannot be read (each named by file and line on stderr; the
others are still routed and printed); 2 when no job ad can be read or a file cannot be read (one
line on stderr, nothing on stdout). ``--compare --queue-log LOG`` reads the log as every command
does: 2 when it is not a job queue log, 1 when it has a fatal problem; an empty log (or one of
blank lines, or without a source job) has no job to compare: 0 jobs, exit 0.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import TextIO

from engine.classad import ClassAdError, ad_to_texts, format_ad
from engine.classad_ads import parse_new_ads, parse_old_ads
from engine.clock import SystemClock
from engine.cli import args as argcheck
from engine.cli.jsonout import emit


def register(subparsers) -> None:
    p = subparsers.add_parser("route", help="which route each job would take, and the routed ad",
                              description=argcheck.help_text(__doc__, 0) + " " + argcheck.help_text(__doc__, 1))
    argcheck.add_config_argument(p, "HTCondor config file (with --compare: read before each side)",
                                 dest="configs", flags=("--config", "-c"))
    p.add_argument("--jobads", metavar="FILE", type=argcheck.path, help="job ads (old or new syntax); - for stdin")
    p.add_argument("jobads_pos", nargs="?", metavar="JOBADS", type=argcheck.path, help=argparse.SUPPRESS)
    p.add_argument("--explain", action="store_true", help="print every step of the decision and the routed ad")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--now", type=argcheck.epoch, default=None, help="evaluation time (epoch seconds; default: now)")
    p.add_argument("--ignore-prior-routing", action="store_true",
                   help="forget Managed/RoutedBy/StageIn* and set JobStatus = 1 before matching")
    p.add_argument("--allow-cmd", action="store_true", help="run JOB_ROUTER_ENTRIES_CMD (off by default)")
    p.add_argument("--allow-hooks", action="store_true",
                   help="run router hook programs named by the config or by a job's HookKeyword (off by "
                        "default: someone else's config or job ads could run any program; without it a "
                        "translate hook is shown as 'would run: PATH' and its job is not routed)")
    _register_compare_trace(p)
    p.set_defaults(func=run)


def read_jobads(data: bytes, source: str) -> tuple[list[dict[str, str]], list[int], list[ClassAdError]]:
    """The readable ads of a job-ads file, each one's 0-based position in the file, and one error
    per ad that cannot be read (a byte that is not UTF-8, a line that does not parse, a value
    nested too deep; the message names file and line). One bad ad does not reject the others."""
    text = data.decode("utf-8", "surrogateescape")  # bad bytes are reported per ad, by line
    errors: list[ClassAdError] = []
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    if body.lstrip().startswith(("[", "/*")):
        ads = [ad_to_texts(ad) for ad in parse_new_ads(text, source, errors=errors)]
    else:
        ads = parse_old_ads(text, source, errors=errors)
    bad = {getattr(e, "position", -1) for e in errors}
    positions = [i for i in range(len(ads) + len(errors)) if i not in bad][: len(ads)]
    return ads, positions, errors


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    if getattr(args, "compare", None) or getattr(args, "queue_log", None):
        return run_compare(args, out)
    if not args.configs:
        print("routedeck route: give the routing table with --config CONFIG (repeat it for more files)", file=sys.stderr)
        return 2
    path = args.jobads or args.jobads_pos
    if not path:
        print("routedeck route: give the job ads with --jobads FILE (or - for stdin)", file=sys.stderr)
        return 2
    for config in args.configs:
        if why := argcheck.unreadable(config, directory=True):
            return argcheck.usage_error("route", why)
    source = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            stdin = getattr(sys.stdin, "buffer", None)
            data = stdin.read() if stdin is not None else sys.stdin.read().encode("utf-8", "surrogateescape")
        else:
            if not stat.S_ISREG(os.stat(path).st_mode):  # /dev/zero never ends, a FIFO blocks
                raise OSError(0, "Is a directory" if os.path.isdir(path) else "not a regular file")
            with open(path, "rb") as fh:
                data = fh.read()
        ads, positions, bad_ads = read_jobads(data, source)
    except OSError as exc:
        print(f"routedeck route: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    for exc in bad_ads:
        print(f"routedeck route: {exc}", file=sys.stderr)
    if bad_ads and not ads:
        return 2  # nothing could be read
    from engine.router.loader import load_config_and_table  # noqa: PLC0415

    loaded = load_config_and_table(args.configs, allow_cmd=args.allow_cmd)
    cfg, table = loaded.config, loaded.table
    errors = list(cfg.errors) + [d for d in table.diagnostics if d.level == "error"]
    for e in errors:
        print(f"routedeck route: {e}", file=sys.stderr)
    status = 1 if errors or bad_ads else 0
    now = args.now if args.now is not None else SystemClock().now()
    from engine.router.dryrun import route_jobs  # noqa: PLC0415 - kept off every command's start-up
    from engine.router.hooks import HookManager  # noqa: PLC0415

    hooks = HookManager(cfg, table.knobs.hook_keyword, allow_run=bool(getattr(args, "allow_hooks", False)))
    try:
        trace = getattr(args, "trace", False)
        results = route_jobs(table, ads, now, args.ignore_prior_routing, hooks, trace=trace,
                             detail=bool(args.explain or args.json or trace))  # plain lines: route and verdict only
    finally:
        hooks.close()
    for r, position in zip(results, positions):  # a job without ids is known by its place in the file
        if isinstance(r["job"], int):
            r["job"] = position
    if getattr(args, "trace", False):
        return print_trace(results, args, out, status)
    if args.json:
        emit([{"job": r["job"], "route": r["route"], "routed_ad": r["routed_ad"],
               "steps": [{"check": s.check, "ok": s.ok, "detail": s.detail, "route": s.route}
                         for s in r["steps"]], "hooks": r["hooks"]} for r in results], out)
        return status
    for r in results:
        if not args.explain:
            out.write(f"{r['job']}\t{r['route'] or '-'}\t{r['verdict']}\n")
            continue
        out.write(f"Job {r['job']}: {r['verdict']}\n")
        for s in r["steps"]:
            out.write(f"  {s.line()}\n")
        if r["routed_ad"] is not None:
            out.write("  Routed job ad:\n")
            out.write("".join(f"    {line}\n" for line in format_ad(r["routed_ad"]).splitlines()))
        out.write("\n")
    return status


# ------------------------------------------------------------------ --compare (migration check)


def _register_compare_trace(p: argparse.ArgumentParser) -> None:
    p.add_argument("--compare", nargs=2, metavar=("OLD_CONFIG", "NEW_CONFIG"), type=argcheck.path,
                   help="migration check: route the jobs through both tables and print the jobs that differ "
                        "and a summary (exit 1 when anything differs); a route the conversion renamed "
                        "(Name 'Analysis Queue' -> JOB_ROUTER_ROUTE_AnalysisQueue) is paired with its new name: "
                        "its jobs keep their route and the RouteName change is listed; --json: {jobs, summary}, "
                        "summary.renamed = [{old, new}]")
    p.add_argument("--queue-log", metavar="LOG", type=argcheck.path,
                   help="with --compare: use every source job of this recorded job_queue.log")
    p.add_argument("--all", dest="all_jobs", action="store_true",
                   help="with --compare: list every job, also those both tables route the same (by default "
                        "only the jobs that differ are listed, then the summary)")
    p.add_argument("--trace", action="store_true",
                   help="the routed ad built step by step: VanillaToGrid, each pre-route transform, the route, "
                        "each post-route transform, with the ad's diff after every statement")


def print_trace(results: list, args: argparse.Namespace, out: TextIO, status: int) -> int:
    """``--trace``: per job the chosen route and the trace of its routed ad (text or --json)."""
    from engine.router.trace import format_trace  # noqa: PLC0415

    if args.json:
        emit([{"job": r["job"], "route": r["route"], "verdict": r["verdict"],
               "trace": [b.to_json() for b in r["trace"]], "routed_ad": r["routed_ad"]} for r in results], out)
        return status
    for r in results:
        out.write(f"Job {r['job']}: {r['verdict']}\n")
        if r["trace"]:
            out.write(format_trace(r["trace"]))
        out.write("\n")
    return status


def _compare_jobs(args: argparse.Namespace) -> tuple[list[dict[str, str]], list[str]] | int:
    """The jobs for --compare: a job-ads file, or the source jobs of a recording; problems."""
    if args.queue_log:
        from engine.feeds.replay.index import build_index  # noqa: PLC0415
        from engine.feeds.replay.reroute import read_recording  # noqa: PLC0415

        from engine.queue.reader import load_log  # noqa: PLC0415

        if why := argcheck.unreadable(args.queue_log):
            return argcheck.usage_error("route", why)
        try:
            index = build_index(args.queue_log)
            rec = read_recording(index)
        except (OSError, ValueError) as exc:
            print(f"routedeck route: cannot read {args.queue_log}: {getattr(exc, 'strerror', None) or exc}",
                  file=sys.stderr)
            return 2
        # the log's verdict, as every command gives it (engine.cli.args; the replay index that
        # finds the source jobs reads some lines more leniently than the schedd)
        status, why = argcheck.load_verdict(load_log(args.queue_log, validate=False))
        if status == argcheck.USAGE:
            return argcheck.usage_error("route", why)
        found = [why] if why else []
        if not rec.jobs:  # an empty queue (an empty or blank file too) or no source job: nothing to compare
            print(f"routedeck route: {args.queue_log} holds no source job: nothing to compare", file=sys.stderr)
        return [dict(j.attrs) for j in rec.jobs], found
    path = args.jobads or args.jobads_pos
    if not path:
        print("routedeck route: --compare needs the jobs: --jobads FILE or --queue-log LOG", file=sys.stderr)
        return 2
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise OSError(0, "not a regular file")
            with open(path, "rb") as fh:
                data = fh.read()
    except OSError as exc:
        print(f"routedeck route: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    ads, _positions, bad = read_jobads(data, "<stdin>" if path == "-" else path)
    if bad and not ads:
        for exc in bad:
            print(f"routedeck route: {exc}", file=sys.stderr)
        return 2
    return ads, [str(e) for e in bad]


def run_compare(args: argparse.Namespace, out: TextIO) -> int:
    """``--compare OLD NEW``: exit 0 when both tables route every job the same, 1 when anything
    differs (or an input has errors), 2 when the jobs cannot be read."""
    from engine.router.compare import compare_tables, format_comparison  # noqa: PLC0415
    from engine.router.loader import load_config_and_table  # noqa: PLC0415

    if not args.compare:
        print("routedeck route: --queue-log goes with --compare OLD_CONFIG NEW_CONFIG", file=sys.stderr)
        return 2
    got = _compare_jobs(args)
    if isinstance(got, int):
        return got
    ads, problems = got
    for p in problems:
        print(f"routedeck route: {p}", file=sys.stderr)
    tables = []
    errors = False
    for side, path in zip(("old", "new"), args.compare):
        loaded = load_config_and_table(list(args.configs or []) + [path], allow_cmd=args.allow_cmd)
        table = loaded.table
        for e in loaded.problems:
            print(f"routedeck route: {side} table: {e}", file=sys.stderr)
            errors = True
        tables.append(table)
    now = args.now if args.now is not None else SystemClock().now()
    cmp = compare_tables(tables[0], tables[1], ads, now=now, ignore_prior=args.ignore_prior_routing)
    if args.json:
        emit({"jobs": [j.to_json() for j in cmp.jobs], "summary": cmp.summary_json()}, out)
    else:
        out.write(format_comparison(cmp, full_ads=args.explain, all_jobs=args.all_jobs))
    return 1 if cmp.differs or errors or problems else 0

