"""Crondor: HTCondor's ``cron_*`` schedules turned into a job's ``DeferralTime``.

Pure logic (no clock reads, no sleeps). Facts come from htcondor.md §2 and §6; decisions from
product.md §4 "Crondor": parse exactly as HTCondor does, compute the *correct* next run with
the documented day rule, and predict separately what a real HTCondor >= 10.3 schedd computes
(day-0 defect, ``now + 120`` fallback, glibc ``mktime``), with a lint where they differ.

API (everything takes ``now``/``after`` as epoch seconds; ``zone`` is an IANA name, a
``ZoneInfo``, or ``None`` for the local zone):

- ``parse_schedule(minute, hour, dom, month, dow) -> Schedule`` (cached; ``None`` = absent).
  ``Schedule.valid``, ``.error`` (HTCondor's text), ``.minutes`` … ``.dows``.
- ``next_run(s, after, zone) -> int``, ``next_runs(s, after, n, zone)``: correct runs, chained.
  Raise ``InvalidSchedule`` / ``NeverFires`` (both ``CronError``).
- ``schedd_next_run(s, after, zone, now=None, mktime=None) -> ScheddRun(time, fallback)`` and
  ``schedd_runs(s, after, n, zone)``: the bug-compatible prediction.
- ``lint_schedule(s, zone, after, non_string)``, ``lint_runs(runs, schedd_runs, zone)``,
  ``lint_deferral(window, prep_time, schedd_interval) -> [Lint(level, code, message)]``.
- ``explain(s, zone) -> str`` and ``describe(s) -> str``.
- Deferral (``engine.crondor.deferral``): ``is_runnable(now, deferral_time, window, prep_time,
  schedd_interval)``, ``execute_decision(deferral_time, window, now, offset=0) -> Wait(seconds) |
  Start(late_by) | Missed(late_by, hold) | Abort(message)``, ``deferral_params(job_attrs, now)``,
  ``compute_deferral(job_attrs, now, tz, reason, state, mktime) -> DeferralUpdate(action,
  deferral_time, state, hold, fallback, correct_time)`` with reasons ``enter_queue``,
  ``requeue``, ``release``, ``user_release``, ``reconfig``, ``periodic``; ``CronJobState``
  (per job) and ``MktimeState`` (one per schedd process) carry what the schedd remembers.
  ``job_attrs`` is ``{attribute name: old-syntax text}``.

The explanation and the lints (``routedeck cron``, the crondor screen) are imported on first use
of their names here (:func:`__getattr__`): a replay or a schedd computes deferrals and needs
neither (issue 27: a new process's start-up).
"""

import importlib

from .deferral import (
    Abort,
    CronJobState,
    DeferralParams,
    DeferralUpdate,
    Hold,
    Missed,
    Start,
    Wait,
    compute_deferral,
    cron_schedule,
    deferral_params,
    execute_decision,
    is_runnable,
    is_runnable_ad,
    needs_crontab,
    on_hold,
)
from .fields import ATTRS, Schedule, parse_schedule
from .nextrun import CronError, InvalidSchedule, NeverFires, never_fires, next_run, next_runs
from .schedd import ScheddRun, schedd_next_run, schedd_runs
from .zones import MktimeState, ZoneError, get_zone

# names of the modules imported on first use: name -> module
_LAZY = {"describe": "explanation", "explain": "explanation", "format_time": "explanation",
         "Lint": "lints", "lint_deferral": "lints", "lint_runs": "lints", "lint_schedule": "lints"}


def __getattr__(name: str):
    """``from engine.crondor import explain`` (and the other names of ``_LAZY``): their modules
    imported then (the module docstring), and every name of ``_LAZY`` bound here as the eager
    imports bound them. No submodule is named as one of these names (``explain`` is in
    ``explanation.py``): importing a submodule binds it on this package, and would then hide the
    function whatever was imported first."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for lazy, module in _LAZY.items():
        globals()[lazy] = getattr(importlib.import_module(f"{__name__}.{module}"), lazy)
    return globals()[name]


__all__ = [
    "ATTRS",
    "Abort",
    "CronError",
    "CronJobState",
    "DeferralParams",
    "DeferralUpdate",
    "Hold",
    "InvalidSchedule",
    "Lint",
    "Missed",
    "MktimeState",
    "NeverFires",
    "Schedule",
    "ScheddRun",
    "Start",
    "Wait",
    "ZoneError",
    "compute_deferral",
    "cron_schedule",
    "deferral_params",
    "describe",
    "execute_decision",
    "explain",
    "format_time",
    "get_zone",
    "is_runnable",
    "is_runnable_ad",
    "lint_deferral",
    "lint_runs",
    "lint_schedule",
    "needs_crontab",
    "never_fires",
    "next_run",
    "next_runs",
    "on_hold",
    "parse_schedule",
    "schedd_next_run",
    "schedd_runs",
]
