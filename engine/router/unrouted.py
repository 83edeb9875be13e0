"""Why the idle source jobs wait: the one verdict pipeline of ``routedeck why`` (the ledger,
engine.views.ledger) and of the metrics (``routedeck_idle_unrouted_jobs{reason}``,
``routedeck_jobs_held_soon{within}``, engine.metrics): :class:`Verdicts` judges one job at a time
in queue order and gives an :class:`Entry` (verdict, every route's verdict and detail, the hold
countdown); the metrics' figures are :func:`tally` of the same entries (a :class:`Tally`: the
snapshot's ``unrouted`` and ``held_soon``).

The verdicts (issue 29's words), decided with the router's own pieces (htcondor.md §1.4: the
umbrella's fixed clauses, ``JOB_ROUTER_SOURCE_JOB_CONSTRAINT``, each route's ``REQUIREMENTS``
with the job as MY; §8 "Route acceptance": ``route_state``, JobRoute::AcceptingMoreJobs), through
a :class:`engine.router.candidates.Scanner` of its own (the router's is left to the router):

- ``not_candidate``: not idle, routing disabled, a fixed clause of the umbrella false
  (``Managed``, ``Owner``, staged input, …) or the source job constraint false or unparsable;
- ``matched``: the first route (match order) whose requirements match and that accepts jobs:
  the router takes it at its next poll (round robin noted). It then counts on that route and on
  the router for the jobs after it, as ChooseRoute in one poll sees the jobs routed before;
- ``route_full``: the router is at ``JOB_ROUTER_MAX_JOBS`` (htcondor.md §1.4: managed jobs ≥ the
  limit, -1 unlimited), or the first matching route that refuses jobs is at ``MaxJobs`` /
  ``MaxIdleJobs`` (or ``MaxJobs`` ≤ 0): the CE's "route job limit";
- ``throttled``: the first matching route that refuses jobs is throttled by its failure rate;
- ``no_match``: no route's requirements match it (accepting or not).

``hold``: when SYSTEM_PERIODIC_HOLD/REMOVE (named and nameless, via SystemPolicy) or the job's
own PeriodicHold/PeriodicRemove fires with time alone on a job that is not ``matched``
(:func:`hold_countdown`; engine.views.ledger's docstring has the tick-phase assumption). A
policy that does not parse predicts nothing (it never fires, user_job_policy.cpp).

Which jobs: ``JobStatus`` 1, not a routed copy of this router (``RoutedBy``), not ``tracked`` by
the router (the metrics leave out the jobs it manages: they are routed; ``why`` lists them as
``not_candidate``). The metrics' pass (:func:`count_verdicts`) skips the routes' detail: one pass
over the source queue with the scanner's per-signature cache plus the hold countdown of the
waiting jobs, so the caller decides when to ask (demo and watch ask only with ``--metrics``, once
per router poll, window or queue change, and at every snapshot while a hold is predicted). Watch
has no router: it gives the routing table of its config and RouteDeck's own figures of the
followed queue, and leaves out the source jobs the real router manages (``Managed``).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Iterable, Iterator, Mapping

from engine.classad import ClassAd, ClassAdError, evaluate, is_true, make_ad, parse_expr
from engine.contract.codes import JobStatus
from engine.contract.snapshot import HELD_WITHIN
from engine.lang.user_policy import UNBOUNDED, SystemPolicy, analyze_periodic, time_deadline, trivially_false
from engine.router.candidates import Scanner, sanity_clauses
from engine.router.throttle import RouteStats, route_state
from engine.router.whynot import EMPTY_AD, clause_steps, clause_values, eval_clause

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


_ROUTE_VERDICT = {"throttled": "throttled", "idle-limit": "route_full", "full": "route_full", "disabled": "route_full"}


class Verdicts:
    """One pass of the pipeline: the routes' state at ``now`` (``stats_of(route)``, copied: the
    caller's figures are not changed), the scanner kept by ``owner`` (None: a scanner of its own),
    and ``judge(job)`` for one job at a time in queue order. A ``matched`` job counts on its
    route and on the router for the jobs after it, as ChooseRoute in one poll sees the jobs
    routed before (JobRoute::IncrementCurrentRoutedJobs / ..._RecentRoutedJobs)."""

    def __init__(self, table: Any, name: str, stats_of: Callable[[str], RouteStats | None], managed: int,
                 now: float, owner: Any = None, *, system: SystemPolicy | None = None, interval: float = 60.0,
                 detail: bool = True, holds_only: bool = False) -> None:
        self.table, self.name, self.now, self.detail = table, name, now, detail
        self.system, self.interval = system, interval
        # holds_only (the metrics: held-soon counts holds only): no countdown where no hold can fire
        self.holds_only = holds_only
        self.may_hold = system is not None and bool(
            system.hold or any(n.base == "SYSTEM_PERIODIC_HOLD" for n in system.named))
        self.quoted = '"' + name + '"'
        self.routes = list(table.routes)
        scanner = getattr(owner, "_unrouted_scanner", None) if owner is not None else None
        if scanner is None or scanner[0] is not table:
            scan = Scanner(self.routes, table.knobs.source_job_constraint, name)
            scanner = (table, scan, scan.time_free)
            if owner is not None:
                owner._unrouted_scanner = scanner
        self.scanner = scanner
        self.scan = scanner[1]
        self.book = []
        for r in self.routes:
            st = stats_of(r.name)
            self.book.append(copy.copy(st) if st is not None else RouteStats(r.name, now))
        self.states = [route_state(r, s) for r, s in zip(self.routes, self.book)]
        self.scan.begin_cycle([s[0] for s in self.states], now)
        sc_text = (table.knobs.source_job_constraint or "").strip()
        self.sc_text = sc_text
        try:
            self.sc_expr = parse_expr(sc_text) if sc_text else None
        except ClassAdError:
            self.sc_expr = None  # HTCondor: a constraint that does not parse makes the umbrella false
            self.sc_broken = True
        else:
            self.sc_broken = False
        self.sc_cache: dict[Any, bool] = {}
        self.max_jobs = int(table.knobs.max_jobs)
        self.managed = managed
        self.time_dependent = False  # a hold prediction was made: the counts change with time alone

    def idle_source(self, job: Any) -> bool:
        """An idle job that is not a routed copy of this router."""
        return _literal(job.get("JobStatus")) == JobStatus.IDLE.text and _literal(job.get("RoutedBy")) != self.quoted

    def judge(self, job: Any) -> Entry:
        """The job's verdict, every route's (with ``detail``) and its hold countdown."""
        status = _literal(job.get("JobStatus")) or ""
        if status != JobStatus.IDLE.text:
            return Entry(job.key, "not_candidate", (), None, f"JobStatus = {status or 'undefined'} (not idle)")
        if not self.table.routing_enabled:
            return self._out(job, "not_candidate", [], "routing is disabled")
        c = self.scan.scan(job)
        if c is None or self.sc_broken or not self._source_ok(job):
            return self._out(job, "not_candidate", [], self._why_not_candidate(job) if self.detail else "")
        routes, chosen, matching, blocked = [], None, [], None
        for i, r in enumerate(self.routes):
            if i in c.matches:
                acc, state, reason = self.states[i]
                if acc:
                    matching.append(r.name)
                    chosen = i if chosen is None else chosen
                else:
                    blocked = blocked or _ROUTE_VERDICT.get(state, "route_full")
            if self.detail:
                routes.append(self._route_detail(job, i, i in c.matches))
        if chosen is not None and 0 <= self.max_jobs <= self.managed:
            return self._out(job, "route_full", routes,
                             f"JOB_ROUTER_MAX_JOBS reached ({self.managed} managed jobs, limit {self.max_jobs})")
        if chosen is not None:
            st = self.book[chosen]
            st.num_jobs += 1
            st.recent_routed += 1
            self.managed += 1
            self.states[chosen] = route_state(self.routes[chosen], st)
            rr = self.table.knobs.round_robin and len(matching) > 1
            return self._out(job, "matched", routes,
                             f"round robin over {', '.join(matching)}" if rr else f"route {self.routes[chosen].name}")
        if blocked is not None:
            return self._out(job, blocked, routes, "every matching route refuses jobs")
        return self._out(job, "no_match", routes, "no route's REQUIREMENTS match")

    def _source_ok(self, job: Any) -> bool:
        if self.sc_expr is None:
            return True
        key = self.scan.signature(job, self.scan.values(job))
        ok = self.sc_cache.get(key)
        if ok is None:
            ok = self.sc_cache[key] = is_true(evaluate(self.sc_expr, _EMPTY, job.classad(), now=self.now))
        return ok

    def _why_not_candidate(self, job: Any) -> str:
        ad = job.classad()
        for label, text in sanity_clauses(self.name):
            if not is_true(eval_clause(text, EMPTY_AD, ad, self.now)):
                vals = clause_values(job, text)
                return f"umbrella: {label}" + (f" ({vals})" if vals else "")
        if self.sc_broken:
            return "JOB_ROUTER_SOURCE_JOB_CONSTRAINT does not parse (the umbrella is false)"
        failed = [s for s in clause_steps(job, self.sc_text, EMPTY_AD, ad, self.now,
                                          "JOB_ROUTER_SOURCE_JOB_CONSTRAINT", None) if not s.ok]
        return "; ".join(f"{s.check} is {s.detail}" for s in failed)

    def _route_detail(self, job: Any, i: int, matches: bool) -> dict:
        r, s = self.routes[i], self.book[i]
        acc, state, reason = self.states[i]
        if matches:
            if acc:
                return {"route": r.name, "verdict": "matched",
                        "detail": f"{s.num_jobs}/{r.max_jobs} jobs, {s.idle} idle (MaxIdleJobs {r.max_idle_jobs})"}
            return {"route": r.name, "verdict": _ROUTE_VERDICT.get(state, "route_full"), "detail": reason or state}
        ad = job.classad()
        if getattr(r, "syntax", "") == "classad" and r.route_ad is not None:
            steps = clause_steps(job, r.classad_requirements or "true", r.route_ad, ad, self.now, "Requirements", r.name)
        else:
            req = r.classad_requirements if getattr(r, "syntax", "") == "classad" else r.requirements
            steps = clause_steps(job, req or "true", ad, None, self.now, "REQUIREMENTS", r.name)
        bad = [f"{s.check.partition(': ')[2]} is {s.detail}" for s in steps if not s.ok]
        return {"route": r.name, "verdict": "no_match", "detail": "; ".join(bad)}

    def _out(self, job: Any, verdict: str, routes: list, detail: str) -> Entry:
        hold = None
        if verdict != "matched" and self.system is not None and (not self.holds_only or self.may_hold
                                                                   or not trivially_false(job.get("PeriodicHold"))):
            hold = hold_countdown(job, self.system, self.now, self.interval)
            self.time_dependent = self.time_dependent or (hold is not None and hold["action"] == "hold")
        return Entry(job.key, verdict, tuple(routes), hold, detail)


def verdicts(table: Any, name: str, stats_of: Callable[[str], RouteStats | None], jobs: Iterable[Any],
             tracked: Callable[[Any], bool], managed: int, now: float, owner: Any = None, **kw: Any) -> Iterator[Entry]:
    """The entries of the idle source jobs among ``jobs`` in queue order (module docstring), the
    jobs ``tracked(job)`` by the router left out; ``kw`` as :class:`Verdicts`."""
    v = Verdicts(table, name, stats_of, managed, now, owner, **kw)
    for job in jobs:
        if v.idle_source(job) and not tracked(job):
            yield v.judge(job)


@dataclass(frozen=True)
class Tally:
    """The metrics' figures of one pass: ``reasons`` (``routedeck_idle_unrouted_jobs``: verdict ->
    jobs, every verdict of REASONS) and ``held_soon`` (``routedeck_jobs_held_soon``: S -> jobs the
    periodic policy holds within S seconds, for S in HELD_WITHIN: cumulative); read-only mappings."""

    reasons: Mapping[str, int]
    held_soon: Mapping[int, int]

    def fields(self) -> dict[str, Mapping]:
        """The snapshot's fields of this tally (``Snapshot.unrouted``, ``Snapshot.held_soon``)."""
        return {"unrouted": self.reasons, "held_soon": self.held_soon}


