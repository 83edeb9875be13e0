"""Watch mode: follow a live schedd's ``job_queue.log`` and show it as the routes board sees it.

Sources: product.md §2 ("watch"), §5; htcondor.md §3.5 (the router's follower rules), §3.4
(rotation), §1.5 (the JobRouterLog table). Design decisions and invariants:

- Inputs: the queue log path (``--queue-log``, else ``JOB_QUEUE_LOG``, else
  ``$(SPOOL)/job_queue.log`` of the HTCondor config); the routing table from the same config
  files (``CONDOR_CONFIG`` when no ``--config`` is given; ``LOCAL_CONFIG_DIR``/``_FILE`` as the
  config reader follows them); optionally the router's ``JobRouterLog``. Nothing is written
  anywhere: watch is read-only, and an edit target is only ever a file the admin names.
- The queue is the foundation's :class:`~engine.queue.jobqueue.JobQueue`, fed by its follower (the
  router's rules: records apply as read, a partial last line waits for the next poll, a new
  sequence number or a changed probe record means a bulk reload). Any queue event bumps
  ``version``; a snapshot is built only when asked, and only when something changed does
  :meth:`WatchEngine.poll` say so, so a headless printer prints each change once.
- RouteDeck's own figures per route come from the routed copies in the queue (the same
  :mod:`engine.views.recorded` code as replay); the real router's figures (throttle, recent
  started/succeeded/failed, its own submitted/idle counts) come from the last JobRouterLog
  table and are attached as ``RouteView.reported`` beside them; routes only the router log
  names are listed too.
- No clock is read here: ``now`` comes from the injected clock; no waiting happens here either
  (the caller waits on :mod:`engine.queue.filewatch` or polls).
- Watch has no speed: it is live. What it can say is how fast the log's own clock (its
  transactions' ``106 #`` times) advances against the injected clock — a log written by
  ``routedeck demo --speed 30`` runs at ×30 — measured by :class:`LogPace` from the transactions
  already read, and put in ``Snapshot.log_rate`` only when clearly not real time.
- An empty log (or one whose first record is still being written) is not an error: a live schedd
  may not have written yet. :attr:`WatchEngine.waiting` says so, and the commands show
  :data:`WAITING` instead of failing.
- A log read again from its start because it is a new generation (rotated, replaced, rewritten:
  the follower's ``PollResult.replaced``) drops the earlier file's problems — ``problems`` holds
  the current file's only — and says so in the events (``log-replaced``, a warning: news, toasted,
  not part of the new file's backlog). The engine owns the event ring the feed shows, so the
  headless ``--json`` snapshots carry it too.
"""

from __future__ import annotations

import dataclasses
import os
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Mapping

from engine.contract.feed import FeedBase
from engine.clock import Clock, LogClock
from engine.contract import commands as C
from engine.crondor.zones import get_zone
from engine.queue.records import is_proc_key, job_order
from engine.queue.jobqueue import QueueReloaded, JobQueue
from engine.queue.timeline import parse_comment_time
from engine.schedd.cron import CronNames, CronObserver, jobs_to_observe
from engine.views import recorded as views
from engine.views.rows import EventRing, policy_states
from engine.views.figures import DEFAULT_POLLING_PERIOD, LiveFigures, table_rules
from engine.lang.config import Config
from engine.router.loader import load_routing_table
from engine.router.routerlog import RouterLogFollower, RouterLogTable
from engine.router.throttle import THROTTLE_UPDATE_INTERVAL
from engine.contract.snapshot import ReportedRoute, RouteView, Snapshot
from engine.views.recorded_rows import ReplayRows
from types import MappingProxyType
from engine.router.throttle import RouteStats
from engine.router.unrouted import count_verdicts

DEFAULT_CONDOR_CONFIG = "/etc/condor/condor_config"


WAITING = "waiting for the first transaction (no complete record in the log yet)"


class WatchError(ValueError):
    pass


