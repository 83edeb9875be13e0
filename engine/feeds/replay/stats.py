"""Per-route recent figures and the failure-rate throttle, reconstructed from a recording.

A ``job_queue.log`` holds the routed copies, not the router's counters; this module rebuilds
HTCondor's per-route statistics (htcondor.md §1.5) from them in one pass over a recording — the
rules are :mod:`engine.views.figures`' (shared with watch, which applies them live) — with the
router's own code
(:class:`engine.router.throttle.RouteStats`, ``adjust_failure_throttle``; nothing here
re-implements the formula). Design decisions and invariants:

- *Started* (``recent_routed``): a routed copy (a proc whose effective ad has ``RouteName``)
  appears in a committed transaction. Copies already present in a run of records outside any
  transaction (a compacted log body) were routed before the recording: they count towards
  ``num_jobs`` but not as started.
- *Finished*: the copy leaves the queue (its ``102``), judged on its last recorded ad (§1.5
  "what counts as success or failure"):
  interrupted (not counted) when it has no source job in the queue or its source's last
  recorded status is removed (3) — the pass keeps references to the source's ads, so a source
  destroyed in the same transaction is still judged on its last values;
  succeeded when it completed (status 4) and the route's ``JobFailureTest`` is not true — with
  a routing table (``--config``) that expression decides (none given = success, as HTCondor);
  without one RouteDeck cannot know the test and counts a non-zero ``ExitCode`` or
  ``ExitBySignal`` as a failure (documented assumption); failed otherwise: a copy removed,
  held, idle or running when it left the queue — "removed routed jobs count as failures", and a
  copy that never ran is one the router gave up on.
- Windows: every route starts its window at the log's first step (the router starts with the
  schedd), and windows close at router polls: a poll grid ``start + period/2 + k·period``
  (``grid_start`` instead of ``start`` for a part of a longer recording, an archive's window:
  the windows then close where they close in the whole recording, the first one in the part
  being counted from the last close before the part's first step)
  (``JOB_ROUTER_POLLING_PERIOD``, default 10 s; the phase is unknown in a real log — half a
  period is RouteDeck's demo). At the first poll ≥ ``stats_begin_time + 600`` the route's
  ``adjust_failure_throttle(poll, FailureRateThreshold)`` runs with ``num_jobs`` = copies on
  the route in the queue then. A step whose time equals a poll time is applied after it.
- ``seeds`` (a part of an archive, ``engine.feeds.replay.archive``): the throttle after each
  window close as the recorder's counts of whole windows give it (``engine.record.counts.fold``);
  at a close it names, a route takes that throttle instead of the one computed from the part
  (whose first window may begin before the part does).
- One pass over the log (lazy, on first use) records per route the step of each event with
  cumulative counts, and per closed window the throttle after it; the figures at any position
  are then two bisections — seeking costs nothing more.
- The same pass rebuilds the crondor ``DeferralTime`` a schedd would hold for each cron job
  (:class:`engine.schedd.cron.CronObserver`; never logged, htcondor.md §2.4), kept as per-job
  change lists for :meth:`RouteHistory.deferral_at`.
- Throttle changes are also kept as the router's events (``throttle-adjusted``,
  ``route-throttled``, ``route-unthrottled``, the live router's wording); the replay feed emits
  those it plays through (not those a seek jumps over).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any

from engine.crondor.zones import get_zone
from engine.gcpause import gc_paused
from engine.schedd.cron import CronNames, CronObserver, jobs_to_observe
from engine.queue.records import is_proc_key
from engine.feeds.replay.index import LogIndex
from engine.queue.jobqueue import JobQueue
from engine.queue.steps import scan_steps
from engine.views.figures import (DEFAULT_POLLING_PERIOD, Figures, RouteRule, next_close, outcome, retired_event,
                                  routed_event)
from engine.views.recorded import literal_str
from engine.router.throttle import RouteStats, route_state

AFTER_LAST = 3600.0  # schedd cycles run this long after the last step (a seek past the end)


@dataclass
class _Track:
    stats: RouteStats
    steps: array = field(default_factory=lambda: array("q"))  # step of each event
    started: array = field(default_factory=lambda: array("l"))  # cumulative after each event
    succeeded: array = field(default_factory=lambda: array("l"))
    failed: array = field(default_factory=lambda: array("l"))
    at_close: list = field(default_factory=list)  # per global close: (events so far, throttle, rate)
    live: int = 0
    first: int = 0  # step of the route's first copy


class RouteHistory:
    """Reconstructed per-route statistics of one recording (module docstring)."""

    def __init__(self, index: LogIndex, rules: dict[str, RouteRule] | None = None,
                 polling_period: float = DEFAULT_POLLING_PERIOD, tz: str = "UTC",
                 grid_start: float | None = None, seeds: dict[float, dict[str, float]] | None = None,
                 collect_events: bool = True) -> None:
        """``collect_events`` False: no router events are kept (``changes`` stays empty), for a reader that
        shows none (the headless replay; the dashboard's feed shows them)."""
        self.index = index
        self.collect_events = collect_events
        self.seeds = seeds or {}  # close time -> route -> throttle after it (engine.record.counts.fold)
        self.rules = rules
        self.period = float(polling_period) if polling_period and polling_period > 0 else DEFAULT_POLLING_PERIOD
        self.start = index.times[0] if index.steps else 0.0
        self.grid = self.start if grid_start is None else min(grid_start, self.start)
        self.begin = self.grid  # the last window close of the grid at or before ``start``
        while (c := next_close(self.grid, self.period, self.begin)) <= self.start:
            self.begin = c
        self.closes = array("d")  # global window close times
        self.tracks: dict[str, _Track] = {}
        self.changes: list[tuple] = []  # router events in time order (see _note): throttles, copies
        self.change_times = array("d")  # their times, for bisect
        self.tz = tz
        self.cron_times: dict[str, array] = {}  # cron job -> times its DeferralTime changed
        self.cron_values: dict[str, list] = {}  # … and the values (None: no DeferralTime)
        self.kept: JobQueue | None = None  # the pass's queue after the step ``build(keep=…)`` named
        self._built = False

    def _rule(self, name: str) -> RouteRule | None:
        if self.rules is None:
            return None
        return self.rules.get(name, RouteRule())

    def _next_close(self, begin: float) -> float:
        return next_close(self.grid, self.period, begin)

    def _track(self, name: str, step: int) -> _Track:
        tr = self.tracks.get(name)
        if tr is None:
            tr = self.tracks[name] = _Track(RouteStats(name=name, stats_begin_time=self.begin), first=step)
            for c in self.closes:  # windows closed before the route's first copy: nothing counted
                seeded = self.seeds.get(c, {}).get(name)  # … here; the recorder's counts know its throttle
                if seeded is not None:
                    tr.stats.throttle, tr.stats.stats_begin_time = seeded, c
                tr.at_close.append((0, tr.stats.throttle, 0.0))
        return tr

    def state_after(self, step: int) -> JobQueue | None:
        """The queue after ``step`` as this history's one pass leaves it there (a copy), when the
        pass has not run yet — a player's first move to ``step`` then needs no second pass over the
        same steps (``routedeck replay DIR --at``: a window's steps); None once it has run."""
        if self._built or not 0 <= step < self.index.steps:
            return None
        kept, self.kept = self.build(keep=step).kept, None  # handed over: the history holds no second queue
        return kept

    def build(self, keep: int | None = None) -> "RouteHistory":
        """The one pass (module docstring); ``keep``: a copy of its queue after that step is kept
        as ``kept`` (:meth:`state_after`)."""
        if self._built or not self.index.steps:
            self._built = True
            return self
        idx = self.index
        # a window's start state comes as a queue (``LogIndex.head``): its own copy, written in place
        state = JobQueue() if idx.head is None else idx.head.copy()
        copies: dict[str, tuple] = {}  # copy key -> (route, proc, cluster, source proc, source cluster ads)
        step_no = [-1]
        next_close = [self._next_close(self.begin)]

        def close_until(t: float) -> None:
            while next_close[0] <= t:
                c = next_close[0]
                self.closes.append(c)
                seed = self.seeds.get(c)
                for tr in self.tracks.values():
                    tr.stats.num_jobs = tr.live
                    threshold = (self._rule(tr.stats.name) or RouteRule()).threshold
                    adj = tr.stats.adjust_failure_throttle(c, threshold)
                    rate = adj.rate if adj else 0.0
                    seeded = seed.get(tr.stats.name) if seed else None
                    if seeded is not None and seeded != tr.stats.throttle:
                        # the archive's counts saw the whole window (a part of the recording
                        # may not): its throttle wins, and the part's computation makes no event
                        tr.stats.throttle, adj = seeded, None
                    tr.at_close.append((len(tr.steps), tr.stats.throttle, rate))
                    if adj is not None and adj.old_throttle != adj.new_throttle and self.collect_events:
                        self._note_change(tr.stats.name, adj)
                next_close[0] = self._next_close(c)

        def event(tr: _Track, step: int, kind: str) -> None:
            s = tr.stats
            if kind == "started":
                s.recent_routed += 1
            elif kind == "succeeded":
                s.recent_succeeded += 1
            else:
                s.recent_failed += 1
            n = len(tr.steps)
            tr.steps.append(step)
            tr.started.append((tr.started[n - 1] if n else 0) + (kind == "started"))
            tr.succeeded.append((tr.succeeded[n - 1] if n else 0) + (kind == "succeeded"))
            tr.failed.append((tr.failed[n - 1] if n else 0) + (kind == "failed"))

        notes = self.collect_events
        ads = state.table
        cron = CronObserver(get_zone(self.tz), self.start, self.period)

        def effective(job: str):
            proc = ads.get(job)
            if proc is None or not is_proc_key(job):
                return None
            cl = ads.get("0" + job.partition(".")[0] + ".-1")
            if cl is None:
                return proc
            out = dict(cl)
            out.update(proc)
            return out

        noted: list[dict] = [{}]  # the keeper's DeferralTimes at the last note: unchanged, nothing to note

        def note_cron(t: float) -> None:
            keeper = cron.keeper
            if keeper.deferral == noted[0]:  # a job holds a time only while seen: every value is as noted
                return
            noted[0] = dict(keeper.deferral)
            for job in list(cron.seen) + [j for j in self.cron_times if j not in cron.seen]:
                value = keeper.deferral.get(job)
                vals = self.cron_values.get(job)
                if vals is None:
                    if value is None:
                        continue
                    self.cron_times[job] = array("d")
                    vals = self.cron_values[job] = []
                if not vals or vals[-1] != value:
                    self.cron_times[job].append(t)
                    vals.append(value)

        cron_names = CronNames(state)

        def cron_step(step: int, records: list) -> None:
            t = idx.times[step]
            for job in jobs_to_observe({r[1] for r in records}, cron.seen, ads, cron_names()):
                cron.observe(job, effective(job), t)
            note_cron(t)
            last = step + 1 >= idx.steps
            upto = idx.times[-1] + AFTER_LAST if last else idx.times[step + 1]
            while cron.next_cycle < upto:
                c = cron.next_cycle
                cron.run_until(c, effective, inclusive=True)
                note_cron(c)

        def on_step(_s: int, _e: int, _line: int, records: list, end_line: str | None = None) -> None:
            step_no[0] += 1
            step = step_no[0]
            close_until(idx.times[step])
            in_txn = end_line is not None
            for op, key, _name, _value in records:
                if op == 102 and key in copies:
                    route, proc, cluster, source, src_cluster = copies.pop(key)
                    tr = self.tracks[route]
                    tr.live -= 1
                    result = outcome(proc, cluster, source, src_cluster, self._rule(route))
                    if result != "interrupted":
                        event(tr, step, result)
                    if in_txn and notes:
                        self._note(retired_event(idx.times[step], key, route, proc, cluster, result))
            for op, key, name, _value in records:
                if op != 101 or key in copies or not is_proc_key(key):
                    continue
                proc = ads.get(key)
                if proc is None:
                    continue
                cluster = ads.get("0" + key.partition(".")[0] + ".-1")
                route = literal_str(proc.get("RouteName") or (cluster or {}).get("RouteName"))
                if route is None:
                    continue
                src = literal_str(proc.get("RoutedFromJobId") or (cluster or {}).get("RoutedFromJobId"))
                source = ads.get(src) if src else None
                src_cluster = ads.get("0" + src.partition(".")[0] + ".-1") if source is not None else None
                copies[key] = (route, proc, cluster, source, src_cluster)
                tr = self._track(route, step)
                tr.live += 1
                if in_txn:
                    event(tr, step, "started")
                    if notes:
                        self._note(routed_event(idx.times[step], key, route, proc, cluster))
            cron_step(step, records)
            if step == keep:
                self.kept = state.copy()

        # Destroys must see the ads as they were: the pass keeps its own state, never copied, so
        # every ad dict is mutated in place and a held reference keeps the last values even after
        # the 102 removed it from the queue.
        if idx.head is not None:  # step 0 is that state: its records as its compacted body would give them, in order
            on_step(idx.starts[0], idx.ends[0], idx.lines[0], [(101, key, "", "") for key in state.table])
        if idx.step_records is not None:  # the index's pass kept each step's records: not read again
            apply = state.apply_quiet
            with gc_paused():  # as scan_steps does
                for records, end_line in idx.step_records:  # from step 1 when step 0 is the head (LogIndex)
                    apply(records)
                    on_step(0, 0, 0, records, end_line)
            idx.step_records = None  # applied: not kept while the index lives (another pass reads the text)
        else:
            scan_steps(idx.data, idx.ends[0] if idx.head is not None else idx.starts[0], idx.ends[-1], state,
                       on_step, None)
        close_until(idx.times[-1])
        self._built = True
        return self

    def _note_change(self, name: str, adj) -> None:
        """The router's throttle events (engine.router.events.throttle_events), kept for the
        replay's events pane: (time, kind, message, level, route)."""
        from engine.router.events import throttle_events  # noqa: PLC0415 - only where events are kept

        for e in throttle_events(adj.time, name, adj):
            self._note(e)

    def _note(self, e: Any) -> None:
        """One router event (engine.router.events) for the events pane, in time order:
        (time, kind, message, level, route, job)."""
        self.changes.append((e.time, e.kind, e.message, e.level, e.route, e.job))
        self.change_times.append(e.time)

    def deferral_at(self, job: str, time: float) -> int | None:
        """The DeferralTime a schedd would hold for ``job`` at ``time`` (CronObserver's rules)."""
        self.build()
        times = self.cron_times.get(job)
        if times is None:
            return None
        k = bisect_right(times, time) - 1
        return self.cron_values[job][k] if k >= 0 else None

    def changes_between(self, after: float, upto: float) -> list[tuple]:
        """Router events with ``after < time <= upto``."""
        self.build()
        times = self.change_times
        return self.changes[bisect_right(times, after):bisect_right(times, upto)]

    def figures(self, position: int, time: float) -> dict[str, Figures]:
        """Every route's figures after step ``position`` at replay time ``time``."""
        self.build()
        k = bisect_right(self.closes, time) - 1  # last closed window
        begin = self.closes[k] if k >= 0 else self.begin
        out = {}
        for name, tr in self.tracks.items():
            if tr.first > position:
                continue  # not seen yet at this moment
            n = bisect_right(tr.steps, position)  # events applied so far
            base, throttle = (tr.at_close[k][0], tr.at_close[k][1]) if k >= 0 else (0, 0.0)
            base = min(base, n)

            def diff(arr: array) -> int:
                return (arr[n - 1] if n else 0) - (arr[base - 1] if base else 0)

            started, ok, failed = diff(tr.started), diff(tr.succeeded), diff(tr.failed)
            threshold = (self._rule(name) or RouteRule()).threshold
            delta = time - begin
            stats = RouteStats(name=name, stats_begin_time=begin, recent_routed=started,
                               recent_succeeded=ok, recent_failed=failed, throttle=throttle)
            _ok, st, reason = route_state(_NoLimits, stats)
            history = tuple(r for _, _, r in tr.at_close[max(0, k - 47):k + 1]) if k >= 0 else ()
            out[name] = Figures(
                recent_started=started, recent_succeeded=ok, recent_failed=failed, throttle=throttle,
                window_start=begin, failure_rate=failed / delta if delta > 0 else 0.0, threshold=threshold,
                rate_history=history, state="throttled" if st == "throttled" else None,
                reason=reason if st == "throttled" else None,
                totals=tuple(arr[n - 1] if n else 0 for arr in (tr.started, tr.succeeded, tr.failed)))
        for name in self.rules or ():  # table routes with no copy yet: an empty window
            if name not in out:
                threshold = self.rules[name].threshold
                out[name] = Figures(0, 0, 0, 0.0, begin, 0.0, threshold, (), None, None)
        return out

    def adjustments_before(self, time: float) -> int:
        """How many windows have closed by ``time`` (for tests and the UI)."""
        self.build()
        return bisect_left(self.closes, time + 1e-9)




class _NoLimits:
    """A route with no MaxJobs / MaxIdleJobs limits: only the throttle decides in route_state."""

    max_jobs = 1 << 62
    max_idle_jobs = -1
