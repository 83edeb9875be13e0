"""Job deferral rules as pure functions (htcondor.md §2.1, §2.4, §2.5).

Design decisions and invariants:

- Inputs are plain ints or a job ad given as ``{attribute name: old-syntax text}``; expressions
  (``DeferralTime = CurrentTime + 60``) are evaluated through :mod:`engine.classad` with an
  explicit ``now``. Attribute names are case-insensitive, as in ClassAds.
- Defaults: ``DeferralWindow`` 0, ``DeferralPrepTime`` 300, ``ScheddInterval`` 300.
- The runnable test is submit's Requirements clause:
  ``now + ScheddInterval >= DeferralTime - DeferralPrepTime and now < DeferralTime + DeferralWindow``.
- The execute side (``Starter::jobWaitUntilExecuteTime``): wait, start (on time, or late within
  the window; exactly at the window edge still starts), or missed, which the schedd turns into
  a hold with code 20 "Job missed deferred execution time".
- One boundary rule (issue 25 item 4): the starter's DaemonCore timer is due at the whole second
  ``DeferralTime + DeferralOffset`` (``now -= DeferralOffset``; ``deltaT = DeferralTime - now``;
  ``timer_manager.cpp`` fires every timer whose ``when <= time(NULL)``), so the payload starts
  at that second (:func:`start_time`), and a Running cron job is ``waiting`` before it and
  ``running`` from it on (:func:`run_state`): at the second itself it runs, and its next run shown
  is the one after. Every feed (the demo's simulated site and execute node, the rows of demo,
  replay and watch) asks these two functions.
- :func:`compute_deferral` is the schedd's ``calculateCronTabSchedule``: only Idle jobs; forced
  when the job enters the queue, is requeued, is released after a hold that came through the
  shadow, or on reconfig (the cached CronTab is gone); otherwise only when ``DeferralTime`` is
  absent or ``now > DeferralTime + DeferralWindow``. An invalid schedule is a hold with code 25,
  subcode 0, "Invalid cron schedule parameters: <text>" (the text may be empty).
- One instance per job, always: the DeferralTime of a Running or Held job is never touched, so
  the next run is computed only once the job is Idle again; runs that fall while it runs are
  skipped, never queued (Unix cron would start overlapping copies).
- The new ``DeferralTime`` is what a real schedd would store (the bug-compatible prediction,
  :mod:`engine.crondor.schedd`); the correct time is returned beside it for display.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from engine.classad import as_int, evaluate, make_ad, plain_string
from engine.contract.codes import HoldCode, JobStatus
from engine.queue.job import schedd_status

from .fields import ATTRS, Schedule, parse_schedule
from .nextrun import CronError, next_run
from .schedd import schedd_next_run
from .zones import MktimeState, get_zone

DEFERRAL_WINDOW_DEFAULT = 0
DEFERRAL_PREP_TIME_DEFAULT = 300
SCHEDD_INTERVAL_DEFAULT = 300
MISSED_REASON = "Job missed deferred execution time"
INVALID_CRON_PREFIX = "Invalid cron schedule parameters: "

ENTER_QUEUE, REQUEUE, RELEASE, USER_RELEASE, RECONFIG, PERIODIC = (
    "enter_queue",  # submitted, or loaded from the queue at schedd start
    "requeue",  # exited but stays in the queue, or evicted
    "release",  # released after a hold that came through the shadow (cache dropped)
    "user_release",  # released after condor_hold (cache kept)
    "reconfig",  # condor_reconfig: every cache dropped
    "periodic",  # negotiation cycle / schedd timeout
)
REASONS = (ENTER_QUEUE, REQUEUE, RELEASE, USER_RELEASE, RECONFIG, PERIODIC)
_FORCING = {ENTER_QUEUE, REQUEUE, RELEASE, RECONFIG}


@dataclass(frozen=True)
class Hold:
    code: int
    subcode: int
    reason: str


@dataclass(frozen=True)
class DeferralParams:
    deferral_time: int | None  # None: absent or not an integer
    window: int = DEFERRAL_WINDOW_DEFAULT
    prep_time: int = DEFERRAL_PREP_TIME_DEFAULT
    schedd_interval: int = SCHEDD_INTERVAL_DEFAULT
    offset: int = 0  # DeferralOffset: the starter's clock minus the shadow's (read by the starter only)


def is_runnable(
    now: float,
    deferral_time: int | None,
    window: int = DEFERRAL_WINDOW_DEFAULT,
    prep_time: int = DEFERRAL_PREP_TIME_DEFAULT,
    schedd_interval: int = SCHEDD_INTERVAL_DEFAULT,
) -> bool:
    """submit's Requirements clause; an absent DeferralTime makes it undefined, i.e. false."""
    if deferral_time is None:
        return False
    return now + schedd_interval >= deferral_time - prep_time and now < deferral_time + window


# -------------------------------------------------------------------------------------------
# execute side