PACE_WINDOW = 20.0  # seconds of the injected clock the log's pace is measured over
PACE_MIN_SPAN = 5.0  # ... at least this many between two readings (a poll's latency is a second or less)
PACE_CLEAR = 1.5  # a pace within this factor of real time is real time: nothing to say


class LogPace:
    """How fast a watched log's clock advances: log seconds per second of the injected clock.

    ``saw(now, newest)`` is told, after each poll, the newest transaction time read so far and
    the clock's time. Only polls that read newer transactions count (an idle schedd writes
    nothing: that is not a log clock standing still), and a backlog read in one poll is a single
    reading (its hours of log time took no clock time to write). The pace is the log time between
    the oldest reading of the last ``PACE_WINDOW`` seconds and the newest, over the clock time
    between them; none while they are less than ``PACE_MIN_SPAN`` apart or the newest is older
    than the window (the log stopped: no pace to claim; when it resumes, the pace is measured
    afresh, not across the pause)."""

    def __init__(self) -> None:
        self.readings: deque[tuple[float, float]] = deque()  # (clock time, newest log time)

    def saw(self, now: float, newest: float | None) -> None:
        r = self.readings
        if newest is None or (r and newest <= r[-1][1]):
            return
        if r and now <= r[-1][0]:
            r[-1] = (r[-1][0], newest)  # more read at the same instant: one reading
        else:
            r.append((now, newest))
        while r[0][0] < now - PACE_WINDOW:
            r.popleft()  # only the window's readings: after a pause the log's pace starts again

    def rate(self, now: float) -> float | None:
        r = self.readings
        if len(r) < 2 or now - r[-1][0] > PACE_WINDOW:
            return None
        (t0, log0), (t1, log1) = r[0], r[-1]
        if t1 - t0 < PACE_MIN_SPAN:
            return None
        return (log1 - log0) / (t1 - t0)

    def shown(self, now: float) -> float | None:
        """The pace when it is clearly not real time (``PACE_CLEAR``), else None."""
        rate = self.rate(now)
        if rate is None or 1 / PACE_CLEAR <= rate <= PACE_CLEAR:
            return None
        return rate

    def reset(self) -> None:
        self.readings.clear()


@dataclass
class WatchSetup:
    """Everything watch needs, resolved from the command line and the HTCondor config."""

    queue_log: str
    config_files: tuple[str, ...] = ()
    limits: dict[str, tuple[int, int]] | None = None  # route name → (MaxJobs, MaxIdleJobs), table order
    rules: dict | None = None  # route name → engine.views.figures.RouteRule (failure threshold and test)
    polling_period: float = DEFAULT_POLLING_PERIOD  # JOB_ROUTER_POLLING_PERIOD
    router_log: str | None = None
    diagnostics: list[str] = field(default_factory=list)
    schedd_name: str | None = None  # the config's SCHEDD_NAME (the metrics' ``schedd`` label); None: unset
    table: Any = None  # the routing table of the config (engine.router.loader), None without a config


def condor_config_paths(explicit: list[str] | None, env: Mapping[str, str] | None = None) -> list[str]:
    """``--config`` files, else ``CONDOR_CONFIG`` (HTCondor's own rule), else the usual path."""
    if explicit:
        return list(explicit)
    env = os.environ if env is None else env
    path = env.get("CONDOR_CONFIG")
    if path and path.upper() != "ONLY_ENV" and path != os.devnull:  # /dev/null: "no config file"
        return [path]
    return [DEFAULT_CONDOR_CONFIG] if os.path.exists(DEFAULT_CONDOR_CONFIG) else []


