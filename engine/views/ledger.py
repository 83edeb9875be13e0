"""The routing ledger: for each idle source job of a recorded queue at a moment, why it waits and
when the schedd holds it: the verdict pipeline engine.router.unrouted (its docstring has the
verdicts; the metrics are a tally of the same pipeline) over the queue's ads.

Route counts come from the recorded copies in the queue (engine.views.recorded.route_counts,
the same as the board), the recent figures from a replay's RouteHistory (figures), and the
router's managed jobs (``JOB_ROUTER_MAX_JOBS``) are the recorded copies.

Hold countdown tick-phase assumption: the schedd's PERIODIC_EXPR_INTERVAL ticks are taken at
multiples of the interval in epoch seconds (the real phase depends on when the schedd started
and is not in the queue log), so ``at`` may be early or late by up to one interval.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping

from engine.contract.feed import WhyNot
from engine.lang.user_policy import SystemPolicy
from engine.router.throttle import RouteStats
from engine.router.unrouted import Entry, LedgerJob, Verdicts
from engine.views.figures import next_close
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


def ledger(table: Any, ads: Mapping[str, Mapping[str, str]], now: float, *, figures: Mapping[str, Any] | None = None,
           get=None, interval: float | None = None, jobs: list[str] | None = None,
           poll: float | None = None, close_of=None) -> list[Entry]:
    """Entries of every idle source job (not a routed copy) in queue order, or of ``jobs``; the
    routes' state is the one at the router's next ``poll`` (see :func:`route_book`)."""
    book = route_book(table, ads, figures, now, poll, close_of)
    system = SystemPolicy.from_knobs(get) if get is not None else None
    if interval is None:
        interval = float(getattr(table.knobs, "periodic_expr_interval", 60) or 60)
    routed = sum(rc.routed for rc in route_counts(ads).values())
    judge = Verdicts(table, table.knobs.name, lambda name: book.get(name.lower()), routed, now,
                     system=system, interval=interval)
    out = []
    for key, eff in iter_jobs(ads):
        attrs = eff.as_dict()
        job = LedgerJob(key, attrs)
        if literal_str(attrs.get("RouteName")) is not None or literal_str(attrs.get("RoutedFromJobId")):
            if jobs is not None and key in jobs:
                out.append(judge.judge(job))
            continue  # a routed copy
        if not judge.idle_source(job):
            if jobs is not None and key in jobs:
                out.append(judge.judge(job))
            continue
        entry = judge.judge(job)
        if jobs is None or key in jobs:
            out.append(entry)
    return out


def ledger_at(table: Any, ads: Mapping[str, Mapping[str, str]], now: float, figures: Mapping[str, Any] | None,
              start: float, period: float, get=None, jobs: list[str] | None = None) -> list[Entry]:
    """:func:`ledger` with the routes' state at the router's next poll on the poll grid that
    replay's and watch's figures use (a poll every ``period`` from ``start + period / 2``,
    engine.feeds.replay.stats): ``routedeck why``, and the why-not screen in replay and watch."""
    first = start + period / 2
    poll = first if now < first else first + (math.floor((now - first) / period) + 1) * period
    return ledger(table, ads, now, figures=figures, get=get, jobs=jobs, poll=poll,
                  close_of=lambda begin: next_close(start, period, begin))


def explanation(entry: Entry) -> WhyNot:
    """One job's ledger entry as the why-not screen shows it: the verdict and one step per route
    in match order (``ok``: the route takes the job), then the hold countdown."""
    steps = [(r["verdict"], r["verdict"] == "matched", r["detail"], r["route"]) for r in entry.routes]
    if entry.hold:
        h = entry.hold
        steps.append((f"periodic {h.get('action', 'hold')} in {int(h['in'])} s", None,
                      f"{h['policy']}: {h['reason']}", None))
    verdict = f"{entry.verdict}: {entry.detail}" if entry.detail else entry.verdict
    return WhyNot.of(verdict, steps)


def why_not_of(table: Any, entries: list[Entry], job: str, no_table: str) -> WhyNot:
    """The why-not of ``job`` from its ledger ``entries`` (the feeds' ``why_not``)."""
    if table is None:
        return WhyNot(no_table, ())
    if not entries:
        return WhyNot(f"{job} is not in the queue at this moment", ())
    return explanation(entries[0])


@dataclass(frozen=True)
class Unreached:
    """A route no idle job seen reaches although some match it: each of the ``jobs`` whose
    REQUIREMENTS match it matches an earlier route too (``by``: the one most of them match first),
    so with first match it gets them only while that route refuses jobs (issue 29: shown over the
    jobs seen where the texts prove nothing, engine.router.lints.lint_shadowing)."""

    route: str
    by: str
    jobs: int


def unreached(entries: list[Entry]) -> list[Unreached]:
    """The routes of the ledger's ``entries`` that every job matching them matches earlier (a
    route's verdict other than ``no_match`` is a match of its REQUIREMENTS), in match order."""
    order: list[str] = []
    matching: dict[str, int] = {}
    earlier: dict[str, Counter] = {}
    for e in entries:
        first = None
        for r in e.routes:
            name = r["route"]
            if name not in matching:
                order.append(name)
                matching[name], earlier[name] = 0, Counter()
            if r["verdict"] == "no_match":
                continue
            matching[name] += 1
            if first is None:
                first = name
            else:
                earlier[name][first] += 1
    return [Unreached(n, earlier[n].most_common(1)[0][0], matching[n]) for n in order
            if matching[n] and sum(earlier[n].values()) == matching[n]]
