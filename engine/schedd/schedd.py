"""The embedded schedd: job states, submission, hold / release / remove / qedit, periodic and
exit policy, running jobs on the simulated sites, and the history file.

Design decisions and invariants:

- The queue is the foundation's ``JobQueue``; every change goes through one of its transactions
  and is therefore a commit in ``job_queue.log`` (htcondor.md §3.2): durable, except where the
  schedd commits non-durably (a local job's start, ``mark_serial_job_running``; ``DestroyProc``). All changes made
  while handling one engine step at one ``now`` are grouped in as few transactions as possible
  (one per phase), which keeps the log replayable and the demo fast.
- States (``proc.h``): 1 Idle, 2 Running, 3 Removed, 4 Completed, 5 Held. Each change sets
  ``EnteredCurrentStatus``; a start sets ``JobCurrentStartDate`` (``JobStartDate`` the first
  time), ``NumJobStarts``, ``JobRunCount``; an exit sets ``ExitCode``, ``ExitBySignal``,
  ``CompletionDate`` (only when the job completes), ``RemoteWallClockTime`` (accumulated).
- Who runs what: grid-universe (9) jobs — the router's routed copies — go to the site of their
  ``GridResource`` or ``RouteName`` (the gridmanager's role); local-universe (12) jobs go to the
  local executor when their Requirements' deferral clause allows (htcondor.md §2.1 "runnable
  check"). Other jobs have no pool in the demo and stay idle; the router's ``why_not`` says why.
- Externally managed jobs (``Managed == "External"``, claimed by the router) are left alone:
  the router mirrors their status and evaluates their periodic policy (htcondor.md §1.6).
- A job leaves the queue (history file, then ``DestroyClassAd``) when it is Removed or
  Completed, ``LeaveJobInQueue`` is not true and it is not externally managed. A routed copy
  completes with ``JobFinishedHookDone`` set, so the router can finalize it (htcondor.md §1.6).
- Periodic policy (deviation, same result): HTCondor evaluates every job every
  PERIODIC_EXPR_INTERVAL; here an interval evaluates the jobs that changed since the last one,
  the jobs whose ``time()`` deadline came (``user_policy.time_deadline``: ``time() - Attr OP C``
  can change only as ``time()`` crosses ``Attr + C``) and the jobs whose time dependence is not
  of that form. A job left out would give the non-acting result of its last evaluation again, so
  the same jobs act at the same intervals (``Schedd.periodic``; tests/engine/schedd/test_policy_incremental.py).
- DeferralTime of cron jobs is kept in memory only (``jobAd->Assign``, not logged; htcondor.md
  §2.4); :mod:`engine.schedd.cron` owns it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from engine.classad import evaluate, format_value, is_true, make_ad, quote
from engine.classad_text import integer_of, string_of
from engine.contract.codes import HoldCode, JobStatus
from engine.queue.records import job_order
from engine.schedd.cron import needs_cron
from engine.schedd.history import HistoryWriter
from engine.lang.user_policy import (
    UNBOUNDED, Decision, SystemPolicy, analyze_exit, analyze_periodic, policy_ad, policy_ad_of, policy_roots, time_deadline)
from engine.schedd.store import Store
from engine.schedd.sites import SiteReport, SiteSet
from engine.schedd.workload import JobTemplate

# engine.contract.codes members bound once: the passes below test every job, and an enum member
# lookup (JobStatus.IDLE) costs ~0.3 µs on Python 3.11
IDLE, RUNNING, REMOVED, COMPLETED, HELD = (JobStatus.IDLE, JobStatus.RUNNING, JobStatus.REMOVED, JobStatus.COMPLETED,
                                          JobStatus.HELD)
PERIODIC_EXPR_INTERVAL = 60  # htcondor.md §1.3 timing knobs
# GridJobStatus: the remote status by getJobStatusString's names (src/condor_utils/proc.cpp), as the
# gridmanager's batch job writes it (infnbatchjob.cpp ProcessRemoteAd → SetRemoteJobStatus)
GRID_STATUS = {IDLE: "IDLE", RUNNING: "RUNNING", REMOVED: "REMOVED", COMPLETED: "COMPLETED", HELD: "HELD"}


def grid_job_id(grid_resource: str | None, site: str, job: str, seq: int) -> str:
    """The ``GridJobId`` the gridmanager writes after submitting ``job`` (the demo's stand-in for
    it). For a ``batch`` resource, ``INFNBatchJob::SetRemoteIds`` writes ``batch <type> <sandbox id>
    <batch job id>`` (infnbatchjob.cpp); an HTCondor resource gets ``condor <schedd> <pool>
    <cluster.proc>``; the ids here are made up from the site's name and a counter."""
    words = (grid_resource or "batch").split()
    kind = words[0].lower()
    if kind == "batch":
        lrms = words[1] if len(words) > 1 else "pbs"
        return f"batch {lrms} {site}#{job} {lrms}/{seq}"
    if kind == "condor":
        schedd = words[1] if len(words) > 1 else site
        pool = words[2] if len(words) > 2 else site
        return f"condor {schedd} {pool} {seq}.0"
    return f"{kind} {site} {seq}"
