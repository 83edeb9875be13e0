"""Route statistics of a running router, for the UI and the log (htcondor.md §1.5).

``UpdateRouteStats`` recounts the current figures from the tracked jobs on every poll and then
runs ``AdjustFailureThrottles`` for every route (:class:`StatsMixin.update_route_stats`).
:meth:`StatsMixin.route_stats` returns one frozen :class:`RouteStatsView` per enabled route in
match order — every figure of the JobRouterLog table plus whether the route accepts jobs and,
if not, why (with the numbers), the failure rate against the threshold, the throttle, when it
is next re-evaluated, and the recent windows for sparklines. :meth:`route_views` maps them to
``engine.contract.snapshot.RouteView``; :meth:`log_table` prints HTCondor's own table.

Only routes of the current table are counted: a job whose route was removed by a table switch
is still tracked but counts nowhere (HTCondor's ``safe_lookup_route`` returns null).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.router import events as ev
from engine.router.settled import tally
from engine.router.throttle import ThrottleAdjustment, route_state, throttle_desc
from engine.contract.snapshot import RouteView

@dataclass(frozen=True)
class RouteStatsView:
    index: int  # 1-based match order
    name: str
    source_label: str
    syntax: str
    accepting: bool
    state: str  # accepting | full | idle-limit | throttled | disabled
    reason: str | None
    routed: int  # num_jobs ("Submitted" in the log table)
    idle: int
    running: int
    held: int
    max_jobs: int
    max_idle: int
    recent_started: int  # recent_routed
    recent_succeeded: int
    recent_failed: int
    failure_rate: float  # failures per second in the open window
    failure_threshold: float
    throttle: float | None  # jobs per 600 s; None = no throttle
    throttle_desc: str  # HTCondor's "none" / "%g jobs/sec"
    window_start: float
    next_reevaluation: float
    rate_history: tuple[float, ...]
    routed_history: tuple[int, ...]
    target_universe: int
    grid_resource: str | None
    requirements: str | None
    location: str | None
    last_adjustment: str | None  # the last window's computation, in words
    totals: tuple[int, int, int] = (0, 0, 0)  # RouteStats.totals: started, succeeded, failed


class StatsMixin:
    table: Any
    jobs: dict
    book: Any
    _settled: Any  # JobRouter: the settled jobs' counts are kept (engine.router.settled)

    def update_route_stats(self, now: float) -> list[ThrottleAdjustment]:
        """``UpdateRouteStats``: recount, then ``AdjustFailureThrottles`` for every route."""
        self.recount()
        return self._adjust_throttles(now)

    def recount(self) -> None:
        """The current figures from the tracked jobs (also run at the end of a poll so the UI
        sees the state the next poll will start from)."""
        for s in self.book:
            s.reset_current()
        if self._settled.holds(self.jobs):
            counts = self._settled.counts(self.jobs)
        else:
            counts = tally({}, self.jobs.values())
        for name, (n, running, held) in counts.items():  # one route lookup per name, not per job
            s = self.book.get(name)
            if s is not None:
                s.num_jobs += n
                s.num_running += running
                s.num_held += held

    def _adjust_throttles(self, now: float) -> list[ThrottleAdjustment]:
        done = []
        if not hasattr(self, "last_adjustment"):
            self.last_adjustment: dict[str, ThrottleAdjustment] = {}
        for route in self.table.routes:
            s = self.book.get(route.name)
            adj = s.adjust_failure_throttle(now, float(route.failure_rate_threshold))
            if adj is None:
                continue
            done.append(adj)
            self.last_adjustment[route.name.lower()] = adj
            for e in ev.throttle_events(now, route.name, adj):
                self._emit(e)
        return done

    def route_stats(self, now: float) -> tuple[RouteStatsView, ...]:
        out = []
        adjustments = getattr(self, "last_adjustment", {})
        for i, route in enumerate(self.table.routes, 1):
            s = self.book.get(route.name)
            ok, state, reason = route_state(route, s)
            hist = tuple(s.history)
            adj = adjustments.get(route.name.lower())
            loc = getattr(route, "location", None)
            out.append(RouteStatsView(
                index=i, name=route.name, source_label=getattr(route, "source_label", ""),
                syntax=getattr(route, "syntax", "transform"), accepting=ok, state=state, reason=reason,
                routed=s.num_jobs, idle=s.idle, running=s.num_running, held=s.num_held,
                max_jobs=int(route.max_jobs), max_idle=int(route.max_idle_jobs),
                recent_started=s.recent_routed, recent_succeeded=s.recent_succeeded,
                recent_failed=s.recent_failed, failure_rate=s.failure_rate(now),
                failure_threshold=float(route.failure_rate_threshold),
                throttle=s.throttle if s.throttle > 0 else None, throttle_desc=throttle_desc(s.throttle),
                window_start=s.stats_begin_time, next_reevaluation=s.next_reevaluation(),
                rate_history=tuple(w.rate for w in hist), routed_history=tuple(w.routed for w in hist),
                target_universe=int(route.target_universe), grid_resource=route.grid_resource,
                requirements=route.requirements,
                location=f"{loc.file}:{loc.line}" if loc is not None else None,
                last_adjustment=adj.explain() if adj is not None else None, totals=s.totals,
            ))
        return tuple(out)

    def route_views(self, now: float) -> tuple[Any, ...]:
        """The routes board rows (``engine.contract.snapshot.RouteView``)."""
        return tuple(
            RouteView(index=r.index, name=r.name, source_label=r.source_label, syntax=r.syntax, state=r.state,
                      reason=r.reason, routed=r.routed, idle=r.idle, running=r.running, held=r.held,
                      max_jobs=r.max_jobs, max_idle=r.max_idle, recent_started=r.recent_started,
                      recent_succeeded=r.recent_succeeded, recent_failed=r.recent_failed,
                      failure_rate=r.failure_rate, failure_threshold=r.failure_threshold, throttle=r.throttle,
                      window_start=r.window_start, next_reevaluation=r.next_reevaluation,
                      rate_history=r.rate_history, routed_history=r.routed_history,
                      grid_resource=r.grid_resource, requirements=r.requirements, location=r.location,
                      started_total=r.totals[0], succeeded_total=r.totals[1], failed_total=r.totals[2])
            for r in self.route_stats(now)
        )

    def log_table(self) -> str:
        """The table ``GetCandidateJobs`` writes to the JobRouterLog on every poll (§1.5)."""
        lines = ["Route Name               Source      Submitted/Max        Idle/Max     Throttle"
                 " Recent: Started Succeeded Failed"]
        for route in self.table.routes:
            s = self.book.get(route.name)
            lines.append("%-24s %-11s %7d/%7d %7d/%7d %8s         %7d %9d %6d" % (
                route.name, getattr(route, "source_label", ""), s.num_jobs, int(route.max_jobs), s.idle,
                int(route.max_idle_jobs), throttle_desc(s.throttle), s.recent_routed, s.recent_succeeded,
                s.recent_failed))
        return "\n".join(lines) + "\n"
