"""The real router's own figures beside RouteDeck's (htcondor.md §1.5, the JobRouterLog table).

RouteDeck's own figures per route come from the routed copies in the queue (the same
:mod:`engine.views.recorded` code as replay); the real router's figures (throttle, recent
started/succeeded/failed, its own submitted/idle counts) come from the last JobRouterLog table
and are attached as ``RouteView.reported`` beside them; routes only the router log names are
listed too.
"""

from __future__ import annotations

import dataclasses

from engine.contract.snapshot import ReportedRoute, RouteView
from engine.router.routerlog import RouterLogTable
from engine.router.throttle import THROTTLE_UPDATE_INTERVAL


def reported_of(table: RouterLogTable | None) -> dict[str, ReportedRoute]:
    if table is None:
        return {}
    return {
        r.name: ReportedRoute(
            time=table.time, submitted=r.submitted, max_jobs=r.max_jobs, idle=r.idle, max_idle=r.max_idle,
            throttle=r.throttle_per_window, recent_started=r.recent_started,
            recent_succeeded=r.recent_succeeded, recent_failed=r.recent_failed,
        )
        for r in table.rows
    }


def merge_reported(routes: tuple[RouteView, ...], table: RouterLogTable | None,
                   window_start: float | None = None) -> tuple[RouteView, ...]:
    """Attach the router's own row to each route (adding routes only the router log names; their
    window is the current one, ``window_start``, when known)."""
    rep = reported_of(table)
    if not rep:
        return routes
    out = []
    for r in routes:
        got = rep.pop(r.name, None)
        if got is None:
            out.append(r)
            continue
        out.append(dataclasses.replace(
            r, reported=got, throttle=got.throttle,
            recent_started=got.recent_started or 0, recent_succeeded=got.recent_succeeded or 0,
            recent_failed=got.recent_failed or 0,
            max_jobs=r.max_jobs if r.max_jobs >= 0 else got.max_jobs,
            max_idle=r.max_idle if r.max_jobs >= 0 else got.max_idle,
        ))
    for name, got in rep.items():  # the router has the route, the queue has no copy on it yet
        out.append(RouteView(
            index=len(out) + 1, name=name, source_label="JobRouterLog", syntax="transform", state="accepting",
            reason=None, routed=0, idle=0, running=0, held=0, max_jobs=got.max_jobs, max_idle=got.max_idle,
            recent_started=got.recent_started or 0, recent_succeeded=got.recent_succeeded or 0,
            recent_failed=got.recent_failed or 0, failure_rate=0.0, failure_threshold=0.0,
            throttle=got.throttle, window_start=window_start or 0.0,
            next_reevaluation=window_start + THROTTLE_UPDATE_INTERVAL if window_start else 0.0, reported=got,
        ))
    return tuple(out)
