"""The routing ledger: for each idle source job at a moment, why it waits and when the schedd holds it.

Per job (htcondor.md §1.4 ``GetCandidateJobs`` / ``ChooseRoute``, §8 "Route acceptance"):

- ``verdict``: ``not_candidate`` (not idle, already managed/routed, a fixed umbrella clause or
  ``JOB_ROUTER_SOURCE_JOB_CONSTRAINT`` false), ``matched`` (the first accepting route whose
  REQUIREMENTS match, as ChooseRoute picks; round robin noted), else the verdict of the first
  route whose REQUIREMENTS match but which does not accept jobs (``throttled`` /
  ``route_full``), else ``no_match``.
- ``routes``: every route in match order with its own verdict and detail. Acceptance is
  :func:`engine.router.throttle.route_state` (JobRoute::AcceptingMoreJobs); REQUIREMENTS
  clauses are split and evaluated by :mod:`engine.router.whynot`'s helpers.
- ``hold``: when SYSTEM_PERIODIC_HOLD/REMOVE (named and nameless, via SystemPolicy) or the job's
  own PeriodicHold/PeriodicRemove fires with time alone. The crossing is found by
  :func:`engine.lang.user_policy.time_deadline` and confirmed with ``analyze_periodic`` at the
  tick. Tick-phase assumption: the schedd's PERIODIC_EXPR_INTERVAL ticks are taken at multiples
  of the interval in epoch seconds (the real phase depends on when the schedd started and is
  not in the queue log), so ``at`` may be early or late by up to one interval. A ``matched``
  job gets no prediction (the router takes it at its next poll). A policy that does not parse
  predicts nothing (it never fires, user_job_policy.cpp).

Route counts come from the recorded copies in the queue (engine.views.recorded.route_counts,
the same as the board) and the recent figures from a replay's RouteHistory (figures).
"""

from __future__ import annotations

from typing import Any, Mapping

from engine.contract.codes import JobStatus
from engine.lang.user_policy import SystemPolicy
from engine.router.unrouted import Entry, LedgerJob, hold_countdown
from engine.router.candidates import sanity_clauses
from engine.router.throttle import RouteStats, route_state
from engine.router.whynot import EMPTY_AD, clause_steps, eval_clause, clause_values
from engine.classad import is_true
from engine.views.recorded import iter_jobs, literal_str, route_counts



def route_book(table: Any, ads: Mapping[str, Mapping[str, str]], figures: Mapping[str, Any] | None,
               now: float, poll: float | None = None, close_of=None) -> dict[str, RouteStats]:
    """RouteStats per route (lower-case name) from the queue's copies and a replay's figures,
    built as :func:`engine.views.recorded.route_views` builds the board's. With the router's next
    ``poll`` and ``close_of(window_start)`` (the poll that closes a throttle window,
    engine.views.figures.next_close): a window that closes at that poll starts afresh (its recent
    counts are 0, RouteStats.adjust_failure_throttle), since the poll adjusts the throttle before
    it routes (htcondor.md §1.5)."""
    counts = route_counts(ads)
    book = {}
    for r in table.routes:
        rc = counts.get(r.name)
        fig = (figures or {}).get(r.name)
        book[r.name.lower()] = RouteStats(
            name=r.name, stats_begin_time=fig.window_start if fig is not None else now,
            num_jobs=rc.routed if rc else 0, num_running=rc.running if rc else 0, num_held=rc.held if rc else 0,
            recent_routed=fig.recent_started if fig is not None else 0,
            recent_succeeded=fig.recent_succeeded if fig is not None else 0,
            recent_failed=fig.recent_failed if fig is not None else 0,
            throttle=fig.throttle if fig is not None else 0.0)
        st = book[r.name.lower()]
        if fig is not None and poll is not None and close_of is not None and poll >= close_of(st.stats_begin_time):
            st.recent_routed = st.recent_succeeded = st.recent_failed = 0
            st.stats_begin_time = poll
    return book


_ROUTE_VERDICT = {"throttled": "throttled", "idle-limit": "route_full", "full": "route_full", "disabled": "route_full"}