def resolve(queue_log: str | None = None, config: list[str] | None = None, router_log: str | None = None,
            env: Mapping[str, str] | None = None) -> WatchSetup:
    """Find the queue log, the routing table's limits and the router log (module docstring)."""
    paths = condor_config_paths(config, env)
    diagnostics: list[str] = []
    limits = rules = table = None
    period = DEFAULT_POLLING_PERIOD
    cfg = None
    schedd_name = None
    if paths:
        cfg = Config.load(paths, env=env)
        diagnostics += [str(e) for e in cfg.errors]
        table = load_routing_table(cfg)
        # no routes in the config: the copies' routes are unknown, not all "unlisted"
        limits, rules, period = table_rules(table)
        limits, rules = limits or None, rules or None
        diagnostics += [str(d) for d in table.errors]
        schedd_name = _expanded(cfg, "SCHEDD_NAME")
    if queue_log is None:
        if cfg is None:
            raise WatchError("no queue log: give --queue-log, or --config / CONDOR_CONFIG for JOB_QUEUE_LOG or SPOOL")
        queue_log = _expanded(cfg, "JOB_QUEUE_LOG")
        if not queue_log:
            spool = _expanded(cfg, "SPOOL")
            if not spool:
                raise WatchError(f"neither JOB_QUEUE_LOG nor SPOOL is set in {', '.join(paths)}")
            queue_log = os.path.join(spool, "job_queue.log")
    return WatchSetup(queue_log=queue_log, config_files=tuple(paths), limits=limits, rules=rules,
                      polling_period=period, router_log=router_log, diagnostics=diagnostics,
                      schedd_name=schedd_name, table=table)


def _expanded(cfg: Any, name: str) -> str | None:
    try:
        value = cfg.get(name)
    except Exception as exc:  # a macro cycle or bad function: say which knob
        raise WatchError(f"{name}: {exc}") from exc
    return value.strip() if value and value.strip() else None


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


def queue_ads(queue: Any) -> Mapping[str, Mapping[str, str]]:
    """key → attribute texts of every ad of a JobQueue (the shape engine.views.recorded reads).

    The queue's own key → dict table (``JobQueue.table``) is read directly when it has one (it is only read, on the
    engine thread, between polls); otherwise one ``ad(key)`` per key."""
    ads = getattr(queue, "table", None)
    if isinstance(ads, dict):
        return ads
    return {k: queue.ad(k) for k in queue.keys()}


