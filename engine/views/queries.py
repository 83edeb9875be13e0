"""Queries beyond snapshots — why-not, full job ads, constraints, routing-table lint and what-if —
shared by the TUI's screens (through ``tui.engine_api``) and the headless commands.

They use the router's ``why_not``, the config reader and ``load_routing_table``, through the
runtime's or feed's API when it is there, and otherwise say plainly what is unavailable —
never a crash of the caller. Slow calls (ClassAd constraints over 100,000 jobs) are meant to be
run from a thread worker by the caller.

Engine state (router, queue) belongs to the engine thread: with a runtime that offers
``query(fn, timeout)`` (``engine.runtime.Runtime``) every read here runs on that thread between
two steps; full ads are fetched in batches of :data:`AD_BATCH` per query. Objects without
``query`` (test fakes) are read directly, as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from engine.contract.codes import JobStatus
from engine.router.loader import load_routing_table
from engine.router.schedd_ops import View
from engine.contract.snapshot import JobRow, Diagnostic
from engine.views.job_ad import annotate
from engine.classad import evaluate, format_value, is_true, make_ad, parse_expr
from engine.router.compare import compare_tables
from engine.lang.config import Config
from engine.router.dryrun import forget_prior_routing, route_jobs
from engine.router.hooks import HookManager
from engine.router.trace import trace_route

@dataclass(frozen=True)
class Check:
    """One step of the router's decision for a job, normalised for display."""

    label: str
    ok: bool | None  # None = informational
    detail: str


def _first_attr(obj: Any, names: Iterable[str], default: Any = None) -> Any:
    for n in names:
        if isinstance(obj, dict) and n in obj:
            return obj[n]
        if hasattr(obj, n):
            return getattr(obj, n)
    return default


def normalise_checks(steps: Any) -> list[Check]:
    steps = _first_attr(steps, ("steps", "checks"), steps)
    out = []
    for s in steps or ():
        if isinstance(s, str):
            out.append(Check(s, None, ""))
            continue
        label = str(_first_attr(s, ("label", "check", "step", "name", "title"), "?"))
        route = _first_attr(s, ("route",))
        if route:
            label = f"[{route}] {label}"
        ok = _first_attr(s, ("ok", "passed", "result", "success"))
        detail = _first_attr(s, ("detail", "details", "message", "numbers", "why"), "")
        out.append(Check(label, None if ok is None else bool(ok), str(detail)))
    return out


def _why_not_fn(runtime: Any):
    engine = getattr(runtime, "feed", None)
    for owner in (runtime, engine, getattr(engine, "router", None)):
        fn = getattr(owner, "why_not", None)
        if fn is not None:
            return fn
    return None


QUERY_TIMEOUT = 5.0  # seconds a screen waits for the engine thread to answer


def _has_query(runtime: Any) -> bool:
    return callable(getattr(runtime, "query", None)) and getattr(runtime, "feed", None) is not None


def _explain(fn: Any, job: str, now: float) -> tuple[str | None, list[Check]]:
    result = fn(job, now)
    verdict = _first_attr(result, ("verdict",))
    return (str(verdict) if verdict else None), normalise_checks(result)


NO_EXPLANATION = [Check("why-not", None, "this engine offers no routing explanation")]


