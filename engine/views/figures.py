"""Per-route recent figures and the failure-rate throttle of a recorded or followed queue.

A ``job_queue.log`` holds the routed copies, not the router's counters. Replay rebuilds them in
one pass over a recording (:class:`engine.feeds.replay.stats.RouteHistory`); watch rebuilds them
live with :class:`LiveFigures`, commit by commit. Both use the rules below and the router's own
code (:class:`engine.router.throttle.RouteStats`, ``adjust_failure_throttle``; nothing here
re-implements the formula). Sources: htcondor.md §1.5 (statistics, "what counts as success or
failure", ``AdjustFailureThrottles``), §1.3 (``FailureRateThreshold``'s default).

- *Started*: a routed copy (a proc whose effective ad has ``RouteName``) appears in a committed
  transaction. Copies already present when following began (a bulk load) count towards
  ``num_jobs`` but not as started.
- *Finished*: the copy leaves the queue, judged on its last ad by :func:`outcome`.
- Windows close at router polls on the grid ``start + period/2 + k·period`` (:func:`next_close`;
  the phase of a real router is unknown — half a period is RouteDeck's demo): at the first poll
  ≥ ``stats_begin_time + 600`` the route's ``adjust_failure_throttle`` runs with ``num_jobs`` =
  copies on the route then. A commit at a poll's time is applied after it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from engine import classad
from engine.contract.codes import JobStatus
from engine.queue.records import is_proc_key
from engine.router.throttle import THROTTLE_UPDATE_INTERVAL, RouteStats, route_state
from engine.views.recorded import literal_int, literal_str

if TYPE_CHECKING:
    from engine.router import events as ev

DEFAULT_THRESHOLD = 0.03  # FailureRateThreshold's default (htcondor.md §1.3 table)
DEFAULT_POLLING_PERIOD = 10


@dataclass(frozen=True)
class RouteRule:
    """What the routing table says about a route's failures (None: no table given)."""

    threshold: float = DEFAULT_THRESHOLD
    failure_test: str | None = None


@dataclass(frozen=True)
class Figures:
    """One route's reconstructed statistics at a moment (``RouteView`` fields)."""

    recent_started: int
    recent_succeeded: int
    recent_failed: int
    throttle: float  # 0 = none
    window_start: float
    failure_rate: float
    threshold: float
    rate_history: tuple[float, ...]
    state: str | None  # "throttled" when the throttle is reached, else None
    reason: str | None
    totals: tuple[int, int, int] = (0, 0, 0)  # RouteStats.totals: started, succeeded, failed


def table_rules(table: Any) -> tuple[dict[str, tuple[int, int]], dict[str, RouteRule], float]:
    """(limits: name → (MaxJobs, MaxIdleJobs), failure rules, JOB_ROUTER_POLLING_PERIOD) of a
    routing table, in its order — what replay and watch both need from ``--config``."""
    limits = {r.name: (int(r.max_jobs), int(r.max_idle_jobs)) for r in table.routes}
    rules = {r.name: RouteRule(float(r.failure_rate_threshold), r.job_failure_test) for r in table.routes}
    period = getattr(getattr(table, "knobs", None), "polling_period", DEFAULT_POLLING_PERIOD)
    return limits, rules, period


def route_locations(table: Any) -> dict[str, str]:
    """Route name → ``file:line`` of its definition (``RouteView.location``: the route detail's
    config text and the line the editor opens at), for replay's and watch's board from
    ``--config`` (issue 29: route detail showed no config text there and ``e`` opened line 1)."""
    out = {}
    for r in table.routes:
        loc = getattr(r, "location", None)
        if loc is not None and loc.file:
            out[r.name] = f"{loc.file}:{loc.line}"
    return out


def next_close(start: float, period: float, begin: float) -> float:
    """The first router poll of the grid that closes a window begun at ``begin``."""
    first = start + period / 2
    k = max(0, math.ceil((begin + THROTTLE_UPDATE_INTERVAL - first) / period - 1e-9))
    return first + k * period


