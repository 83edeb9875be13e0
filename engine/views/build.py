"""Snapshots of the demo engine (``engine.contract.snapshot`` contract): routes board, queue counts,
jobs table, crondor view, events.

Invariants: built only from the engine's committed state at ``engine.now``; the jobs table is
rebuilt only when the queue changed (``jobs_version``) and otherwise shared between snapshots;
everything returned is immutable. Settling and showing are apart (issue 26): :func:`settle` (the
demo's advance) takes the queue's change events into the jobs table and keeps what a snapshot
shows; :func:`build_snapshot` only reads it, so two snapshots in a row are equal and change nothing.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Iterable, Mapping, Protocol

from engine.classad_text import integer_of, string_of
from engine.contract import snapshot as S
from engine.rowseq import CHUNK, ChunkedRows, RowSeq
from engine.queue.jobqueue import JobAdded, JobChanged, JobRemoved, QueueReloaded
from engine.queue.job import schedd_status
from engine.schedd.cron import needs_cron
from engine.queue.records import job_order
from engine.views.rows import SNAPSHOT_JOB_EVENTS, cron_row, policy_states, queue_counts
from engine.views.snapshot import View, snapshot_of



class JobSource(Protocol):
    """What the jobs table (:class:`RowIndex`) is kept from: the demo's live queue and router
    (:class:`DemoJobs`) or a recorded queue (:class:`engine.views.recorded_rows.ReplayRows`)."""

    jobs_version: int  # changes whenever a job changed: the table is rebuilt only then

    def job_keys(self) -> Iterable[str]:
        """Every job's id ("c.p")."""

    def attrs(self, job: str) -> Mapping[str, str] | None:
        """The job's attribute texts (its cluster ad chained), None when it is gone."""

    def deferral(self, job: str) -> int | None:
        """The ``DeferralTime`` the schedd holds for it (htcondor.md §2.4: never in the log)."""

    def tracked_route(self, job: str) -> str | None:
        """The route a live router tracks a source job on (claimed, or retired to history); None
        without a live router."""


class DemoJobs:
    """The demo's queue, crondor and router as the jobs table's :class:`JobSource`."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    @property
    def jobs_version(self) -> int:
        return self.engine.jobs_version

    def job_keys(self) -> Iterable[str]:
        return self.engine.store.status

    def attrs(self, job: str) -> Mapping[str, str] | None:
        return self.engine.store.attrs(job)

    def deferral(self, job: str) -> int | None:
        cron = self.engine.schedd.cron
        return cron.deferral.get(job) if cron is not None else None

    def tracked_route(self, job: str) -> str | None:
        router = self.engine.router
        tracked = getattr(router, "jobs", {}).get(job) if router is not None else None
        return (tracked.route_name or tracked.last_route or None) if tracked is not None else None


def source_route(source: JobSource, job: str, routed_to: str | None) -> str | None:
    """A source job's route (``JobRow.route`` contract): the ``RouteName`` of the copy its
    ``RoutedToJobId`` points to, else the route the router tracks it on (claimed, copy not yet
    recorded in the source; or retired, copy gone to history)."""
    if routed_to:
        copy = source.attrs(routed_to)
        name = string_of(copy.get("RouteName")) if copy is not None else None
        if name is not None:
            return name
    return source.tracked_route(job)


def row_status(a: Mapping[str, str]) -> int:
    """A job row's ``status`` from its ad (``JobRow.status``)."""
    return schedd_status(integer_of(a.get("JobStatus")), integer_of(a.get("InitialJobStatus")))


def _row(source: JobSource, job: str) -> S.JobRow | None:
    a = source.attrs(job)
    if a is None:
        return None
    routed_from = string_of(a.get("RoutedFromJobId"))
    routed_to = string_of(a.get("RoutedToJobId"))
    managed = string_of(a.get("Managed"))
    kind = "routed" if routed_from else ("source" if routed_to or managed == "External" else "plain")
    route = string_of(a.get("RouteName"))
    if kind == "source" and route is None:
        route = source_route(source, job, routed_to)
    return S.JobRow(
        job=job, status=row_status(a),
        owner=string_of(a.get("Owner")) or "",
        route=route,
        kind=kind, routed_to=routed_to, routed_from=routed_from, qdate=integer_of(a.get("QDate")),
        entered_status=integer_of(a.get("EnteredCurrentStatus")), cmd=string_of(a.get("Cmd")) or "",
        hold_reason=string_of(a.get("HoldReason")), deferral_time=source.deferral(job))


def row_order(row: S.JobRow) -> tuple[int, int]:
    """The jobs table's order (``job_order`` of the row's job): a ``RowSeq`` whose ``key`` is this
    function is in job id order, so a job is found in it by bisection (``RowSeq.first_at``)."""
    return job_order(row.job)


