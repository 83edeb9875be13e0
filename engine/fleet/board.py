"""The fleet board's rows: one per CE (a scrape target of RouteDeck's exporter), from PromQL.

A CE is a Prometheus target (``instance``) whose series RouteDeck's exporter gave
(engine.metrics.collector) within ``LOOKBACK``; ``up`` says its scrape health. Its state:

- ``up``: scraped and its series are current;
- ``down``: the last scrape failed (``up == 0``): no current series, routes empty;
- ``stale``: scraped, but no current RouteDeck series (the exporter has no snapshot yet, or the
  target is no longer scraped and Prometheus marked its series stale).

Per route ``idle`` counts the held copies too, as RouteView and ``replay --json`` do (HTCondor
counts held copies as idle against MaxIdleJobs); the exporter's ``state="idle"`` series is the
idle copies *not* held, so ``idle`` here is that plus ``held``. ``routed`` is the three summed.
The trend is the CE's running copies over the last ``TREND`` seconds (a range query).

Per route the board has the figures of the local board's columns (tui.screens.routes) that the
exporter's series give: the throttle and the failure-rate threshold (their gauges), the recent
started/succeeded/failed (the counters' ``increase`` over ``RECENT``: the router's window is 600 s,
but where it began is not exported, so the last 600 s stand for it) and the failure rate's
history (``rate_history``, a range query over ``TREND``, as the local board's trend column).
:func:`route_view` gives a route as the local board's row (engine.contract.snapshot.RouteView):
the fleet's routes screen draws it with the local board's own cells, in the routing table's match
order (``routedeck_route_match_order``; routes without one, not enabled, after them by name), the
window's re-evaluation 600 s after ``routedeck_route_window_start_timestamp_seconds``, counted
from the CE's own snapshot time (``time``: virtual in a demo).
"""

from __future__ import annotations

from typing import Any

from engine.contract.snapshot import RouteView
from engine.fleet.promapi import Prometheus
from engine.router.throttle import THROTTLE_UPDATE_INTERVAL

LOOKBACK = "1h"  # a target whose RouteDeck series are older than this is no longer a CE of the board
TREND = 1800.0  # seconds of the trend column
TREND_POINTS = 30
RECENT = "600s"  # the recent started/succeeded/failed: the counters' increase over the router's window length

ROUTE_FLAGS = {  # JSON key -> exporter series (a 0/1 gauge or a figure)
    "accepting": "routedeck_route_accepting",
    "throttled": "routedeck_route_throttled",
    "full": "routedeck_route_full",
    "max_jobs": "routedeck_route_max_jobs",
    "max_idle_jobs": "routedeck_route_max_idle_jobs",
    "failure_rate": "routedeck_route_failure_rate",
    "failure_rate_threshold": "routedeck_route_failure_rate_threshold",
    "throttle": "routedeck_route_throttle_jobs",
    "match_order": "routedeck_route_match_order",
    "window_start": "routedeck_route_window_start_timestamp_seconds",
    **{f"recent_{k}": f"round(increase(routedeck_route_jobs_{k}_total[{RECENT}]))"
       for k in ("started", "succeeded", "failed")},
}
BOOL_FLAGS = ("accepting", "throttled", "full")


def _num(v: float) -> int | float:
    return int(v) if float(v).is_integer() else v