def outcome(copy: Mapping[str, str], cluster: Mapping[str, str] | None, source: Mapping[str, str] | None,
            source_cluster: Mapping[str, str] | None, rule: RouteRule | None) -> str:
    """"succeeded" / "failed" / "interrupted" for a copy leaving the queue (htcondor.md §1.5).

    Interrupted (not counted) when it has no source job in the queue or its source's last status
    is removed (3); succeeded when it completed (4) and the route's ``JobFailureTest`` is not
    true — with a routing table that expression decides (none given = success, as HTCondor);
    without one RouteDeck cannot know the test and counts a non-zero ``ExitCode`` or
    ``ExitBySignal`` as a failure (documented assumption); failed otherwise (removed, held, idle
    or running when it left: "removed routed jobs count as failures")."""
    get = _value
    if source is None or literal_int(get(source, source_cluster, "JobStatus")) == JobStatus.REMOVED:
        return "interrupted"
    if not completed(copy, cluster):
        return "failed"
    if rule is not None:
        if not rule.failure_test:
            return "succeeded"
        texts = dict(cluster or {})
        texts.update(copy)
        try:
            value = classad.evaluate(rule.failure_test, my=classad.make_ad(texts))
        except classad.ClassAdError:
            return "succeeded"  # an unusable test is not true (HTCondor: EvalBool fails -> not a failure)
        return "failed" if classad.is_true(value) else "succeeded"
    code = literal_int(get(copy, cluster, "ExitCode"))
    by_signal = get(copy, cluster, "ExitBySignal")
    failed = (code is not None and code != 0) or (by_signal or "").strip().lower() == "true"
    return "failed" if failed else "succeeded"


def _value(ad: Mapping[str, str], cluster: Mapping[str, str] | None, name: str) -> str | None:
    """The value text of ``name`` in a proc ad, else in its cluster ad."""
    v = ad.get(name)
    return v if v is not None or cluster is None else cluster.get(name)


def completed(copy: Mapping[str, str], cluster: Mapping[str, str] | None) -> bool:
    """The copy's status is completed (4): :func:`outcome` of a copy with a source in the queue
    not removed is "succeeded" for a route without ``JobFailureTest`` exactly then."""
    return literal_int(_value(copy, cluster, "JobStatus")) == JobStatus.COMPLETED


_OUTCOME = {"succeeded": "success", "failed": "failure", "interrupted": "interrupted"}  # the router's words


def _source_id(proc: Mapping[str, str], cluster: Mapping[str, str] | None) -> str | None:
    text = proc.get("RoutedFromJobId") or (cluster.get("RoutedFromJobId") if cluster is not None else None)
    return None if text is None else _text_str(text)


_TEXTS: dict[str, str | None] = {}  # value text -> literal_str of it (route names, source ids: read again and again)
_TEXTS_MAX = 1 << 14


def _text_str(text: str) -> str | None:
    """``literal_str(text)``, remembered: a tracked copy's ``RouteName`` and ``RoutedFromJobId``
    are read when it appears, at each ``refresh`` and when it leaves (issue 27: the recorder's
    counts in a catch-up). The memo forgets all when full (the texts of a long recording are
    unbounded; the few route names come back at once). Shared by every LiveFigures, in any
    thread: its values are pure functions of their keys, so a race only costs a recomputation."""
    v = _TEXTS.get(text, _TEXTS)
    if v is _TEXTS:
        if len(_TEXTS) >= _TEXTS_MAX:
            _TEXTS.clear()
        v = _TEXTS[text] = literal_str(text)
    return v  # type: ignore[return-value]


def routed_event(time: float, key: str, route: str, proc: Mapping[str, str],
                 cluster: Mapping[str, str] | None) -> ev.JobRouted:
    """The router's ``job-routed`` for a routed copy that appeared in a transaction."""
    from engine.router import events as ev  # noqa: PLC0415 - only where events are made (a headless replay makes none)

    src = _source_id(proc, cluster)
    return ev.JobRouted(time, f"{src or '?'} routed to {route} as {key}", route, src, dest=key)