def why_not(runtime: Any, job: str, now: float) -> tuple[str | None, list[Check]]:
    """``(verdict, checks)`` from the router's ``why_not(job_id, now)``.

    The router's state belongs to the engine thread: with a runtime that has ``query`` the
    explanation is built there, between two steps (``Runtime.query``); a runtime without it (test
    fakes) is read from this thread, retried if a container changed under it mid-read.
    """
    if _has_query(runtime):
        def on_engine(engine: Any) -> tuple[str | None, list[Check]] | None:
            for owner in (engine, getattr(engine, "router", None)):
                fn = getattr(owner, "why_not", None)
                if fn is not None:
                    return _explain(fn, job, now)
            return None

        out = runtime.query(on_engine, timeout=QUERY_TIMEOUT)
        return out if out is not None else (None, list(NO_EXPLANATION))
    fn = _why_not_fn(runtime)
    if fn is None:
        return None, list(NO_EXPLANATION)
    for attempt in range(3):
        try:
            return _explain(fn, job, now)
        except RuntimeError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def why_not_candidate(runtime: Any, route: str | None, now: float,
                      rows: Iterable[JobRow] = ()) -> tuple[str, str] | None:
    """``(job, why picked)``: the job a why-not about ``route`` is most likely about, chosen by
    the router on the engine thread (``JobRouter.why_not_candidate``). An engine without a
    router (replay, watch, test fakes) answers from the snapshot's rows: the first idle job
    that is neither a routed copy nor routed."""
    if _has_query(runtime):
        def on_engine(engine: Any) -> Any:
            for owner in (engine, getattr(engine, "router", None)):
                fn = getattr(owner, "why_not_candidate", None)
                if fn is not None:
                    return fn(route, now)
            return NotImplemented

        out = runtime.query(on_engine, timeout=QUERY_TIMEOUT)
        if out is not NotImplemented:
            return out
    idle = JobStatus.IDLE  # bound once: an enum member lookup costs ~0.3 µs a row
    job = next((r for r in rows if r.status == idle and r.kind != "routed" and not r.routed_to), None)
    return (job.job, "first idle job not routed (this engine has no router to ask)") if job else None


def _engine_ad(engine: Any, key: str) -> dict[str, str] | None:
    """One job's full ad from an engine object (its ``job_ad``, or the demo queue's job)."""
    fn = getattr(engine, "job_ad", None)
    if fn is not None:
        ad = fn(key)
        if ad:
            return dict(ad)
    queue = getattr(engine, "queue", None)
    if queue is not None and hasattr(queue, "get"):
        job = queue.get(key)
        if job is not None:
            attrs = job.attrs  # a property on engine.queue.jobqueue.Job
            return dict(attrs() if callable(attrs) else attrs)
    return None


def job_ads(runtime: Any, rows: list[JobRow]) -> list[dict[str, str]]:
    """Full ads of ``rows`` in one engine query (the row's own attributes for a job not found)."""
    if _has_query(runtime):
        keys = [r.job for r in rows]
        try:
            found = runtime.query(lambda engine: [_engine_ad(engine, k) for k in keys], timeout=QUERY_TIMEOUT)
        except Exception:  # noqa: BLE001 - engine stopped or busy: the rows' own attributes, as before
            found = [None] * len(rows)
        return [ad if ad else row_ad(r) for ad, r in zip(found, rows)]
    return [job_ad(runtime, r) for r in rows]


def job_ad(runtime: Any, row: JobRow) -> dict[str, str]:
    if _has_query(runtime):
        return job_ads(runtime, [row])[0]
    for owner in (runtime, getattr(runtime, "feed", None)):
        fn = getattr(owner, "job_ad", None)
        if fn is not None:
            ad = fn(row.job)
            if ad:
                return dict(ad)
    queue = getattr(getattr(runtime, "feed", None), "queue", None)
    if queue is not None and hasattr(queue, "get"):
        # A fake without ``query``: read from this thread, retried if the engine was mid-update.
        for _ in range(3):
            try:
                job = queue.get(row.job)
                if job is not None:
                    attrs = job.attrs
                    return dict(attrs() if callable(attrs) else attrs)
                break
            except RuntimeError:  # changed size during iteration
                continue
    return row_ad(row)


def job_ad_lines(runtime: Any, row: JobRow, now: float, tz: str = "UTC") -> list:
    """The job's ad as ``engine.views.job_ad.AdLine``s (dates, code names, the in-memory
    DeferralTime of a crondor job). The ad and the schedd's in-memory DeferralTime are read on
    the engine thread; the row's ``deferral_time`` (from the snapshot) stands in otherwise."""
    memory = None
    if _has_query(runtime):
        def on_engine(engine: Any) -> tuple[dict[str, str] | None, int | None]:
            cron = getattr(getattr(engine, "schedd", None), "cron", None)
            return _engine_ad(engine, row.job), getattr(cron, "deferral", {}).get(row.job)

        try:
            ad, memory = runtime.query(on_engine, timeout=QUERY_TIMEOUT)
        except Exception:  # noqa: BLE001 - engine stopped or busy: the row's own attributes
            ad = None
        ad = ad or row_ad(row)
    else:
        ad = job_ad(runtime, row)
    if memory is None:
        memory = row.deferral_time
    return annotate(ad, now, tz, memory)


