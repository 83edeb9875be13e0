"""Crondor wired into the embedded schedd: when DeferralTime is computed, the runnable check,
the starter's wait / start / missed decision (htcondor.md §2.4, §2.5).

Design decisions and invariants:

- The rules themselves are the crondor engine's pure functions (``engine.crondor.deferral``:
  ``compute_deferral`` = ``calculateCronTabSchedule``, ``is_runnable`` = submit's runnable
  clause, ``execute_decision`` = the starter). This module only keeps the schedd's state around
  them and says *when* they are called: enter queue (submit, or load at restart), requeue
  (``on_exit_remove = false``), release, qedit of a ``Cron*`` attribute, reconfig, and the
  periodic pass of the schedd's cycle.
- DeferralTime lives here, in memory (HTCondor assigns it in memory, never logs it; §2.4). After
  a restart it is computed again, which is exactly what a real schedd does. The stored value is
  what a real HTCondor >= 10.3 schedd would pick (``compute_deferral``'s prediction, including the
  weekday-only defect); RouteDeck's correct time is kept beside it for display.
- A schedule that can never fire (Feb 30) hangs a real schedd (§2.3 item 6); RouteDeck holds the
  job with code 25 and says so, rather than looping.
- Never two instances: a cron job is one proc, started only from Idle, and a new DeferralTime is
  computed only once it is Idle again (``compute_deferral`` keeps Running/Held jobs' times).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from engine.classad_text import integer_of
from engine.crondor import deferral as D
from engine.contract.codes import HoldCode, JobStatus
from engine.crondor.fields import ATTRS
from engine.queue.job import schedd_status
from engine.queue.records import is_proc_key, job_order
from engine.crondor.nextrun import CronError, next_runs
from engine.crondor.schedd import schedd_runs
from engine.crondor.zones import MktimeState



def needs_cron(attrs: Mapping[str, str]) -> bool:
    """``needsCronTab``: any of the five attributes present, whatever its type."""
    return D.needs_crontab(attrs)


class CronNames:
    """How a queue (``engine.queue.jobqueue.JobQueue``) spells the cron attributes it has seen,
    looked up again only when its names change (``names_stamp``)."""

    def __init__(self, queue) -> None:
        self.queue = queue
        self._stamp: object = None
        self._names: list[str] = []

    def __call__(self) -> list[str]:
        stamp = self.queue.names_stamp
        if stamp != self._stamp:
            self._stamp = stamp
            self._names = [n for n in (self.queue.spelling(a) for a in ATTRS) if n is not None]
        return self._names


def jobs_to_observe(keys, seen: Mapping, ads: Mapping[str, Mapping[str, str]], names: list[str]) -> list[str]:
    """The jobs, in job order, whose change :meth:`CronObserver.observe` can act on after a
    committed change of ``keys``: touched proc ads, and the followed cron jobs of a touched
    cluster ad; of those only the cron jobs ``seen`` already and the jobs whose proc or cluster ad
    has a cron attribute (``names``: how the queue spells them; ``needsCronTab``, htcondor.md
    §2.4). For any other job ``observe`` does nothing, and building its merged ad to find that
    out was most of the replay's first snapshot on a large log. A transaction names one key in
    many records: each distinct key is looked at once (``keys`` may repeat them)."""
    if not names and not seen:
        return []
    jobs: set[str] = set()
    for key in keys if keys.__class__ is set else set(keys):
        if is_proc_key(key):
            jobs.add(key)
        elif seen and key[:1] == "0" and key.endswith(".-1"):
            c = key[1:-3]
            jobs.update(k for k in seen if k.partition(".")[0] == c)
    out = []
    for job in jobs:
        if job not in seen:
            proc = ads.get(job) if names else None
            if proc is None:
                continue
            cluster = ads.get("0" + job.partition(".")[0] + ".-1") or {}
            for n in names:
                if n in proc or n in cluster:
                    break
            else:
                continue
        out.append(job)
    return sorted(out, key=job_order) if len(out) > 1 else out


def schedule_of(attrs: Mapping[str, str]):
    return D.cron_schedule(attrs)[0]


@dataclass(frozen=True)
class CronHold:
    job: str
    reason: str
    code: int = HoldCode.InvalidCronSettings


class CronKeeper:
    def __init__(self, zone=None) -> None:
        self.zone = zone
        self.deferral: dict[str, int] = {}
        self.correct: dict[str, int] = {}  # RouteDeck's correct next run, for display
        self.states: dict[str, D.CronJobState] = {}
        self.dirty: dict[str, str] = {}  # job -> reason for the next calculation
        self.computed = 0
        self.mktime = MktimeState()

    # -- schedd hooks ----------------------------------------------------------------------

    def _mark(self, job: str, reason: str) -> None:
        # a forcing reason is never downgraded by a later periodic one
        if self.dirty.get(job) in (None, D.PERIODIC, D.USER_RELEASE):
            self.dirty[job] = reason

    def job_entered(self, job: str, now: float) -> None:
        self._mark(job, D.ENTER_QUEUE)

    def job_requeued(self, job: str, now: float) -> None:
        self._mark(job, D.REQUEUE)

    def job_held(self, job: str, code: int) -> None:
        # a hold through the shadow/starter (not condor_hold) drops the cached CronTab (§2.4)
        self.states[job] = D.on_hold(self.states.get(job, D.CronJobState()), via_shadow=code != HoldCode.UserRequest)

    def job_released(self, job: str, now: float) -> None:
        cached = self.states.get(job, D.CronJobState()).cached
        self._mark(job, D.USER_RELEASE if cached else D.RELEASE)

    def job_edited(self, job: str, now: float) -> None:
        self.states[job] = D.CronJobState(False)
        self._mark(job, D.ENTER_QUEUE)

    def reconfig(self) -> None:
        for job in list(self.states):
            self.states[job] = D.CronJobState(False)
        for job in list(self.deferral):
            self._mark(job, D.RECONFIG)

    def forget(self, job: str) -> None:
        for d in (self.deferral, self.correct, self.states, self.dirty):
            d.pop(job, None)

    # -- calculation -----------------------------------------------------------------------

    def calculate(self, job: str, attrs: Mapping[str, str], now: float, reason: str = D.PERIODIC) -> CronHold | None:
        """One ``calculateCronTabSchedule``; returns a hold to apply, if any."""
        ad = dict(attrs)
        if job in self.deferral:
            ad["DeferralTime"] = str(self.deferral[job])
        u = D.compute_deferral(ad, now, self.zone, reason, self.states.get(job), self.mktime)
        self.states[job] = u.state
        if u.action == "drop":
            self.forget(job)
        elif u.action == "hold" and u.hold is not None:
            return CronHold(job, u.hold.reason, u.hold.code)
        elif u.action == "never":
            return CronHold(job, f"{D.INVALID_CRON_PREFIX}{u.message} (a real schedd would hang here)")
        elif u.action == "set" and u.deferral_time is not None:
            self.deferral[job] = u.deferral_time
            if u.correct_time is not None:
                self.correct[job] = u.correct_time
            self.computed += 1
        return None

    def pending(self) -> dict[str, str]:
        out, self.dirty = self.dirty, {}
        return out

    # -- running ---------------------------------------------------------------------------

    def gate(self, job: str, attrs: Mapping[str, str], now: float, classad: Callable[[], Any] | None = None):
        """None: not a deferred job (run now). False: not runnable now. Else the starter's check.
        ``classad``: the job's evaluation ad of ``attrs`` when the caller has one kept (the queue's,
        rebuilt only when the job changed), instead of one made here on every call."""
        dt = self.deferral.get(job)
        if dt is None:
            return False if needs_cron(attrs) else None
        p = D.deferral_params(attrs, now, ad_of=classad)  # asked for only if a knob is not a literal
        if not D.is_runnable(now, dt, p.window, p.prep_time, p.schedd_interval):
            return False
        return lambda t: starter_decision(dt, p.window, t, p.offset)

    def view_runs(self, attrs: Mapping[str, str], now: float, n: int = 5) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return view_runs(attrs, now, self.zone, n)


def view_runs(attrs: Mapping[str, str], now: float, zone=None, n: int = 5) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(RouteDeck's next ``n`` runs, what an HTCondor >= 10.3 schedd would pick) after ``now``."""
    s = schedule_of(attrs)
    try:
        return tuple(next_runs(s, now, n, zone)), tuple(r.time for r in schedd_runs(s, now, n, zone))
    except CronError:
        return (), ()