def job_entry(table: Any, job: LedgerJob, book: Mapping[str, RouteStats], now: float,
              system: SystemPolicy | None = None, interval: float = 60.0, router_name: str | None = None) -> Entry:
    name = router_name or table.knobs.name
    ad = job.classad()
    status = (job.get("JobStatus") or "").strip()

    def out(verdict: str, routes: list, detail: str) -> Entry:
        hold = None
        if verdict not in ("matched",) and status == JobStatus.IDLE.text and system is not None and \
                verdict != "managed":
            hold = hold_countdown(job, system, now, interval)
        return Entry(job.key, verdict, tuple(routes), hold, detail)

    if status != JobStatus.IDLE.text:
        return Entry(job.key, "not_candidate", (), None, f"JobStatus = {status or 'undefined'} (not idle)")
    for label, text in sanity_clauses(name):
        if not is_true(eval_clause(text, EMPTY_AD, ad, now)):
            vals = clause_values(job, text)
            return out("not_candidate", [], f"umbrella: {label}" + (f" ({vals})" if vals else ""))
    sc = (table.knobs.source_job_constraint or "").strip()
    if sc:
        failed = [s for s in clause_steps(job, sc, EMPTY_AD, ad, now, "JOB_ROUTER_SOURCE_JOB_CONSTRAINT", None) if not s.ok]
        if failed:
            return out("not_candidate", [], "; ".join(f"{s.check} is {s.detail}" for s in failed))
    routes, chosen, matching, blocked = [], None, [], None
    for r in table.routes:
        s = book.get(r.name.lower()) or RouteStats(r.name, now)
        acc, state, reason = route_state(r, s)
        limits = f"{s.num_jobs}/{r.max_jobs} jobs, {s.idle} idle (MaxIdleJobs {r.max_idle_jobs})"
        if r.matches(ad, now):
            if acc:
                routes.append({"route": r.name, "verdict": "matched", "detail": limits})
                matching.append(r.name)
                chosen = chosen or r.name
            else:
                v = _ROUTE_VERDICT.get(state, "route_full")
                routes.append({"route": r.name, "verdict": v, "detail": reason or state})
                blocked = blocked or v
        else:
            req = r.classad_requirements if getattr(r, "syntax", "") == "classad" else r.requirements
            if getattr(r, "syntax", "") == "classad" and r.route_ad is not None:
                steps = clause_steps(job, req or "true", r.route_ad, ad, now, "Requirements", r.name)
            else:
                steps = clause_steps(job, req or "true", ad, None, now, "REQUIREMENTS", r.name)
            bad = [f"{s.check.partition(': ')[2]} is {s.detail}" for s in steps if not s.ok]
            routes.append({"route": r.name, "verdict": "no_match", "detail": "; ".join(bad)})
    if chosen is not None:
        rr = table.knobs.round_robin and len(matching) > 1
        return out("matched", routes, f"round robin over {', '.join(matching)}" if rr else f"route {chosen}")
    if blocked is not None:
        return out(blocked, routes, "every matching route refuses jobs")
    return out("no_match", routes, "no route's REQUIREMENTS match")


def ledger(table: Any, ads: Mapping[str, Mapping[str, str]], now: float, *, figures: Mapping[str, Any] | None = None,
           get=None, interval: float | None = None, jobs: list[str] | None = None,
           poll: float | None = None, close_of=None) -> list[Entry]:
    """Entries of every idle source job (not a routed copy) in queue order, or of ``jobs``; the
    routes' state is the one at the router's next ``poll`` (see :func:`route_book`)."""
    book = route_book(table, ads, figures, now, poll, close_of)
    system = SystemPolicy.from_knobs(get) if get is not None else None
    if interval is None:
        interval = float(getattr(table.knobs, "periodic_expr_interval", 60) or 60)
    out = []
    for key, eff in iter_jobs(ads):
        attrs = eff.as_dict()
        job = LedgerJob(key, attrs)
        if literal_str(attrs.get("RouteName")) is not None or literal_str(attrs.get("RoutedFromJobId")):
            if jobs is not None and key in jobs:
                out.append(job_entry(table, job, book, now, system, interval))
            continue  # a routed copy
        if jobs is None and (job.get("JobStatus") or "").strip() != JobStatus.IDLE.text:
            continue
        entry = job_entry(table, job, book, now, system, interval)
        if entry.verdict == "matched":
            # ChooseRoute in the same poll sees the jobs routed before this one (queue order):
            # the route's counts grow as JobRoute::IncrementCurrentRoutedJobs / ..._RecentRoutedJobs do
            st = book.get(entry.detail.removeprefix("route ").lower()) or book.get(
                next(r["route"] for r in entry.routes if r["verdict"] == "matched").lower())
            if st is not None:
                st.num_jobs += 1
                st.recent_routed += 1
        if jobs is None or key in jobs:
            out.append(entry)
    return out
