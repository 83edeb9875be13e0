"""A job's ad made readable, as ``condor_q -l`` would show it with notes beside the raw values.

- Times (``QDate``, ``EnteredCurrentStatus``, ``*Date``, ``*Time`` holding an epoch) get the date
  in the engine's zone and their age from ``now``.
- ``JobStatus`` and ``HoldReasonCode`` get their names (HTCondor's ``condor_holdcodes.h``
  ``CONDOR_HOLD_CODE`` enum; both from ``engine.contract.codes``).
- ``DeferralTime`` of a crondor job is assigned by the schedd in memory and never written to the
  job queue log (htcondor.md §2.4), so a log-based view does not have it while ``condor_q -l``
  shows it. It is added: the embedded schedd's own in-memory value when the engine has one
  (``memory``), else what a schedd would compute now (``engine.crondor.deferral.compute_deferral``
  as on entering the queue), marked as such.

Pure functions of the ad, ``now`` and a zone name; nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from engine.contract.codes import HOLD_CODE_NAMES, STATUS_NAMES
from engine.crondor import deferral as D
from engine.crondor.deferral import needs_crontab

CODE_NAMES = {"jobstatus": STATUS_NAMES, "lastjobstatus": STATUS_NAMES, "holdreasoncode": HOLD_CODE_NAMES}
TIME_NAMES = {"enteredcurrentstatus", "shadowbday", "lastjobleaserenewal", "qdate", "deferraltime",
              "lastmatchtime", "lastrejmatchtime", "jobstartdate", "jobcurrentstartdate",
              "jobcurrentstartexecutingdate", "completiondate", "lastvacatetime", "lastholdtime"}
EPOCH_MIN = 946_684_800  # 2000-01-01: smaller numbers in a *Time attribute are durations


@dataclass(frozen=True)
class AdLine:
    name: str
    value: str  # the raw text, as in the job queue log / condor_q -l
    note: str = ""  # the readable form: a date and age, a code's name, where a value comes from


def _zone(name: str):
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return timezone.utc


def _age(seconds: float) -> str:
    s = int(abs(seconds))
    d, s = divmod(s, 86_400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    text = f"{d}d{h}h" if d else f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"
    return f"{text} ago" if seconds >= 0 else f"in {text}"


def time_note(value: int, now: float, tz: str) -> str:
    dt = datetime.fromtimestamp(value, _zone(tz))
    return f"{dt.strftime('%Y-%m-%d %H:%M:%S')} {dt.tzname() or tz}, {_age(now - value)}"


def _int(text: str) -> int | None:
    try:
        return int(text.strip())
    except (ValueError, AttributeError):
        return None


def is_time(name: str, value: int | None) -> bool:
    low = name.lower()
    if value is None or value < EPOCH_MIN:
        return False
    return low in TIME_NAMES or low.endswith("date") or low.endswith("time")


def predicted_deferral(ad: Mapping[str, str], now: float, tz: str) -> int | None:
    """The DeferralTime a schedd would assign this crondor job now (as on entering the queue)."""
    try:
        update = D.compute_deferral(ad, now, tz, D.ENTER_QUEUE)
    except Exception:  # noqa: BLE001 - an ad the crondor rules refuse has no prediction
        return None
    return update.deferral_time if update.action in ("set", "keep") else None


def annotate(ad: Mapping[str, str], now: float, tz: str = "UTC", memory: int | None = None) -> list[AdLine]:
    """The ad's lines sorted by name (case-insensitive), each with its note; ``DeferralTime`` of
    a crondor job added when the ad lacks it (``memory``: the schedd's in-memory value)."""
    ad = dict(ad)
    lines: list[AdLine] = []
    names = {k.lower() for k in ad}
    if "deferraltime" not in names and needs_crontab(ad):
        if memory is not None:
            ad["DeferralTime"] = str(memory)
            extra = "in the schedd's memory, not in the job queue log"
        else:
            predicted = predicted_deferral(ad, now, tz)
            extra = "what a schedd would compute now; not in the job queue log"
            if predicted is not None:
                ad["DeferralTime"] = str(predicted)
        deferral_note = extra
    else:
        deferral_note = ""
    for name in sorted(ad, key=str.lower):
        raw = ad[name]
        low = name.lower()
        value = _int(raw)
        notes = []
        if low in CODE_NAMES and value is not None:
            notes.append(CODE_NAMES[low].get(value, "unknown code"))
        elif is_time(name, value):
            notes.append(time_note(value, now, tz))
        if low == "deferraltime" and deferral_note:
            notes.append(deferral_note)
        lines.append(AdLine(name, raw, "; ".join(notes)))
    return lines