def row_ad(row: JobRow) -> dict[str, str]:
    """The attributes a ``JobRow`` carries, as old-syntax texts (for constraints and drill-down)."""
    c, _, p = row.job.partition(".")
    ad = {"ClusterId": c, "ProcId": p or "0", "JobStatus": str(row.status), "Owner": format_value(row.owner),
          "Cmd": format_value(row.cmd)}
    if row.qdate is not None:
        ad["QDate"] = str(row.qdate)
    if row.entered_status is not None:
        ad["EnteredCurrentStatus"] = str(row.entered_status)
    if row.route:
        ad["RouteName"] = format_value(row.route)
    if row.routed_to:
        ad["RoutedToJobId"] = format_value(row.routed_to)
    if row.routed_from:
        ad["RoutedFromJobId"] = format_value(row.routed_from)
        ad["RoutedBy"] = format_value("jobrouter")
    if row.hold_reason:
        ad["HoldReason"] = format_value(row.hold_reason)
    if row.deferral_time is not None:
        ad["DeferralTime"] = str(row.deferral_time)
    return ad


AD_BATCH = 2048  # ads fetched per engine query: a few ms of the engine thread's time


class FullAds:
    """``ad_of`` for :func:`constraint_hits`: the engine's full job ads, fetched in batches
    (one engine query per :data:`AD_BATCH` rows, not one per row)."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime

    def __call__(self, row: JobRow) -> dict[str, str]:
        return job_ad(self.runtime, row)

    def many(self, rows: list[JobRow]) -> list[dict[str, str]]:
        return job_ads(self.runtime, rows)


def _ads_in_batches(rows: Iterable[JobRow], ad_of: Any, cancelled=lambda: False):
    """``(row, ad or None)`` for every row; ``None`` when the ad cannot be had."""
    rows = list(rows)
    many = getattr(ad_of, "many", None)
    for start in range(0, len(rows), AD_BATCH):
        if cancelled():
            return
        chunk = rows[start:start + AD_BATCH]
        if many is not None:
            yield from zip(chunk, many(chunk))
            continue
        for r in chunk:
            try:
                yield r, ad_of(r)
            except Exception:  # noqa: BLE001 - no ad: treated as not matching
                yield r, None


def constraint_hits(rows: Iterable[JobRow], text: str, now: float, cancelled=lambda: False,
                    ad_of=row_ad) -> frozenset[str]:
    """Job ids whose ad satisfies the ClassAd ``text`` (raises ClassAdError if it does not parse).

    ``ad_of(row)`` gives the attributes: the engine's full ad when it offers one, else the row's;
    an ``ad_of`` with ``many(rows)`` is asked for a batch at a time.
    """
    expr = parse_expr(text)
    hits = []
    for r, texts in _ads_in_batches(rows, ad_of, cancelled):
        if texts is None:
            continue
        try:
            ad = make_ad(texts)
        except Exception:  # noqa: BLE001 - an attribute that does not parse: the job does not match
            continue
        if is_true(evaluate(expr, my=ad, now=now)):
            hits.append(r.job)
    return frozenset(hits)


def full_ads_of(runtime: Any):
    """``ad_of`` for :func:`constraint_hits`: the engine's full job ads when it has them."""
    engine = getattr(runtime, "feed", None)
    has_full = _has_query(runtime) or any(hasattr(o, "job_ad") for o in (runtime, engine)) or hasattr(
        getattr(engine, "queue", None), "get")
    if not has_full:
        return row_ad
    return FullAds(runtime)


# ------------------------------------------------------------------------------------------
# routing-table lint for the editor


