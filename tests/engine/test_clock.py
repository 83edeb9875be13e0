"""Clocks: injected time (product.md §3 "Time is injected"; style.md trio's mock clock)."""

import pytest

from engine.clock import ClockError, ManualClock, SystemClock, VirtualClock
import engine.clock as clock_mod
from engine.clock import LOG_CLOCK_SKEW, LogClock


def test_manual_clock_moves_only_when_told():
    c = ManualClock(1000.0)
    assert c.now() == 1000.0
    assert c.advance(10) == 1010.0
    c.set(2000)
    assert c.now() == 2000.0


def test_manual_clock_refuses_to_go_backwards():
    c = ManualClock(1000.0)
    with pytest.raises(ClockError):
        c.set(999)
    with pytest.raises(ClockError):
        c.advance(-1)
    assert c.now() == 1000.0


def test_virtual_clock_paused_does_not_move_and_jump_is_forward_only():
    c = VirtualClock(5000.0, speed=600, paused=True)
    assert c.now() == 5000.0
    assert c.real_seconds_until(6000) == float("inf")
    c.jump_to(5600)
    assert c.now() == 5600.0
    with pytest.raises(ClockError):
        c.jump_to(5000)
    with pytest.raises(ClockError):
        c.set_speed(0)


def test_virtual_clock_runs_at_speed(monkeypatch):
    real = [100.0]
    monkeypatch.setattr(clock_mod.time, "monotonic", lambda: real[0])
    c = VirtualClock(0.0, speed=60)
    real[0] += 2
    assert c.now() == pytest.approx(120.0)
    c.set_speed(1)  # re-anchors: continuous across a speed change
    assert c.now() == pytest.approx(120.0)
    real[0] += 1
    assert c.now() == pytest.approx(121.0)
    c.pause()
    real[0] += 50
    assert c.now() == pytest.approx(121.0)
    c.resume()
    real[0] += 1
    assert c.now() == pytest.approx(122.0)
    assert c.real_seconds_until(132.0) == pytest.approx(10.0)


def test_system_clock_never_decreases(monkeypatch):
    seq = iter([10.0, 9.0, 11.0])
    monkeypatch.setattr(clock_mod.time, "time", lambda: next(seq))
    c = SystemClock()
    assert [c.now(), c.now(), c.now()] == [10.0, 10.0, 11.0]


def test_log_clock_follows_a_virtual_log_and_the_base_clock_for_a_live_one():
    """Watch on a demo recording (virtual time, far from the wall clock) runs on the log's clock;
    on a live schedd's log (times near the wall clock) on the wall clock (product.md §2 watch)."""
    wall = ManualClock(1_000_000.0)
    clock = LogClock(wall)
    assert clock.now() == 1_000_000.0  # nothing read yet: the base clock
    clock.saw(1_000_000.0 - 10 * LOG_CLOCK_SKEW)  # an old transaction of a log read from its start
    clock.saw(1_000_000.0 - 5)  # the newest one is near the wall clock: a live log
    assert not clock.on_log and clock.now() == 1_000_000.0
    virtual = LogClock(wall)
    virtual.saw(5_000_000.0)
    wall.advance(2)
    assert virtual.on_log and virtual.now() == 5_000_002.0  # log time moved on by the base's seconds
    virtual.saw(4_999_000.0)  # an older time never moves the clock back
    assert virtual.now() == 5_000_002.0


def test_log_clock_read_before_a_log_in_the_past_is_not_pinned_to_the_base_clock():
    """The watch runtime publishes a snapshot before the first poll (on the base clock); a demo
    recording written days earlier must still be shown on its own clock afterwards (issue 10
    item 3: "a log written in virtual time is watched on the log's clock"). Before the fix
    ``now()`` stayed at the first base reading for good, and the throttle windows with it."""
    wall = ManualClock(1_000_000.0)
    clock = LogClock(wall)
    assert clock.now() == 1_000_000.0  # the first snapshot, nothing read yet
    clock.saw(700_000.0)  # the log's transactions are three days older
    wall.advance(5)
    assert clock.on_log and clock.now() == 700_005.0
    clock.saw(699_000.0)  # still never backwards on the log's clock
    assert clock.now() == 700_005.0