def retired_event(time: float, key: str, route: str, proc: Mapping[str, str], cluster: Mapping[str, str] | None,
             result: str) -> ev.JobRetired:
    """The router's ``job-retired`` for a copy that left the queue, with what its last ad says
    of a failure (hold or remove reason, exit code)."""
    def get(name: str) -> str | None:
        v = proc.get(name)
        return v if v is not None or cluster is None else cluster.get(name)

    why = ""
    if result == "failed":
        reason = literal_str(get("HoldReason")) or literal_str(get("RemoveReason"))
        code = literal_int(get("ExitCode"))
        why = f": {reason}" if reason else f": exit code {code}" if code else ""
    from engine.router import events as ev  # noqa: PLC0415 - only where events are made (a headless replay makes none)

    src = _source_id(proc, cluster)
    outcome_word = _OUTCOME.get(result, result)
    return ev.JobRetired(time, f"{src or key} left route {route} ({outcome_word}){why}", route, src,
                         outcome=outcome_word)


class _NoLimits:
    """A route with no MaxJobs / MaxIdleJobs limits: only the throttle decides in route_state."""

    max_jobs = 1 << 62
    max_idle_jobs = -1


def figures_of(stats: RouteStats, now: float, threshold: float, history: tuple[float, ...]) -> Figures:
    """A route's :class:`Figures` from its statistics at ``now``."""
    _ok, st, reason = route_state(_NoLimits, stats)
    return Figures(
        recent_started=stats.recent_routed, recent_succeeded=stats.recent_succeeded,
        recent_failed=stats.recent_failed, throttle=stats.throttle, window_start=stats.stats_begin_time,
        failure_rate=stats.failure_rate(now), threshold=threshold, rate_history=history,
        state="throttled" if st == "throttled" else None, reason=reason if st == "throttled" else None,
        totals=stats.totals)


_NO_RULE = RouteRule()  # a route the table does not name, or no table: the defaults


