"""Deferral rules: defaults and the runnable clause (htcondor.md §2.1), when the schedd computes
DeferralTime (§2.4), and the starter's decision and the missed-window hold (§2.5)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.classad import evaluate, is_true, make_ad
from engine.crondor import (
    Abort,
    CronJobState,
    Hold,
    Missed,
    MktimeState,
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


def at(text: str, tz: str = "UTC") -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(tz)).timestamp())


def test_defaults():
    """htcondor.md §2.1: DeferralWindow 0, DeferralPrepTime 300, ScheddInterval 300."""
    p = deferral_params({"DeferralTime": "1000"})
    assert (p.deferral_time, p.window, p.prep_time, p.schedd_interval) == (1000, 0, 300, 300)
    assert deferral_params({"DeferralTime": "1000 + 60", "DeferralWindow": "15"}).deferral_time == 1060
    assert deferral_params({"DeferralTime": '"soon"'}).deferral_time is None


def test_literal_knobs_are_read_without_an_evaluation_ad(monkeypatch):
    """Issue 30 (the schedd's dispatch asks every idle cron job each poll): integer literals are
    read as they are, and give what their evaluation gives; anything else is evaluated."""
    import engine.crondor.deferral as D  # noqa: PLC0415 - the module whose make_ad is watched

    cases = [{"DeferralTime": "1700000000", "DeferralWindow": "60", "DeferralPrepTime": "-0",
              "ScheddInterval": "2.5", "DeferralOffset": "-3"},
             {"deferraltime": "time() + 5", "DeferralWindow": "010", "DeferralPrepTime": " 7"},
             {"DeferralTime": "99999999999999999999"}]  # past a 64-bit int: left to the ClassAd library
    evaluated = [deferral_params(attrs, 50.0, ad_of=lambda attrs=attrs: make_ad(attrs)) for attrs in cases]
    made = []
    monkeypatch.setattr(D, "make_ad", lambda attrs: made.append(attrs) or make_ad(attrs))
    p = deferral_params({"DeferralTime": "1000", "DeferralWindow": "60"}, 50.0)
    assert (p.deferral_time, p.window, p.prep_time, p.schedd_interval, p.offset) == (1000, 60, 300, 300, 0)
    assert made == []
    assert [deferral_params(attrs, 50.0) for attrs in cases] == evaluated
    assert len(made) == 3  # ScheddInterval 2.5, the expressions, the 20 digits: one ad per call, made once


def test_string_literal_schedules_are_read_without_an_evaluation_ad(monkeypatch):
    """Issue 27 (a replay moment computes the deferral of every cron job it watches): a schedule
    of string literals (``CronMinute = "*/5"``) is read as it is and gives what its evaluation
    (``LookupString``, htcondor.md §2.2) gives; any other text is evaluated in the job's ad."""
    import engine.crondor.deferral as D  # noqa: PLC0415 - the module whose make_ad is watched

    cases = [{"CronMinute": '"*/5"', "cronhour": '"1-3,7"', "CronDayOfMonth": '"*"', "CronMonth": '""',
              "CronDayOfWeek": '"mon"'},
             {"CronMinute": '"0"', "CronHour": '"a\\b"', "CronMonth": '"x\\"y"'},  # escapes: evaluated
             {"CronMinute": 'strcat("1", "5")', "CronHour": "7", "CronDayOfWeek": ' "1"'}]
    evaluated = [cron_schedule(attrs, 50.0, ad_of=lambda attrs=attrs: make_ad(attrs)) for attrs in cases]
    made = []
    monkeypatch.setattr(D, "make_ad", lambda attrs: made.append(attrs) or make_ad(attrs))

    def no_ad():
        raise AssertionError("an evaluation ad for a schedule of string literals")

    assert cron_schedule(cases[0], 50.0, ad_of=no_ad) == evaluated[0]
    assert [cron_schedule(attrs, 50.0) for attrs in cases] == evaluated
    assert made == cases[1:]


# submit's clause, verbatim from htcondor.md §2.1
CLAUSE = ("((time() + ScheddInterval) >= (DeferralTime - DeferralPrepTime)) && "
          "(time() < (DeferralTime + DeferralWindow))")


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5000), st.integers(0, 600), st.integers(0, 900), st.integers(0, 600), st.integers(-2000, 2000))
def test_runnable_matches_submits_requirements_clause(dt, window, prep, interval, delta):
    """The pure test agrees with the clause evaluated by the real ClassAd library."""
    now = dt + delta
    ad = make_ad({"DeferralTime": str(dt), "DeferralWindow": str(window), "DeferralPrepTime": str(prep),
                  "ScheddInterval": str(interval)})
    assert is_runnable(now, dt, window, prep, interval) == is_true(evaluate(CLAUSE, my=ad, now=now))


