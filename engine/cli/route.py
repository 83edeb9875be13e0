"""``routedeck route --config CONFIG… --jobads FILE``: which route each job would take, and the routed ad.

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

Exit status: 0; 1 when the config or the routing table has errors (printed to stderr; the jobs
are still matched against what loaded), or when some job ads cannot be read (each named by file
and line on stderr; the others are still routed and printed); 2 when no job ad can be read or a file cannot be read (one line on
stderr, nothing on stdout).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import stat
import sys
from typing import Any, TextIO

from engine.classad import ClassAdError, ad_to_texts, format_ad, make_ad, parse_new_ads, parse_old_ads
from engine.clock import SystemClock
from engine.cli import args as argcheck
from engine.lang.config import Config
from engine.router.throttle import RouteStats
from engine.router.whynot import Step, explain_job

_INT = re.compile(r"-?\d+$")


def register(subparsers) -> None:
    p = subparsers.add_parser("route", help="which route each job would take, and the routed ad",
                              description=argcheck.help_text(__doc__, 0) + " " + argcheck.help_text(__doc__, 1))
    p.add_argument("--config", "-c", dest="configs", nargs="+", required=True, metavar="CONFIG", type=argcheck.path,
                   help="HTCondor config files, read in this order")
    p.add_argument("--jobads", metavar="FILE", type=argcheck.path, help="job ads (old or new syntax); - for stdin")
    p.add_argument("jobads_pos", nargs="?", metavar="JOBADS", type=argcheck.path, help=argparse.SUPPRESS)
    p.add_argument("--explain", action="store_true", help="print every step of the decision and the routed ad")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--now", type=_epoch, default=None, help="evaluation time (epoch seconds; default: now)")
    p.add_argument("--ignore-prior-routing", action="store_true",
                   help="forget Managed/RoutedBy/StageIn* and set JobStatus = 1 before matching")
    p.add_argument("--allow-cmd", action="store_true", help="run JOB_ROUTER_ENTRIES_CMD (off by default)")
    p.add_argument("--allow-hooks", action="store_true",
                   help="run router hook programs named by the config or by a job's HookKeyword (off by "
                        "default: someone else's config or job ads could run any program; without it a "
                        "translate hook is shown as 'would run: PATH' and its job is not routed)")
    p.set_defaults(func=run)


def _epoch(text: str) -> float:
    """``--now``: finite epoch seconds within years 1-9999 (ClassAd times are 64-bit integers)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not epoch seconds") from None
    if not (math.isfinite(value) and -62135596800 <= value <= 253402300799):
        raise argparse.ArgumentTypeError(f"{text!r} is outside years 1-9999")
    return value


class AdJob:
    """A job read from a file, shaped like ``engine.queue.jobqueue.Job`` for the explainer."""

    def __init__(self, attrs: dict[str, str], index: int) -> None:
        self.attrs = attrs
        self._lower = {k.lower(): k for k in attrs}
        c, p = self.get("ClusterId"), self.get("ProcId")
        self.id = (int(c), int(p)) if c and p and _INT.match(c) and _INT.match(p) else None
        self.index = index
        self.key = f"{self.id[0]}.{self.id[1]}" if self.id else str(index)
        self._ad = None

    def get(self, name: str) -> str | None:
        k = self._lower.get(name.lower())
        return None if k is None else self.attrs[k]

    def classad(self) -> Any:
        if self._ad is None:
            self._ad = make_ad(self.attrs)
        return self._ad


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


def _forget_prior_routing(attrs: dict[str, str]) -> None:
    for k in [k for k in attrs if k.lower() in ("managed", "routedby", "stageinstart", "stageinfinish")]:
        del attrs[k]
    for k in [k for k in attrs if k.lower() == "jobstatus"]:
        del attrs[k]
    attrs["JobStatus"] = "1"


def _translate(hooks: Any, job: AdJob, route: Any, attrs: dict[str, str],
               steps: list[Step]) -> tuple[dict | None, str | None]:
    """The job's translate hook (§1.8), if it has one: (the base ad for the routed copy, or None
    when the job is not routed; the verdict when it is not)."""
    from engine.router import hooks as hk  # noqa: PLC0415

    path = hooks.path(hk.TRANSLATE, hooks.keyword(attrs))
    for message in hooks.take_rejections():  # validateHookPath: then "not defined"
        steps.append(Step("translate hook path", False, f"{message} The hook is treated as not defined.", route.name))
    if path is None:
        return attrs, None
    if not hooks.allow_run:
        hooks.withhold(hk.TRANSLATE, path, job.key)
        reason = hk.withheld_reason(path)
        steps.append(Step("translate hook", False, reason, route.name))
        return None, f"not routed: {reason}"
    stdin = hk.translate_stdin(hk.route_description(route.name, int(route.target_universe), route.grid_resource), attrs)
    out = hk.translate_outcome(hooks.run(job.key, hk.TRANSLATE, path, stdin))
    if out.action == "replace":
        steps.append(Step("translate hook", True, f"ran: {path}; its output replaces the job ad", route.name))
        return dict(out.attrs), None
    if out.action == "no-data":
        steps.append(Step("translate hook", False, f"ran: {out.message} (the router runs it again next poll)",
                          route.name))
        return None, "not routed yet: the translate hook returned no data"
    steps.append(Step("translate hook", False, f"ran: {out.message}", route.name))
    return None, "not routed: the translate hook failed (routing abandoned)"


