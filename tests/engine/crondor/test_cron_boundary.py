"""One rule for a cron run's state at the second of its DeferralTime (issue 25 item 4).

Sources: htcondor.md §2.5 and ``src/condor_starter.V6.1/starter.cpp``
``Starter::jobWaitUntilExecuteTime``: ``deltaT = DeferralTime - (time(NULL) - DeferralOffset)``,
then a DaemonCore timer of ``deltaT`` seconds starts the job (``SpawnJobOrPreScript``; meanwhile the
JobInfoCommunicator reports the job Running). ``src/condor_daemon_core.V6/timer_manager.cpp``:
``NewTimer`` makes the timer due at ``time(NULL) + deltawhen`` and ``Timeout`` fires every timer
whose due second ``<= time(NULL)``. So the payload starts at the second ``DeferralTime +
DeferralOffset`` itself: one second before it the job is waiting (its next run is that
DeferralTime), at that second and after it is running (its next run is the one after).

The rule is ``engine.crondor.deferral.run_state`` / ``start_time``; the demo's simulated site,
the execute node's starter and the crondor rows of every feed (demo, replay, watch) use it.
"""

from __future__ import annotations

import shutil

import pytest

from engine.clock import ManualClock
from engine.crondor.deferral import run_state, start_time
from engine.feeds import demo
from engine.feeds.replay.index import build_index
from engine.feeds.replay.player import Player
from engine.feeds.watch.follow import WatchEngine
from engine.feeds.watch.setup import WatchSetup
from engine.schedd.cron import CronKeeper, CronObserver
from engine.views.figures import table_rules
from tests.contracts.test_view_parity import POLL, _diff, _rows
from tests.engine.execute.test_execute import make
from tests.helpers.execute_fixture import fetch_queue_hook

OFFSET = 30  # the extra cron job's DeferralOffset (htcondor.md §2.1: read by the starter, set by nothing)
# the sample demo's workload plus a cron job whose starter clock is 30 s behind: it starts 30 s
# after its DeferralTime, and waits until then
OFFSET_JOB = """
[[cron]]
name = "offset-probe"
site = "local"
runtime = "fixed 20"
ad = '''
Owner = "monitor"
JobUniverse = 12
Cmd = "/usr/libexec/probe"
CronMinute = "*/10"
DeferralWindow = 60
DeferralOffset = 30
OnExitRemove = false
'''
"""
HOURS = 1.0


# one test process builds the module's demo run once (--dist loadgroup)
pytestmark = pytest.mark.xdist_group("cron-boundary")


@pytest.fixture(scope="module")
def boundaries(tmp_path_factory):
    """The demo (sample config + OFFSET_JOB) stepped on the watcher's 7 s grid, and at each
    DeferralTime T its schedd holds: snapshots of the demo and of watch at T - 1, T, T + 1 and
    T + OFFSET - 1, T + OFFSET, T + OFFSET + 1 (moments off the grid, as the held-out ones)."""
    tmp = tmp_path_factory.mktemp("cron-boundary")
    config = tmp / "config"
    shutil.copytree(demo.DEFAULT_CONFIG_DIR, config)
    with open(config / "workload.toml", "a") as fh:
        fh.write(OFFSET_JOB)
    state = tmp / "state"
    engine = demo.build_demo(config, state_dir=state, seed=3)
    limits, rules, period = table_rules(engine.table)
    clock = ManualClock(engine.now)
    watch = WatchEngine(WatchSetup(queue_log=str(state / "job_queue.log"), limits=limits, rules=rules,
                                   polling_period=period), clock)
    watch.poll()
    targets: set[float] = set()
    moments, live, watched = [], [], []
    t, end = engine.now, engine.now + HOURS * 3600
    try:
        while t < end:
            for d in engine.schedd.cron.deferral.values():
                targets.update(d + k for k in (-1, 0, 1, OFFSET - 1, OFFSET, OFFSET + 1))
            t = min([x for x in targets if x > t] + [t + POLL])
            engine.step(t)
            clock.set(t)
            watch.poll()
            if t in targets:
                moments.append(t)
                engine.advance()  # a snapshot only reads what the advance settled (issue 26)
                live.append(engine.snapshot())
                watched.append(watch.snapshot(with_jobs=False))
    finally:
        engine.close()
    player = Player(build_index(state / "job_queue.log"), ManualClock(0), limits=limits, rules=rules,
                    polling_period=period)
    replayed = []
    for m in moments:
        player.seek(time=m)
        replayed.append(player.snapshot(with_jobs=False, time=m))
    return moments, live, replayed, watched


@pytest.mark.slow
def test_demo_replay_and_watch_agree_on_cron_rows_around_each_deferral_time(boundaries):
    # htcondor.md §2.4 (replay and watch rebuild the DeferralTime with CronObserver) and §2.5.
    moments, live, replayed, watched = boundaries
    assert len(moments) >= 30
    for m, want, got_replay, got_watch in zip(moments, live, replayed, watched):
        assert _diff(_rows(want, "cron"), _rows(got_replay, "cron")) == [], f"replay, cron rows at {m}"
        assert _diff(_rows(want, "cron"), _rows(got_watch, "cron")) == [], f"watch, cron rows at {m}"