REAP_BATCH = 100


def _str(attrs: Mapping[str, str], name: str) -> str | None:
    return string_of(attrs.get(name))


def _int(attrs: Mapping[str, str], name: str, default: int | None = None) -> int | None:
    value = integer_of(attrs.get(name))
    return default if value is None else value


@dataclass
class ScheddEvent:
    time: float
    kind: str
    message: str
    job: str | None = None
    level: str = "info"


@dataclass
class Schedd:
    store: Store
    sites: SiteSet
    history: HistoryWriter | None = None
    system_policy: SystemPolicy = field(default_factory=SystemPolicy)
    schedd_interval: int = 300
    cron: Any = None  # engine.schedd.cron.CronKeeper
    on_event: Callable[[ScheddEvent], None] | None = None
    last_periodic: float = float("-inf")
    last_cron: float = float("-inf")
    cron_interval: int = 60  # calculateCronTabSchedules runs at every negotiation cycle
    runtimes: dict[str, Any] = field(default_factory=dict)  # job -> RunTime for local jobs
    placement: dict[str, str] = field(default_factory=dict)  # job -> local site named by the workload
    # incremental periodic policy (see ``periodic``): job -> time its result may change, a heap of
    # (time, job) with stale entries skipped, jobs re-evaluated at every interval, the policy the
    # bookkeeping is for, and a count of evaluations (for tests and bench/)
    _grid_seq: int = field(default=0, repr=False)  # GridJobIds handed out (grid_job_id)
    _deadlines: dict[str, float] = field(default_factory=dict, repr=False)
    _deadline_heap: list[tuple[float, str]] = field(default_factory=list, repr=False)
    _unbounded: set[str] = field(default_factory=set, repr=False)
    _policy_for: Any = field(default=None, repr=False)
    policy_evaluations: int = 0

    # ---------------------------------------------------------------------------- events

    def _emit(self, now: float, kind: str, message: str, job: str | None = None, level: str = "info") -> None:
        if self.on_event is not None:
            self.on_event(ScheddEvent(now, kind, message, job, level))

    # ---------------------------------------------------------------------------- submit

    def submit(self, template: JobTemplate, procs: int, now: float) -> list[str]:
        """condor_submit of one cluster: the template's attributes on the cluster ad."""
        t = int(now)
        attrs = dict(template.attrs)
        attrs.setdefault("JobUniverse", "5")
        attrs.setdefault("Owner", quote("demo"))
        attrs.setdefault("Cmd", quote("/bin/true"))
        if any(a in attrs for a in ("CronMinute", "CronHour", "CronDayOfMonth", "CronMonth",
                                   "CronDayOfWeek", "DeferralTime")):
            # NeedsJobDeferral: submit adds the window, prep time and ScheddInterval (htcondor.md §2.1)
            attrs.setdefault("DeferralWindow", "0")
            attrs.setdefault("DeferralPrepTime", "300")
            attrs.setdefault("ScheddInterval", str(self.schedd_interval))
        attrs["QDate"] = str(t)
        attrs["WorkloadTemplate"] = quote(template.name)
        with self.store.transaction(now) as tx:
            cluster = tx.new_cluster()
            tx.set_many(f"0{cluster}.-1", [("ClusterId", str(cluster)), *attrs.items()])
            ids = []
            for p in range(procs):
                key = f"{cluster}.{p}"
                tx.new_proc(cluster, p)
                tx.set_many(key, (("ProcId", str(p)), ("JobStatus", IDLE.text), ("EnteredCurrentStatus", str(t))))
                ids.append(key)
        for key in ids:
            self.job_entered(key, template, now)
        return ids

    def job_entered(self, job: str, template: Any, now: float) -> None:
        """A job is in the queue (submitted, or found again after a restart): the workload facts
        of its template (None: none known) and its crondor registration."""
        if template is not None:
            if template.runtime is not None:
                self.runtimes[job] = template.runtime
            if template.site is not None:
                self.placement[job] = template.site
        if self.cron is not None:
            self.cron.job_entered(job, now)

    # ---------------------------------------------------------------------------- commands

    def hold(self, job: str, now: float, reason: str = "via RouteDeck", code: int = HoldCode.UserRequest,
             subcode: int = 0) -> bool:
        attrs = self.store.attrs(job)
        if attrs is None or _int(attrs, "JobStatus") in (HELD, REMOVED, COMPLETED):
            return False
        with self.store.transaction(now) as tx:
            self._hold(tx, job, attrs, now, reason, code, subcode)
        return True

    def _hold(self, tx, job: str, attrs: Mapping[str, str], now: float, reason: str, code: int, subcode: int) -> None:
        t = int(now)
        if _int(attrs, "JobStatus") == RUNNING:
            self._vacate(tx, job, attrs, now)
        tx.set(job, "JobStatus", HELD.text)
        tx.set(job, "EnteredCurrentStatus", str(t))
        tx.set(job, "HoldReason", quote(reason))
        tx.set(job, "HoldReasonCode", str(int(code)))
        tx.set(job, "HoldReasonSubCode", str(subcode))
        tx.set(job, "NumHolds", str((_int(attrs, "NumHolds", 0) or 0) + 1))
        if "ReleaseReason" in attrs:
            tx.set(job, "LastReleaseReason", attrs["ReleaseReason"])
            tx.delete(job, "ReleaseReason")
        self.sites.cancel(job, now)
        if self.cron is not None:
            self.cron.job_held(job, code)
        self._emit(now, "job-held", f"{job} held: {reason} (code {int(code)})", job,
                   "warning" if code != HoldCode.UserRequest else "info")

    def release(self, job: str, now: float, reason: str = "via RouteDeck") -> bool:
        attrs = self.store.attrs(job)
        if attrs is None or _int(attrs, "JobStatus") != HELD:
            return False
        with self.store.transaction(now) as tx:
            self._release(tx, job, attrs, now, reason)
        if self.cron is not None:
            self.cron.job_released(job, now)
        return True

    def _release(self, tx, job: str, attrs: Mapping[str, str], now: float, reason: str) -> None:
        tx.set(job, "JobStatus", IDLE.text)
        tx.set(job, "EnteredCurrentStatus", str(int(now)))
        tx.set(job, "ReleaseReason", quote(reason))
        if "HoldReason" in attrs:
            tx.set(job, "LastHoldReason", attrs["HoldReason"])
        if "HoldReasonCode" in attrs:
            tx.set(job, "LastHoldReasonCode", attrs["HoldReasonCode"])
        for name in ("HoldReason", "HoldReasonCode", "HoldReasonSubCode"):
            if name in attrs:
                tx.delete(job, name)
        self._emit(now, "job-released", f"{job} released: {reason}", job)

    def remove(self, job: str, now: float, reason: str = "via RouteDeck") -> bool:
        attrs = self.store.attrs(job)
        if attrs is None or _int(attrs, "JobStatus") in (REMOVED, COMPLETED):
            return False
        with self.store.transaction(now) as tx:
            self._remove(tx, job, attrs, now, reason)
        return True

    def _remove(self, tx, job: str, attrs: Mapping[str, str], now: float, reason: str) -> None:
        if _int(attrs, "JobStatus") == RUNNING:
            self._vacate(tx, job, attrs, now)
        tx.set(job, "JobStatus", REMOVED.text)
        tx.set(job, "EnteredCurrentStatus", str(int(now)))
        tx.set(job, "RemoveReason", quote(reason))
        self.sites.cancel(job, now)
        if self.cron is not None:
            self.cron.forget(job)
        self._emit(now, "job-removed", f"{job} removed: {reason}", job)

    def qedit(self, job: str, name: str, text: str, now: float) -> bool:
        if self.store.attrs(job) is None:
            return False
        with self.store.transaction(now) as tx:
            tx.set(job, name, text)
        if self.cron is not None and name.lower().startswith("cron"):
            self.cron.job_edited(job, now)
        return True

    # ---------------------------------------------------------------------------- running

    def _vacate(self, tx, job: str, attrs: Mapping[str, str], now: float) -> None:
        start = _int(attrs, "JobCurrentStartDate")
        if start is not None:
            wall = float(attrs.get("RemoteWallClockTime", "0.0") or 0.0) + max(0.0, now - start)
            tx.set(job, "RemoteWallClockTime", format_value(float(wall)))

    def dispatch(self, now: float) -> None:
        """Hand idle grid and local jobs to their sites (the gridmanager's / local starter's role)."""
        starts: list[tuple[str, Mapping[str, str]]] = []
        grid: list[tuple[str, str]] = []  # (routed copy, its GridJobId) handed to a grid site
        location = self.sites.location
        # filtered before sorting: most idle jobs are at a site already or managed by the router
        ready = [(job, view) for job, view in self.store.dispatch_views()
                 if location(job) is None and view.get("Managed") != '"External"']
        for job, view in sorted(ready, key=lambda jv: job_order(jv[0])):
            universe = _int(view, "JobUniverse")
            if universe == 9:
                site = self.sites.site_for(_str(view, "RouteName"), _str(view, "GridResource"), 9)
                if site is not None:
                    self.sites.submit(site, job, now)
                    self._grid_seq += 1
                    grid.append((job, grid_job_id(_str(view, "GridResource"), site.spec.name, job, self._grid_seq)))
            elif universe == 12:
                named = self.placement.get(job)
                site = self.sites.site_named(named) if named else self.sites.site_for(None, None, 12)
                if site is None:
                    continue
                attrs = view.attrs
                gate = self.cron.gate(job, attrs, now, view.classad) if self.cron is not None else None
                if gate is False:  # not runnable yet (deferral clause false)
                    continue
                self.sites.submit(site, job, now, self.runtimes.get(job), gate=gate or None)
                starts.append((job, attrs))
        if grid:  # the gridmanager's submit: the remote id and the remote status, in its one transaction
            with self.store.transaction(now) as tx:
                for job, gid in grid:
                    tx.set(job, "GridJobId", quote(gid))
                    tx.set(job, "GridJobStatus", quote(GRID_STATUS[IDLE]))
        if starts:  # a local job shows Running as soon as its starter is spawned (htcondor.md §2.5)
            # spawnLocalStarter → mark_serial_job_running commits non-durably (schedd.cpp: "nothing
            # that has been written in this transaction needs to be immediately synced to disk")
            with self.store.transaction(now, durable=False) as tx:
                for job, attrs in starts:
                    self._running(tx, job, attrs, now, now)

    def _running(self, tx, job: str, attrs: Mapping[str, str], started: float, now: float) -> None:
        t = int(now)
        s = int(started)
        tx.set(job, "JobStatus", RUNNING.text)
        tx.set(job, "EnteredCurrentStatus", str(t))
        tx.set(job, "JobCurrentStartDate", str(s))
        if "JobStartDate" not in attrs:
            tx.set(job, "JobStartDate", str(s))
        tx.set(job, "NumJobStarts", str((_int(attrs, "NumJobStarts", 0) or 0) + 1))
        tx.set(job, "JobRunCount", str((_int(attrs, "JobRunCount", 0) or 0) + 1))

    def apply_reports(self, reports: Iterable[SiteReport], now: float) -> None:
        reports = list(reports)
        if not reports:
            return
        exited = {r.job for r in reports if r.kind != "running"}
        with self.store.transaction(now) as tx:
            for r in reports:
                attrs = self.store.attrs(r.job)
                if attrs is None:
                    continue
                status = _int(attrs, "JobStatus")
                if "GridJobStatus" in attrs:  # the gridmanager mirrors the remote status it polled
                    remote = {"running": RUNNING, "exited": COMPLETED}.get(r.kind)
                    if remote is not None and (r.kind != "running" or r.job not in exited):
                        tx.set(r.job, "GridJobStatus", quote(GRID_STATUS[remote]))
                if r.kind == "running":
                    if status == IDLE and r.job not in exited:
                        self._running(tx, r.job, attrs, r.started, r.time)
                elif r.kind == "missed":
                    self._hold(tx, r.job, attrs, r.time, "Job missed deferred execution time",
                               HoldCode.MissedDeferredExecutionTime, 0)
                elif r.kind == "exited" and status in (IDLE, RUNNING):
                    self._exited(tx, r, attrs)

    def _exited(self, tx, r: SiteReport, attrs: Mapping[str, str]) -> None:
        job, now = r.job, r.time
        t = int(now)
        if _int(attrs, "JobStatus") == IDLE:  # ran and ended before the first update reached us
            self._running(tx, job, attrs, r.started, r.started)
        wall = float(attrs.get("RemoteWallClockTime", "0.0") or 0.0) + max(0.0, (r.ended or now) - r.started)
        exit_attrs = {
            "ExitCode": str(r.exit_code),
            "ExitBySignal": "false",
            "RemoteWallClockTime": format_value(float(wall)),
            "LastRemoteWallClockTime": format_value(float(max(0.0, (r.ended or now) - r.started))),
        }
        for k, v in exit_attrs.items():
            tx.set(job, k, v)
        merged = dict(attrs)
        merged.update(exit_attrs)
        merged["JobStatus"] = RUNNING.text
        # the ad of what the policy reads (user_policy.policy_ad_of), or the whole merged ad (also
        # where a name is spelled twice: the queue's spelling and the one set here)
        ad = policy_ad_of(merged, self.system_policy)
        d = analyze_exit(make_ad(merged) if ad is None else ad, merged, RUNNING, self.system_policy, now)
        after = dict(merged, JobStatus=IDLE.text)  # the run is accounted for: no second vacate
        if d.action == "hold" or (d.action == "none" and d.value == -1):
            self._hold(tx, job, after, now, d.reason, d.code, d.subcode)
        elif d.action == "stay" or d.action == "release":
            # requeue (check_zombie): back to Idle; a cron job gets a new DeferralTime
            tx.set(job, "JobStatus", IDLE.text)
            tx.set(job, "EnteredCurrentStatus", str(t))
            if self.cron is not None:
                self.cron.job_requeued(job, now)
            self._emit(now, "job-requeued", f"{job} exited with code {r.exit_code} and was requeued (OnExitRemove false)", job)
        elif d.action == "remove" and d.source == "system macro":
            self._remove(tx, job, after, now, d.reason)
        else:
            tx.set(job, "JobStatus", COMPLETED.text)
            tx.set(job, "EnteredCurrentStatus", str(t))
            tx.set(job, "CompletionDate", str(t))
            if _int(attrs, "JobUniverse") == 9:
                tx.set(job, "JobFinishedHookDone", str(t))
            if self.cron is not None:
                self.cron.forget(job)

    # ---------------------------------------------------------------------------- policy

    def periodic(self, now: float, force: bool = False) -> int:
        """Evaluate periodic policy every PERIODIC_EXPR_INTERVAL; returns how many jobs acted.

        HTCondor evaluates every job at every interval. Here, when the store tracks changes
        (``take_changed``), an interval evaluates only the jobs that changed since the last one,
        those whose time deadline has come (``user_policy.time_deadline``: the result of an
        unchanged job can change only through ``time()``) and those whose time dependence cannot
        be bounded. Every job left out would give the same non-acting result it gave at its last
        evaluation, so the jobs that act, and how, are those of a full pass (an acting job always
        changes, and is therefore evaluated again at the next interval). ``force`` and a store
        that does not track changes take the full pass."""
        if not force and now - self.last_periodic < PERIODIC_EXPR_INTERVAL:
            return 0
        self.last_periodic = now
        acts: list[tuple[str, Mapping[str, str], Decision]] = []
        sysp = self.system_policy
        any_system = sysp.any()
        changed = self.store.take_changed()
        if force or changed is None or self._policy_for != sysp:  # a reload with the same knobs keeps the deadlines
            candidates = sorted(self.store.periodic_views(any_system), key=lambda jv: job_order(jv[0]))
            self._deadlines, self._deadline_heap, self._unbounded = {}, [], set()
            self._policy_for = sysp
        else:
            keys = set(changed)
            keys.update(self._unbounded)
            heap = self._deadline_heap
            while heap and heap[0][0] <= now:
                t, job = heapq.heappop(heap)
                if self._deadlines.get(job) == t:
                    del self._deadlines[job]
                    keys.add(job)
            candidates = []
            for job in sorted(keys, key=job_order):
                self._unbounded.discard(job)
                self._deadlines.pop(job, None)
                view = self.store.view(job)
                if view is not None:
                    candidates.append((job, view))
        self.policy_evaluations += len(candidates)
        roots = policy_roots(sysp)
        for job, view in candidates:
            if view.get("Managed") == '"External"':
                continue  # the router evaluates it (htcondor.md §1.6)
            status = _int(view, "JobStatus")
            if status not in (IDLE, RUNNING, HELD):
                continue
            if not any_system and not any(k in view for k in ("PeriodicHold", "PeriodicRelease", "PeriodicRemove")):
                continue
            # the ad of what the policy reads (user_policy.policy_ad), else the queue's cached
            # evaluation ad of the whole job (rebuilt only when the job changed)
            ad = policy_ad(view.get, roots)
            d = analyze_periodic(view.classad() if ad is None else ad, view, status or 0, sysp, now)
            if d.action != "none" and not (d.action == "hold" and status == HELD):
                acts.append((job, view.attrs, d))
                continue
            due = time_deadline(view.get, view.attrs.values(), sysp, now, status)
            if due == UNBOUNDED:
                self._unbounded.add(job)
            elif due is not None:
                self._deadlines[job] = due
                heapq.heappush(self._deadline_heap, (due, job))
        if not acts:
            return 0
        released = []
        with self.store.transaction(now) as tx:
            for job, attrs, d in acts:
                if d.action == "hold":
                    self._hold(tx, job, attrs, now, d.reason, d.code, d.subcode)
                elif d.action == "release":
                    self._release(tx, job, attrs, now, d.reason)
                    released.append(job)
                elif d.action == "remove":
                    self._remove(tx, job, attrs, now, d.reason)
        if self.cron is not None:
            for job in released:
                self.cron.job_released(job, now)
        return len(acts)

    # ---------------------------------------------------------------------------- crondor

    def cron_cycle(self, now: float) -> None:
        """DeferralTimes for jobs that entered, were requeued, released or edited; and, every
        ``cron_interval``, for every idle cron job (``calculateCronTabSchedules``)."""
        if self.cron is None:
            return
        pending = self.cron.pending()
        todo: dict[str, tuple[Mapping[str, str], str]] = {}
        if now - self.last_cron >= self.cron_interval:
            self.last_cron = now
            for job, attrs in self.store.cron_idle_jobs():
                if needs_cron(attrs):
                    todo[job] = (attrs, pending.get(job, "periodic"))
        for job, reason in pending.items():
            if job not in todo:
                attrs = self.store.attrs(job)
                if attrs is not None:
                    todo[job] = (attrs, reason)
        holds = []
        for job in sorted(todo, key=job_order):
            attrs, reason = todo[job]
            h = self.cron.calculate(job, attrs, now, reason)
            if h is not None:
                holds.append((h, attrs))
        if holds:
            with self.store.transaction(now) as tx:
                for h, attrs in holds:
                    self._hold(tx, h.job, attrs, now, h.reason, h.code, 0)

    # ---------------------------------------------------------------------------- leaving

    def reap(self, now: float) -> list[str]:
        """Jobs that leave the queue: history record, then destroy (cluster ad with the last proc).

        Destroys are committed in batches of ``REAP_BATCH`` jobs, each commit non-durable:
        HTCondor commits one ``DestroyProc`` per job, non-durably (qmgmt.cpp ``DestroyProc``: "If
        we crash before this makes it to the disk, on restart we will attempt removing it
        again"); batching keeps one transaction from growing huge and the log short. The history
        record is written before the destroy is committed, so a crash in between can only repeat
        a record, never lose one."""
        gone = []
        for job, view in self.store.views((REMOVED, COMPLETED)):  # sorted below: the filter is per job
            if view.get("Managed") == '"External"':
                continue
            leave = view.get("LeaveJobInQueue")
            # the literal false (what finalize_job and condor_submit write) needs no evaluation ad
            if leave is not None and leave.strip().lower() != "false" and is_true(
                    evaluate(leave, my=view.classad(), now=now)):
                continue
            gone.append((job, view.attrs))
        gone.sort(key=lambda ja: job_order(ja[0]))
        for i in range(0, len(gone), REAP_BATCH):
            chunk = gone[i:i + REAP_BATCH]
            if self.history is not None:
                self.history.append_many([dict(attrs, EnteredHistoryTime=str(int(now))) for _, attrs in chunk])
            with self.store.transaction(now, durable=False) as tx:
                for job, _attrs in chunk:
                    tx.destroy(job)
                    self.runtimes.pop(job, None)
                    self.placement.pop(job, None)
        return [j for j, _ in gone]
