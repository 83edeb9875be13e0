"""The transform tracer (issue 13 item 1): the routed ad built step by step, for the TUI and the CLI."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable

from engine.router.dryrun import forget_prior_routing, route_jobs
from engine.router.hooks import HookManager
from engine.router.loader import load_config_and_table
from engine.router.schedd_ops import View
from engine.router.trace import trace_route
from engine.views.queries.access import Queries, ask, feed_ad


@dataclass
class TraceResult:
    """One job's trace (:mod:`engine.router.trace`): ``blocks`` are the pipeline's steps."""

    job: str  # the job traced (a routed copy's source job)
    route: str | None
    verdict: str
    blocks: list  # engine.router.trace.Block
    routed_ad: dict[str, str] | None
    note: str | None = None  # how the job was picked (a routed copy → its source job, …)
    table_from: str = ""  # where the routing table came from

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job, "route": self.route, "verdict": self.verdict, "note": self.note,
                "trace": [b.to_json() for b in self.blocks], "routed_ad": self.routed_ad}


def trace_job(runtime: Queries, job: str, now: float, config_files: Iterable[str] = ()) -> TraceResult:
    """The routed ad of ``job`` built statement by statement, with the routing table the engine
    runs (demo) or, when the engine has none (replay, watch), the table of ``config_files`` (the
    snapshot's). A routed copy is traced from its source job on its route; a source job the
    router already routed is traced on the route it took (the decision is not retaken); any other
    job goes through one dry-run routing attempt (:func:`engine.router.dryrun.route_jobs`,
    hooks withheld). Raises LookupError for an unknown job or when no routing table is known."""
    def read(key: str) -> tuple[Any, dict[str, str] | None]:
        return ask(runtime, lambda feed: (feed.table, feed_ad(feed, key)))

    table, ad = read(job)
    if not ad:
        raise LookupError(f"no job {job} in the queue")
    note = None
    route_name = None
    traced = job
    source = View(ad).str("RoutedFromJobId")
    if source:  # a routed copy: trace its source job on the copy's route
        route_name = View(ad).str("RouteName")
        src_table, src_ad = read(source)
        if not src_ad:
            raise LookupError(f"{job} is a routed copy of {source}, which is not in the queue")
        table = table or src_table
        ad, traced, note = src_ad, source, f"{job} is the routed copy of {source}"
    else:
        copy = View(ad).str("RoutedToJobId")
        if copy:
            _, copy_ad = read(copy)
            route_name = View(copy_ad or {}).str("RouteName")
            note = f"{job} is routed already (copy {copy})"
    table_from = "the engine's routing table"
    if table is None:
        files = tuple(config_files)
        if not files:
            raise LookupError("no routing table: this mode was started without a config (--config)")
        table = load_config_and_table(files).table
        table_from = "the config files " + ", ".join(os.path.basename(f) for f in files)
    if route_name and table.route(route_name) is not None:
        attrs = dict(ad)
        forget_prior_routing(attrs)
        c, _, p = traced.partition(".")
        sid = (int(c), int(p)) if c.isdigit() and p.isdigit() else (0, 0)
        blocks, routed, error = trace_route(table, route_name, attrs, now=now, source_id=sid)
        verdict = f"routed to {route_name}" + (f"; rebuilding the routed copy fails: {error}" if error else "")
        return TraceResult(traced, route_name, verdict, blocks, routed,
                           (note or f"{traced} is routed") + f"; {traced} traced on its route {route_name}",
                           table_from)
    if route_name:
        note = (note or "") + f"; its route {route_name} is no longer in the table: a new routing attempt traced"
    hooks = HookManager(table.config, table.knobs.hook_keyword)  # programs never run from here
    try:
        [result] = route_jobs(table, [dict(ad)], now, ignore_prior=bool(route_name), hooks=hooks, trace=True)
    finally:
        hooks.close()
    return TraceResult(traced, result["route"], result["verdict"], result["trace"], result["routed_ad"], note,
                       table_from)