@dataclass
class WhatIf:
    """The editor's what-if: the idle, not yet routed jobs through the current and the edited
    table, compared by :func:`engine.router.compare.compare_tables` (the migration check's
    comparison: one polling cycle of a fresh router per table, so MaxJobs / MaxIdleJobs fill up
    as jobs are assigned, htcondor.md §1.4). ``before``/``after``: jobs each route takes under each
    table; ``moved``: jobs that change route; ``attributes``: attribute → jobs (routed by both
    tables) whose routed ad gets another value of it; ``ad_changed``: jobs that keep their route
    but get a different routed ad."""

    before: dict[str, int]
    after: dict[str, int]
    moved: int
    considered: int
    candidates: int
    approximate: bool  # True when only the row's attributes were available, not the full ad
    attributes: dict[str, int] = field(default_factory=dict)
    ad_changed: int = 0
    moves: dict = field(default_factory=dict)  # (old route, new route) → jobs, as Comparison.route_moves
    comparison: Any = None  # the engine.router.compare.Comparison


@dataclass
class LintResult:
    diagnostics: list  # engine.contract.snapshot.Diagnostic
    route_names: list[str] | None  # the edited table's routes in match order, when the router could load it
    table: Any = None
    what_if: WhatIf | None = None


def _diag(level: str, message: str, file: str | None = None, line: int | None = None):
    return Diagnostic(level, message, file, line)


def _as_diag(d: Any, default_file: str):
    if isinstance(d, Diagnostic):
        return d
    level = str(_first_attr(d, ("level", "severity"), "warning"))
    message = str(_first_attr(d, ("message", "text"), d))
    return Diagnostic(level, message, _first_attr(d, ("file",), default_file), _first_attr(d, ("line",)))


def load_table(cfg: Any):
    """The router's routing table of ``cfg`` (:func:`engine.router.loader.load_routing_table`)."""
    return load_routing_table(cfg)


def table_route_names(table: Any) -> list[str] | None:
    routes = _first_attr(table, ("routes", "enabled_routes"))
    if routes is None:
        return None
    if isinstance(routes, dict):
        routes = list(routes.values())
    return [str(_first_attr(r, ("name",), r)) for r in routes]


WHAT_IF_LIMIT = 500  # jobs the what-if routes: the dry run explains each job (about 0.75 ms per job and
# table on this machine: 2,000 jobs through two tables took 3.0 s), and it runs while the operator types


def _no_ad(row: JobRow) -> None:
    return None


def what_if(old_table: Any, new_table: Any, snap: Any, runtime: Any = None, limit: int = WHAT_IF_LIMIT) -> WhatIf:
    """Route the idle, not-yet-routed jobs of the current queue (the first ``limit``) through
    both tables with :func:`engine.router.compare.compare_tables` (hooks withheld: nothing runs)."""
    if old_table is None:  # before fetching any ad from the engine thread
        raise ValueError("the what-if needs the current routing table")
    idle = JobStatus.IDLE
    rows = [r for r in snap.jobs if r.status == idle and r.kind != "routed" and not r.routed_to]
    approximate = False
    full = full_ads_of(runtime) if runtime is not None else row_ad
    ads: list[dict[str, str]] = []
    for row, texts in _ads_in_batches(rows[:limit], full if full is not row_ad else _no_ad):
        if not texts:
            texts, approximate = row_ad(row), True
        ads.append(dict(texts))
    cmp = compare_tables(old_table, new_table, ads, now=snap.time)
    per_route = cmp.per_route()
    before = {name: row["old"] for name, row in per_route.items() if row["old"]}
    after = {name: row["new"] for name, row in per_route.items() if row["new"]}
    return WhatIf(before, after, sum(j.route_changed for j in cmp.jobs), min(len(rows), limit), len(rows),
                  approximate, dict(cmp.attribute_changes()),
                  sum(bool(j.changed) and not j.route_changed for j in cmp.jobs), cmp.route_moves(), cmp)