BULK = 32  # RowIndex.table: more than one change per BULK rows re-sorts instead of bisecting


class RowIndex:
    """The jobs table kept up to date from the queue's change events: only changed jobs are
    rebuilt, and jobs that come or go are put into / taken out of the table, kept in id order in
    chunks (:class:`engine.rowseq.ChunkedRows`), by bisection (a demo step adds and removes a few
    jobs; re-sorting 100,000 keys for them cost ~100 ms). A snapshot's table is a
    :class:`~engine.rowseq.RowSeq` that shares every chunk no change touched with the previous
    one, so a snapshot of 100,000 jobs costs what changed plus a reference per chunk — not a copy
    of 100,000 references (issue 14 item 2), nor 100,000 new rows, nor a lookup per row."""

    def __init__(self, source: JobSource, chunk: int = CHUNK) -> None:
        self.source = source
        self.rows: dict[str, S.JobRow] = {}
        self.dirty: set[str] = set()
        self.ordered = ChunkedRows(row_order, chunk)  # the rows of ``rows`` in job_order of their job
        self.status_counts: dict[int, int] = {}  # rows by JobRow.status
        self.full = True
        self.version = -1
        self.cached: RowSeq = self.ordered.freeze()

    def on_event(self, ev: Any) -> None:
        self.on_events((ev,))

    def on_events(self, events: Any) -> None:
        """:meth:`on_event` of each (a queue batch's events: ``JobQueue.subscribe_batch``)."""
        dirty = self.dirty
        for ev in events:
            if isinstance(ev, QueueReloaded):
                self.full = True
            elif isinstance(ev, (JobAdded, JobChanged, JobRemoved)):
                # a job that went is dirty too: its row is dropped in ``table`` (``_row`` gives None), where
                # many changes at once (a replay seek) re-sort the rows once instead of bisecting per job
                dirty.add(f"{ev.id[0]}.{ev.id[1]}")

    def _count(self, status: int, n: int) -> None:
        left = self.status_counts.get(status, 0) + n
        if left:
            self.status_counts[status] = left
        else:
            del self.status_counts[status]

    def counted(self) -> dict[int, int]:
        """The rows by status the table holds, or would hold now: read from the source's ads
        when the table is behind it (a headless snapshot without its jobs builds no row)."""
        source = self.source
        if self.version == source.jobs_version and not self.full and not self.dirty:
            return self.status_counts
        counts: dict[int, int] = {}
        for key in source.job_keys():
            a = source.attrs(key)
            if a is not None:
                status = row_status(a)
                counts[status] = counts.get(status, 0) + 1
        return counts

    def table(self) -> RowSeq:
        source = self.source
        if self.version == source.jobs_version and not self.full:
            return self.cached
        rows = self.rows
        if self.full:  # every job, from nothing
            rows.clear()
            self.status_counts = {}
            self.dirty = set(source.job_keys())
            self.full = False
            bulk = True
        else:
            # many changes (a replay seek): update the rows, then sort them once — each bisected
            # insert or delete costs ~15 key calls and a copy of its chunk
            bulk = len(self.dirty) * BULK > len(rows)
        ordered = self.ordered
        for key in self.dirty:
            old = rows.pop(key, None)
            if old is not None:
                self._count(old.status, -1)
            row = _row(source, key)
            if row is not None:
                rows[key] = row
                self._count(row.status, 1)
            if bulk or (old is None and row is None):
                continue
            if row is None:
                ordered.remove(old)
            elif old is None:
                ordered.insert(row)
            else:
                ordered.replace(old, row)
        if bulk:
            ordered.reset([rows[k] for k in sorted(rows, key=job_order)])
        self.dirty = set()
        self.cached = ordered.freeze()
        self.version = source.jobs_version
        return self.cached


def job_rows(engine: Any) -> RowSeq:
    index = getattr(engine, "row_index", None)
    if index is None:
        index = engine.row_index = RowIndex(DemoJobs(engine))
        index.full = True
        engine.queue.subscribe_batch(index.on_events)
    return index.table()


def cron_views(engine: Any) -> tuple[S.CronView, ...]:
    """The crondor rows of the demo's schedd: its in-memory DeferralTimes (htcondor.md §2.4)."""
    keeper = engine.schedd.cron
    if keeper is None:
        return ()
    out = []
    status = engine.store.status
    # the store's index of possible cron jobs (QueueStore keeps it from queue events), so a
    # snapshot costs the cron jobs, not the queue (issue 14 item 2)
    for job, a in sorted(engine.store.cron_jobs(), key=lambda ja: job_order(ja[0])):
        st = status.get(job)
        if st not in (1, 2, 5) or not needs_cron(a):
            continue
        out.append(cron_row(job, a, status=st, deferral=keeper.deferral.get(job), now=engine.now, tz=engine.tz,
                            runs=keeper.view_runs, text=string_of, number=integer_of))
    return tuple(out)


