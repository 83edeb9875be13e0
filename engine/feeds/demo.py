"""The demo engine: config + routing table + job queue (with its log) + router + embedded schedd
+ simulated sites + workload, steppable deterministically.

Design decisions and invariants:

- :meth:`Simulation.step` ``(now)`` does everything due up to ``now`` in time order, each action at
  its own scheduled time (site events at theirs, router polls every ``JOB_ROUTER_POLLING_PERIOD``
  of engine time, the schedd's cycle on the same ticks). The outcome therefore does not depend on
  how the caller slices time: ``step(t0+600)`` once or sixty times ``step(+10)`` give the same
  queue. That is what makes the golden test and a maximum-speed run meaningful.
- Order inside one tick: arrivals (condor_submit), site reports (status flowing back), the
  schedd's crondor pass and periodic policy, the router's poll, dispatch of idle grid and local
  jobs to sites, and jobs leaving the queue (history). Commands from the UI are applied between
  ticks at the time they arrive.
- Randomness: only ``random.Random`` instances seeded from ``seed`` (sites, arrivals).
- The queue is the foundation's ``JobQueue`` with its log writer attached, so every schedd and
  router transaction is a durable commit in ``<state_dir>/job_queue.log``; the history file is
  ``<state_dir>/history``. Restarting on an existing state directory reloads the log; jobs whose
  site run was lost with the old process go back to Idle (the schedd's restart rule for jobs
  without a shadow) and the router adopts its routed copies from their attributes (htcondor.md
  §1.7), so no job is lost or routed twice.
- Events go to two bounded rings numbered from one sequence: per-job facts (``job-*``,
  ``routing-failed``, …) and the notable rest (throttles, config reloads, hook failures). A burst
  of job events at maximum speed cannot push a notable event out before a snapshot carries it;
  ``events`` is both, merged by sequence number.
- No clock is read here; :mod:`engine.runtime` drives ``step`` from a clock.
- A write that fails (full disk, read-only state directory: ``OSError`` or the writer's
  ``QueueLogError``) stalls the engine instead of crashing it: the schedd would EXCEPT there and
  be restarted, so the engine stops where it is (``write_error`` says why, an error event
  ``queue-log-write-failed`` is emitted; the runtime shows ``engine_state == "stalled"``) and
  every later ``step`` first tries the schedd's restart — ``build_demo`` on the same state
  directory (the log's last committed transaction, a torn tail discarded and the log rotated,
  lost site runs back to Idle, routed copies adopted) — and carries on from there once it
  succeeds. Nothing is written while stalled; the event rings survive the restart.
  ``write_fault`` (:class:`WriteFault`) says the same for a program: the file, the ``errno`` and
  the virtual time of the failure (a headless run reports it and exits 1, engine.cli.demo).
- The execute side (``engine.feeds.demo_execute``): ``DAEMON_LIST`` naming ``STARTD`` gives the
  demo an embedded startd (``startd``; None otherwise) stepped at the Simulation's event times on
  the virtual clock; a ``startd = true`` site's copies really run on it; ``SCHEDD_CRON_*`` output
  is merged into the schedd ad (:meth:`Simulation.schedd_ad`). Hook and job programs run here
  because this is the demo (product.md §4).
- The demo runs on a copy of its config (:func:`stage_config`), but every message names the
  user's files (issue 25 item 8a: the copy of a run without ``--state-dir`` is deleted at the
  end): :class:`CopyNames` maps a copy back to its source in the start-up error, the events
  (diagnostics, hook path checks, failures), the snapshot's diagnostics and hook rows — for a
  config copy only while it holds the same bytes as its source (once edited in the demo, its
  lines are the copy's own, and the copy is named). The route locations the editor opens stay
  the copy's: edits go there.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

from engine.contract.feed import NOT_OFFERED, FeedBase, Unavailable, WhyNot
from engine.classad import is_valid_expr
from engine.contract import commands as C
from engine.contract import snapshot as S
from engine.contract.codes import JobStatus
from engine.lang.config import Config
from engine.queue.jobqueue import JobQueue
from engine.queue.writer import QueueLogError
from engine.schedd.cron import CronKeeper
from engine.schedd.history import HistoryWriter
from engine.lang.user_policy import SystemPolicy
from engine.schedd.queue_store import QueueStore
from engine.queue.records import job_order
from engine.schedd.schedd import Schedd, ScheddEvent
from engine.schedd.sites import SiteSet, SiteSpec
from engine.schedd.workload import Arrivals, Workload, load_workload
from engine.execute import hooks as hk
from engine.execute.daemon_cron import SCHEDD_CRON, CronManager
from engine.execute.startd import Startd
from engine.feeds.demo_execute import StartdSite, schedd_ad
from engine.feeds.demo_files import (
    DEFAULT_CONFIG_DIR, DemoError, DemoFiles, CopyNames, load_sites, stage_config,
)
from engine.views.build import build_snapshot, settle
from engine.views.rows import EVENT_RING, EventRing
from engine.router.loader import load_config_and_table, load_routing_table

# faster than real time the log's fdatasyncs are grouped: at most one per 50 ms of wall time, and
# always before a commit's effect leaves the log (issue 30; htcondor.md §3.2)
GROUP_SYNC = 0.05
DEMO_START = 1795219200  # 2026-11-21 00:00:00 UTC: a fixed virtual start for reproducible runs


@dataclass(frozen=True)
class WriteFault:
    """A failed write of the state directory (module docstring): the file, the OSError's errno
    (None for the writer's own QueueLogError), its text, and the virtual time it happened."""

    path: str
    errno: int | None
    why: str
    time: float


# what the views keep on the engine (engine.views.build.settle): the running engine's own, never
# a restart's fresh engine's (it has none: _assemble does not settle)
_OWN_VIEWS = frozenset({"row_index", "hook_index", "_unrouted_kept", "settled"})


class Simulation(FeedBase):
    """Everything the demo simulates, advanced by :meth:`step` (an ``engine.contract.feed.FeedBase``)."""

    controls = frozenset({"pause", "speed", "step", "jobs", "routes"})

    # step(t) once or step(t1), step(t) give the same state (module docstring): the runtime may
    # step it action by action to stay responsive to stop()
    sliceable = True

    def __init__(self, *, queue: JobQueue, schedd: Schedd, sites: SiteSet, arrivals: Arrivals,
                 router: Any, table: Any, config: Config, start: float, seed: int,
                 state_dir: Path | None, config_files: tuple[str, ...], writer: Any = None,
                 tz: str = "UTC", poll_period: int = 10, startd: Startd | None = None,
                 execute: StartdSite | None = None, schedd_cron: CronManager | None = None,
                 names: CopyNames = CopyNames(), collect_events: bool = True) -> None:
        self.queue = queue
        # False: a run nobody watches (``replay --reroute``) drops the events instead of turning
        # them into the snapshots' events; the ring stays empty
        self.collect_events = collect_events
        self.names = names  # the staged copies' sources: messages name the user's files (module docstring)
        self.schedd = schedd
        self.store = schedd.store
        self.sites = sites
        self.arrivals = arrivals
        self.router = router
        self.table = table
        self.config = config
        self.start = float(start)
        self.now = float(start)
        self.seed = seed
        self.state_dir = state_dir
        self.config_files = config_files
        self.writer = writer
        self.tz = tz
        self.poll_period = poll_period
        self.startd = startd  # the embedded execute node (module docstring), None when not declared
        self.execute = execute  # its startd = true site, None without one
        self.schedd_cron = schedd_cron  # SCHEDD_CRON_* jobs feeding schedd_ad(), None without any
        # The first router poll / schedd cycle comes half a polling period after the start, so
        # the router's 600 s windows do not close exactly on round snapshot times (a snapshot at
        # a window's close would always show freshly reset "recent" counters).
        self.next_tick = float(start) + poll_period / 2
        # Two bounded rings numbered from one sequence: a burst of job events never pushes a
        # throttle or config event out before a snapshot carries it (the UI toasts those).
        self.ring = EventRing()
        self.ticks = 0
        self.jobs_version = 0
        self.submitted = 0
        self.write_error: str | None = None  # set while stalled on a failed write (module docstring)
        self.write_fault: WriteFault | None = None  # the same, for a program
        self.rebuild: Any = None  # () -> a fresh Engine from the state directory (build_demo sets it)
        schedd.on_event = self._schedd_event
        self._unsubscribe = queue.subscribe_batch(self._queue_changed)

    # ---------------------------------------------------------------------------- events

    def _queue_changed(self, events: list[Any]) -> None:
        self.jobs_version += len(events)  # one step per change event, as when told one at a time

    @property
    def events(self) -> tuple[S.Event, ...]:
        """Both rings, oldest first (by sequence number)."""
        return self.ring.recent(EVENT_RING)

    def emit(self, time: float, kind: str, message: str, level: str = "info", route: str | None = None,
             job: str | None = None) -> None:
        if self.collect_events:
            self.ring.emit(time, kind, self.names.text(message), level, route, job)

    def _schedd_event(self, e: ScheddEvent) -> None:
        self.emit(e.time, e.kind, e.message, e.level, job=e.job)

    def _drain_router(self) -> None:
        if self.router is None:
            return
        drained = self.router.drain_events()
        if not self.collect_events:
            return
        for e in drained:
            ev = e.to_snapshot_event(self.ring.next_seq())
            shown = self.names.text(ev.message)
            self.ring.record(ev if shown == ev.message else dataclasses.replace(ev, message=shown))

    # ---------------------------------------------------------------------------- time

    def next_time(self) -> float:
        """When something next happens (never later than the next tick)."""
        t = self.next_tick
        cron = self.schedd_cron.next_time() if self.schedd_cron is not None else None
        for other in (self.arrivals.next_time(), self.sites.next_time(), cron):
            if other is not None and other < t:
                t = other
        return max(t, self.now)

    def step(self, now: float) -> None:
        """Advance to ``now``, doing every due action at its own time (nothing while stalled on a
        failed write and the restart does not succeed yet)."""
        if self.write_error is not None and not self._restart():
            return
        try:
            while True:
                t = self.next_time()
                if t > now:
                    break
                self._advance(t)
        except (OSError, QueueLogError) as exc:
            self._stall(exc)
            return
        if now > self.now:
            self.now = now

    # ---------------------------------------------------------------------------- durability

    def sync_log(self, speed: float | str, monotonic: Callable[[], float]) -> None:
        """The runtime's call before it publishes a snapshot (issue 30): the log's syncs follow the
        speed (at real time each durable commit is synced, as the schedd does; faster, they are
        grouped, at most one per ``GROUP_SYNC`` seconds of ``monotonic`` time), then what is pending
        is synced so no snapshot shows a commit that is not on disk."""
        w = self.writer
        if w is None or not hasattr(w, "set_grouping") or self.write_error is not None:
            return
        w.monotonic = monotonic
        grouped = not isinstance(speed, (int, float)) or speed > 1
        try:
            w.set_grouping(GROUP_SYNC if grouped else None)
            w.barrier()
        except OSError as exc:
            self._stall(exc)

    # ---------------------------------------------------------------------------- write faults

    def _stall(self, exc: BaseException) -> None:
        why = getattr(exc, "strerror", None) or str(exc)
        where = getattr(exc, "filename", None) or (self.state_dir / "job_queue.log" if self.state_dir else "the log")
        self.write_error = (f"{where}: cannot write ({why}); the engine stopped writing at the last committed "
                            f"transaction and retries")
        self.write_fault = WriteFault(str(where), getattr(exc, "errno", None), why, self.now)
        if self.writer is not None and hasattr(self.writer, "abandon"):
            self.writer.abandon()
        self.emit(self.now, "queue-log-write-failed", self.write_error, "error")

    def _restart(self) -> bool:
        """The schedd's restart on the same state directory; True once it succeeded."""
        if self.rebuild is None:
            return False
        try:
            fresh = self.rebuild()
        except (OSError, QueueLogError, DemoError):
            return False
        fresh._unsubscribe()
        if self.router is not None:
            self.router.close()
        self._stop_jobs()  # the old startd's processes die with the old schedd's shadows
        kept = {k: getattr(self, k) for k in ("ring", "ticks", "submitted",
                                               "rebuild")}
        version = self.jobs_version + 1
        for name in ("row_index", "_unrouted_kept"):
            self.__dict__.pop(name, None)  # the views' job table follows the new queue
        for name, value in vars(fresh).items():
            if name not in kept and name not in _OWN_VIEWS:  # fresh's views read fresh, not self
                setattr(self, name, value)
        self.jobs_version = version
        self.schedd.on_event = self._schedd_event
        self._unsubscribe = self.queue.subscribe_batch(self._queue_changed)
        self.write_error = self.write_fault = None
        for e in fresh.events:  # the restart's own events (resumed at, diagnostics)
            self.emit(e.time, e.kind, e.message, e.level, e.route, e.job)
        self.emit(self.now, "queue-log-writable", "the job queue log can be written again; the engine resumed "
                                                  "from its last committed transaction", "warning")
        return True

    def run_until(self, end: float) -> None:
        self.step(end)

    def _advance(self, t: float) -> None:
        self.now = t
        for template, procs in self.arrivals.due(t):
            self.schedd.submit(template, procs, t)
            self.submitted += procs
        reports = self.sites.advance(t)
        if reports:
            self.schedd.apply_reports(reports, t)
        if self.execute is not None:
            self.execute.apply(self.schedd, t)
        if self.schedd_cron is not None:
            self.schedd_cron.step(t)
        if t >= self.next_tick:
            self.ticks += 1
            self.next_tick = t + self.poll_period
            self.schedd.cron_cycle(t)
            self.schedd.periodic(t)
            if self.router is not None:
                self.router.poll(t)
                self._drain_router()
            self.schedd.dispatch(t)
            self.schedd.reap(t)

    # ---------------------------------------------------------------------------- commands

    def handle(self, command: Any) -> str | None:
        """Apply a job or table command at ``self.now``; returns an error text or None."""
        now = self.now
        if isinstance(command, C.HoldJob):
            ok = self.schedd.hold(command.job, now, command.reason)
        elif isinstance(command, C.ReleaseJob):
            ok = self.schedd.release(command.job, now)
        elif isinstance(command, C.RemoveJob):
            ok = self.schedd.remove(command.job, now, command.reason)
        elif isinstance(command, C.EditJob):
            if "\n" in command.value or not is_valid_expr(command.value):
                return f"EditJob: {command.name} = {command.value!r} is not a valid expression"
            ok = self.schedd.qedit(command.job, command.name, command.value, now)
        elif isinstance(command, C.ApplyRoutes):
            return self.apply_routes(command.config_files, command.reason)
        else:
            return f"unknown command {type(command).__name__}"
        if not ok:
            return f"{type(command).__name__}: job {command.job} is not in a state for that"
        return None

    def apply_routes(self, files: tuple[str, ...], reason: str = "applied") -> str | None:
        self.names = self.names.refreshed()  # an edited copy is named as itself from now on
        error = self._apply_routes(files, reason)
        return self.names.text(error) if error else error

    def _apply_routes(self, files: tuple[str, ...], reason: str) -> str | None:
        try:
            loaded = load_config_and_table(files, env={}, previous=self.table)
        except Exception as exc:  # noqa: BLE001 - refused, not fatal; the config reader names file and line
            return str(exc)
        config, table = loaded.config, loaded.table
        if config.errors:  # refused whatever the router makes of the rest (a line like `foo bar`)
            return "; ".join(str(e) for e in config.errors)
        if table.kept_previous:
            return "; ".join(str(d) for d in table.errors) or "the new table has errors"
        self.table, self.config = table, config
        self.config_files = tuple(str(f) for f in files)
        if self.router is not None:
            self.router.set_table(table, self.now)
            self._drain_router()
        self.schedd.system_policy = system_policy(config)
        if self.schedd.cron is not None:
            self.schedd.cron.reconfig()  # reconfig recomputes every idle cron job (htcondor.md §2.4)
        self.emit(self.now, "config-reloaded", f"routing table version {table.version} {reason}")
        return None

    # ---------------------------------------------------------------------------- views

    def advance(self) -> None:
        """Settle what :meth:`snapshot` shows at ``now`` (``engine.views.build.settle``: the queue's
        change events taken into the jobs table, new hook invocations numbered, the events kept);
        the runtime calls it before each snapshot, a program after stepping (issue 26)."""
        self.settled = settle(self)

    def snapshot(self, seq: int = 0, *, speed: float = 1.0, paused: bool = False,
                 engine_state: str = "running", clock: str = "virtual", jobs: tuple = (),
                 controls: frozenset[str] | None = None, error: str | None = None) -> S.Snapshot:
        """What the last :meth:`advance` settled, with the runtime's part: a read, which changes nothing."""
        return build_snapshot(self.settled, seq, speed=speed, paused=paused, engine_state=engine_state,
                              clock=clock, jobs=jobs, controls=controls, error=error)

    def why_not(self, job: str, now: float) -> WhyNot | None:
        """The router's decision for ``job``, step by step (``JobRouter.why_not``)."""
        return self.router.why_not(job, now).answer() if self.router is not None else None

    def ledger(self, now: float) -> list | None:
        """Every idle source job's ledger entry (``JobRouter.ledger``); None without a router."""
        return self.router.ledger(now) if self.router is not None else None

    def why_not_candidate(self, route: str | None, now: float) -> tuple[str, str] | None | Literal[
            Unavailable.NOT_OFFERED]:
        """The router's pick (``JobRouter.why_not_candidate``)."""
        return self.router.why_not_candidate(route, now) if self.router is not None else NOT_OFFERED

    def job_ad(self, job: str) -> dict[str, str]:
        """The queue's ad of ``job`` (cluster attributes overlaid by the proc's), empty when unknown."""
        j = self.queue.get(job)
        return j.attrs if j is not None else {}

    def deferral_time(self, job: str) -> int | None:
        """The schedd's in-memory DeferralTime of a crondor job (``engine.schedd.cron``)."""
        cron = self.schedd.cron
        return cron.deferral.get(job) if cron is not None else None

    @property
    def schedd_name(self) -> str:
        """The demo schedd's Name: its config's SCHEDD_NAME, else ``routedeck-demo``."""
        return self.config.get("SCHEDD_NAME") or "routedeck-demo"

    def schedd_ad(self) -> dict[str, str] | None:
        """The schedd ad the demo keeps when it has ``SCHEDD_CRON_*`` jobs: identity, job totals,
        then the cron jobs' attributes (``Scheduler::adlist_publish``); None without any."""
        if self.schedd_cron is None:
            return None
        name = self.schedd_name
        return schedd_ad(name, self.store.counts(), self.schedd_cron.schedd_attrs(), self.now)

    def _stop_jobs(self) -> None:
        """Kill the embedded startd's running jobs (JOB_EXIT with ``remove``)."""
        if self.startd is None:
            return
        for slot in self.startd.slots:
            if slot.claim is not None and slot.claim.starter is not None:
                slot.claim.starter.evict(self.now, "remove")
                slot.claim.starter = None

    def close(self) -> None:
        self._stop_jobs()  # no job process outlives the demo
        if self.writer is not None and hasattr(self.writer, "close"):
            self.writer.close()


def system_policy(config: Config) -> SystemPolicy:
    return SystemPolicy.from_knobs(lambda name: config.get(name))


def _template_index(workload: Workload) -> dict[str, Any]:
    return {t.name: t for t in workload.jobs + workload.cron}


def build_demo(config_dir: str | Path | None = None, seed: int = 1, state_dir: str | Path | None = None,
               speed: float = 1.0, *, start: float = DEMO_START, classad_routes: bool = False,
               with_router: bool = True, durable: bool = True, stage: bool = True) -> Simulation:
    """Assemble the demo from ``config_dir`` (default: ``sample_configs/demo``).

    ``state_dir`` holds ``job_queue.log`` and ``history``; when the log exists the demo resumes
    from it. ``speed`` is accepted for the TUI's convenience (the runtime's clock owns it).
    ``durable=False`` skips the fsync per commit (benchmarks; the log says ``NONDURABLE``).
    """
    engine = _assemble(config_dir, seed, state_dir, speed, start=start, classad_routes=classad_routes,
                       with_router=with_router, durable=durable, stage=stage)
    engine.advance()  # what the first snapshot shows: the start-up's events, the jobs resumed (issue 26)
    return engine


def _assemble(config_dir: str | Path | None, seed: int, state_dir: str | Path | None, speed: float, *,
              start: float, classad_routes: bool, with_router: bool, durable: bool, stage: bool) -> Simulation:
    """:func:`build_demo` without the first settle (a restart's fresh engine lends its parts to
    the running one, whose views stay its own)."""
    files, scratch = DemoFiles.in_dir(config_dir or DEFAULT_CONFIG_DIR, classad_routes), None
    if stage:  # False: the config is read where it is (tests that show its file:line locations)
        files, scratch = stage_config(files, state_dir)
    try:
        return _build(files, scratch, config_dir, seed, state_dir, speed, start, classad_routes, with_router, durable)
    except DemoError as exc:  # names the user's files, not the copies (module docstring)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        raise DemoError(files.names.text(str(exc))) from None


def _wire_barrier(engine: Simulation, writer: Any) -> None:
    """Before a commit's effect leaves the log (a hook or a job's program starting, a history
    line) the log's pending grouped sync runs (issue 30)."""
    barrier = getattr(writer, "barrier", None)
    if barrier is None:
        return
    if engine.schedd.history is not None:
        engine.schedd.history.barrier = barrier
    if engine.router is not None:
        engine.router.hooks.barrier = barrier
    for part in (engine.startd, engine.schedd_cron):
        runner = getattr(part, "runner", None)
        if runner is not None:
            runner.barrier = barrier


def _build(files: DemoFiles, scratch: Path | None, config_dir: str | Path | None, seed: int,
           state_dir: str | Path | None, speed: float, start: float, classad_routes: bool, with_router: bool,
           durable: bool) -> Simulation:
    from engine.feeds.demo_state import open_state  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    try:
        config = Config.load(files.config_paths(), env={})
    except Exception as exc:  # noqa: BLE001 - any config failure becomes the demo's one usage error
        raise DemoError(str(exc)) from None
    if getattr(config, "errors", None):
        raise DemoError("; ".join(str(e) for e in config.errors))
    workload = load_workload(files.workload)
    specs = load_sites(files.sites)
    queue, writer, resumed_at, history_path = open_state(state_dir, start, durable)
    now = float(resumed_at if resumed_at is not None else start)
    sites = SiteSet(specs, seed=seed)
    store = QueueStore(queue)
    schedd = Schedd(store, sites, HistoryWriter(history_path) if history_path else None,
                    system_policy(config), schedd_interval=config.get_int("SCHEDD_INTERVAL", 300),
                    cron=CronKeeper(zone="UTC"))
    arrivals = Arrivals(workload, seed, start)
    startd, execute, schedd_cron, exec_scratch = _execute_node(config, files, specs, sites, store, state_dir)
    table = router = None
    if resumed_at is not None:
        arrivals.due(now)  # what arrived before the restart is in the log already (or was lost with it)
        _resume(schedd, workload, now)
    if with_router:
        # `routedeck --help` imports this module (through engine.cli.demo): the router's ten modules, open_state's
        # and the follower's (watch.py) would add about 230 ms to it on a loaded 2-core machine
        from engine.router.router import JobRouter  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

        table = load_routing_table(config)
        # the demo is allowed to run hook programs (product.md §4); nothing else is by default
        router = JobRouter(table, queue, now=now, allow_hooks=True)
    engine = Simulation(queue=queue, schedd=schedd, sites=sites, arrivals=arrivals, router=router, table=table,
                    config=config, start=now, seed=seed,
                    state_dir=Path(state_dir) if state_dir else None,
                    config_files=tuple(str(p) for p in files.config_paths()), writer=writer,
                    poll_period=config.get_int("JOB_ROUTER_POLLING_PERIOD", 10),
                    startd=startd, execute=execute, schedd_cron=schedd_cron, names=files.names)
    for d in (scratch, exec_scratch):
        if d is not None:  # no state directory: the config copy and the sandboxes go with the engine
            weakref.finalize(engine, shutil.rmtree, d, True)
    if schedd_cron is not None:
        for p in schedd_cron.problems:
            engine.emit(now, "config-diagnostic", str(p), "warning")
    if startd is not None:
        for p in startd.cron.problems:
            engine.emit(now, "config-diagnostic", str(p), "warning")
    if table is not None:
        for d in table.diagnostics:
            if d.level in ("error", "warning"):
                engine.emit(now, "config-diagnostic", str(d), d.level)
    if resumed_at is not None:
        engine.emit(now, "engine-resumed", f"resumed from the job queue log at {int(now)}")
    _wire_barrier(engine, writer)
    if state_dir is not None:
        engine.rebuild = lambda: _assemble(config_dir, seed, state_dir, speed, start=start,
                                           classad_routes=classad_routes, with_router=with_router,
                                           durable=durable, stage=True)
    return engine


def _execute_node(config: Config, files: DemoFiles, specs: list[SiteSpec], sites: SiteSet, store: QueueStore,
                  state_dir: str | Path | None) -> tuple[Startd | None, StartdSite | None, CronManager | None, Path | None]:
    """The embedded startd (``DAEMON_LIST`` names ``STARTD``), its ``startd = true`` site and the
    ``SCHEDD_CRON_*`` jobs; one HookRunner runs every hook (the demo may run programs)."""
    daemons = {d.upper() for d in (config.get("DAEMON_LIST") or "").replace(",", " ").split()}
    declared = [s for s in specs if s.startd]
    if len(declared) > 1:
        raise DemoError(f"{files.sites}: sites {', '.join(s.name for s in declared)} all say startd = true; "
                        f"the demo has one embedded startd")
    if declared and "STARTD" not in daemons:
        raise DemoError(f"{files.sites}: site {declared[0].name!r} has startd = true but DAEMON_LIST in "
                        f"{files.condor_config} does not name STARTD")
    runner = hk.HookRunner(config, allow_run=True)
    schedd_cron = CronManager(config, SCHEDD_CRON, runner)
    startd = execute = scratch = None
    if "STARTD" in daemons:
        if state_dir is None:
            scratch = Path(tempfile.mkdtemp(prefix="routedeck-demo-execute-"))
        startd = Startd(config, Path(state_dir) if state_dir is not None else scratch, allow_hooks=True,
                        runner=runner)
        if declared:
            execute = StartdSite(startd, declared[0].name, store.attrs)
            sites.attach(declared[0].name, execute)
    return startd, execute, (schedd_cron if schedd_cron.jobs else None), scratch


def _resume(schedd: Schedd, workload: Workload, now: float) -> None:
    """After a restart: rebuild per-job workload facts from ``WorkloadTemplate``, register cron
    jobs, and send jobs whose site runs died with the old process back to Idle."""
    templates = _template_index(workload)
    lost = []
    for job, attrs in sorted(schedd.store.policy_jobs(), key=lambda ja: job_order(ja[0])):
        schedd.job_entered(job, templates.get(attrs.get("WorkloadTemplate", "").strip('"')), now)
        if attrs.get("JobStatus") == JobStatus.RUNNING.text and attrs.get("Managed", "").strip('"') != "External":
            lost.append(job)
    if lost:
        with schedd.store.transaction(now) as tx:
            for job in lost:
                tx.set(job, "JobStatus", JobStatus.IDLE.text)
                tx.set(job, "EnteredCurrentStatus", str(int(now)))