def load_config(text: str, path: str, files: tuple[str, ...] = ()) -> Any:
    """The configuration the engine would load from ``files``, with ``path``'s text replaced by
    ``text`` (the editor's buffer), so a route file is linted with the macros and
    ``JOB_ROUTER_ROUTE_NAMES`` of the files around it. Falls back to the text alone."""
    real = os.path.realpath(path)
    if not files or real not in {os.path.realpath(f) for f in files} or not hasattr(Config, "_decode"):
        return Config.from_text(text, name=path, follow_locals=False)

    class EditedConfig(Config):
        def _decode(self, data: bytes, filename: str) -> str:  # the reader's one hook for file text
            if os.path.realpath(filename) == real:
                return text
            return super()._decode(data, filename)

    return EditedConfig.load(files, env={})


def lint_config(text: str, path: str, snap: Any = None, *, runtime: Any = None,
                base_text: str | None = None) -> LintResult:
    """Parse errors (file:line) and router lints of an edited config text, plus the one lint only
    the UI can make: a route removed while it still has jobs (its jobs would be orphaned)."""
    files = tuple(getattr(snap, "config_files", ()) or ())
    cfg = load_config(text, path, files)
    diags = [_diag("error", e.message, e.file, e.line) for e in cfg.errors]
    diags += [_diag("warning", e.message, e.file, e.line) for e in cfg.warnings]
    names = table = None
    try:
        table = load_table(cfg)
    except LookupError as exc:
        diags.append(_diag("info", str(exc)))
    except Exception as exc:  # noqa: BLE001 - a table that does not load is an error to show
        line = getattr(exc, "line", None)
        diags.append(_diag("error", str(getattr(exc, "message", exc)), getattr(exc, "file", path), line))
    if table is not None:
        diags += [_as_diag(d, path) for d in _first_attr(table, ("diagnostics",), ()) or ()]
        names = table_route_names(table)
    if names is not None and snap is not None:
        for r in snap.routes:
            if r.name not in names and r.routed > 0:
                diags.append(_diag("warning", f"route {r.name} is removed but still has {r.routed} routed jobs; "
                                   "they stay tracked under a route that no longer exists", path, None))
    result = LintResult(diags, names, table)
    if table is not None and snap is not None and base_text is not None:
        try:
            old = load_table(load_config(base_text, path, files))
            result.what_if = what_if(old, table, snap, runtime)
        except Exception as exc:  # noqa: BLE001 - the what-if is advice; its failure is shown, not raised
            diags.append(_diag("info", f"what-if unavailable: {type(exc).__name__}: {exc}"))
    return result


# ------------------------------------------------------------------------------------------
# transform tracer (issue 13 item 1): the routed ad built step by step, for the TUI and the CLI


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


def _engine_table(engine: Any) -> Any:
    for owner in (engine, getattr(engine, "router", None)):
        table = getattr(owner, "table", None)
        if table is not None and hasattr(table, "routes") and hasattr(table, "route"):
            return table
    return None


def trace_job(runtime: Any, job: str, now: float, config_files: Iterable[str] = ()) -> TraceResult:
    """The routed ad of ``job`` built statement by statement, with the routing table the engine
    runs (demo) or, when the engine has none (replay, watch), the table of ``config_files`` (the
    snapshot's). A routed copy is traced from its source job on its route; a source job the
    router already routed is traced on the route it took (the decision is not retaken); any other
    job goes through one dry-run routing attempt (:func:`engine.router.dryrun.route_jobs`,
    hooks withheld). Raises LookupError for an unknown job or when no routing table is known."""
    def fetch(engine: Any, key: str) -> tuple[Any, dict[str, str] | None]:
        return _engine_table(engine), _engine_ad(engine, key)

    def read(key: str) -> tuple[Any, dict[str, str] | None]:
        if _has_query(runtime):
            return runtime.query(lambda engine: fetch(engine, key), timeout=QUERY_TIMEOUT)
        engine = getattr(runtime, "feed", None)
        table = _engine_table(engine) if engine is not None else None
        owner = engine if engine is not None else runtime
        return table, (_engine_ad(owner, key) or _engine_ad(runtime, key))

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
        table = load_routing_table(Config.load(list(files)))
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