class CronObserver:
    """The crondor state a real schedd holds, rebuilt from what its queue log shows.

    ``DeferralTime`` is assigned in memory and never logged (htcondor.md §2.4), so a recorded or
    watched queue does not carry it. This class drives the demo schedd's :class:`CronKeeper` (the
    same ``calculateCronTabSchedule`` calls, for the same reasons) from the transitions a log
    shows: a job entering the queue, a hold (its ``HoldReasonCode``: 1 = condor_hold keeps the
    cached CronTab, anything else came through the shadow and drops it), a release, a requeue
    (Running back to Idle), an edit of a ``Cron*`` attribute, a job leaving the queue.

    When the schedd calculates is not in the log either: RouteDeck assumes the demo's schedd cycle
    (the first one half a polling period after the log's first step, then every ``period``
    seconds; the periodic pass over every idle cron job every ``interval`` seconds from the first
    cycle; a job seen starting is calculated as the Idle job it was, at its start, if no cycle
    did so before: the cycle that started it did). A real schedd computes at its own negotiation cycle, so a time computed at an entry
    can differ from a real schedd's by that phase when the two straddle a minute boundary
    (documented limitation). Holds the keeper asks for are not applied: the log says what the
    schedd did.
    """

    def __init__(self, zone, start: float, period: float = 10.0, interval: float = 60.0) -> None:
        self.keeper = CronKeeper(zone=zone)
        self.period = float(period)
        self.interval = float(interval)
        self.next_cycle = float(start) + self.period / 2
        self.last_periodic = float("-inf")
        self.seen: dict[str, tuple[int, tuple]] = {}  # cron job -> (status, cron texts)

    def observe(self, job: str, attrs: Mapping[str, str] | None, now: float) -> None:
        """The job's ad after a committed change (None: it left the queue)."""
        k = self.keeper
        before = self.seen.get(job)
        if attrs is None or not needs_cron(attrs):
            if before is not None:
                del self.seen[job]
                k.forget(job)
            return
        # the schedd's status (engine.queue.job.schedd_status: Idle, or InitialJobStatus, without JobStatus)
        status = schedd_status(integer_of(attrs.get("JobStatus")), integer_of(attrs.get("InitialJobStatus")))
        texts = tuple(attrs.get(a) for a in ATTRS)
        self.seen[job] = (status, texts)
        if before is None:
            k.job_entered(job, now)
            return
        old_status, old_texts = before
        if texts != old_texts:
            k.job_edited(job, now)
        if status == JobStatus.HELD and old_status != JobStatus.HELD:
            k.job_held(job, integer_of(attrs.get("HoldReasonCode")) or HoldCode.UserRequest)
        elif status == JobStatus.IDLE and old_status == JobStatus.HELD:
            k.job_released(job, now)
        elif status == JobStatus.IDLE and old_status in (JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT,
                                                           JobStatus.SUSPENDED):
            k.job_requeued(job, now)
        elif status == JobStatus.RUNNING and old_status == JobStatus.IDLE:
            # started: the schedd computed its DeferralTime while it was Idle, at the latest in the
            # cycle that started it (the runnable clause held at once) — which is this moment
            idle = dict(attrs, JobStatus=JobStatus.IDLE.text)
            k.calculate(job, idle, now, k.dirty.pop(job, None) or D.PERIODIC)

    def run_until(self, t: float, ads: "Callable[[str], Mapping[str, str] | None]", inclusive: bool = False) -> None:
        """Run the schedd cycles due before ``t`` (and at ``t`` when ``inclusive``): the pending
        calculations, and the periodic pass over the idle cron jobs (``CronKeeper.calculate``)."""
        k = self.keeper
        while self.next_cycle < t or (inclusive and self.next_cycle == t):
            now = self.next_cycle
            self.next_cycle += self.period
            pending = k.pending()
            todo = dict.fromkeys(pending)
            if now - self.last_periodic >= self.interval:
                self.last_periodic = now
                for job, (status, _texts) in self.seen.items():
                    if status == JobStatus.IDLE:
                        todo.setdefault(job, None)
            for job in sorted(todo, key=job_order):
                attrs = ads(job)
                if attrs is not None:
                    k.calculate(job, attrs, now, pending.get(job) or D.PERIODIC)

    def deferral(self, job: str) -> int | None:
        return self.keeper.deferral.get(job)


def starter_decision(deferral_time: int, window: int, t: float, offset: int = 0) -> tuple[str, float]:
    """The starter's check when the job arrives at ``t``, as the simulated site needs it:
    ("missed", t), or ("start", when the payload begins) by :func:`engine.crondor.deferral.start_time`
    (htcondor.md §2.5: the whole second DeferralTime + DeferralOffset, or at once when late)."""
    at = D.start_time(int(deferral_time), window, t, offset)
    return ("missed", t) if at is None else ("start", at)
