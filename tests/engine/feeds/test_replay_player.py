"""Replay transport and views (engine.feeds.replay.player, engine.views.recorded).

Sources: product.md §2 (replay: play/pause/step/seek/speed), §6 (replay bar, bookmarks);
htcondor.md §1.5 (a route's counts: idle = routed − running, held copies count as idle),
§1.9 (a routed copy is a job with RouteName defined), §3.1 (cluster ad ``0<c>.-1`` chained
under proc ads), §3.6 (the constructed example log, copied into the test below).
"""

from __future__ import annotations

import random

import pytest

from engine.clock import ManualClock
from engine.feeds.replay.index import build_index
from engine.feeds.replay.player import Player, ReplayError
from engine.contract.commands import Pause, Resume, Seek, SetSpeed, Step
from tests.helpers.replay_logs import T0, Recording, as_expected
from engine.views import recorded as views
from engine.views.recorded import _evaluated, literal

# htcondor.md §3.6, the constructed example log, verbatim.
EXAMPLE = """\
107 1 CreationTimestamp 1736935000
101 0.0 Job Machine
103 0.0 NextClusterNum 1
105 
101 0.1 Owner (empty)
103 0.1 User "alice@example.org"
103 0.1 Owner "alice"
103 0.1 Enabled 1
103 0.0 NextClusterNum 2
101 01.-1 Job Machine
101 1.-2 ClusterPvt (empty)
103 01.-1 ClusterId 1
103 01.-1 Owner "alice"
103 01.-1 User "alice@example.org"
103 01.-1 JobUniverse 5
103 01.-1 Cmd "/bin/sleep"
103 01.-1 Arguments "60"
103 01.-1 Iwd "/home/alice"
103 01.-1 QDate 1736935200
103 01.-1 RequestCpus 1
103 01.-1 WantJobRouter true
103 01.-1 Requirements (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX")
103 01.-1 LeaveJobInQueue false
101 1.0 Job Machine
103 1.0 GlobalJobId "submit.example.org#1.0#1736935200"
103 1.0 ProcId 0
103 1.0 JobStatus 1
101 1.1 Job Machine
103 1.1 GlobalJobId "submit.example.org#1.1#1736935200"
103 1.1 ProcId 1
103 1.1 JobStatus 1
106 
105 
103 1.0 Managed "External"
103 1.0 ManagedManager "jobrouter"
106 
105 
103 0.0 NextClusterNum 3
101 02.-1 Job Machine
101 2.-2 ClusterPvt (empty)
101 2.0 Job Machine
103 2.0 GlobalJobId "submit.example.org#2.0#1736935230"
103 2.0 ProcId 0
103 02.-1 ClusterId 2
103 02.-1 Owner "alice"
103 02.-1 User "alice@example.org"
103 02.-1 QDate 1736935230
103 02.-1 EnteredCurrentStatus 1736935230
103 2.0 JobStatus 1
103 02.-1 JobUniverse 9
103 02.-1 Remote_JobUniverse 5
103 02.-1 GridResource "condor ce.example.org ce.example.org:9619"
103 02.-1 Cmd "/bin/sleep"
103 02.-1 Arguments "60"
103 02.-1 WantJobRouter true
103 02.-1 RoutedFromJobId "1.0"
103 02.-1 RoutedBy "jobrouter"
103 02.-1 RouteName "Site1"
103 02.-1 LeaveJobInQueue JobStatus == 4
106 
105 
103 1.0 RoutedToJobId "2.0"
103 1.0 NumRestarts 0
106 
105 
103 2.0 JobStatus 2
103 2.0 EnteredCurrentStatus 1736935300
103 2.0 JobCurrentStartDate 1736935298
106 
105 
103 1.0 JobStatus 2
103 1.0 EnteredCurrentStatus 1736935305
103 1.0 JobCurrentStartDate 1736935298
106 
105 
103 2.0 JobStatus 4
103 2.0 EnteredCurrentStatus 1736935360
103 2.0 CompletionDate 1736935360
103 2.0 ExitBySignal false
103 2.0 ExitCode 0
103 2.0 RemoteWallClockTime 62.0
106 
105 
103 2.0 JobFinishedHookDone 1736935361
106 
105 
103 1.0 JobStatus 4
103 1.0 CompletionDate 1736935360
103 1.0 ExitBySignal false
103 1.0 ExitCode 0
103 1.0 RemoteWallClockTime 62.0
106 
105 
103 2.0 LeaveJobInQueue FALSE
106 
105 
103 1.0 Managed "ScheddDone"
103 1.0 ManagedManager ""
106 
105 
102 2.0
102 02.-1
102 2.-2
106 
105 
102 1.0
106 
"""


@pytest.fixture
def example(tmp_path):
    p = tmp_path / "job_queue.log"
    p.write_text(EXAMPLE)
    return build_index(p)


