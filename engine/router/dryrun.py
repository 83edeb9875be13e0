"""A dry run of the router over job ads: one polling cycle of a freshly started router.

What ``routedeck route`` prints and what the migration check (:mod:`engine.router.compare`) and the
tracer compare: the jobs are taken in order as one ``Poll()`` of a router whose routes are all
empty (``MaxJobs``/``MaxIdleJobs``/``JOB_ROUTER_MAX_JOBS`` fill up as jobs are assigned), each
chosen with :func:`engine.router.whynot.explain_job` and built with
:func:`engine.router.routed_copy.build_routed_ad` (htcondor.md §1.4, §1.6). Translate hooks run
only when the given :class:`~engine.router.hooks.HookManager` allows it (§1.8).
"""

from __future__ import annotations

import re
from typing import Any

from engine.classad import make_ad
from engine.router.throttle import RouteStats, route_state
from engine.router.trace import Tracer
from engine.router.whynot import Step, explain_job
from engine.router import hooks as hk
from engine.router.hooks import HookManager
from engine.router.routed_copy import build_routed_ad, job_flags
from engine.router.table import RoutingError

_INT = re.compile(r"-?\d+$")


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


def forget_prior_routing(attrs: dict[str, str]) -> None:
    for k in [k for k in attrs if k.lower() in ("managed", "routedby", "stageinstart", "stageinfinish")]:
        del attrs[k]
    for k in [k for k in attrs if k.lower() == "jobstatus"]:
        del attrs[k]
    attrs["JobStatus"] = "1"


def translate(hooks: Any, job: AdJob, route: Any, attrs: dict[str, str],
               steps: list[Step]) -> tuple[dict | None, str | None]:
    """The job's translate hook (§1.8), if it has one: (the base ad for the routed copy, or None
    when the job is not routed; the verdict when it is not)."""
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
               hooks: Any = None, trace: bool = False, detail: bool = True) -> list[dict[str, Any]]:
    """One cycle of a fresh router over ``ads``; a result dict per job (see module doc).
    ``hooks``: an ``engine.router.hooks.HookManager`` (default: the table's keyword, programs
    not allowed to run). ``detail=False``: steps without each failing route's clauses
    (``explain_job``), for a caller that prints only the route and verdict."""
    if hooks is None:
        hooks = HookManager(table.config, table.knobs.hook_keyword)
    stats = {r.name.lower(): RouteStats(r.name, now) for r in table.routes}
    # each route's state, asked again only for the routes whose figures a routed job changed
    # (was: every route for every job, jobs × routes)
    states = [route_state(r, stats[r.name.lower()]) for r in table.routes]
    same_name: dict[str, list[int]] = {}
    for k, r in enumerate(table.routes):
        same_name.setdefault(r.name.lower(), []).append(k)
    managed = 0
    out = []
    for i, attrs in enumerate(ads):
        attrs = dict(attrs)
        if ignore_prior:
            forget_prior_routing(attrs)
        job = AdJob(attrs, i)
        expl = explain_job(table, job, now=now, stats=stats, managed=managed, detail=detail, states=states)
        steps = list(expl.steps)
        routed = None
        tracer = None
        chosen, verdict = expl.route, expl.verdict
        if chosen is not None:
            route = table.route(chosen)
            base, blocked = translate(hooks, job, route, attrs, steps)
            if blocked is not None:
                chosen, verdict = None, blocked
        if chosen is not None:
            s = stats[route.name.lower()]
            s.num_jobs += 1  # IncrementRoutedJobs, as within one poll
            s.recent_routed += 1
            for k in same_name[route.name.lower()]:
                states[k] = route_state(table.routes[k], s)
            managed += 1
            ad = job.classad()
            tracer = Tracer(table.config, route) if trace else None
            try:
                routed = build_routed_ad(table, route, base, now=now, source_id=job.id or (0, i), trace=tracer,
                                         **job_flags(route, ad, now))
                steps.append(Step("routed copy built (VanillaToGrid, pre-route, route, post-route)", True, "",
                                  route.name))
            except RoutingError as exc:
                steps.append(Step("routed copy built", False, str(exc), route.name))
        out.append({"job": job.key if job.id else i, "route": chosen, "verdict": verdict,
                    **({"trace": tracer.blocks if tracer is not None else []} if trace else {}),
                    "routed_ad": routed, "steps": steps,
                    "hooks": [u.to_json() for u in hooks.report() if job.key in u.jobs]})
    return out