def test_runnable_edges():
    # Source: htcondor.md §2.1 (the runnable clause: time() + ScheddInterval >= DeferralTime - DeferralPrepTime, time() < DeferralTime + DeferralWindow)
    assert is_runnable(9400, 10000) and not is_runnable(9399, 10000)
    assert is_runnable(9999, 10000) and not is_runnable(10000, 10000)
    assert is_runnable(10059, 10000, window=60) and not is_runnable(10060, 10000, window=60)
    assert not is_runnable(10000, None)
    assert is_runnable_ad({"DeferralTime": "10000"}, 9500) and not is_runnable_ad({}, 9500)


@pytest.mark.parametrize(
    "dt, window, now, offset, decision",
    [
        (None, 0, 100, 0, Abort("Invalid deferred execution time for Job 1.0.")),
        (0, 0, 100, 0, Abort("Invalid execution time '0' for Job 1.0.")),
        (-5, 0, 100, 0, Abort("Invalid execution time '-5' for Job 1.0.")),
        (1000, 0, 900, 0, Wait(100)),
        (1000, 0, 1000, 0, Start(0)),
        (1000, 10, 1010, 0, Start(10)),  # exactly at the window still runs
        (1000, 10, 1011, 0, Missed(11, Hold(20, 0, "Job missed deferred execution time"))),
        (1000, 0, 1001, 0, Missed(1, Hold(20, 0, "Job missed deferred execution time"))),
        (1000, 0, 1010, 10, Start(0)),  # DeferralOffset is subtracted from now
        (1000, 60, 940, 0, Wait(60)),  # job_core_time-deferral (a): 60 s ahead, window 60
        (1000, 720, 1120, 0, Start(120)),  # job_core_time-deferral (b): 120 s late, window 720
    ],
)
def test_execute_decision(dt, window, now, offset, decision):
    """htcondor.md §2.5 Starter::jobWaitUntilExecuteTime."""
    assert execute_decision(dt, window, now, offset, job_id="1.0") == decision


JOB = {"CronMinute": '"0"', "JobStatus": "1"}
NOW = at("2025-01-15 10:00")


def test_not_a_cron_job_is_dropped():
    # Source: htcondor.md §2.4 (needsCronTab; a job that no longer needs cron drops its cache entry)
    assert compute_deferral({"JobStatus": "1"}, NOW, "UTC").action == "drop"
    assert needs_crontab({"cronminute": "5"})  # present with any type counts (LookupExpr)


def test_enter_queue_sets_deferral_time():
    # Source: htcondor.md §2.4 (DeferralTime computed when the job enters the queue)
    u = compute_deferral(JOB, NOW, "UTC", "enter_queue")
    assert (u.action, u.deferral_time, u.state.cached) == ("set", at("2025-01-15 11:00"), True)


@pytest.mark.parametrize(
    "attrs, reason",
    [
        ({"CronMinute": '"*/0"'}, "Invalid cron schedule parameters: "),  # empty text (§2.4)
        ({"CronMinute": '"10-5"'}, "Invalid cron schedule parameters: Invalid cron attribute: 10-5"),
        ({"CronDayOfWeek": '"MON"'}, "Invalid cron schedule parameters: Invalid parameter value 'MON' for CronDayOfWeek"),
    ],
)
def test_invalid_schedule_is_a_hold_with_code_25(attrs, reason):
    """htcondor.md §2.4: holdJob with HoldReasonCode 25 (InvalidCronSettings), subcode 0."""
    u = compute_deferral({**attrs, "JobStatus": "1"}, NOW, "UTC", "enter_queue")
    assert u.action == "hold" and u.hold == Hold(25, 0, reason)


def test_only_idle_jobs_are_processed():
    """htcondor.md §2.4: running or held jobs keep their DeferralTime."""
    for status in ("2", "5"):
        u = compute_deferral({**JOB, "JobStatus": status, "DeferralTime": "5"}, NOW, "UTC", "reconfig")
        assert (u.action, u.deferral_time) == ("keep", 5)


def test_recalculation_rules():
    """htcondor.md §2.4: cached -> only when absent or now > DeferralTime + DeferralWindow;
    enter queue, requeue, shadow-hold release and reconfig force it; a user release does not."""
    cached = CronJobState(cached=True)
    future = {**JOB, "DeferralTime": str(NOW + 1800)}
    assert compute_deferral(future, NOW, "UTC", "periodic", cached).action == "keep"
    assert compute_deferral(future, NOW, "UTC", "user_release", cached).action == "keep"
    for reason in ("requeue", "release", "reconfig", "enter_queue"):
        assert compute_deferral(future, NOW, "UTC", reason, cached).action == "set", reason
    assert compute_deferral(future, NOW, "UTC", "periodic", CronJobState(False)).action == "set"
    past = {**JOB, "DeferralTime": str(NOW - 60), "DeferralWindow": "60"}
    assert compute_deferral(past, NOW, "UTC", "periodic", cached).action == "keep"  # not yet > DT + window
    past["DeferralWindow"] = "59"
    u = compute_deferral(past, NOW, "UTC", "periodic", cached)
    assert (u.action, u.deferral_time) == ("set", at("2025-01-15 11:00"))
    assert compute_deferral({**JOB}, NOW, "UTC", "periodic", cached).action == "set"  # absent


