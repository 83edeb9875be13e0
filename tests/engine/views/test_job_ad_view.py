"""The readable job ad (``engine.views.job_ad``): dates, code names, the in-memory DeferralTime."""

from __future__ import annotations

from engine.views.job_ad import annotate

NOW = 1795222500  # 2026-11-21 00:55:00 UTC


def _line(lines, name):
    return next(ln for ln in lines if ln.name == name)


def test_times_and_codes_are_named_beside_the_raw_value():
    """HoldReasonCode names from HTCondor's src/condor_utils/condor_holdcodes.h (CONDOR_HOLD_CODE:
    20 = MissedDeferredExecutionTime); JobStatus 5 = Held (htcondor.md §2.5)."""
    ad = {"JobStatus": "5", "HoldReasonCode": "20", "EnteredCurrentStatus": "1795221020",
          "RemoteWallClockTime": "3600", "QDate": "1795219200"}
    lines = annotate(ad, NOW, "UTC")
    assert _line(lines, "JobStatus").note == "Held" and _line(lines, "JobStatus").value == "5"
    assert _line(lines, "HoldReasonCode").note == "MissedDeferredExecutionTime"
    assert _line(lines, "EnteredCurrentStatus").note == "2026-11-21 00:30:20 UTC, 24m40s ago"
    assert _line(lines, "QDate").note.endswith(", 55m00s ago")
    assert _line(lines, "RemoteWallClockTime").note == ""  # a duration, not a date
    assert [ln.name for ln in lines] == sorted(ad, key=str.lower)


def test_deferral_time_of_a_crondor_job_is_added():
    """htcondor.md §2.4: the schedd assigns DeferralTime in memory (never in the job queue log),
    and condor_q -l shows it; an idle job with CronMinute = 0 defers to the next full hour."""
    ad = {"JobStatus": "1", "CronMinute": "\"0\"", "ClusterId": "2", "ProcId": "0", "QDate": str(NOW - 60)}
    memory = annotate(ad, NOW, "UTC", memory=1795222800)
    line = _line(memory, "DeferralTime")
    assert line.value == "1795222800" and "in the schedd's memory" in line.note and ", in 5m00s" in line.note
    predicted = _line(annotate(ad, NOW, "UTC"), "DeferralTime")
    assert predicted.value == "1795222800" and "would compute" in predicted.note
    plain = annotate({"JobStatus": "1"}, NOW, "UTC")
    assert not [ln for ln in plain if ln.name == "DeferralTime"]