def settle(engine: Any) -> tuple[View, Mapping[str, Any]]:
    """The demo's advance (``Simulation.advance``): take the queue's change events into the jobs
    table, number the new hook invocations, recount the unrouted jobs when due, and return the
    immutable view of this moment with the fields only the demo has. Everything a snapshot changed
    before issue 26 happens here; :func:`build_snapshot` only reads what it returns."""
    # the demo's execute node: imported by the demo, not by replay's jobs
    # table (RowIndex), which a new `routedeck replay DIR --at T --json` process imports (issue 27)
    from engine.views.execute import HookIndex, execute_views  # noqa: PLC0415 - the demo's, off replay's start-up

    routes: tuple = ()
    inactive: tuple = ()
    diags: tuple = ()
    table = engine.table
    if engine.router is not None:
        routes = engine.router.route_views(engine.now)
    names = getattr(engine, "names", None)  # the demo's staged copies: diagnostics name the user's files
    shown = (lambda text: engine.names.text(text)) if names is not None else (lambda text: text)
    if table is not None:
        diags = tuple(S.Diagnostic(d.level, shown(d.message), shown(d.file) if getattr(d, "file", None) else None,
                                   getattr(d, "line", None))
                      for d in table.diagnostics)
        inactive = tuple(
            S.RouteView(index=0, name=d.name, source_label=d.source_label, syntax="transform",
                        state="unlisted" if "not in JOB_ROUTER_ROUTE_NAMES" in d.reason else "disabled",
                        reason=d.reason, routed=0, idle=0, running=0, held=0, max_jobs=0, max_idle=0,
                        recent_started=0, recent_succeeded=0, recent_failed=0, failure_rate=0.0,
                        failure_threshold=0.0, throttle=None, window_start=0.0, next_reevaluation=0.0)
            for d in getattr(table, "disabled", ()))
    startd = engine.startd  # engine.contract.feed.FeedBase: None without an embedded execute node
    if startd is not None and getattr(engine, "hook_index", None) is None:
        engine.hook_index = HookIndex(shown)
    slots, hooks = execute_views(startd, getattr(engine, "hook_index", None))
    view = View(time=engine.now, routes=routes, queue_counts=queue_counts(engine.store.counts()),
                total_jobs=len(engine.store.status), jobs=job_rows(engine),
                jobs_version=engine.jobs_version, cron_jobs=cron_views(engine))
    return view, MappingProxyType(dict(
        tz=engine.tz, inactive_routes=inactive, events=engine.ring.recent(SNAPSHOT_JOB_EVENTS),
        table_version=getattr(table, "version", 0), config_files=engine.config_files,
        diagnostics=diags, routing_enabled=getattr(table, "routing_enabled", True),
        schedd_ad=_schedd_ad(engine), slots=slots, hooks=hooks, **_unrouted(engine),
        policies=policy_states(getattr(engine, "config", None))))


def build_snapshot(settled: tuple[View, Mapping[str, Any]], seq: int, *, speed: float, paused: bool,
                   engine_state: str, clock: str, jobs: tuple = (), controls: frozenset[str] | None = None,
                   error: str | None = None) -> S.Snapshot:
    """The demo's snapshot of what :func:`settle` returned, with the runtime's part: a read."""
    view, fields = settled
    return snapshot_of(
        view, seq=seq, mode="demo", clock=clock, speed=speed, paused=paused, engine_state=engine_state,
        error=error, controls=S.CONTROLS if controls is None else controls, **fields,
        **({"jobs": jobs} if jobs else {}))


def _unrouted(engine: Any) -> dict[str, Mapping]:
    """The snapshot's ``unrouted`` and ``held_soon`` (engine.router.unrouted.Tally), when the
    engine's ``count_unrouted`` is set (the demo with --metrics); recounted only after a router
    poll, a queue change or a new table when the table reads no clock and no hold is predicted,
    else at every advance (:func:`settle`)."""
    router = getattr(engine, "router", None)
    if router is None or not getattr(engine, "count_unrouted", False):
        return {}
    from engine.router.unrouted import idle_unrouted, kept_count  # noqa: PLC0415 - the demo's, off replay's start-up

    key = (getattr(engine, "jobs_version", 0), router.poll_count, id(router.table))
    return kept_count(engine, router, key, lambda: idle_unrouted(router, engine.now)).fields()


def _schedd_ad(engine: Any) -> Mapping[str, str] | None:
    """The demo's schedd ad (``Simulation.schedd_ad``: SCHEDD_CRON_* output), None without one."""
    ad = engine.schedd_ad()
    return MappingProxyType(ad) if ad is not None else None