class LiveFigures:
    """The figures of a queue followed commit by commit (watch; module docstring for the rules).

    ``ads`` is the followed queue's key → attribute-text table; its dicts are mutated in place and
    a destroyed ad's dict is dropped, not cleared, so the references kept for each copy still hold
    its last values when it leaves (its outcome is judged on them)."""

    def __init__(self, ads: Mapping[str, Mapping[str, str]], rules: Mapping[str, RouteRule] | None,
                 period: float = DEFAULT_POLLING_PERIOD, collect_events: bool = True) -> None:
        self.ads = ads
        self.rules = rules
        self.period = float(period) if period and period > 0 else DEFAULT_POLLING_PERIOD
        self.start: float | None = None
        self.last_close: float | None = None  # when the current windows began
        self.next_close = math.inf
        self.stats: dict[str, RouteStats] = {}
        self.history: dict[str, list[float]] = {}
        self.live: dict[str, int] = {}
        self.copies: dict[str, tuple] = {}  # copy key -> (route, proc, cluster, source, source cluster)
        self.sources: dict[str, set[str]] = {}  # source key -> copies routed from it (see ``refresh``)
        # per route, copies judged failed only by their exit code (no table: a completed copy with
        # a non-zero ExitCode or ExitBySignal); a table without JobFailureTest counts them as
        # succeeded (engine.record keeps both, so a replay with --config can recount)
        self.exit_failed: dict[str, int] = {}
        self.adjustments: list = []  # ThrottleAdjustment of every closed window, oldest first
        # what the router would have said, drained by the feed; not kept when nobody drains them
        self.events: list[ev.RouterEvent] = []
        self.collect_events = collect_events

    def _rule(self, name: str) -> RouteRule | None:
        return None if self.rules is None else self.rules.get(name, _NO_RULE)

    def _route(self, name: str) -> RouteStats:
        s = self.stats.get(name)
        if s is None:
            s = self.stats[name] = RouteStats(name=name, stats_begin_time=self.last_close or 0.0)
            self.live[name] = 0
            self.history[name] = []
        return s

    def begin(self, start: float) -> None:
        """Windows start at ``start`` (the first commit seen, or a bulk load)."""
        if self.start is None:
            self.start = start
            self.last_close = start
            self.next_close = next_close(start, self.period, start)
            for s in self.stats.values():
                s.stats_begin_time = start
            for name in self.rules or ():  # the router counts every route of its table from the start
                self._route(name)

    def close_until(self, t: float, inclusive: bool = True) -> None:
        """Close the windows whose poll comes at or before ``t`` (before, when not ``inclusive``)."""
        while self.next_close < t or (inclusive and self.next_close == t):
            c = self.next_close
            for name, s in self.stats.items():
                s.num_jobs = self.live[name]
                adj = s.adjust_failure_throttle(c, (self._rule(name) or _NO_RULE).threshold)
                if adj is not None:
                    self.adjustments.append(adj)
                    self.history[name] = (self.history[name] + [adj.rate])[-48:]
                    if self.collect_events:
                        from engine.router.events import throttle_events  # noqa: PLC0415 - only where events are kept

                        self.events.extend(throttle_events(c, name, adj))
            self.last_close = c
            self.next_close = next_close(self.start, self.period, c)

    def _copy_and_source(self, key: str) -> tuple[tuple, str | None] | None:
        """(the tracked tuple of the routed copy ``key``, its source's id as ``_source_id``
        reads it), None when ``key`` is no routed copy in the queue."""
        ads = self.ads
        proc = ads.get(key)
        if proc is None:
            return None
        return self._copy_of(proc, ads.get("0" + key.partition(".")[0] + ".-1"))

    def _copy_of(self, proc: Mapping[str, str], cluster: Mapping[str, str] | None) -> tuple[tuple, str | None] | None:
        """``_copy_and_source`` of the proc ad ``proc`` and its cluster ad."""
        text = proc.get("RouteName") or (cluster.get("RouteName") if cluster is not None else None)
        if text is None:  # a job not routed (most keys a commit looks at)
            return None
        route = _text_str(text)
        if route is None:
            return None
        src = _source_id(proc, cluster)
        ads = self.ads
        source = ads.get(src) if src else None
        src_cluster = ads.get("0" + src.partition(".")[0] + ".-1") if source is not None else None
        return (route, proc, cluster, source, src_cluster), src

    def refresh(self, destroyed: list[str]) -> None:
        """Before a step destroys ``destroyed``: the tracked references of the copies among them,
        and of the copies routed from them, point to the ads the queue holds now. Needed when the
        queue forks (``JobQueue.fork`` is copy-on-write: an ad written after a fork is a new dict,
        so a reference taken before it would judge a copy on stale values)."""
        copies, ads = self.copies, self.ads
        for key in destroyed:
            copy = copies.get(key)
            if copy is not None and not self._current(key, copy):
                found = self._copy_and_source(key)
                if found is not None:
                    _route, proc, cluster, source, src_cluster = found[0]
                    copies[key] = (copy[0], proc, copy[2] if cluster is None else cluster,
                                   copy[3] if source is None else source,
                                   copy[4] if src_cluster is None else src_cluster)
            dests = self.sources.get(key)
            if dests:
                src = ads.get(key)
                if src is not None:
                    src_cluster = ads.get("0" + key.partition(".")[0] + ".-1")
                    for dest in dests:
                        c = copies.get(dest)
                        if c is not None:
                            copies[dest] = c[:3] + (src, c[4] if src_cluster is None else src_cluster)

    def _current(self, key: str, copy: tuple) -> bool:
        """``refresh`` would leave the tracked ``copy`` of ``key`` as it is: the ads it would
        take are the ones it holds, or absent where a ref is kept (``_copy_and_source`` without
        reading ``RouteName``, which decides only whether the refs are replaced)."""
        ads = self.ads
        proc = ads.get(key)
        if proc is not copy[1]:
            return proc is None  # (gone: _copy_and_source finds nothing to take)
        cluster = ads.get("0" + key.partition(".")[0] + ".-1")
        if cluster is not None and cluster is not copy[2]:
            return False
        src = _source_id(proc, cluster)
        source = ads.get(src) if src else None
        if source is None:
            return True
        if source is not copy[3]:
            return False
        src_cluster = ads.get("0" + src.partition(".")[0] + ".-1")
        return src_cluster is None or src_cluster is copy[4]

    def _untrack(self, key: str) -> tuple:
        copy = self.copies.pop(key)
        src = _source_id(copy[1], copy[2])
        dests = self.sources.get(src) if src else None
        if dests is not None:
            dests.discard(key)
            if not dests:
                del self.sources[src]
        return copy

    def commit(self, keys: set[str], counted: bool = True, time: float | None = None) -> None:
        """A committed transaction touched ``keys`` (the queue already holds its result): copies
        that left are judged, new copies are tracked (and counted as started when ``counted``).
        With the transaction's ``time``, the router's job events are told too (``events``):
        ``job-routed`` for a new copy, ``job-retired`` with the outcome for one that left."""
        copies, ads = self.copies, self.ads
        if not copies.keys().isdisjoint(keys):  # (most commits: no tracked copy)
            self._leave(keys, time)
        for key in keys:
            # a new copy: a proc key (is_proc_key, spelt out: cluster ads start with "0") not
            # tracked yet, in the queue (a key gone from it is no new copy), routed (_copy_of)
            if key[:1] == "0" or key in copies:
                continue
            proc = ads.get(key)
            if proc is None:
                continue
            c, dot, p = key.partition(".")
            if not dot or not p or p[0] == "-":
                continue
            found = self._copy_of(proc, ads.get("0" + c + ".-1"))
            if found is not None:
                self._track(key, found, counted, time)

    def _track(self, key: str, found: tuple[tuple, str | None], counted: bool, time: float | None) -> None:
        """``commit``'s new copy ``key`` (``_copy_and_source``'s ``found``): tracked, counted."""
        copy, src = found
        self.copies[key] = copy
        if src:
            self.sources.setdefault(src, set()).add(key)
        s = self._route(copy[0])
        self.live[copy[0]] += 1
        if counted:
            s.recent_routed += 1
            if time is not None and self.collect_events:
                self.events.append(routed_event(time, key, copy[0], copy[1], copy[2]))

    def _leave(self, keys: set[str], time: float | None) -> None:
        """``commit``'s copies that left: judged and untracked."""
        copies, ads = self.copies, self.ads
        for key in keys:
            if key in copies and key not in ads:
                route, proc, cluster, source, src_cluster = self._untrack(key)
                s = self._route(route)
                self.live[route] -= 1
                result = outcome(proc, cluster, source, src_cluster, self._rule(route))
                if result == "succeeded":
                    s.recent_succeeded += 1
                elif result == "failed":
                    s.recent_failed += 1
                    if self.rules is None and completed(proc, cluster):  # outcome's with no JobFailureTest
                        self.exit_failed[route] = self.exit_failed.get(route, 0) + 1
                if time is not None and self.collect_events:
                    self.events.append(retired_event(time, key, route, proc, cluster, result))

    def adopt(self) -> None:
        """After a bulk load: copies in the queue not seen in a transaction are tracked, not
        counted as started (they were routed before the log's history)."""
        self.commit(set(k for k in self.ads if is_proc_key(k) and k not in self.copies), counted=False)

    def figures(self, now: float) -> dict[str, Figures]:
        out = {}
        for name, s in self.stats.items():
            out[name] = figures_of(s, now, (self._rule(name) or _NO_RULE).threshold, tuple(self.history[name]))
        return out