def tally(entries: Iterable[Entry], now: float) -> Tally:
    """The :class:`Tally` of ``entries`` (idle source jobs by verdict, and by hold countdown)."""
    counts = dict.fromkeys(REASONS, 0)
    held = dict.fromkeys(HELD_WITHIN, 0)
    for e in entries:
        counts[e.verdict] += 1
        if e.hold is not None and e.hold.get("action") == "hold":
            for w in HELD_WITHIN:
                if e.hold["at"] - now <= w:
                    held[w] += 1
    return Tally(MappingProxyType(counts), MappingProxyType(held))


def system_policy(table: Any) -> tuple[SystemPolicy | None, float]:
    """The schedd's periodic policy of the table's config and PERIODIC_EXPR_INTERVAL."""
    config = getattr(table, "config", None)
    system = SystemPolicy.from_knobs(config.get) if config is not None else None
    return system, float(getattr(table.knobs, "periodic_expr_interval", 60) or 60)


def idle_unrouted(router: Any, now: float) -> Tally:
    """The embedded router's idle source jobs by verdict (module docstring)."""
    return count_verdicts(router.table, router.name, router.book.get, router.src_q,
                          lambda job: job.key in router.jobs, len(router.jobs), now, router)


def router_ledger(router: Any, now: float) -> list[Entry]:
    """Every idle source job of the embedded router's queue with its verdict, every route's and
    its hold countdown (the dashboard's ledger in the demo; :func:`idle_unrouted` is the tally of
    the same pipeline without the detail). The jobs the router manages are listed too, as
    ``routedeck why`` lists them (``not_candidate``: already managed)."""
    system, interval = system_policy(router.table)
    return list(verdicts(router.table, router.name, router.book.get, router.src_q, lambda job: False,
                         len(router.jobs), now, system=system, interval=interval))


