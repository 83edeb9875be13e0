"""The router's per-route window counts, kept by the recorder so a window of the archive knows the
failure-rate throttle in force at its start (issue 27).

Facts: htcondor.md §1.5 (``AdjustFailureThrottles``: at the first poll 600 s or more after
``stats_begin_time`` the throttle is recomputed from the window's ``recent_failed``,
``recent_succeeded``, ``num_jobs``, the route's ``FailureRateThreshold`` and the throttle before;
the counters then reset). Design decisions and invariants:

- The throttle is a fold over every window closed since the router started, and it depends on
  the thresholds of the routing table (known at replay time, ``--config``). So the recorder keeps
  what does not depend on them: for each window close, for each route, ``[delta, started,
  succeeded, failed, num_jobs, exit_failed]`` in an index line ``{"kind": "close", "txn", "t",
  "routes"}`` (``txn``: the first archive transaction after the close; retention drops the line
  with its transactions). Replay folds them with its thresholds (:func:`fold`).
- The counting is watch's (``engine.views.figures.LiveFigures``: the same rules as replay's
  ``RouteHistory``, one step at a time) with no routing table, on the replay grid of the archive:
  polls at ``start + period/2 + k·period`` with the default ``JOB_ROUTER_POLLING_PERIOD`` (10 s),
  ``start`` being the time replay gives the archive's first step (its first state checkpoint,
  else its first transaction). ``exit_failed`` counts the copies judged failed only by their exit
  code (completed with a non-zero ``ExitCode`` or ``ExitBySignal``): a table without
  ``JobFailureTest`` counts them as succeeded, so :func:`fold` recounts them; with a
  ``JobFailureTest`` the counts are an estimate (``fold`` says so).
- The state of the open windows at the archive's end is saved in ``recorder.json``
  (``Meta.figures``) with every flush, so a restarted recorder counts on where it stopped; copies
  in the restored queue are tracked again (not counted as started).
"""

from __future__ import annotations

import math
from operator import itemgetter
from typing import Mapping

from engine.router.throttle import THROTTLE_UPDATE_INTERVAL, next_throttle
from engine.views.figures import DEFAULT_POLLING_PERIOD, LiveFigures, RouteRule, next_close

_OP = itemgetter(0)


class RouteCounts:
    """The recorder's counting (module docstring) over the queue ``ads`` it keeps."""

    def __init__(self, ads: Mapping[str, Mapping[str, str]], saved: dict | None = None, *,
                 enabled: bool = True) -> None:
        """``enabled``: False for an archive recorded before the counts were kept (counting from
        the middle of it would give windows on a grid of their own)."""
        self.figures = LiveFigures(ads, None, DEFAULT_POLLING_PERIOD, collect_events=False)
        self._exit_at_close: dict[str, int] = {}
        self._keys: list[str] = []  # the 101/102 keys of the step between before() and after()
        self.enabled = enabled or bool(saved)
        if saved:
            self._restore(saved)

    @property
    def started(self) -> bool:
        return self.figures.start is not None

    def begin(self, start: float) -> None:
        """The windows start at ``start``; copies already in the queue are tracked, not counted."""
        self.figures.begin(start)
        self.figures.adopt()

    def rebind(self, ads: Mapping[str, Mapping[str, str]]) -> None:
        self.figures.ads = ads

    def before(self, t: float, records: list, txn: int) -> list[dict]:
        """Before the step of time ``t`` (archive transaction ``txn``) is applied: the windows
        closed by then, as index lines."""
        if not self.enabled:
            return []
        # only a 101 makes a copy and only a 102 ends one (RouteHistory's rule): the other keys
        # of a step need not be looked at (a catch-up's steps are mostly 103s of source jobs,
        # told apart by their op codes alone, taken without a Python loop)
        ops = set(map(_OP, records))
        keys = [r[1] for r in records if r[0] == 101 or r[0] == 102] if 101 in ops or 102 in ops else []
        return self.before_keys(t, keys, txn)

    def before_keys(self, t: float, keys: list[str], txn: int) -> list[dict]:
        """:meth:`before` given the keys of the step's 101 and 102 records, in order."""
        f = self.figures
        if not self.enabled:
            return []
        if f.start is None:
            self.begin(t)
        lines = []
        if f.next_close <= t:  # close_until's test: most steps come before the next close
            f.close_until(t)
            if f.adjustments:
                lines = self._closes(txn)
        if not keys:
            return lines
        self._keys = keys
        copies, sources = f.copies, f.sources
        if not (copies.keys().isdisjoint(keys) and sources.keys().isdisjoint(keys)):  # (most steps: none)
            f.refresh([k for k in keys if k in copies or k in sources])
        return lines

    def due(self) -> float:
        """The earliest step time at which :meth:`before` has work for a step with no 101 or 102
        (the next window close; -inf before the first step, inf when not counting): before it,
        such a step need not call ``before`` nor ``after``."""
        if not self.enabled:
            return math.inf
        f = self.figures
        return -math.inf if f.start is None else f.next_close

    def after(self, records: list, counted: bool) -> None:
        """After the step is applied: copies that left are judged, new ones tracked."""
        if self.enabled and self._keys:
            self.figures.commit(set(self._keys), counted=counted)
            self._keys = []

    def _closes(self, txn: int) -> list[dict]:
        f = self.figures
        by_time: dict[float, dict[str, list]] = {}
        for adj in f.adjustments:
            by_time.setdefault(adj.time, {})[adj.route] = [
                adj.delta, adj.recent_routed, adj.recent_succeeded, adj.recent_failed, adj.num_jobs, 0]
        f.adjustments.clear()
        first = min(by_time)
        for name, row in by_time[first].items():  # exit failures happen between closes: the first one's
            n = f.exit_failed.get(name, 0)
            row[5] = n - self._exit_at_close.get(name, 0)
            self._exit_at_close[name] = n
        return [dict(kind="close", txn=txn, t=c, routes=routes) for c, routes in sorted(by_time.items())]

    def state(self) -> dict | None:
        """What ``recorder.json`` keeps (None before the first step)."""
        f = self.figures
        if f.start is None or not self.enabled:
            return None
        return dict(start=f.start, period=f.period, last_close=f.last_close,
                    routes={n: [s.stats_begin_time, s.recent_routed, s.recent_succeeded, s.recent_failed, s.throttle]
                            for n, s in f.stats.items()},
                    exit={n: [f.exit_failed.get(n, 0), self._exit_at_close.get(n, 0)] for n in f.stats})

    def _restore(self, saved: dict) -> None:
        f = self.figures
        f.start = saved["start"]
        f.period = saved.get("period", DEFAULT_POLLING_PERIOD)
        f.last_close = saved["last_close"]
        f.next_close = next_close(f.start, f.period, f.last_close)
        for name, (begin, routed, ok, failed, throttle) in saved.get("routes", {}).items():
            s = f._route(name)
            s.stats_begin_time, s.recent_routed, s.recent_succeeded, s.recent_failed = begin, routed, ok, failed
            s.throttle = throttle
        for name, (n, at_close) in saved.get("exit", {}).items():
            f.exit_failed[name] = n
            self._exit_at_close[name] = at_close
        f.adopt()