@pytest.mark.slow
def test_at_the_second_of_its_deferral_time_a_job_runs_and_its_next_run_is_the_one_after(boundaries):
    # starter.cpp jobWaitUntilExecuteTime + timer_manager.cpp (module docstring): waiting until the
    # second DeferralTime + DeferralOffset, running from it; the next run shown follows.
    moments, live, _replayed, _watched = boundaries
    seen = {"waiting": 0, "running": 0, "offset-waiting": 0}
    for m, snap in zip(moments, live):
        for row in snap.cron_jobs:
            if row.status != 2 or row.deferral_time is None:
                continue
            offset = OFFSET if row.fields[0] == "*/10" else 0  # fields: CronMinute first
            starts = row.deferral_time + offset
            if not starts - 1 <= m <= starts + 1:
                continue
            if m < starts:
                assert row.state == "waiting" and row.next_runs[0] == row.deferral_time, (m, row)
                seen["offset-waiting" if m >= row.deferral_time else "waiting"] += 1
            else:
                assert row.state == "running" and row.next_runs[0] > row.deferral_time, (m, row)
                seen["running"] += 1
    assert all(seen.values()), seen


def test_the_demo_site_starts_an_offset_job_when_its_starter_clock_reaches_the_deferral_time():
    # htcondor.md §2.5: "now -= DeferralOffset" before deltaT; the simulated site's gate uses the
    # job's DeferralOffset (engine.schedd.cron.CronKeeper.gate -> start_time).
    keeper = CronKeeper(zone="UTC")
    keeper.deferral["1.0"] = 1000
    attrs = {"DeferralTime": "1000", "DeferralWindow": "60", "DeferralPrepTime": "300", "DeferralOffset": "30"}
    gate = keeper.gate("1.0", attrs, 900.0)
    assert gate(940.5) == ("start", 1030.0)
    assert gate(1030.0) == ("start", 1030.0)
    assert gate(1091.0)[0] == "missed"  # 61 s late on the starter's clock, DeferralWindow 60


def test_the_one_rule_at_whole_seconds():
    # starter.cpp / timer_manager.cpp (module docstring): the second matters, not its fraction.
    assert start_time(1000, 0, 940.5) == 1000.0 and start_time(1000, 0, 999.999) == 1000.0
    assert start_time(1000, 0, 1000.0) == 1000.0 and start_time(1000, 0, 1000.7) == 1000.7
    assert start_time(1000, 0, 1001.0) is None and start_time(1000, 5, 1005.9) == 1005.9
    assert start_time(1000, 0, 990.0, offset=30) == 1030.0 and start_time(None, 0, 990.0) is None
    assert [run_state(True, 2, 1000, t).state for t in (999, 999.9, 1000, 1000.5, 1001)] == \
        ["waiting", "waiting", "running", "running", "running"]
    assert [run_state(True, 2, 1000, t, 30).state for t in (1000, 1029, 1030)] == ["waiting", "waiting", "running"]
    assert run_state(True, 2, 1000, 1010, 30).runs_after == 999  # waits for 1000: the next run shown is 1000
    assert [run_state(True, s, 1000, 999).state for s in (1, 5, 4)] == ["idle", "held", "idle"]
    assert run_state(False, 2, 1000, 999).state == "invalid"


def test_the_execute_nodes_starter_runs_the_job_at_the_second_not_a_fraction_after(tmp_path):
    # A job that reaches the starter at 50.5 with DeferralTime 100 is started at 100 (the
    # DaemonCore timer's due second), not at 100.5 (engine/execute/starter.py, startd.py next_time).
    job = 'Cmd = "/bin/true"\nDeferralTime = 100\nDeferralWindow = 0\nClusterId = 1\nProcId = 0\n'
    sd = make(tmp_path, f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch_queue_hook(tmp_path, [job])}\n"
                        "FetchWorkDelay = 0\n")
    sd.step(50.5)
    assert sd.jobs["1.0"].ad["JobStatus"] == "2" and "JobStartDate" not in sd.jobs["1.0"].ad
    sd.step(99.9)
    assert "JobStartDate" not in sd.jobs["1.0"].ad
    assert sd.next_time(99.9) == 100.0  # the engine steps to that second, not to 100.9
    sd.step(100.0)
    assert sd.jobs["1.0"].ad.get("JobStartDate") == "100"


def test_replay_and_watch_keep_the_deferral_time_of_a_job_started_in_the_cycle_that_computed_it():
    # htcondor.md §2.4: the schedd computes only Idle jobs, in a cycle that may start the job at
    # once (the runnable clause holds: prep time 300 s); the log shows the start, not the
    # DeferralTime. CronObserver (engine/schedd/cron.py) computes it when it sees that start.
    T = 1_795_219_200  # a :00 minute
    obs = CronObserver("UTC", start=T, period=10)  # cycles at T+5, T+15, ...
    idle = {"CronMinute": '"*/10"', "JobStatus": "1", "DeferralWindow": "60", "JobUniverse": "12"}
    running = dict(idle, JobStatus="2")
    obs.observe("1.0", idle, T + 1)  # submitted
    obs.observe("1.0", running, T + 5)  # the cycle at T+5 computed T+600 and started it
    obs.run_until(T + 700, lambda job: running)
    assert obs.deferral("1.0") == T + 600
    obs.observe("1.0", idle, T + 640)  # ran, exited, requeued (OnExitRemove = false)
    obs.observe("1.0", running, T + 645)  # the next cycle: T+1200, started at once again
    obs.run_until(T + 1000, lambda job: running)
    assert obs.deferral("1.0") == T + 1200
