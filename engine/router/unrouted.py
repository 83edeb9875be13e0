"""Why the idle source jobs wait: one verdict per idle, untracked job, counted by verdict.

The figures behind ``routedeck_idle_unrouted_jobs{reason}`` (engine.metrics). The verdicts are
issue 29's words for the why-not ledger, decided with the router's own pieces (htcondor.md §1.4:
the umbrella's fixed clauses, ``JOB_ROUTER_SOURCE_JOB_CONSTRAINT``, each route's
``REQUIREMENTS`` with the job as MY, ``route_state`` for whether a route accepts jobs), through a
:class:`engine.router.candidates.Scanner` of its own (the router's is left to the router):

- ``not_candidate``: routing is disabled, or the job fails a fixed clause of the umbrella
  (``Managed``, ``Owner``, staged input, …) or the source job constraint;
- ``no_match``: no route's requirements match it (accepting or not);
- ``matched``: a route that matches it accepts jobs now: the router takes it at its next poll;
- ``route_full``: every matching route is at ``MaxJobs`` or ``MaxIdleJobs`` (or the router is at
  ``JOB_ROUTER_MAX_JOBS``: the CE's "route job limit"); one full route among throttled ones
  counts as full;
- ``throttled``: every matching route is throttled by its failure rate.

Which jobs: ``JobStatus`` 1, ``ProcId`` ≥ 0, not a routed copy of this router (``RoutedBy``), not
tracked by it. The cost is one pass over the source queue with the scanner's per-signature
cache (a few ClassAd evaluations per submit file), so the caller decides when to ask (demo and
watch ask only with ``--metrics``, once per router poll, window or queue change). Watch has no
router: :func:`count_verdicts` takes the routing table of its config and RouteDeck's own figures
of the followed queue, and leaves out the source jobs the real router manages (``Managed``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from engine.classad import ClassAd, ClassAdError, evaluate, is_true, parse_expr
from engine.contract.codes import JobStatus
from engine.router.candidates import Scanner
from engine.router.throttle import RouteStats, route_state

REASONS = ("matched", "no_match", "route_full", "throttled", "not_candidate")
_EMPTY = ClassAd()


def _literal(text: str | None) -> str | None:
    return None if text is None else text.strip()


def idle_unrouted(router: Any, now: float) -> dict[str, int]:
    """The embedded router's idle source jobs by verdict (module docstring)."""
    return count_verdicts(router.table, router.name, router.book.get, router.src_q,
                          lambda job: job.key in router.jobs, len(router.jobs), now, router)


def count_verdicts(table: Any, name: str, stats_of: Callable[[str], RouteStats], jobs: Iterable[Any],
                   tracked: Callable[[Any], bool], managed: int, now: float, owner: Any) -> dict[str, int]:
    """Idle source jobs by verdict: ``jobs`` (``engine.queue.jobqueue.Job``) of a routing table
    ``table`` whose router is called ``name``, with the routes' statistics ``stats_of(route)``,
    ``tracked(job)`` for the jobs its router manages (``managed`` of them). ``owner`` keeps the
    scanner of its table between calls (the router, the watch engine)."""
    counts = dict.fromkeys(REASONS, 0)
    quoted = '"' + name + '"'
    routes = list(table.routes)
    scanner = getattr(owner, "_unrouted_scanner", None)
    if scanner is None or scanner[0] is not table:
        scanner = (table, Scanner(routes, table.knobs.source_job_constraint, name))
        owner._unrouted_scanner = scanner
    scan = scanner[1]
    states = [route_state(r, stats_of(r.name) or RouteStats(r.name, now)) for r in routes]
    accepting = [s[0] for s in states]
    scan.begin_cycle(accepting, now)
    sc_text = (table.knobs.source_job_constraint or "").strip()
    try:
        sc_expr = parse_expr(sc_text) if sc_text else None
    except ClassAdError:
        sc_expr = None  # HTCondor: a constraint that does not parse makes the umbrella false
        sc_broken = True
    else:
        sc_broken = False
    sc_cache: dict[Any, bool] = {}
    max_jobs = int(table.knobs.max_jobs)
    at_max = max_jobs >= 0 and managed >= max_jobs
    for job in jobs:
        if _literal(job.get("JobStatus")) != str(int(JobStatus.IDLE)) or tracked(job):
            continue
        if _literal(job.get("RoutedBy")) == quoted:
            continue  # a routed copy of this router
        if not table.routing_enabled:
            counts["not_candidate"] += 1
            continue
        c = scan.scan(job)
        if c is None or sc_broken:
            counts["not_candidate"] += 1
            continue
        if sc_expr is not None:
            key = scan.signature(job, scan.values(job))
            ok = sc_cache.get(key)
            if ok is None:
                ok = sc_cache[key] = is_true(evaluate(sc_expr, _EMPTY, job.classad(), now=now))
            if not ok:
                counts["not_candidate"] += 1
                continue
        if not c.matches:
            counts["no_match"] += 1
        elif at_max:
            counts["route_full"] += 1
        elif any(accepting[i] for i in c.matches):
            counts["matched"] += 1
        elif all(states[i][1] == "throttled" for i in c.matches):
            counts["throttled"] += 1
        else:
            counts["route_full"] += 1
    return counts
