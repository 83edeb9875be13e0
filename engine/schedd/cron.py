"""Crondor wired into the embedded schedd: when DeferralTime is computed, the runnable check,
the starter's wait / start / missed decision (htcondor.md §2.4, §2.5).

Design decisions and invariants:

- DeferralTime lives here, in memory (HTCondor assigns it in memory, never logs it; §2.4). After
  a restart it is computed again, which is exactly what a real schedd does.
- ``calculate`` follows ``calculateCronTabSchedule``: only Idle jobs; no cached schedule (first
  time, after reconfig, after a missed-window hold) means validate and force a new time;
  otherwise a new time only when there is none or ``now > DeferralTime + DeferralWindow``.
  Requeue (``on_exit_remove = false``) forces a new time from ``now``.
- Schedules are parsed and searched by :mod:`engine.crondor` (RouteDeck's correct next run; the
  schedd-bug prediction is shown next to it in the Crondor view). A cron attribute that is not a
  string reads as ``*`` (§2.2 item 6).
- Invalid schedule: hold 25, ``"Invalid cron schedule parameters: " + <error>`` (the text can be
  empty). A schedule that can never fire (Feb 30) hangs a real schedd (§2.3 item 6); RouteDeck
  holds it with code 25 and says so, rather than looping.
- Never two instances: a cron job is one proc; it is started only from Idle, and a new
  DeferralTime is computed only after it has left Running.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from engine.crondor.fields import ATTRS, parse_schedule
from engine.crondor.nextrun import CronError, next_run, next_runs
from engine.crondor.schedd import schedd_runs

HOLD_INVALID_CRON = 25


def _str(attrs: Mapping[str, str], name: str) -> str | None:
    t = attrs.get(name)
    if t is None or len(t) < 2 or t[0] != '"':
        return None
    return t[1:-1].replace('\\"', '"')


def _int(attrs: Mapping[str, str], name: str, default: int) -> int:
    t = attrs.get(name)
    try:
        return int(float(t)) if t is not None else default
    except ValueError:
        return default


def needs_cron(attrs: Mapping[str, str]) -> bool:
    """``needsCronTab``: any of the five attributes present, whatever its type."""
    return any(a in attrs for a in ATTRS)


def schedule_of(attrs: Mapping[str, str]):
    return parse_schedule(*(_str(attrs, a) for a in ATTRS))


@dataclass(frozen=True)
class CronHold:
    job: str
    reason: str
    code: int = HOLD_INVALID_CRON


class CronKeeper:
    def __init__(self, zone=None) -> None:
        self.zone = zone
        self.deferral: dict[str, int] = {}
        self.cached: set[str] = set()
        self.dirty: dict[str, bool] = {}  # job -> forced
        self.computed = 0

    # -- schedd hooks ----------------------------------------------------------------------

    def job_entered(self, job: str, now: float) -> None:
        self.dirty[job] = False

    def job_requeued(self, job: str, now: float) -> None:
        self.deferral.pop(job, None)
        self.dirty[job] = True

    def job_held(self, job: str, code: int) -> None:
        if code != 1:  # a shadow/starter hold drops the cached CronTab; condor_hold does not
            self.cached.discard(job)

    def job_released(self, job: str, now: float) -> None:
        self.dirty.setdefault(job, False)

    def job_edited(self, job: str, now: float) -> None:
        self.cached.discard(job)
        self.dirty[job] = True

    def reconfig(self) -> None:
        self.cached.clear()

    def forget(self, job: str) -> None:
        self.deferral.pop(job, None)
        self.cached.discard(job)
        self.dirty.pop(job, None)

    # -- calculation -----------------------------------------------------------------------

    def calculate(self, job: str, attrs: Mapping[str, str], now: float, force: bool = False) -> CronHold | None:
        """One ``calculateCronTabSchedule``; returns a hold to apply, if any."""
        if not needs_cron(attrs):
            self.forget(job)
            return None
        if _int(attrs, "JobStatus", 0) != 1:
            return None
        s = schedule_of(attrs)
        if not s.valid:
            self.cached.discard(job)
            return CronHold(job, "Invalid cron schedule parameters: " + (s.error or ""))
        if job not in self.cached:
            self.cached.add(job)
            force = True
        dt = self.deferral.get(job)
        window = _int(attrs, "DeferralWindow", 0)
        if not force and dt is not None and not now > dt + window:
            return None
        try:
            self.deferral[job] = next_run(s, now, self.zone)
        except CronError as exc:
            self.cached.discard(job)
            return CronHold(job, f"Invalid cron schedule parameters: {exc} (HTCondor would hang here)")
        self.computed += 1
        return None

    def pending(self) -> dict[str, bool]:
        out, self.dirty = self.dirty, {}
        return out

    # -- running ---------------------------------------------------------------------------

    def gate(self, job: str, attrs: Mapping[str, str], now: float):
        """None: not a deferred job (run now). False: not runnable yet. Else the starter's check."""
        dt = self.deferral.get(job)
        if dt is None:
            return False if needs_cron(attrs) else None
        window = _int(attrs, "DeferralWindow", 0)
        prep = _int(attrs, "DeferralPrepTime", 300)
        interval = _int(attrs, "ScheddInterval", 300)
        # submit's runnable clause (htcondor.md §2.1)
        if not (now + interval >= dt - prep and now < dt + window):
            return False
        return lambda t: starter_decision(dt, window, t)

    def view_runs(self, attrs: Mapping[str, str], now: float, n: int = 5) -> tuple[tuple[int, ...], tuple[int, ...]]:
        s = schedule_of(attrs)
        try:
            return tuple(next_runs(s, now, n, self.zone)), tuple(r.time for r in schedd_runs(s, now, n, self.zone))
        except CronError:
            return (), ()


def starter_decision(deferral_time: int, window: int, t: float) -> tuple[str, float]:
    """``Starter::jobWaitUntilExecuteTime`` (htcondor.md §2.5): missed when more than the window
    late (exactly the window still runs); start at once when late within the window; else wait."""
    delta = deferral_time - t
    if delta < 0 and -delta > window:
        return ("missed", t)
    if delta < 0:
        return ("start", t)
    return ("start", float(deferral_time))
