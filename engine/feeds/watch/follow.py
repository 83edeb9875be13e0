"""The watched schedd: follow its ``job_queue.log`` and keep what the board shows rebuilt from it.

Sources: product.md §2 ("watch"), §5; htcondor.md §3.5 (the router's follower rules), §3.4
(rotation), §1.5 (the JobRouterLog table). Design decisions and invariants:

- The queue is the foundation's :class:`~engine.queue.jobqueue.JobQueue`, fed by its follower (the
  router's rules: records apply as read, a partial last line waits for the next poll, a new
  sequence number or a changed probe record means a bulk reload). Any queue event bumps
  ``version``; a snapshot is built only when asked, and only when something changed does
  :meth:`WatchEngine.poll` say so, so a headless printer prints each change once.
- Advancing and showing are apart: :meth:`WatchEngine.advance` (after every poll, and by the
  runtime before each snapshot) closes the router's windows and runs the crondor up to the clock's
  now, publishes the notices and takes the queue's change events into the jobs table and the route
  counts; :meth:`WatchEngine.snapshot` only reads what the last advance settled (``settled``,
  immutable), so taking a snapshot changes nothing, on any thread (issue 26).
- No clock is read here: ``now`` comes from the injected clock; no waiting happens here either
  (the caller waits on :mod:`engine.queue.filewatch` or polls).
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

from types import MappingProxyType
from typing import Any, Mapping

from engine.clock import Clock, LogClock
from engine.contract.feed import WhyNot
from engine.contract.snapshot import RouteView, Snapshot
from engine.crondor.zones import get_zone
from engine.feeds.watch.pace import LogPace
from engine.feeds.watch.reported import merge_reported
from engine.feeds.watch.setup import WatchSetup
from engine.queue.jobqueue import JobQueue, QueueReloaded
from engine.queue.records import is_proc_key, job_order
from engine.queue.timeline import parse_comment_time
from engine.router.routerlog import RouterLogFollower
from engine.router.throttle import THROTTLE_UPDATE_INTERVAL, RouteStats
from engine.router.unrouted import count_verdicts, kept_count
from engine.schedd.cron import CronNames, CronObserver, jobs_to_observe
from engine.views import recorded as views
from engine.views.snapshot import snapshot_of
from engine.views.figures import LiveFigures
from engine.views.ledger import ledger_at, why_not_of
from engine.views.recorded_rows import ReplayRows
from engine.views.rows import EventRing, policy_states


WAITING = "waiting for the first transaction (no complete record in the log yet)"


def queue_ads(queue: Any) -> Mapping[str, Mapping[str, str]]:
    """key → attribute texts of every ad of a JobQueue (the shape engine.views.recorded reads).

    The queue's own key → dict table (``JobQueue.table``) is read directly when it has one (it is only read, on the
    engine thread, between polls); otherwise one ``ad(key)`` per key."""
    ads = getattr(queue, "table", None)
    if isinstance(ads, dict):
        return ads
    return {k: queue.ad(k) for k in queue.keys()}


class WatchEngine:
    """One watched schedd. ``poll()`` reads what is new and advances; ``snapshot()`` shows what the
    last advance settled."""

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
        self.advance()  # the empty queue's view, until the first poll

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
        """Read new records (and router log lines) and advance; True when a new snapshot is worth building."""
        return self.after_poll(self.follower.poll())

    def after_poll(self, result: Any) -> bool:
        """What to do after one follower poll (also the ``on_poll`` of the foundation's watcher,
        which polls the follower itself): :meth:`read` it, then :meth:`advance`."""
        changed = self.read(result)
        self.advance()
        return changed

    def read(self, result: Any) -> bool:
        """Take in one follower poll: note its problems, read the router log, and say whether
        anything changed since the last time this returned True."""
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

    def advance(self) -> None:
        """Bring what the snapshots show up to the clock's now: the router's windows closed, the
        crondor run, the notices published, the queue's change events taken into the jobs table and
        the route counts; what :meth:`snapshot` reads is kept in ``settled`` (immutable)."""
        ads = queue_ads(self.queue)
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
        view = views.settle(ads, rows=self.rows, time=now, limits=self.setup.limits, figures=figures,
                            route_order=self.route_order, jobs_version=self.version, tz=self.tz,
                            deferral=self.cron.deferral if self.cron is not None else None,
                            locations=self.setup.locations)
        table = self.router_log.latest if self.router_log is not None else None
        base_now = self.clock.base.now()
        shown = MappingProxyType(dict(
            routes=merge_reported(view.routes, table, self.figures.last_close),
            **self.unrouted(view.routes, now), events=self.ring.recent(),
            clock="virtual" if self.clock.on_log else "real", log_rate=self.pace.shown(base_now),
            log_lag=self.log_lag(base_now), log_problems=len(self.problems), log_generation=self.generation,
            policies=policy_states(getattr(self.setup.table, "config", None))))
        self.settled = (view, shown)  # one assignment: a snapshot on another thread reads one or the other

    def snapshot(self, seq: int = 0, with_jobs: bool = True, **given: Any) -> Snapshot:
        """What the last :meth:`advance` settled, as a snapshot (a read: changes nothing); ``given``
        are the fields the caller adds (the feed's run state, its events)."""
        view, shown = self.settled
        fields = {"paused": False, "readonly": True, "config_files": self.setup.config_files, **shown, **given}
        return snapshot_of(view, seq=seq, mode="watch", with_jobs=with_jobs, tz=self.tz, **fields)

    NO_TABLE = "no routing table: the config has no JOB_ROUTER_ROUTE_NAMES"

    def why_not(self, job: str, now: float) -> WhyNot:
        """Why ``job`` waits now: its ledger entry (engine.views.ledger.ledger_at, the computation of
        ``routedeck why``) over the followed queue, with RouteDeck's own figures of it and the
        config's routing table and periodic policy (issue 29: watch said "no routing explanation")."""
        table = self.setup.table
        entries = self._ledger(now, [job]) if table is not None else []
        return why_not_of(table, entries, job, self.NO_TABLE)

    def ledger(self, now: float) -> list:
        """Every idle source job's ledger entry now (the dashboard's ledger screen); LookupError
        without a routing table."""
        if self.setup.table is None:
            raise LookupError(self.NO_TABLE)
        return self._ledger(now, None)

    def _ledger(self, now: float, jobs: list[str] | None) -> list:
        start = self.figures.start if self.figures.start is not None else now
        cfg = self.setup.config
        return ledger_at(self.setup.table, queue_ads(self.queue), now, self.figures.figures(now), start,
                         self.figures.period, cfg.get if cfg is not None else None, jobs)

    count_unrouted = False  # set by --metrics: Snapshot.unrouted and .held_soon (routedeck_idle_unrouted_jobs)

    def unrouted(self, routes: tuple[RouteView, ...], now: float) -> dict[str, Mapping]:
        """The snapshot's ``unrouted`` and ``held_soon`` (engine.router.unrouted.Tally: idle source
        jobs by verdict and by hold countdown) when ``count_unrouted`` is set and the config has a
        routing table, else none: the table's routes judged with RouteDeck's own figures of
        the followed queue (``routes``: copies, recent starts, throttle), a source job the real
        router manages (``Managed = "External"``) left out. Recounted when the queue or a window
        changed, or at every snapshot when the table reads the clock."""
        table = self.setup.table
        if not self.count_unrouted or table is None or not table.routes:
            return {}

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
        key = (self.version, self.generation, self.figures.last_close, id(table))
        return kept_count(self, self, key, lambda: count_verdicts(
            table, table.knobs.name, stats_of, self.queue, tracked, managed, now, self)).fields()

    def log_lag(self, now: float | None = None) -> float | None:
        """Seconds from the newest transaction time read to now on the wall (base) clock; None
        before any timestamped transaction. A schedd or recorder that stopped writing makes it grow
        (routedeck_log_lag_seconds, the stale-log alert); a log written in virtual time (a demo
        recording) lags or leads by its own clock's offset. ``now``: the wall clock's, read if not given."""
        if self.newest is None:
            return None
        return max(0.0, (self.clock.base.now() if now is None else now) - self.newest)




def make_follower(path: str, queue: Any) -> Any:
    """The foundation's follower (htcondor.md §3.5 rules) on ``path`` feeding ``queue``."""
    from engine.queue.follower import Follower  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    return Follower(path, queue)