class WatchEngine:
    """One watched schedd. ``poll()`` reads what is new; ``snapshot()`` shows it."""

    def __init__(self, setup: WatchSetup, clock: Clock, *, follower: Any = None, tz: str = "UTC",
                 router_log_tz: str | None = None, collect_events: bool = True) -> None:
        self.setup = setup
        self.clock = clock if isinstance(clock, LogClock) else LogClock(clock)
        self.tz = tz
        self.queue = JobQueue() if follower is None else follower.queue
        self.follower = follower if follower is not None else make_follower(setup.queue_log, self.queue)
        self.version = 0
        # the jobs table is kept from the queue's change events (only changed jobs get a new row),
        # the same row index the demo and replay use
        self.rows = ReplayRows(queue_ads(self.queue))
        self.queue.subscribe(self._changed)
        # the router's figures and the schedd's crondor, rebuilt transaction by transaction
        # collect_events=False: nobody drains the router's events (headless watch): keep none
        self.collect_events = collect_events
        self.figures = LiveFigures(queue_ads(self.queue), setup.rules, setup.polling_period, collect_events)
        self.cron: CronObserver | None = None
        self._cron_names = CronNames(self.queue)  # how the queue spells the cron attributes
        self.route_order: list[str] = []  # recorded routes in the order first shown (stable rows)
        self.queue.transaction_hook = self
        self._reloaded = False
        self.router_log = RouterLogFollower(setup.router_log, router_log_tz) if setup.router_log else None
        self.problems: list[str] = []  # the current log generation's (module docstring)
        self.ring = EventRing()  # the events the snapshots carry (the feed adds the router's to it)
        self._notices: list[tuple[float, str, str, str]] = []  # said at the next publish()
        self.waiting = False  # the log was read but holds no complete record yet
        self._seen = -1
        self.newest: float | None = None  # the newest transaction time read (its ``106 #`` comment)
        self.pace = LogPace()
        self.generation = 0  # reads of the log from its start (rotated, replaced): backlog again

    # -- what the follower tells (engine.queue.jobqueue.TransactionHook) ---------------------
    def _time_of(self, end_line: str | None) -> float:
        t = parse_comment_time(end_line, self.tz) if end_line else None
        if t is None:
            return self.clock.now()
        self.clock.saw(t)
        if self.newest is None or t > self.newest:
            self.newest = t
        return t

    def _started(self, t: float) -> None:
        if self.figures.start is None or self.cron is None:
            # the log's CreationTimestamp when it is its first moment (a log followed from its
            # birth, as the demo's); a rotated log keeps an old one, then windows start now
            created = self.queue.created
            start = created if created is not None and 0 < created <= t <= created + THROTTLE_UPDATE_INTERVAL else t
            if self.figures.start is None:
                self.figures.begin(start)
            if self.cron is None:
                self.cron = CronObserver(get_zone(self.tz), start, self.setup.polling_period)

    def reloading(self) -> None:
        """The log is read again from its start: the figures and crondor are rebuilt from it."""
        self.figures = LiveFigures(queue_ads(self.queue), self.setup.rules, self.setup.polling_period,
                                   self.collect_events)
        self.cron = None
        self.generation += 1
        self.newest = None  # a new log generation (rotated, replaced): its own times
        self.pace.reset()  # and its backlog is one reading again

    def begin(self, end_line: str | None) -> None:
        """Before a transaction: the router polls and schedd cycles due before its time."""
        t = self._time_of(end_line)
        self._started(t)
        self.figures.close_until(t)
        self.cron.run_until(t, self._cron_ad)

    def commit(self, end_line: str, keys: set[str]) -> None:
        t = self._time_of(end_line)
        self._started(t)
        self.figures.ads = queue_ads(self.queue)  # a bulk load replaces the queue's table
        self.figures.commit(keys, time=t)
        for job in jobs_to_observe(keys, self.cron.seen, queue_ads(self.queue), self._cron_names()):
            self.cron.observe(job, self._cron_ad(job), t)

    def _cron_ad(self, job: str) -> dict[str, str] | None:
        j = self.queue.get(job)
        return j.attrs if j is not None else None

    def _after_reload(self) -> None:
        """After a bulk load: copies written outside any transaction (a compacted log's body) are
        tracked but not counted as started; cron jobs not seen in a transaction entered now."""
        now = self.clock.now()
        self._started(now)
        self.figures.ads = queue_ads(self.queue)
        self.figures.adopt()
        for job in sorted(filter(is_proc_key, self.figures.ads), key=job_order):
            if job not in self.cron.seen:
                self.cron.observe(job, self._cron_ad(job), now)

    def _changed(self, event: Any) -> None:
        if isinstance(event, QueueReloaded):
            self._reloaded = True
        self.version += 1
        self.rows.on_event(event)
        self.rows.jobs_version += 1

    def poll(self) -> bool:
        """Read new records (and router log lines); True when a new snapshot is worth building."""
        return self.after_poll(self.follower.poll())

    def after_poll(self, result: Any) -> bool:
        """What to do after one follower poll (also the ``on_poll`` of the foundation's watcher,
        which polls the follower itself): note its problems, read the router log, and say
        whether anything changed since the last time this returned True."""
        if self._reloaded:
            self._reloaded = False
            self._after_reload()
        self.pace.saw(self.clock.base.now(), self.newest)
        replaced = getattr(result, "replaced", None)
        if replaced:  # a new generation of the log: the old file's problems are not this one's
            self.problems.clear()
            self._notices.append((self.clock.now(), "log-replaced", f"{self.setup.queue_log}: the log was {replaced}; "
                                  "read again from its start, the earlier file's jobs and problems dropped", "warning"))
            self.version += 1
        for p in getattr(result, "problems", None) or ():
            self.problems.append(str(p))
        del self.problems[:-50]
        probe = getattr(result, "probe", None)
        if probe is not None:
            self.waiting = probe not in ("missing", "fatal") and getattr(self.follower, "next_offset", 1) == 0
        if self.router_log is not None and self.router_log.poll():
            self.version += 1
        changed = self.version != self._seen
        self._seen = self.version
        return changed

    def job_ad(self, job: str) -> dict[str, str]:
        j = self.queue.get(job)
        return j.attrs if j is not None else {}

    def publish(self) -> None:
        """Put the notices of the polls so far into the event ring (the feed calls it after it has
        marked a backlog as history, so a notice is news)."""
        for time, kind, message, level in self._notices:
            self.ring.emit(time, kind, message, level)
        self._notices.clear()

    def snapshot(self, seq: int = 0, with_jobs: bool = True) -> Snapshot:
        ads = queue_ads(self.queue)
        self.rows.rebind(ads)
        now = self.clock.now()
        figures = None
        if self.figures.start is None and self.queue.created is not None:
            self._started(now)  # no transaction yet: the router's windows begin with the log
        if self.figures.start is not None:
            self.figures.close_until(now)
            figures = self.figures.figures(now)
        if self.cron is not None:
            self.cron.run_until(now, self._cron_ad, inclusive=True)
        self.publish()
        snap = views.snapshot_of(
            ads, rows=self.rows, seq=seq, time=now, mode="watch", paused=False, events=self.ring.recent(),
            limits=self.setup.limits, jobs_version=self.version, with_jobs=with_jobs, tz=self.tz,
            readonly=True, config_files=self.setup.config_files, figures=figures,
            deferral=self.cron.deferral if self.cron is not None else None, route_order=self.route_order,
        )
        table = self.router_log.latest if self.router_log is not None else None
        return dataclasses.replace(snap, routes=merge_reported(snap.routes, table, self.figures.last_close),
                                   unrouted=self.unrouted(snap.routes, now),
                                   clock="virtual" if self.clock.on_log else "real",
                                   log_rate=self.pace.shown(self.clock.base.now()), log_lag=self.log_lag(),
                                   log_problems=len(self.problems), log_generation=self.generation,
                                   policies=policy_states(getattr(self.setup.table, "config", None)))

    count_unrouted = False  # set by --metrics: Snapshot.unrouted (routedeck_idle_unrouted_jobs)

    def unrouted(self, routes: tuple[RouteView, ...], now: float) -> Mapping[str, int] | None:
        """Idle source jobs by verdict (engine.router.unrouted) when ``count_unrouted`` is set and
        the config has a routing table: the table's routes judged with RouteDeck's own figures of
        the followed queue (``routes``: copies, recent starts, throttle), a source job the real
        router manages (``Managed = "External"``) left out. Recounted when the queue or a window
        changed, or at every snapshot when the table reads the clock."""
        table = self.setup.table
        if not self.count_unrouted or table is None or not table.routes:
            return None

        key = (self.version, self.generation, self.figures.last_close, id(table))
        kept = getattr(self, "_unrouted_kept", None)
        scanner = getattr(self, "_unrouted_scanner", None)
        if kept is not None and kept[0] == key and scanner is not None and scanner[1].time_free:
            return kept[1]
        views = {r.name.lower(): r for r in routes}

        def stats_of(name: str) -> RouteStats | None:
            r = views.get(name.lower())
            if r is None:
                return None
            return RouteStats(name=name, stats_begin_time=r.window_start, num_jobs=r.routed, num_running=r.running,
                              num_held=r.held, recent_routed=r.recent_started, recent_succeeded=r.recent_succeeded,
                              recent_failed=r.recent_failed, throttle=r.throttle or 0.0)

        def tracked(job: Any) -> bool:
            return (job.get("Managed") or "").strip() == '"External"'

        managed = sum(r.routed for r in routes)
        counts = MappingProxyType(count_verdicts(table, table.knobs.name, stats_of, self.queue, tracked, managed,
                                                 now, self))
        self._unrouted_kept = (key, counts)
        return counts

    def log_lag(self) -> float | None:
        """Seconds from the newest transaction time read to now on the wall (base) clock; None
        before any timestamped transaction. A schedd or recorder that stopped writing makes it grow
        (routedeck_log_lag_seconds, the stale-log alert); a log written in virtual time (a demo
        recording) lags or leads by its own clock's offset."""
        if self.newest is None:
            return None
        return max(0.0, self.clock.base.now() - self.newest)




