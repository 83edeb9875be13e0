"""The Job Router runtime: ``JobRouter::Poll`` over RouteDeck job queues (htcondor.md §1.4–1.8).

One :class:`JobRouter` reads a source ``JobQueue`` (SCHEDD1) and submits routed copies to a
destination ``JobQueue`` (SCHEDD2; the same object when there is no SCHEDD2), through the
queues' transaction API only. :meth:`JobRouter.poll` does HTCondor's poll in HTCondor's order:

1. ``AdoptOrphans`` on polls 1, 6, 11, … (``poll_count % 5 == 1``);
2. ``UpdateRouteStats`` (recount from the tracked jobs) with ``AdjustFailureThrottles``;
3. ``GetCandidateJobs``: the umbrella pre-filter and ``ChooseRoute`` (:mod:`.candidates`);
4. every tracked job through the state table (:data:`.lifecycle.STEPS`);
5. the source jobs' periodic policy when ``PERIODIC_EXPR_INTERVAL`` has passed (HTCondor runs it
   on its own timer; here it ends a poll, so a hold it places is cleaned up on the next poll).

Design decisions and invariants:

- The router keeps no state file: everything after a restart comes from job attributes
  (``RoutedBy``, ``RoutedFromJobId``, ``RouteName``, ``Managed``, ``ManagedManager``) through
  ``AdoptOrphans``. The only in-memory state that matters is the tracked jobs and the per-route
  statistics, which survive :meth:`set_table` by route name (``CopyState``).
- No clock is read: every entry point takes ``now``.
- Hook programs run only when the router is built with ``allow_hooks=True`` (the demo, and the
  commands given ``--allow-hooks``). Otherwise none is ever spawned: a job whose translate hook
  would run is left alone (not a candidate; why-not and a ``hook-withheld`` event say
  "would run: PATH"), and the other hooks are treated as not defined (:mod:`.hooks`).
  A translate hook that gives no routed ad is tried at most ``hook_attempts`` times per source
  job over all its claims (HTCondor has no limit; :meth:`Lifecycle.submit`).
- Facts are reported as frozen :mod:`.events` dataclasses, collected until the runtime calls
  :meth:`drain_events`.
- The router listens to both queues' change events: a SUBMITTED job whose source and routed
  copy did not change since its last status check, and that has no update hook, is not checked
  again (the check is a pure function of the two ads once the copy was seen). Changes made
  before a check in the same poll (the claim, the submission) are seen by it, and so is the
  check's own mirroring push (checking again would push nothing). A queue reload, or a queue
  without ``subscribe_batch``, makes every job be checked.
- ``GetCandidateJobs`` costs what changed, not the queue's size: an untracked source job the
  last cycle judged unroutable *whatever the routes' state* — the sanity clause failed, or no
  route's ``REQUIREMENTS`` matches it — decided from literal attribute texts with a table that
  uses no clock (``Scanner.time_free``), is not scanned again until the job (or its cluster ad)
  changes, the table changes or the queue is reloaded. Every other job is scanned on every
  cycle, in the queue's order (an arrival number kept from the queue's events), so the same
  jobs are routed in the same order as by a full scan. ``last_cycle["considered"]`` counts the
  jobs scanned.
- Periodic policy is evaluated for claimed jobs that are not RETIRED (HTCondor iterates all
  tracked jobs, including retired ones whose router copy may be stale; RouteDeck does not push
  policy decisions for jobs it no longer manages). ``TimerRemove`` is checked first, then
  ``engine.lang.user_policy.analyze_periodic`` (the schedd's ``UserPolicy`` order).
"""

from __future__ import annotations

from typing import Any