def route_jobs(table: Any, ads: list[dict[str, str]], now: float, ignore_prior: bool = False,
               hooks: Any = None) -> list[dict[str, Any]]:
    """One cycle of a fresh router over ``ads``; a result dict per job (see module doc).
    ``hooks``: an ``engine.router.hooks.HookManager`` (default: the table's keyword, programs
    not allowed to run)."""
    from engine.router.hooks import HookManager  # noqa: PLC0415
    from engine.router.routed_copy import build_routed_ad  # noqa: PLC0415
    from engine.router.table import RoutingError  # noqa: PLC0415

    if hooks is None:
        hooks = HookManager(table.config, table.knobs.hook_keyword)
    stats = {r.name.lower(): RouteStats(r.name, now) for r in table.routes}
    managed = 0
    out = []
    for i, attrs in enumerate(ads):
        attrs = dict(attrs)
        if ignore_prior:
            _forget_prior_routing(attrs)
        job = AdJob(attrs, i)
        expl = explain_job(table, job, now=now, stats=stats, managed=managed)
        steps = list(expl.steps)
        routed = None
        chosen, verdict = expl.route, expl.verdict
        if chosen is not None:
            route = table.route(chosen)
            base, blocked = _translate(hooks, job, route, attrs, steps)
            if blocked is not None:
                chosen, verdict = None, blocked
        if chosen is not None:
            s = stats[route.name.lower()]
            s.num_jobs += 1  # IncrementRoutedJobs, as within one poll
            s.recent_routed += 1
            managed += 1
            ad = job.classad()
            try:
                routed = build_routed_ad(
                    table, route, base, now=now, source_id=job.id or (0, i),
                    sandboxed=route.eval_job_expr("JobShouldBeSandboxed", ad, now),
                    edit_in_place=route.eval_job_expr("EditJobInPlace", ad, now))
                steps.append(Step("routed copy built (VanillaToGrid, pre-route, route, post-route)", True, "",
                                  route.name))
            except RoutingError as exc:
                steps.append(Step("routed copy built", False, str(exc), route.name))
        out.append({"job": job.key if job.id else i, "route": chosen, "verdict": verdict,
                    "routed_ad": routed, "steps": steps,
                    "hooks": [u.to_json() for u in hooks.report() if job.key in u.jobs]})
    return out


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    path = args.jobads or args.jobads_pos
    if not path:
        print("routedeck route: give the job ads with --jobads FILE (or - for stdin)", file=sys.stderr)
        return 2
    for config in args.configs:
        if why := argcheck.unreadable(config):
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
    from engine.router.loader import load_routing_table  # noqa: PLC0415

    cfg = Config.load(args.configs)
    table = load_routing_table(cfg, allow_cmd=args.allow_cmd)
    errors = list(cfg.errors) + [d for d in table.diagnostics if d.level == "error"]
    for e in errors:
        print(f"routedeck route: {e}", file=sys.stderr)
    status = 1 if errors or bad_ads else 0
    now = args.now if args.now is not None else SystemClock().now()
    from engine.router.hooks import HookManager  # noqa: PLC0415

    hooks = HookManager(cfg, table.knobs.hook_keyword, allow_run=bool(getattr(args, "allow_hooks", False)))
    try:
        results = route_jobs(table, ads, now, args.ignore_prior_routing, hooks)
    finally:
        hooks.close()
    for r, position in zip(results, positions):  # a job without ids is known by its place in the file
        if isinstance(r["job"], int):
            r["job"] = position
    if args.json:
        json.dump([{"job": r["job"], "route": r["route"], "routed_ad": r["routed_ad"],
                    "steps": [{"check": s.check, "ok": s.ok, "detail": s.detail, "route": s.route}
                              for s in r["steps"]], "hooks": r["hooks"]} for r in results], out, indent=2)
        out.write("\n")
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