def test_hold_through_the_shadow_drops_the_cache():
    # Source: htcondor.md §2.4 (hold through shadow exit deletes the cached CronTab; condor_hold does not)
    assert on_hold(CronJobState(True), via_shadow=True) == CronJobState(False)
    assert on_hold(CronJobState(True), via_shadow=False) == CronJobState(True)


def test_one_instance_per_job_and_missed_runs_are_not_queued():
    """htcondor.md §2.4: a running job keeps its DeferralTime; on requeue the next run is
    computed from now, so runs that fell while it ran are skipped (every-minute schedule)."""
    job = {"CronMinute": '"*"', "JobStatus": "2", "DeferralTime": str(NOW)}
    later = NOW + 3600
    assert compute_deferral(job, later, "UTC", "periodic", CronJobState(True)).action == "keep"
    job["JobStatus"] = "1"
    u = compute_deferral(job, later, "UTC", "requeue", CronJobState(True))
    assert u.deferral_time == later + 60


def test_non_string_attribute_counts_as_star():
    """htcondor.md §2.2 item 6: CronMinute = 5 (qedit) is read as '*': runs at 11:00 for hour 11."""
    attrs = {"CronMinute": "5", "CronHour": '"11"', "JobStatus": "1"}
    sched, non_string = cron_schedule(attrs)
    assert non_string == ("CronMinute",) and sched.minutes == tuple(range(60))
    assert compute_deferral(attrs, NOW, "UTC", "enter_queue").deferral_time == at("2025-01-15 11:00")
    assert cron_schedule({"CronMinute": 'strcat("1", "5")'})[0].minutes == (15,)  # evaluates to a string


def test_deferral_time_is_the_schedds_prediction():
    """htcondor.md §2.6 #9 and #11: the schedd stores the day-0 and now + 120 results."""
    job = {"CronMinute": '"0"', "CronHour": '"0"', "CronDayOfWeek": '"1"', "JobStatus": "1"}
    u = compute_deferral(job, at("2025-01-28 10:00"), "UTC", "enter_queue")
    assert (u.deferral_time, u.correct_time) == (at("2025-01-31 00:00"), at("2025-02-03 00:00"))
    job = {"CronMinute": '"0"', "CronHour": '"9"', "CronDayOfWeek": '"1-5"', "JobStatus": "1"}
    now = at("2025-01-31 10:00")
    u = compute_deferral(job, now, "UTC", "enter_queue")
    assert u.fallback and u.deferral_time == now + 120


def test_schedd_process_mktime_state_decides_the_repeated_hour():
    """crontab_oracle.json dst_Europe/Riga_fall_0_3: a fresh process picks 03:00 EET (second);
    after a call that resolved a summer time, glibc starts from +3 and picks 03:00 EEST."""
    job = {"CronMinute": '"0"', "CronHour": '"3"', "JobStatus": "1"}
    now = 1635636600  # 2021-10-31 02:30 EEST
    assert compute_deferral(job, now, "Europe/Riga", "enter_queue").deferral_time == 1635642000
    state = MktimeState()
    compute_deferral(job, now - 86400 * 30, "Europe/Riga", "enter_queue", mktime=state)  # a summer result
    assert compute_deferral(job, now, "Europe/Riga", "enter_queue", mktime=state).deferral_time == 1635638400


def test_never_firing_schedule_is_reported_and_unknown_reasons_rejected():
    # Source: htcondor.md §2.3 #6 (an impossible schedule recurses without end); reporting it is RouteDeck's decision
    u = compute_deferral({"CronDayOfMonth": '"30"', "CronMonth": '"2"', "JobStatus": "1"}, NOW, "UTC", "enter_queue")
    assert u.action == "never" and "never fires" in u.message
    with pytest.raises(ValueError):
        compute_deferral(JOB, NOW, "UTC", "sometimes")


def test_a_job_ad_without_jobstatus_has_the_status_the_schedd_loads_it_with():
    """schedd.cpp ``calculateCronTabSchedule`` computes only for an IDLE job; a job ad without
    JobStatus has none in a running schedd: qmgmt.cpp ``InitJobQueue`` (and the commit of a new proc)
    gives it InitialJobStatus, else IDLE (engine.queue.job.schedd_status, the rule every view
    uses, issue 25 item 8d). So a job held on submit (InitialJobStatus 5) keeps no new DeferralTime,
    and one without either is Idle and gets it."""
    bare = {k: v for k, v in JOB.items() if k != "JobStatus"}
    assert compute_deferral(bare, NOW, "UTC", "enter_queue").action == "set"
    held = compute_deferral({**bare, "InitialJobStatus": "5"}, NOW, "UTC", "enter_queue")
    assert (held.action, held.deferral_time) == ("keep", None)