def kept_count(keeper: Any, owner: Any, key: tuple, count: Callable[[], Tally]) -> Tally:
    """``count()``, or the tally ``keeper`` kept under ``key`` when nothing it reads changed: the
    same ``key`` (the queue's and the windows' versions, the table) and the scanner
    :func:`count_verdicts` keeps on ``owner`` reads no clock (no hold predicted, no ``time()`` in
    the table). The demo (its engine keeps, its router owns the scanner) and the watch engine
    (both) count this way."""
    kept = getattr(keeper, "_unrouted_kept", None)
    scanner = getattr(owner, "_unrouted_scanner", None)
    if kept is not None and kept[0] == key and scanner is not None and scanner[1].time_free:
        return kept[1]
    counts = count()
    keeper._unrouted_kept = (key, counts)
    return counts


def count_verdicts(table: Any, name: str, stats_of: Callable[[str], RouteStats | None], jobs: Iterable[Any],
                   tracked: Callable[[Any], bool], managed: int, now: float, owner: Any) -> Tally:
    """The :func:`tally` of :func:`verdicts` without the routes' detail (the metrics' figures).
    ``owner`` keeps the scanner of its table between calls (the router, the watch engine): its
    ``time_free`` is cleared while a hold is predicted, since the held-soon counts then change
    with time alone."""
    system, interval = system_policy(table)
    v = Verdicts(table, name, stats_of, managed, now, owner, system=system, interval=interval, detail=False,
                 holds_only=True)
    counts = tally((v.judge(job) for job in jobs if v.idle_source(job) and not tracked(job)), now)
    v.scan.time_free = v.scanner[2] and not v.time_dependent
    return counts