@dataclass(frozen=True)
class Wait:
    seconds: int


@dataclass(frozen=True)
class Start:
    late_by: int  # 0: on time; > 0: late but within DeferralWindow


@dataclass(frozen=True)
class Missed:
    late_by: int
    hold: Hold


@dataclass(frozen=True)
class Abort:
    message: str  # the starter's error; no hold code is documented for these


def execute_decision(deferral_time, window: int, now: float, offset: int = 0, job_id: str = "?.?"):
    """What the starter does with a job whose input is ready: Wait, Start, Missed or Abort."""
    if deferral_time is None or isinstance(deferral_time, bool) or not isinstance(deferral_time, int):
        return Abort(f"Invalid deferred execution time for Job {job_id}.")
    if deferral_time <= 0:
        return Abort(f"Invalid execution time '{deferral_time}' for Job {job_id}.")
    delta = deferral_time - (int(now // 1) - offset)
    if delta < 0:
        if -delta > window:
            return Missed(-delta, Hold(HoldCode.MissedDeferredExecutionTime, 0, MISSED_REASON))
        return Start(-delta)
    if delta == 0:
        return Start(0)
    return Wait(delta)


def start_time(deferral_time, window: int, arrival: float, offset: int = 0) -> float | None:
    """When the payload of a job that reaches the starter's deferral check at ``arrival`` starts:
    the whole second ``DeferralTime + DeferralOffset`` when it is early (the timer's due second,
    not a fraction after), ``arrival`` when it is on time or late within ``DeferralWindow``; None
    when it missed its time or its DeferralTime is invalid (module docstring)."""
    d = execute_decision(deferral_time, window, arrival, offset)
    if isinstance(d, Wait):
        return float(int(arrival // 1) + d.seconds)
    if isinstance(d, Start):
        return float(arrival)
    return None


@dataclass(frozen=True)
class RunState:
    state: str  # "invalid", "held", "idle", "waiting", "running"
    runs_after: float  # the moment the next runs shown follow


def run_state(valid: bool, status: int | None, deferral_time: int | None, now: float, offset: int = 0) -> RunState:
    """A cron job's state at ``now`` and the moment its next runs are counted from (the one
    boundary rule, module docstring). ``valid``: its schedule parses; ``status``: its JobStatus;
    ``deferral_time``: the DeferralTime its schedd holds (None: unknown). A Running job waits for
    its starter until the second ``DeferralTime + DeferralOffset``, and its next run shown is that
    DeferralTime while it waits; from that second on it runs and the next run is the one after."""
    if not valid:
        return RunState("invalid", now)
    if status == JobStatus.HELD:
        return RunState("held", now)
    if status != JobStatus.RUNNING:
        return RunState("idle", now)
    if deferral_time is not None and now < deferral_time + (offset or 0):
        return RunState("waiting", min(now, deferral_time - 1))
    return RunState("running", now)


# -------------------------------------------------------------------------------------------
# job ads


def _names(job_attrs: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): k for k in job_attrs}


def needs_crontab(job_attrs: Mapping[str, str]) -> bool:
    """``CronTab::needsCronTab``: any cron attribute present, whatever its type."""
    names = _names(job_attrs)
    return any(a.lower() in names for a in ATTRS)


def cron_schedule(job_attrs: Mapping[str, str], now: float | None = None, *,
                  ad_of: Callable[[], Any] | None = None) -> tuple[Schedule, tuple[str, ...]]:
    """The schedule HTCondor builds from an ad (``LookupString``; a non-string counts as ``*``),
    and the names of the cron attributes that are present but not strings. The job's evaluation ad
    is ``ad_of()``, else made here (once, and only if a cron attribute is present)."""
    ad = ad_of if ad_of is not None else _evaluation_ad(job_attrs)
    names = _names(job_attrs)
    texts: list[str | None] = []
    non_string: list[str] = []
    for attr in ATTRS:
        if attr.lower() not in names:
            texts.append(None)
            continue
        # a string literal (the usual ``CronMinute = "*/5"``) is read as it is, with no evaluation ad
        value = plain_string(job_attrs[names[attr.lower()]])
        if value is None:
            value = evaluate(attr, my=ad(), now=now)
        if isinstance(value, str):
            texts.append(value)
        else:
            texts.append(None)
            non_string.append(attr)
    return parse_schedule(*texts), tuple(non_string)


# a decimal integer literal of at most 18 digits (inside ClassAd's 64-bit int): its value is the number it spells (a leading zero, a blank or a sign
# other than ``-`` is left to the ClassAd evaluation)
_PLAIN_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})").fullmatch  # within a 64-bit int


def _int_attr(ad, names, attr: str, default: int | None, now, job_attrs: Mapping[str, str]) -> int | None:
    """``EvaluateAttrInt`` of ``attr``; ``ad`` is a zero-argument callable giving the job's
    evaluation ad, asked for only when the value is not a plain integer literal."""
    name = names.get(attr.lower())
    if name is None:
        return default
    text = job_attrs[name]
    value = int(text) if _PLAIN_INT(text) else as_int(evaluate(attr, my=ad(), now=now))
    return default if value is None else value


def _evaluation_ad(job_attrs: Mapping[str, str]) -> Callable[[], Any]:
    """The job's evaluation ad as a zero-argument callable: made on the first call only, so a job
    whose knobs are all integer literals builds none."""
    return functools.cache(lambda: make_ad(job_attrs))


def deferral_params(job_attrs: Mapping[str, str], now: float | None = None, *,
                    ad_of: Callable[[], Any] | None = None) -> DeferralParams:
    """The deferral knobs of a job ad; its evaluation ad (``ad_of()``, else made here) is asked
    for only for values that are not integer literals (the usual ``DeferralWindow = 60`` is read as
    it is), so a caller passes ``ad_of`` to build none then."""
    names = _names(job_attrs)
    ad = ad_of if ad_of is not None else _evaluation_ad(job_attrs)

    return DeferralParams(
        _int_attr(ad, names, "DeferralTime", None, now, job_attrs),
        _int_attr(ad, names, "DeferralWindow", DEFERRAL_WINDOW_DEFAULT, now, job_attrs),
        _int_attr(ad, names, "DeferralPrepTime", DEFERRAL_PREP_TIME_DEFAULT, now, job_attrs),
        _int_attr(ad, names, "ScheddInterval", SCHEDD_INTERVAL_DEFAULT, now, job_attrs),
        _int_attr(ad, names, "DeferralOffset", 0, now, job_attrs),
    )


def is_runnable_ad(job_attrs: Mapping[str, str], now: float) -> bool:
    p = deferral_params(job_attrs, now)
    return is_runnable(now, p.deferral_time, p.window, p.prep_time, p.schedd_interval)


@dataclass
class CronJobState:
    """What the schedd keeps per cron job between calls: whether it holds a CronTab object."""

    cached: bool = False


def on_hold(state: CronJobState, via_shadow: bool) -> CronJobState:
    """A hold reported through the shadow drops the cached CronTab; condor_hold does not."""
    return CronJobState(cached=state.cached and not via_shadow)


@dataclass(frozen=True)
class DeferralUpdate:
    action: str  # "set", "keep", "hold", "drop" (no longer a cron job), "never" (cannot fire)
    deferral_time: int | None  # the new value for "set", the current one for "keep"
    state: CronJobState
    hold: Hold | None = None
    fallback: bool = False  # the schedd's now + 120 s fallback was used
    correct_time: int | None = None  # RouteDeck's correct next run, for display
    message: str = ""


def compute_deferral(
    job_attrs: Mapping[str, str],
    now: float,
    tz=None,
    reason: str = PERIODIC,
    state: CronJobState | None = None,
    mktime: MktimeState | None = None,
) -> DeferralUpdate:
    """The schedd's ``calculateCronTabSchedule`` for one job (see the module docstring).

    ``mktime`` is the schedd process's glibc state; pass one object for all jobs of an engine.
    """
    if reason not in REASONS:
        raise ValueError(f"unknown reason {reason!r}; expected one of {', '.join(REASONS)}")
    state = state or CronJobState()
    if not needs_crontab(job_attrs):
        return DeferralUpdate("drop", None, CronJobState(False))
    names = _names(job_attrs)
    ad = _evaluation_ad(job_attrs)  # made once and only if a value needs evaluating
    params = deferral_params(job_attrs, now, ad_of=ad)
    # a job ad without JobStatus has the one the schedd loads it with (InitialJobStatus, else IDLE)
    status = schedd_status(_int_attr(ad, names, "JobStatus", None, now, job_attrs),
                           _int_attr(ad, names, "InitialJobStatus", None, now, job_attrs))
    if status != JobStatus.IDLE:
        return DeferralUpdate("keep", params.deferral_time, state)
    cached = state.cached and reason not in {RELEASE, RECONFIG}
    forced = reason in _FORCING or not cached
    sched, _non_string = cron_schedule(job_attrs, now, ad_of=ad)
    if not cached and not sched.valid:
        hold = Hold(HoldCode.InvalidCronSettings, 0, INVALID_CRON_PREFIX + (sched.error or ""))
        return DeferralUpdate("hold", params.deferral_time, CronJobState(False), hold=hold)
    dt = params.deferral_time
    if not forced and dt is not None and not now > dt + params.window:
        return DeferralUpdate("keep", dt, CronJobState(True))
    zone = get_zone(tz)
    try:
        predicted = schedd_next_run(sched, now, zone, now=now, mktime=mktime)
        correct = next_run(sched, now, zone)
    except CronError as exc:
        return DeferralUpdate("never", dt, CronJobState(True), message=str(exc))
    return DeferralUpdate("set", predicted.time, CronJobState(True), fallback=predicted.fallback, correct_time=correct)