def make_follower(path: str, queue: Any) -> Any:
    """The foundation's follower (htcondor.md §3.5 rules) on ``path`` feeding ``queue``."""
    from engine.queue.follower import Follower  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    return Follower(path, queue)


class WatchFeed(FeedBase):
    """Watch mode as an engine for :class:`engine.runtime.Runtime`.

    Read-only and live: no pause, speed, step or seek (``controls`` is empty; a paused view of a
    log that keeps changing would only mislead). All reading happens on the runtime's thread (``step``/``handle``), so the queue is never read
    and written by two threads. ``next_time()`` asks for a poll every ``poll_interval`` seconds
    of the (system) clock; :meth:`waker` gives the foundation's watcher (``run_watch``) an object
    whose ``poll()`` just sends :class:`WakeUp` to the runtime, so a change is read at once."""

    controls: frozenset[str] = frozenset()

    def __init__(self, engine: WatchEngine, poll_interval: float = 1.0) -> None:
        self.engine = engine
        self.poll_interval = poll_interval
        self.now = engine.clock.now()
        self._last_poll = -float("inf")
        self.ring = engine.ring  # one ring: the engine's notices and the router's events rebuilt here
        self._told_waiting = False
        self.history_upto = 0  # events of the log's backlog (its first read): history, not news

    def emit(self, time: float, kind: str, message: str, level: str = "info", route: str | None = None,
             job: str | None = None) -> None:
        self.ring.emit(time, kind, message, level, route, job)

    def next_time(self) -> float:
        return self._last_poll + self.poll_interval

    def step(self, t: float) -> None:
        if t >= self.next_time():
            self._poll(t)
        self.now = max(self.now, t)

    def _drain(self) -> None:
        """The router's events rebuilt from the log (engine.views.figures.LiveFigures) into the ring."""
        figures = self.engine.figures
        for e in figures.events:
            self.ring.record(e.to_snapshot_event(self.ring.next_seq()))
        figures.events.clear()

    def _poll(self, t: float) -> None:
        backlog = self._last_poll == -float("inf")
        generation = self.engine.generation
        self.engine.poll()
        self._drain()
        if backlog or self.engine.generation != generation:
            # what the log held when it was first read (or read again from its start): logged on
            # the Events panel, never toasted as if it had just happened
            self.history_upto = self.ring.seq
        self.engine.publish()  # after the history mark: a replaced log is news
        self._last_poll = t
        if self.engine.waiting and not self._told_waiting:
            self.emit(self.engine.clock.now(), "log", f"{self.engine.setup.queue_log}: {WAITING}")
        self._told_waiting = self.engine.waiting

    def handle(self, command: object) -> str | None:
        if isinstance(command, C.WakeUp):
            self._poll(self.engine.clock.now())
            return None
        return f"{type(command).__name__} is not available in watch mode (read-only)"

    def job_ad(self, job: str) -> dict[str, str]:
        return self.engine.job_ad(job)

    def snapshot(self, seq: int = 0, *, speed: float = 1.0, paused: bool = False, engine_state: str = "running",
                 clock: str = "real", jobs: tuple = ()) -> Snapshot:
        # the time and its "virtual"/"real" label are the log's clock's (engine.clock.LogClock), not
        # the runtime's: a log written in virtual time (a demo recording) is watched on its own clock
        snap = self.engine.snapshot(seq)
        self._drain()  # windows the snapshot closed
        return dataclasses.replace(snap, speed=speed, paused=paused, engine_state=engine_state,
                                   events=self.ring.recent(), history_upto=self.history_upto)

    def waker(self, runtime: Any) -> Any:
        feed_path = self.engine.follower.path

        class _Waker:
            path = feed_path

            @staticmethod
            def poll() -> None:
                runtime.send(C.WakeUp())

        return _Waker()