def test_example_counts_at_each_step(example):
    """§3.6 + §1.5: the routed copy 2.0 (RouteName in its cluster ad) is counted on Site1 from
    its submission to its removal. Running is what the router last saw (§1.5: ``is_running`` is
    refreshed only at the status check, which mirrors the copy's status into the source, §1.6):
    the copy starts at step 5 but counts as running from step 6, when the source shows it, until
    step 9, when the source shows Completed. Once its copies are gone the route stays on the board
    with zero counts (its recent figures still count the copy, engine/feeds/replay/stats.py)."""
    player = Player(example, ManualClock(0))
    seen = []
    for i in range(example.steps):
        player.seek(step=i)
        snap = player.snapshot()
        r = {v.name: (v.routed, v.idle, v.running) for v in snap.routes}
        seen.append(r.get("Site1"))
    idle, run = (1, 1, 0), (1, 0, 1)
    gone = (0, 0, 0)
    assert seen == [None, None, None, idle, idle, idle, run, run, run, idle, idle, idle, gone, gone]
    player.seek(step=5)  # the queue's own view: the copy itself is Running
    assert views.route_counts(player.state.table, router_view=False)["Site1"].running == 1
    player.seek(step=4)
    rows = {row.job: row for row in player.snapshot().jobs}
    assert rows["1.0"].kind == "source" and rows["1.0"].route == "Site1" and rows["1.0"].routed_to == "2.0"
    assert rows["2.0"].kind == "routed" and rows["2.0"].routed_from == "1.0" and rows["2.0"].owner == "alice"
    assert player.snapshot().queue_counts == {"idle": 3, "running": 0, "held": 0, "removed": 0, "completed": 0}


def test_times_inferred_flag_and_seek_by_time(example):
    """product.md §2: without ``106 #`` comments the times are inferred and the UI says so."""
    player = Player(example, ManualClock(0))
    assert player.replay_position().times_inferred
    assert player.seek(time=1736935299) == 4  # step 5 sets EnteredCurrentStatus 1736935300
    assert player.seek(time=1736935300) == 5
    assert player.seek(time=1736935304) == 5  # step 6 sets EnteredCurrentStatus 1736935305
    assert player.seek(time=0) == -1 and player.state.table == {}


def test_play_applies_steps_as_the_clock_passes_their_times(tmp_path):
    rec = Recording(11, steps=120)
    p = tmp_path / "q.log"
    p.write_text(rec.text())
    ix = build_index(p, every=30, tz="UTC")
    clock = ManualClock(1000.0)
    player = Player(ix, clock, speed=100.0)
    player.seek(step=0)
    player.handle(Resume())
    assert not player.paused
    start = ix.times[0]
    for _ in range(400):
        clock.advance(1.0)
        player.tick()
        expect = ix.step_at_time(min(start + 100.0 * (clock.now() - 1000.0), ix.times[-1]))
        assert player.position == max(0, expect)
        assert as_expected(player.state) == rec.states[player.position]
        if player.paused:
            break
    assert player.position == ix.steps - 1 and player.paused  # playing stops at the end


def test_pause_speed_and_step_commands(tmp_path):
    rec = Recording(12, steps=80)
    p = tmp_path / "q.log"
    p.write_text(rec.text())
    ix = build_index(p, every=25, tz="UTC")
    clock = ManualClock(0.0)
    player = Player(ix, clock)
    player.handle(Seek(transaction=10))
    player.handle(Resume())
    player.handle(SetSpeed(1000.0))
    t = player.time()
    clock.advance(0.5)
    assert player.time() == pytest.approx(min(t + 500.0, ix.times[-1]))
    player.handle(Pause())
    player.tick()
    frozen = player.position
    clock.advance(100.0)
    assert not player.tick() and player.position == frozen
    player.handle(Step(3))
    assert player.position == frozen + 3 and player.paused
    player.handle(Step(-5))
    assert as_expected(player.state) == rec.states[frozen - 2]
    with pytest.raises(ReplayError):
        player.set_speed(0)
    with pytest.raises(ReplayError):
        player.seek(step=ix.steps)


def test_random_walk_matches_the_index(tmp_path):
    """After any mix of seeks and steps the player's state is the state at its position."""
    rec = Recording(13, steps=300)
    p = tmp_path / "q.log"
    p.write_text(rec.text())
    ix = build_index(p, every=40, tz="UTC")
    player = Player(ix, ManualClock(0.0))
    rng = random.Random(13)
    for _ in range(80):
        r = rng.random()
        if r < 0.4:
            player.seek(step=rng.randrange(-1, ix.steps))
        elif r < 0.7:
            player.step(rng.randrange(-3, 8))
        else:
            player.seek(time=rng.uniform(T0 - 10, ix.times[-1] + 10))
        expected = rec.states[player.position] if player.position >= 0 else {}
        assert as_expected(player.state) == expected


def test_bookmarks(example):
    player = Player(example, ManualClock(0))
    player.seek(step=3)
    assert player.add_bookmark() == "B1"
    player.seek(step=5)
    player.add_bookmark("running")
    player.seek(step=0)
    assert player.goto_bookmark("B1") == 3
    assert [b[:2] for b in player.bookmark_list()] == [("B1", 3), ("running", 5)]
    with pytest.raises(ReplayError):
        player.goto_bookmark("nope")


def test_literal_fast_path_agrees_with_classad2():
    """Values as job_queue.log writes them (htcondor.md §3.1 "Values"): the direct reading of
    plain integers and strings gives what classad2 gives."""
    for text in ["0", "17", "1795300000", '"alice"', '""', '"a b  c"', '"x\\\\y"', '"say \\"hi\\""',
                 "-3", "2.5", "true", "FALSE", "undefined", "error", "1 + 2", '"/bin/sleep"', "０"]:
        assert literal(text) == _evaluated(text), text