def fleet(prom: Prometheus, now: float, trend: bool = True) -> dict[str, Any]:
    """``{"ces": [...]}`` (module docstring), CEs in ``instance`` order, routes by name."""
    ces: dict[str, dict[str, Any]] = {}

    def ce(instance: str) -> dict[str, Any]:
        if instance not in ces:
            ces[instance] = {"instance": instance, "job": None, "schedd": None, "up": None, "state": "stale",
                             "time": None, "routes": {}, "unrouted": {}}
        return ces[instance]

    known = prom.query(f"last_over_time(routedeck_snapshot_timestamp_seconds[{LOOKBACK}])", now)
    jobs = set()
    for labels, value in known:
        c = ce(labels.get("instance", ""))
        c["job"], c["schedd"], c["time"] = labels.get("job"), labels.get("schedd"), _num(value)
        jobs.add(labels.get("job"))
    for labels, value in prom.query("up", now):
        inst = labels.get("instance", "")
        if inst in ces or labels.get("job") in jobs:
            c = ce(inst)
            c["job"] = c["job"] or labels.get("job")
            c["up"] = value == 1.0
    current = {labels.get("instance", ""): labels.get("schedd")
               for labels, _ in prom.query("routedeck_snapshot_timestamp_seconds", now)}

    def route(labels: dict[str, str]) -> dict[str, Any] | None:
        inst = labels.get("instance", "")
        if inst not in ces or "route" not in labels:
            return None
        routes = ces[inst]["routes"]
        name = labels["route"]
        if name not in routes:
            routes[name] = {"name": name, "idle": 0, "running": 0, "held": 0, "routed": 0,
                            **{k: None for k in ROUTE_FLAGS}}
        return routes[name]

    for labels, value in prom.query("routedeck_route_jobs", now):
        r = route(labels)
        state = labels.get("state")
        if r is not None and state in ("idle", "running", "held"):
            r[state] += int(value)
            r["routed"] += int(value)
            if state == "held":
                r["idle"] += int(value)  # held copies count as idle (module docstring)
    for key, series in ROUTE_FLAGS.items():
        for labels, value in prom.query(series, now):
            r = route(labels)
            if r is not None:
                r[key] = (value == 1.0) if key in BOOL_FLAGS else _num(value)
    for labels, value in prom.query("routedeck_idle_unrouted_jobs", now):
        inst = labels.get("instance", "")
        if inst in ces and "reason" in labels:
            ces[inst]["unrouted"][labels["reason"]] = int(value)
    trends: dict[str, list[int | float]] = {}
    rates: dict[tuple[str, str], list[int | float]] = {}
    if trend and ces:
        step = TREND / TREND_POINTS
        for labels, values in prom.query_range(
                'sum by (instance) (routedeck_route_jobs{state="running"})', now - TREND, now, step):
            trends[labels.get("instance", "")] = [_num(v) for _, v in values]
        for labels, values in prom.query_range("routedeck_route_failure_rate", now - TREND, now, step):
            rates[labels.get("instance", ""), labels.get("route", "")] = [_num(v) for _, v in values]

    out = []
    for inst in sorted(ces):
        c = ces[inst]
        if c["up"] is False:
            c["state"] = "down"
        elif inst in current:
            c["state"] = "up"
            c["schedd"] = current[inst] or c["schedd"]
        routes = sorted(c["routes"].values(), key=match_order)
        for r in routes:
            r["rate_history"] = rates.get((inst, r["name"]), [])
        c["routes"] = routes
        for k in ("idle", "running", "held", "routed"):
            c[k] = sum(r[k] for r in routes)
        c["routes_throttled"] = sum(1 for r in routes if r["throttled"])
        c["routes_full"] = sum(1 for r in routes if r["full"])
        c["unrouted"] = dict(sorted(c["unrouted"].items()))
        c["trend"] = trends.get(inst, [])
        out.append(c)
    return {"ces": out}


def match_order(r: dict[str, Any]) -> tuple:
    """Routes in the routing table's match order; those without one (not enabled) after, by name."""
    order = r.get("match_order")
    return (0, order, r["name"]) if order else (1, 0, r["name"])


def route_state(r: dict[str, Any]) -> str:
    """A board route's state in the local board's words (engine.contract.snapshot.ROUTE_STATES),
    or ``not accepting`` (no series says why) and ``unknown`` (no series)."""
    if r["throttled"]:
        return "throttled"
    if r["full"]:
        return "full"
    if r["accepting"] is None:
        return "unknown"
    return "accepting" if r["accepting"] else "not accepting"


def route_view(r: dict[str, Any]) -> RouteView:
    """A board route as a row of the local board (module docstring): a figure with no series is
    0, a limit with none -1 (no limit), as in RouteView."""

    def figure(key: str, default: Any = 0) -> Any:
        v = r.get(key)
        return default if v is None else v

    start = figure("window_start", 0.0)
    return RouteView(
        index=int(figure("match_order")), name=r["name"], source_label="prometheus", syntax="",
        state=route_state(r), reason=None,
        routed=r["routed"], idle=r["idle"], running=r["running"], held=r["held"],
        max_jobs=figure("max_jobs", -1), max_idle=figure("max_idle_jobs", -1),
        recent_started=int(figure("recent_started")), recent_succeeded=int(figure("recent_succeeded")),
        recent_failed=int(figure("recent_failed")), failure_rate=float(figure("failure_rate", 0.0)),
        failure_threshold=float(figure("failure_rate_threshold", 0.0)), throttle=r.get("throttle"),
        window_start=float(start), next_reevaluation=start + THROTTLE_UPDATE_INTERVAL if start else 0.0,
        rate_history=tuple(r.get("rate_history") or ()))