from engine.lang.param import split_list
from engine.queue.job import Job
from engine.router import events as ev
from engine.router import hooks as hk
from engine.router import schedd_ops as ops
from engine.router.routed_copy import build_routed_ad as default_build_routed_ad
from engine.router.table import SubmitRejected
from engine.gcpause import gc_paused
from engine.router.candidates import Scanner
from engine.router.lifecycle import STEPS, STEPS_FROM, Lifecycle, RoutedJob, SrcAttrs, State, _truth
from engine.router.settled import Settled, Tracked
from engine.router.recovery import Recovery
from engine.router.src_policy import SourcePolicy, _knob
from engine.router.stats import StatsMixin
from engine.router.throttle import StatsBook, count_limit, route_state
from engine.router.whynot import Explanation, Step, copy_verdict, explain_job, pick_candidate

_NONE: dict[str, str] = {}  # read only: an absent ad
_UNCLAIMED = State.UNCLAIMED


class JobRouter(Lifecycle, StatsMixin, Recovery, SourcePolicy):
    """HTCondor's job router over RouteDeck queues. ``table`` is a ``RoutingTable``."""

    def __init__(self, table: Any, source: Any, dest: Any = None, *, now: float,
                 hooks: hk.HookManager | None = None, hook_timeout: float = 60.0,
                 hook_attempts: int = 3, background_hooks: bool = False, allow_hooks: bool = False,
                 build: Any = None) -> None:
        self.src_q = source
        self.dst_q = dest if dest is not None else source
        self.jobs: dict[str, RoutedJob] = Tracked()  # written with dict's own methods (Tracked)
        self.book = StatsBook()
        self.poll_count = 0
        self._rr = 0  # ChooseRoute's function-level static round-robin counter
        self._events: list[ev.RouterEvent] = []
        # allow_hooks=False (the default): no hook program ever runs (engine.router.hooks docstring)
        self._hook_opts = (hook_timeout, hook_attempts, background_hooks, allow_hooks)
        self._given_hooks = hooks
        # source job -> failed translate attempts, kept across claims (Lifecycle.submit)
        self.translate_failures: dict[str, int] = {}
        self._job_exprs: dict[int, tuple] = {}  # id(route) -> (route, sandboxed?, in place?, universe, grid resource)
        self._builder = build  # default: engine.router.routed_copy.build_routed_ad
        self.next_periodic = 0.0
        self.last_cycle: dict[str, Any] = {}
        self.table: Any = None
        # keys changed in either queue since the last poll (None: everything may have changed)
        self._changed: set[str] | None = None
        # GetCandidateJobs' incremental state (module docstring): source jobs by arrival number,
        # the ones to scan next cycle, and None while a full scan is due
        self._order: dict[Any, int] = {}
        self._arrivals = 0
        self._to_scan: set[Any] | None = None
        # AdoptOrphans' incremental state: job ids changed in either queue since the last pass
        # (None: a full scan is due) and the ids that may be orphans (``_may_be`` of RoutedBy in
        # the destination, of Managed in the source), kept from the queues' events
        self._adopt_dirty: set[Any] | None = None
        self._adopt_dst: set[Any] = set()
        self._adopt_src: set[Any] = set()
        # routed copies last seen as a tracked job's own -> (its source, the copy's key)
        self._adopt_own: dict[Any, tuple[str, str]] = {}
        # eval_periodic (see there): source key -> (copy of job.src at the last evaluation, its
        # time deadline — None when the result can change only with the ad, "now" when
        # it must be evaluated again —, whether the live source's TimerRemove and
        # x509UserProxyExpiration were literals, job.src and its SrcAttrs version then), and the
        # keys changed in either queue since the last pass (None: all may have changed)
        self._periodic_ads: dict[str, tuple[dict[str, str], Any, bool, Any, Any]] = {}
        self._periodic_dirty: set[str] | None = None
        # the jobs the next pass evaluates again whatever changed, and a heap of (deadline, key)
        self._periodic_again: set[str] = set()
        self._periodic_heap: list[tuple[float, str]] = []
        # key -> the deadline queued for it (at most one live heap entry per tracked job)
        self._periodic_queued: dict[str, float] = {}
        self._periodic_system: Any = None
        self.periodic_evaluations = 0  # jobs whose policy eval_periodic evaluated (tests, benches)
        # the book's current counts are the tracked jobs' (set by a poll's closing recount)
        self._counted = False
        # the tracked jobs a poll can skip unless their ads changed (Settled)
        self._settled = Settled()
        self._unsubscribe = [q.subscribe_batch(self._on_queue_event)
                             for q in {id(source): source, id(self.dst_q): self.dst_q}.values() if hasattr(q, "subscribe_batch")]
        self._watching = len(self._unsubscribe) == len({id(source), id(self.dst_q)})
        if self._watching:
            self._unsubscribe.append(source.subscribe_batch(self._on_source_event))
        self._apply_table(table, now)
        self.next_periodic = now + self.periodic_expr_interval

    # ------------------------------------------------------------------------ configuration

    def _apply_table(self, table: Any, now: float) -> None:
        self.table = table
        k = table.knobs
        self.name = k.name or "jobrouter"
        self.max_jobs = int(k.max_jobs)
        self.round_robin = bool(k.round_robin)
        self.release_on_hold = bool(k.release_on_hold)
        self.max_job_mirror_update_lag = int(k.max_job_mirror_update_lag)
        self.periodic_expr_interval = int(k.periodic_expr_interval)
        self.polling_period = int(k.polling_period)
        cfg = table.config
        self.chirp_prefix = _knob(cfg, "CHIRP_DELAYED_UPDATE_PREFIX")
        timeout, attempts, background, allow = self._hook_opts
        old = getattr(self, "hooks", None)
        self.hooks = self._given_hooks or hk.HookManager(cfg, k.hook_keyword, timeout=timeout,
                                                          max_attempts=attempts, background=background,
                                                          allow_run=allow)
        if old is not None and old is not self.hooks:
            self.hooks._running = old._running  # hooks still running keep their results
            self.hooks.uses = old.uses  # the report covers the whole run
        self.book.sync([r.name for r in table.routes], now)
        self._counted = False  # new routes start at zero: the next poll recounts
        self.scanner = Scanner(table.routes, k.source_job_constraint, self.name)
        self._to_scan = None  # a new table: every job is scanned again
        self._adopt_dirty = None  # JOB_ROUTER_NAME may have changed

    def set_table(self, table: Any, now: float) -> None:
        """Switch routing tables (``SetRoutingTable``): state kept per route name, then the
        route statistics are recomputed at once, throttle adjustment included."""
        old = self.table
        self._apply_table(table, now)
        for job in self.jobs.values():
            job.keyword = None  # JOB_ROUTER_HOOK_KEYWORD may have changed
        self._emit(ev.TableSwitched(now, f"routing table v{getattr(old, 'version', '?')} -> "
                                         f"v{getattr(table, 'version', '?')} ({len(table.routes)} routes)"))
        self.update_route_stats(now)

    def _attrs_to_copy(self, job: RoutedJob) -> list[str]:
        keyword = self._keyword(job)
        if not keyword:
            return []
        return split_list(_knob(self.table.config, f"{keyword}_ATTRS_TO_COPY"))

    # ------------------------------------------------------------------------ events

    def _emit(self, event: ev.RouterEvent) -> None:
        self._events.append(event)

    def drain_events(self) -> list[ev.RouterEvent]:
        out, self._events = self._events, []
        return out

    # ------------------------------------------------------------------------ the poll

    def _on_queue_event(self, events: list[Any]) -> None:
        """A batch of the source's or the destination's events (``JobQueue.subscribe_batch``)."""
        for event in events:
            jid = getattr(event, "id", None)
            if jid is not None:
                key = f"{jid[0]}.{jid[1]}" if self._changed is not None or self._periodic_dirty is not None else ""
                if self._changed is not None:
                    self._changed.add(key)
                if self._adopt_dirty is not None:
                    self._adopt_dirty.add(jid)
                if self._periodic_dirty is not None:
                    self._periodic_dirty.add(key)
            elif type(event).__name__ == "QueueReloaded":
                self._changed = None
                self._adopt_dirty = None
                self._periodic_dirty = None

    def _on_source_event(self, events: list[Any]) -> None:
        """A batch of the source queue's events (``JobQueue.subscribe_batch``)."""
        for event in events:
            name = type(event).__name__
            if name == "QueueReloaded":
                self._to_scan = None
                continue
            jid = getattr(event, "id", None)
            if jid is None:
                continue
            if name == "JobRemoved":
                self._order.pop(jid, None)
                if self._to_scan is not None:
                    self._to_scan.discard(jid)
                continue
            if name == "JobAdded" and jid not in self._order:
                self._arrivals += 1
                self._order[jid] = self._arrivals
            if self._to_scan is not None:
                self._to_scan.add(jid)

    def _untracked(self, src_key: str) -> None:
        if self._to_scan is not None:
            c, _, p = src_key.partition(".")
            try:
                self._to_scan.add((int(c), int(p)))
            except ValueError:
                pass

    def _candidates(self) -> Any:
        """The source jobs this cycle scans, in queue order (module docstring)."""
        if not self._watching or not self.scanner.time_free:
            self._to_scan = None
            return list(self.src_q)
        if self._to_scan is None:  # renumber in the queue's order; everything is scanned
            jobs = list(self.src_q)
            self._order = {job.id: i for i, job in enumerate(jobs)}
            self._arrivals = len(self._order)
            self._to_scan = set()
            return jobs
        order = self._order
        todo = sorted((jid for jid in self._to_scan if jid in order), key=order.__getitem__)
        get = self.src_q.get
        return [job for jid in todo if (job := get(jid)) is not None]

    def close(self) -> None:
        """Stop listening to the queues and end running hooks' bookkeeping."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        self.hooks.close()

    def poll(self, now: float) -> None:
        self.poll_count += 1
        changed, self._changed = self._changed, set()
        if self.poll_count % 5 == 1:
            self.adopt_orphans(now)
        # UpdateRouteStats: the recount is skipped when the last poll's closing recount still
        # holds (only a poll or a table switch changes the tracked jobs or the book)
        if self._counted:
            self._adjust_throttles(now)
        else:
            self.update_route_stats(now)
        self._counted = False
        self.get_candidate_jobs(now)
        # A SUBMITTED job whose source and routed copy did not change since the last poll and that
        # has no update hook would get the very same status check: skip it (the check is a pure
        # function of the two ads once the copy has been seen)
        may_skip, submitted = changed is not None and self._watching, State.SUBMITTED
        # no update hook can run when hooks may not, or when no <KEYWORD>_HOOK_UPDATE_JOB_INFO is set
        no_hooks = not self.hooks.allow_run or not self.hooks.defines_any(hk.UPDATE)
        settled = self._settled
        if may_skip and no_hooks and settled.holds(self.jobs):
            visit = settled.to_visit(self.jobs, changed)  # the others would be skipped below
        else:
            if type(self.jobs) is not Tracked:  # (a plain dict put in its place)
                self.jobs = Tracked(self.jobs)
            self.jobs.edited = False
            visit = list(self.jobs.values())
            settled.renumber(visit)
        for job in visit:
            if (may_skip and job.state is submitted and job.saw_dest and not job.dirty
                    and job.src_key not in changed and job.dest_key not in changed
                    and (no_hooks or self.hooks.path(hk.UPDATE, self._keyword(job)) is None)):
                settled.note(job, self.jobs)
                continue
            for state, step in STEPS_FROM.get(job.state, STEPS):
                if job.state is state:
                    step(self, job, now)
            settled.note(job, self.jobs)
        if now >= self.next_periodic:
            self.eval_periodic(now)
            self.next_periodic = now + self.periodic_expr_interval
        self.recount()
        self._counted = True

    def num_managed(self) -> int:
        """The tracked jobs not RETIRED (a settled job is SUBMITTED: only the others are looked at)."""
        settled = self._settled
        if settled.holds(self.jobs):
            return len(self.jobs) - settled.retired(self.jobs)
        states = [j.state for j in self.jobs.values()]  # a list and its count: no generator step per job
        return len(states) - states.count(State.RETIRED)

    def accepting_more_jobs(self, managed: int | None = None) -> bool:
        """The global check: ``JOB_ROUTER_MAX_JOBS < 0 || managed < JOB_ROUTER_MAX_JOBS``."""
        if self.max_jobs < 0:
            return True
        return (self.num_managed() if managed is None else managed) < self.max_jobs

    def get_candidate_jobs(self, now: float) -> None:
        """``GetCandidateJobs`` + ``ChooseRoute``; figures of the cycle go to ``last_cycle``."""
        info: dict[str, Any] = {"time": now, "considered": 0, "new": 0, "stopped": None}
        self.last_cycle = info
        if not self.table.routing_enabled:
            info["stopped"] = "routing disabled"
            return
        managed = self.num_managed()
        if not self.accepting_more_jobs(managed):
            info["stopped"] = f"JOB_ROUTER_MAX_JOBS reached ({managed} ≥ {self.max_jobs})"
            return
        routes = self.table.routes
        stats = [self.book.get(r.name) for r in routes]
        accepting = [route_state(r, s)[0] for r, s in zip(routes, stats)]
        scanner = self.scanner
        info["umbrella"] = scanner.begin_cycle(accepting, now)
        if info["umbrella"] is None:
            info["stopped"] = "no route is accepting jobs"
            return
        if scanner.umbrella_problem is not None:  # every job's query fails: none is a candidate
            info["stopped"] = scanner.umbrella_problem
            return
        n_accepting = sum(accepting)
        tracked = self.jobs
        # a job can only be held back by its translate hook when one is configured or has failed
        translate_check = bool(self.translate_failures) or (
            not self.hooks.allow_run and self.hooks.defines_any(hk.TRANSLATE))
        candidates = self._candidates()
        pending = self._to_scan  # None: not incremental (no events, or a clock in the table)
        # ids of this cycle's candidates kept for the next one (not judged below); ``keep``
        # collects them in one pass, the unvisited rest is added when the loop stops early
        keep: list[Any] | None = None if pending is None else []
        # per route, the job count at which it may stop accepting in this cycle: with no
        # throttle, route_state turns false only when num_jobs reaches MaxJobs or idle
        # (num_jobs - num_running; num_running does not move within a cycle) reaches
        # MaxIdleJobs, so route_state is asked again only from then on
        limits = [count_limit(r, s) for r, s in zip(routes, stats)]
        # ChooseRoute without round robin: the first accepting match of a classification,
        # remembered until a route stops accepting
        first: dict[int, tuple[Any, int | None]] = {}
        round_robin, max_jobs, scan = self.round_robin, self.max_jobs, scanner.scan
        add, route_flags = self._add_candidate, [None] * len(routes)  # per route, once a job takes it
        considered = new = 0
        stopped_at = len(candidates)
        with gc_paused():  # this loop allocates a RoutedJob per placed job (gc_paused)
            for n, job in enumerate(candidates):
                if max_jobs >= 0 and managed >= max_jobs:
                    info["stopped"] = f"JOB_ROUTER_MAX_JOBS reached ({managed} ≥ {max_jobs})"
                    stopped_at = n
                    break
                if job.key in tracked:
                    continue  # a candidate again once untracked (_untracked)
                considered += 1
                c = scan(job)
                if keep is not None and not (scanner.last_fast and (c is None or not c.matches)):
                    keep.append(job.id)  # else unroutable whatever the routes' state, until it changes
                if c is None or not c.umbrella:
                    continue
                if round_robin:
                    ok = [i for i in c.matches if accepting[i]]
                    idx = None
                    if ok:
                        idx = ok[self._rr % len(ok)]
                        self._rr += 1
                else:
                    hit = first.get(id(c))
                    if hit is not None and hit[0] is c:
                        idx = hit[1]
                    else:
                        idx = next((i for i in c.matches if accepting[i]), None)
                        first[id(c)] = (c, idx)
                if idx is None:
                    if n_accepting == 0:
                        info["stopped"] = "all routes are full"
                        stopped_at = n + 1  # this job is judged (in ``keep`` or not) already
                        break
                    continue
                if translate_check and self._translate_blocked(job, now) is not None:
                    continue
                route, st = routes[idx], stats[idx]
                st.num_jobs += 1  # IncrementRoutedJobs: the limits hold within one poll
                st.recent_routed += 1
                if (st.throttle > 0 or st.num_jobs >= limits[idx]) and not route_state(route, st)[0]:
                    accepting[idx] = False
                    n_accepting -= 1
                    first.clear()
                flags = route_flags[idx]
                if flags is None:
                    flags = route_flags[idx] = self._route_flags(route)
                add(job, route, now, flags)
                managed += 1
                new += 1
        info["considered"], info["new"] = considered, new
        if pending is not None and keep is not None:
            pending.clear()
            pending.update(keep)
            pending.update(job.id for job in candidates[stopped_at:])
        info["signatures"] = scanner.signatures
        info["evaluations"] = scanner.evaluations

    def _translate_blocked(self, job: Any, now: float | None) -> str | None:
        """Why this untracked job is left alone although a route would take it, or None:

        - its translate hook may not run (``allow_hooks`` off): what the hook would make of the
          job is unknown, so it is not routed; the program is reported once as "would run";
        - its translate hook failed ``max_attempts`` times (over any number of claims): RouteDeck
          stops retrying (see :meth:`Lifecycle.submit`). ``now=None``: only say why (why-not)."""
        failures = self.translate_failures.get(job.key)
        if failures is not None and failures >= self.hooks.max_attempts:
            return (f"its translate hook failed {failures} times; RouteDeck stopped retrying "
                    f"(HTCondor would run it again on every claim)")
        if self.hooks.allow_run:
            return None
        path = self.hooks.path(hk.TRANSLATE, self.hooks.job_keyword(job))
        if path is None:
            return None
        if now is not None and self.hooks.withhold(hk.TRANSLATE, path, job.key):
            self._emit(ev.HookWithheld(now, f"{hk.TRANSLATE} hook would run: {path} (not run: needs "
                                            f"{hk.ALLOW_FLAG}); jobs it would translate are not routed",
                                       None, job.key, hook=hk.TRANSLATE, path=path))
        return hk.withheld_reason(path)

    def _route_flags(self, route: Any) -> tuple:
        """(route, has JobShouldBeSandboxed, has EditJobInPlace, target universe, grid resource)."""
        flags = self._job_exprs.get(id(route))
        if flags is None or flags[0] is not route:
            flags = self._job_exprs[id(route)] = (
                route, _has_job_expr(route, "JobShouldBeSandboxed", "job_should_be_sandboxed"),
                _has_job_expr(route, "EditJobInPlace", "edit_job_in_place"),
                int(route.target_universe), route.grid_resource)
        return flags

    def _add_candidate(self, job: Any, route: Any, now: float, flags: tuple | None = None) -> RoutedJob:
        # the source ad copied as the queue holds it: cluster attributes overlaid by the proc's
        # (Job.attrs, without its property call: this runs once per placed job of a cycle), built
        # as the SrcAttrs the job keeps (RoutedJob.src would wrap a plain dict in a second copy);
        # dict.update, not SrcAttrs.update: the copy is new, not a change (version 0)
        if type(job) is Job:
            ads = job._q._ads
            src = SrcAttrs(ads.get(job._ckey, _NONE))
            dict.update(src, ads.get(job.key, _NONE))
        else:
            src = SrcAttrs(job.attrs)
        # per route, once: its target universe, grid resource and whether it has the two job
        # expressions evaluated when the candidate is created, against the source ad (htcondor.md
        # §1.4; building the job's evaluation ad is skipped when the route has neither)
        if flags is None:
            flags = self._route_flags(route)
        rj = RoutedJob(job.key, route.name, src, _UNCLAIMED, flags[3], flags[4])
        self._settled.added(rj)
        if flags[1]:
            rj.is_sandboxed = _truth(route, "JobShouldBeSandboxed", job.classad(), now)
        if flags[2]:
            rj.edit_in_place = _truth(route, "EditJobInPlace", job.classad(), now)
        dict.__setitem__(self.jobs, job.key, rj)  # (filed by Settled.added above)
        return rj

    def _build(self, route: Any, base: dict[str, str], job: RoutedJob, now: float) -> dict[str, str]:
        build_routed_ad = self._builder or default_build_routed_ad
        c, _, p = job.src_key.partition(".")
        return build_routed_ad(self.table, route, base, now=now, source_id=(int(c), int(p)),
                               sandboxed=job.is_sandboxed, edit_in_place=job.edit_in_place)

    def why_not(self, job_id: Any, now: float) -> Any:
        """The decision for one source job, step by step (:mod:`engine.router.whynot`)."""
        job = ops.get(self.src_q, job_id)
        if job is None:
            return Explanation(ops.job_key(job_id), None, "no such job in the source queue")

        copy = copy_verdict(job, self.name)
        if copy is not None:
            return copy
        stats = {s.name.lower(): s for s in self.book}
        tracked = self.jobs.get(job.key)
        expl = explain_job(self.table, job, now=now, stats=stats, tracked=tracked,
                           managed=self.num_managed(), router_name=self.name)
        blocked = self._translate_blocked(job, None) if tracked is None and expl.route is not None else None

        if blocked is None:
            rejected = self._submit_rejected(job, expl.route, now) if tracked is None and expl.route else None
            if rejected is None:
                return expl
            return Explanation(expl.job, None, f"routing to {expl.route} would fail: failed to submit job: {rejected}",
                               expl.steps + (Step("the schedd accepts the routed copy", False, rejected, expl.route),))
        return Explanation(expl.job, None, f"not routed: {blocked}",
                           expl.steps + (Step("translate hook", False, blocked, expl.route),))

    def _submit_rejected(self, job: Any, route_name: str, now: float) -> str | None:
        """Build the routed copy as the router would now; the reason when the schedd would refuse
        it (:class:`~engine.router.table.SubmitRejected`), else None. Other build errors are
        left to the router (they depend on nothing why-not can add)."""
        route = self.table.route(route_name)
        if route is None or getattr(route.transform, "apply", None) is None:
            return None
        build_routed_ad = self._builder or default_build_routed_ad
        c, _, p = job.key.partition(".")
        try:
            build_routed_ad(self.table, route, dict(job.attrs), now=now, source_id=(int(c), int(p)))
        except SubmitRejected as exc:
            return exc.message
        except Exception:  # noqa: BLE001  (the router reports these when it routes the job)
            return None
        return None

    def ledger(self, now: float) -> list:
        """Every idle source job's ledger entry (:func:`engine.router.unrouted.router_ledger`)."""
        from engine.router.unrouted import router_ledger  # noqa: PLC0415 - the ledger screen only

        return router_ledger(self, now)

    def why_not_candidate(self, route_name: str | None, now: float) -> tuple[str, str] | None:
        """The job a why-not about ``route_name`` is most likely about (:func:`.whynot.pick_candidate`)."""
        return pick_candidate(self, route_name, now)

def _has_job_expr(route: Any, attr: str, field: str) -> bool:
    if getattr(route, field, None):
        return True
    ad = getattr(route, "route_ad", None)  # ClassAd-syntax routes keep them in the route ad
    return ad is not None and any(k.lower() == attr.lower() for k in ad.keys())

