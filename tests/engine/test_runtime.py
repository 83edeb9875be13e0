"""The engine thread (issue 5 part 3; product.md §3): commands in through a queue, snapshots out
at a bounded rate and replaceable in flight, prompt and clean stop, crash reported."""

import time

from tests.helpers.runtime_fixture import FakeEngine
from engine.contract import commands as C
from engine.clock import VirtualClock
from engine.runtime import Mailbox, Runtime


def test_mailbox_replaces_in_flight():
    m = Mailbox()
    m.put(1)
    m.put(2)
    assert m.take() == 2 and m.take() is None and m.replaced == 1


def test_max_speed_until_and_virtual_snapshot_times():
    eng = FakeEngine()
    got = []
    rt = Runtime(eng, VirtualClock(1000.0), got.append, speed="max", every_virtual=60, until=1600)
    rt.start()
    assert rt.done.wait(10)
    times = [s.time for s in got]
    # one snapshot at start, then exactly at every 60 virtual seconds; the one at `until` is final
    assert times == [1000.0 + 60 * k for k in range(0, 11)]
    assert got[-1].engine_state == "stopped" and eng.now == 1600
    assert eng.ticks == [1000.0 + 10 * k for k in range(61)]
    assert [s.seq for s in got] == sorted(s.seq for s in got)


def test_pause_step_commands_and_prompt_stop():
    eng = FakeEngine()
    clock = VirtualClock(1000.0, speed=1.0)
    rt = Runtime(eng, clock, snapshot_interval=0.05).start()
    rt.send(C.Pause())
    deadline = time.monotonic() + 5
    while rt.latest() is None or not rt.latest().paused:
        assert time.monotonic() < deadline
        rt._wake.wait(0.01)
    before = eng.now
    rt.send(C.Step(3))
    rt.send(C.HoldJob("1.0"))
    rt.send(C.RemoveJob("bad"))
    deadline = time.monotonic() + 5
    while len(eng.handled) < 2:
        assert time.monotonic() < deadline
        rt._wake.wait(0.01)
    assert eng.now >= before + 20  # three actions: this tick, +10, +20
    assert eng.handled[0] == C.HoldJob("1.0")
    assert ("command-failed", "no such job", "error") in eng.events
    t0 = time.monotonic()
    rt.stop()
    assert time.monotonic() - t0 < 1.0 and rt.done.is_set()


def test_crash_is_published_not_raised():
    eng = FakeEngine(crash_at=1100)
    got = []
    rt = Runtime(eng, VirtualClock(1000.0), got.append, speed="max", until=5000).start()
    assert rt.done.wait(10)
    assert got[-1].engine_state == "crashed" and "boom" in got[-1].error


def test_engine_thread_never_waits_for_a_slow_consumer():
    eng = FakeEngine()
    # no publish callback: the consumer only takes from the mailbox, later
    rt = Runtime(eng, VirtualClock(1000.0), None, speed="max", every_virtual=10, until=2000).start()
    assert rt.done.wait(10)  # finished although nobody took anything from the mailbox
    assert rt.mailbox.replaced >= 90 and rt.mailbox.take().time == 2000


class SliceableEngine(FakeEngine):
    """A demo-like engine (``sliceable``) whose every action is slow: the stop request arrives
    while the runtime is catching up many actions in one go."""

    sliceable = True

    def __init__(self, runtime_box, stop_after):
        super().__init__()
        self.box, self.stop_after = runtime_box, stop_after

    def step(self, now):
        super().step(now)
        if len(self.ticks) == self.stop_after:
            self.box[0].stop()  # from the engine thread: sets the flag and wakes, no join


def test_stop_is_obeyed_between_actions_of_a_long_catch_up():
    """Issue 14 item 5: stopping is prompt under load. A clock that jumped 10,000 virtual seconds
    (1,000 actions) ahead is caught up action by action, and a stop requested after the fifth
    action ends the loop there instead of after all 1,000."""
    box = []
    eng = SliceableEngine(box, stop_after=5)
    clock = VirtualClock(1000.0, speed=1.0)
    clock.pause()
    rt = Runtime(eng, clock, snapshot_interval=60)
    box.append(rt)
    clock.jump_to(11000.0)
    rt.start()
    assert rt.done.wait(10)
    assert len(eng.ticks) == 5 and eng.now < 11000.0


def test_non_sliceable_engine_is_stepped_in_one_call():
    """Watch and replay feeds are not sliceable (an intermediate step would poll or seek): the
    runtime still hands them the whole interval at once."""
    eng = FakeEngine()
    calls = []
    real = eng.step
    eng.step = lambda t: (calls.append(t), real(t))
    clock = VirtualClock(1000.0, speed=1.0)
    clock.pause()
    rt = Runtime(eng, clock, snapshot_interval=60)
    clock.jump_to(1100.0)
    rt._step_to(1100.0)
    assert calls == [1100.0] and eng.ticks[-1] == 1100.0


def test_a_command_is_served_during_a_long_catch_up():
    """Issue 14 item 5: an engine far behind its clock hands control back between two actions,
    so a command sent meanwhile is applied (and a snapshot published) before the catch-up ends."""
    box = []

    class Slow(SliceableEngine):
        def step(self, now):
            FakeEngine.step(self, now)
            if len(self.ticks) == 3:
                box[0].send(C.HoldJob("1.0"))  # arrives while 1,000 actions are still due
            if self.handled and not hasattr(self, "handled_at"):
                self.handled_at = len(self.ticks)

    eng = Slow(box, stop_after=None)
    clock = VirtualClock(1000.0, speed=1.0)
    clock.pause()
    rt = Runtime(eng, clock, snapshot_interval=60)
    box.append(rt)
    clock.jump_to(11000.0)
    rt.start()
    deadline = time.monotonic() + 10
    while not eng.handled:
        assert time.monotonic() < deadline
        rt._wake.wait(0.01)
    rt.stop()
    assert eng.handled == [C.HoldJob("1.0")] and eng.handled_at < 100


def test_publication_syncs_the_queue_log_first_with_the_current_speed():
    """Issue 30's decision: no published snapshot shows a commit the log has not synced; the
    runtime hands the feed its speed and the monotonic clock (the one wall-clock reader)."""
    order = []
    eng = FakeEngine()
    eng.sync_log = lambda speed, mono: order.append(("sync", speed, callable(mono)))
    clock = VirtualClock(1000.0, speed=4.0)
    rt = Runtime(eng, clock, lambda snap: order.append("publish"), snapshot_interval=60)
    rt._publish()
    assert order == [("sync", 4.0, True), "publish"]


def test_idle_work_runs_while_the_loop_waits_until_the_feed_says_done():
    """Issue 30: a feed's background preparation (the replay's seek checkpoints) runs on the
    engine thread when the loop would wait, one unit per turn, and stops when the feed has none."""

    class Preparing(FakeEngine):
        def __init__(self):
            super().__init__()
            self.units = 0

        def idle(self):
            self.units += 1
            return self.units < 5

    eng = Preparing()
    rt = Runtime(eng, VirtualClock(1000.0, speed=1.0), snapshot_interval=0.05).start()
    rt.send(C.Pause())
    deadline = time.monotonic() + 5
    while eng.units < 5:
        assert time.monotonic() < deadline
        rt._wake.wait(0.01)
    rt._wake.wait(0.2)
    rt.stop()
    assert eng.units == 5
