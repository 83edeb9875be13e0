"""Crondor in the embedded schedd (htcondor.md §2.4 when DeferralTime is computed, §2.5 the
starter's decision and the missed-window hold 20, §2.4 invalid schedule hold 25). Expected
times come from engine.crondor (the crondor engine), never from the schedd under test."""

from engine.crondor.fields import parse_schedule
from engine.crondor.nextrun import next_run
from engine.schedd.cron import CronKeeper, starter_decision
from engine.schedd.schedd import Schedd
from engine.schedd.store import MemoryStore
from engine.schedd.sites import RunTime, SiteSet, SiteSpec
from engine.schedd.workload import JobTemplate
from engine.crondor.schedd import schedd_next_run

T0 = 1_700_000_030.0  # 22:13:50 UTC


def _mk(latency=(0, 0), runtime=60):
    sites = SiteSet([SiteSpec("local", local=True, slots=4, start_latency=latency,
                              runtime=RunTime("fixed", runtime))], seed=0)
    return Schedd(MemoryStore(), sites, cron=CronKeeper(zone="UTC"))


def _cron(s, minute='"*/10"', extra=None, now=T0):
    attrs = {"JobUniverse": "12", "CronMinute": minute, "OnExitRemove": "false"}
    attrs.update(extra or {})
    return s.submit(JobTemplate("c", attrs), 1, now)[0]


def _tick(s, t):
    t = float(t)
    s.apply_reports(s.sites.advance(t), t)
    s.cron_cycle(t)
    s.dispatch(t)


def _run(s, start, end, step=10):
    t = start
    while t <= end:
        nxt = s.sites.next_time()
        while nxt is not None and nxt < t:
            s.apply_reports(s.sites.advance(nxt), nxt)
            nxt = s.sites.next_time()
        _tick(s, t)
        t += step


def test_deferral_time_on_enter_queue_matches_crondor_and_job_starts_then():
    s = _mk()
    j = _cron(s)
    _tick(s, T0)
    expect = next_run(parse_schedule("*/10"), T0, "UTC")
    assert s.cron.deferral[j] == expect
    # DeferralTime is in memory only, never written to the queue (htcondor.md §2.4)
    assert "DeferralTime" not in s.store.attrs(j)
    # runnable from DeferralTime - prep(300) - ScheddInterval(300): Running, waiting in the starter
    _run(s, T0, expect + 30)
    a = s.store.attrs(j)
    assert a["JobStatus"] == "2" and int(a["JobCurrentStartDate"]) <= expect
    # the payload runs from DeferralTime: 60 s later it exits, is requeued (OnExitRemove false)
    # with the next DeferralTime, and is started again (waiting in the starter for it)
    _run(s, expect + 30, expect + 70)
    a = s.store.attrs(j)
    assert a["ExitCode"] == "0" and a["NumJobStarts"] == "2"
    assert float(a["RemoteWallClockTime"]) == expect + 60 - int(T0)  # includes the wait
    assert s.cron.deferral[j] == next_run(parse_schedule("*/10"), expect + 60, "UTC")


def test_never_two_instances_over_an_hour():
    s = _mk(runtime=30)
    j = _cron(s, '"*"', {"DeferralWindow": "60", "DeferralPrepTime": "0"})
    for k in range(360):
        _run(s, T0 + 10 * k, T0 + 10 * k)
        assert len(s.sites.sites["local"].jobs) <= 1
    # every minute, one run of 30 s at a time: about 60 starts in the hour
    assert 55 <= int(s.store.attrs(j)["NumJobStarts"]) <= 61


def test_missed_window_holds_20_and_release_recomputes():
    # start latency beyond ScheddInterval + prep time + window: the starter is late (§2.5)
    s = _mk(latency=(400, 400))
    j = _cron(s, '"0"', {"DeferralPrepTime": "0", "DeferralWindow": "0", "ScheddInterval": "60"})
    _tick(s, T0)
    dt = s.cron.deferral[j]
    _run(s, T0, dt + 600)
    a = s.store.attrs(j)
    assert a["JobStatus"] == "5" and a["HoldReasonCode"] == "20"
    assert a["HoldReason"] == '"Job missed deferred execution time"'
    s.release(j, dt + 700)
    _tick(s, dt + 700)
    assert s.cron.deferral[j] == next_run(parse_schedule("0"), dt + 700, "UTC")


def test_invalid_schedule_holds_25_with_htcondor_text():
    s = _mk()
    j = _cron(s, '"1/10"')  # empty expansion: invalid (htcondor.md §6 test_invalid_cron)
    _tick(s, T0)
    a = s.store.attrs(j)
    assert a["JobStatus"] == "5" and a["HoldReasonCode"] == "25"
    assert a["HoldReason"] == '"Invalid cron schedule parameters: Invalid cron attribute: 1/10"'
    bad = _cron(s, '"MON"')
    _tick(s, T0 + 10)
    assert s.store.attrs(bad)["HoldReason"] == '"Invalid cron schedule parameters: Invalid parameter value \'MON\' for CronMinute"'


def test_only_idle_jobs_and_recalc_only_after_the_window():
    k = CronKeeper(zone="UTC")
    attrs = {"CronMinute": '"0"', "JobStatus": "1", "DeferralWindow": "0"}
    k.calculate("1.0", attrs, T0, "enter_queue")
    dt = k.deferral["1.0"]
    k.calculate("1.0", attrs, dt - 5)
    assert k.deferral["1.0"] == dt  # cached and not yet past: kept
    k.calculate("1.0", dict(attrs, JobStatus="2"), dt + 5)
    assert k.deferral["1.0"] == dt  # running jobs keep their DeferralTime
    k.calculate("1.0", attrs, dt + 5)
    assert k.deferral["1.0"] == dt + 3600  # past DeferralTime + window: recomputed
    k.reconfig()
    assert k.pending() == {"1.0": "reconfig"}  # reconfig recomputes every cron job (§2.4)


def test_weekday_schedule_uses_the_schedds_pick():
    # htcondor.md §2.6: `0 0 * * 1` from 2021-01-25 00:00:30 -> a >= 10.3 schedd picks 01-31
    # (day 0 of February); the embedded schedd stores what a real schedd would store
    k = CronKeeper(zone="UTC")
    attrs = {"CronMinute": '"0"', "CronHour": '"0"', "CronDayOfWeek": '"1"', "JobStatus": "1"}
    t = 1611532830  # 2021-01-25 00:00:30 UTC
    k.calculate("1.0", attrs, t, "enter_queue")
    assert k.deferral["1.0"] == schedd_next_run(parse_schedule("0", "0", None, None, "1"), t, "UTC").time
    assert k.deferral["1.0"] == 1612051200  # 2021-01-31 00:00 UTC
    assert k.correct["1.0"] == 1612137600  # 2021-02-01, RouteDeck's correct time


def test_starter_decision_edges():
    # htcondor.md §2.5: exactly the window late still runs; more is missed
    assert starter_decision(1000, 60, 940) == ("start", 1000.0)  # waits until DeferralTime
    assert starter_decision(1000, 60, 1060) == ("start", 1060)
    assert starter_decision(1000, 60, 1061)[0] == "missed"
    assert starter_decision(1000, 0, 1001)[0] == "missed"