def fold(lines: list[dict], rules: Mapping[str, RouteRule] | None,
         until: float | None = None, since: float | None = None) -> tuple[dict[float, dict[str, float]], bool]:
    """The throttle of every route after each recorded window close, folded with the thresholds of
    ``rules`` (None: no table, the defaults): ({close time: {route: throttle}}, exact). Not exact
    when a route of ``rules`` has a ``JobFailureTest`` (the recorder could not evaluate it: its
    counts are the no-table ones). ``until``: the closes up to that time only (a moment of a long
    archive needs none after it); ``since``: only the closes from that time are returned (a window
    of a long archive looks up none before it), the fold itself still runs from the first."""
    out: dict[float, dict[str, float]] = {}
    throttle: dict[str, float] = {}  # per route: all RouteStats.adjust_failure_throttle carries from a close
    exact = not any(r.failure_test for r in (rules or {}).values())
    rule_of: dict[str, RouteRule] = {}
    for x in lines:
        if x["kind"] != "close":
            continue
        c = x["t"]
        if until is not None and c > until:
            continue  # (closes are in time order; a later line is not trusted to be)
        after = out.setdefault(c, {}) if since is None or c >= since else None
        for name, (delta, _routed, ok, failed, num_jobs, exit_failed) in x["routes"].items():
            rule = rule_of.get(name)
            if rule is None:
                rule = rule_of[name] = _rule(rules, name)
            if rules is not None and not rule.failure_test:
                ok, failed = ok + exit_failed, failed - exit_failed
            old = throttle.get(name, 0.0)
            span = c - (c - delta)  # as adjust_failure_throttle computes it from the window's begin
            # no throttle and no deceleration: next_throttle's accelerate branch keeps it at none
            if span >= THROTTLE_UPDATE_INTERVAL and (old != 0.0 or (failed and failed * 1.0 / span > rule.threshold)):
                new = next_throttle(old, span, failed, ok, num_jobs, rule.threshold)[0]
                if math.fabs(new - old) > 0.0001:
                    old = throttle[name] = new
            if after is not None:
                after[name] = old
    return out, exact


def _rule(rules: Mapping[str, RouteRule] | None, name: str) -> RouteRule:
    return RouteRule() if rules is None else rules.get(name, RouteRule())
