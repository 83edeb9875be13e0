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

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from engine.classad import ClassAd, ClassAdError, evaluate, is_true, make_ad, parse_expr
from engine.contract.codes import JobStatus
from engine.lang.user_policy import UNBOUNDED, SystemPolicy, analyze_periodic, time_deadline
from engine.router.candidates import Scanner
from engine.router.throttle import RouteStats, route_state

REASONS = ("matched", "no_match", "route_full", "throttled", "not_candidate")
_EMPTY = ClassAd()
MAX_TICKS_CHECKED = 3  # ticks after the crossing at which the hold is confirmed
MAX_SCAN_TICKS = 60  # ticks tried for a policy whose time dependence cannot be analysed


class LedgerJob:
    """A recorded job as whynot's helpers read it (``key``, ``attrs``, ``get``, ``classad()``)."""

    def __init__(self, key: str, attrs: Mapping[str, str]) -> None:
        self.key = key
        self.attrs = dict(attrs)
        self._lower = {k.lower(): v for k, v in self.attrs.items()}
        self._ad = None

    def get(self, name: str) -> str | None:
        return self._lower.get(name.lower())

    def classad(self) -> Any:
        if self._ad is None:
            self._ad = make_ad(self.attrs)
        return self._ad


@dataclass(frozen=True)
class Entry:
    job: str
    verdict: str
    routes: tuple[dict, ...]
    hold: dict | None
    detail: str = ""

    def to_json(self) -> dict:
        return {"job": self.job, "verdict": self.verdict, "detail": self.detail,
                "routes": list(self.routes), "hold": self.hold}


def _only(system: SystemPolicy, base: str) -> SystemPolicy:
    """``system`` with only the ``base`` family (nameless and named), so that a time-dependent
    knob of another action (the CE's SYSTEM_PERIODIC_REMOVE reads JobCurrentStartDate) does not
    hide the crossing of this one."""
    keep = base.rsplit("_", 1)[1].lower()
    return SystemPolicy(**{f: getattr(system, f) for f in ("hold", "release", "remove") if f == keep},
                        **{f"{keep}_reason": getattr(system, f"{keep}_reason")},
                        **({"hold_subcode": system.hold_subcode} if keep == "hold" else {}),
                        named=tuple(n for n in system.named if n.base == base))


def hold_countdown(job: LedgerJob, system: SystemPolicy, now: float, interval: float) -> dict | None:
    """When the periodic policy holds (or removes) the idle ``job`` with time alone (module doc).

    The candidate times are the crossings :func:`time_deadline` finds for each family (hold,
    remove; the job's own PeriodicHold/PeriodicRemove with each); a family whose time dependence
    cannot be analysed is tried at the next MAX_SCAN_TICKS ticks only. Each candidate is
    confirmed with the schedd's own ``analyze_periodic`` (hold before remove) at the tick."""
    interval = interval if interval and interval > 0 else 60.0
    texts = job.attrs
    status = int(JobStatus.IDLE)

    def fires(t: float):
        d = analyze_periodic(job.classad(), texts, status, system, t)
        return d if d.action in ("hold", "remove") else None

    def tick_at_or_after(t: float) -> float:
        return math.ceil(t / interval) * interval

    first = tick_at_or_after(now)
    tries: set[float] = {first}
    for base in ("SYSTEM_PERIODIC_HOLD", "SYSTEM_PERIODIC_REMOVE"):
        deadline = time_deadline(job.get, list(texts.values()), _only(system, base), now, status=status)
        if deadline is UNBOUNDED:
            tries.update(first + k * interval for k in range(MAX_SCAN_TICKS))
        elif deadline is not None:
            t = tick_at_or_after(max(deadline, now))
            tries.update(t + k * interval for k in range(MAX_TICKS_CHECKED))
    for t in sorted(tries):
        d = fires(t)
        if d is not None:
            return {"at": t, "in": t - now, "policy": d.expr, "action": d.action, "reason": d.reason}
    return None




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
