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
from typing import Mapping

from engine.crondor import deferral as D
from engine.crondor.fields import ATTRS
from engine.crondor.nextrun import CronError, next_runs
from engine.crondor.schedd import schedd_runs
from engine.crondor.zones import MktimeState

HOLD_INVALID_CRON = D.HOLD_CODE_INVALID_CRON


def needs_cron(attrs: Mapping[str, str]) -> bool:
    """``needsCronTab``: any of the five attributes present, whatever its type."""
    return D.needs_crontab(attrs)


def schedule_of(attrs: Mapping[str, str]):
    return D.cron_schedule(attrs)[0]


@dataclass(frozen=True)
class CronHold:
    job: str
    reason: str
    code: int = HOLD_INVALID_CRON


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
        self.states[job] = D.on_hold(self.states.get(job, D.CronJobState()), via_shadow=code != 1)

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

    def gate(self, job: str, attrs: Mapping[str, str], now: float):
        """None: not a deferred job (run now). False: not runnable now. Else the starter's check."""
        dt = self.deferral.get(job)
        if dt is None:
            return False if needs_cron(attrs) else None
        p = D.deferral_params(attrs, now)
        if not D.is_runnable(now, dt, p.window, p.prep_time, p.schedd_interval):
            return False
        return lambda t: starter_decision(dt, p.window, t)

    def view_runs(self, attrs: Mapping[str, str], now: float, n: int = 5) -> tuple[tuple[int, ...], tuple[int, ...]]:
        s = schedule_of(attrs)
        try:
            return tuple(next_runs(s, now, n, self.zone)), tuple(r.time for r in schedd_runs(s, now, n, self.zone))
        except CronError:
            return (), ()


def starter_decision(deferral_time: int, window: int, t: float) -> tuple[str, float]:
    """The starter's check when the job arrives (``execute_decision``, htcondor.md §2.5), as the
    simulated site needs it: ("missed", t), or ("start", when the payload begins)."""
    d = D.execute_decision(int(deferral_time), window, t)
    if isinstance(d, (D.Missed, D.Abort)):
        return ("missed", t)
    if isinstance(d, D.Wait):
        return ("start", float(int(t // 1) + d.seconds))
    return ("start", t)
