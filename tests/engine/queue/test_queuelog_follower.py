"""Following a live job_queue.log with the router's rules (htcondor.md §3.5). No sleeping: every
poll is explicit; the watcher test is bounded by a short timeout."""

import threading

from tests.helpers.paths import TESTS
from engine.queue.jobqueue import JobAdded, JobChanged, JobRemoved, QueueReloaded
from engine.queue import follower as F
from engine.queue.follower import Follower
from engine.queue.filewatch import Watcher, run_watch
from engine.queue.writer import open_queue

DATA = TESTS / "data" / "queuelog"
T0 = 1736935000


def _submit(q, n=2, now=T0):
    with q.transaction(now=now) as t:
        c = t.new_cluster()
        t.set_attribute((c, -1), "Owner", '"alice"')
        for _ in range(n):
            t.set_attribute(t.new_proc(c), "JobStatus", "1")
    return c


def test_init_addition_no_change(tmp_path):
    """htcondor.md §3.5: first poll is a bulk load (INIT), appended records are an ADDITION read
    from the saved offset, an unchanged file is NO_CHANGE."""
    log = tmp_path / "job_queue.log"
    schedd, _ = open_queue(log, T0)
    _submit(schedd)
    f = Follower(log)
    r = f.poll()
    assert r.probe == F.INIT and r.reloaded and f.queue.snapshot_state() == schedd.snapshot_state()
    assert f.poll().probe == F.NO_CHANGE
    with schedd.transaction(now=T0 + 1) as t:
        t.set_attribute((1, 0), "JobStatus", "2")
    r = f.poll()
    assert r.probe == F.ADDITION and r.records == 3 and not r.reloaded
    assert f.queue.get((1, 0)).status == 2 and f.queue.snapshot_state() == schedd.snapshot_state()


def test_partial_last_record_is_read_again_next_poll(tmp_path):
    """htcondor.md §3.5: a partial last record is not consumed; its offset is kept and it is read
    again at the next poll."""
    log = tmp_path / "job_queue.log"
    schedd, _ = open_queue(log, T0)
    _submit(schedd)
    f = Follower(log)
    f.poll()
    with open(log, "ab") as fh:
        fh.write(b"105 \n103 1.0 JobStatus 2\n103 1.0 Foo \"hal")
    r = f.poll()
    assert r.probe == F.ADDITION and f.queue.get((1, 0)).status == 2 and f.queue.get((1, 0)).get("Foo") is None
    with open(log, "ab") as fh:
        fh.write(b"f\"\n106 \n")
    r = f.poll()
    assert r.probe == F.ADDITION and f.queue.get((1, 0)).get("Foo") == '"half"'


def test_transaction_boundaries_are_ignored(tmp_path):
    """htcondor.md §3.5: the follower applies records of a transaction whose 106 has not been
    written yet (the owner would not)."""
    log = tmp_path / "job_queue.log"
    log.write_bytes((DATA / "example_3_6.log").read_bytes() + b"105 \n103 1.1 JobStatus 2\n")
    f = Follower(log)
    f.poll()
    assert f.queue.get((1, 1)).status == 2


def test_rotation_means_a_full_reload(tmp_path):
    """htcondor.md §3.5 / §3.4: compaction writes a new 107 sequence; the follower sees
    COMPRESSED, clears everything and reloads; subscribers get QueueReloaded."""
    log = tmp_path / "job_queue.log"
    schedd, _ = open_queue(log, T0)
    _submit(schedd)
    f = Follower(log)
    f.poll()
    seen = []
    f.queue.subscribe(seen.append)
    with schedd.transaction(now=T0 + 1) as t:
        t.destroy((1, 0))
    schedd.writer.compact(schedd)
    r = f.poll()
    assert r.probe == F.COMPRESSED and r.reloaded and seen == [QueueReloaded()]
    assert f.queue.snapshot_state() == schedd.snapshot_state() and f.queue.seq == 2
    _submit(schedd, now=T0 + 2)
    assert f.poll().probe == F.ADDITION and f.queue.snapshot_state() == schedd.snapshot_state()


def test_rewrite_with_same_sequence_is_a_probe_error(tmp_path):
    """htcondor.md §3.5: same 107 but the saved record differs → PROBE_ERROR → bulk reload."""
    log = tmp_path / "job_queue.log"
    log.write_bytes(b"107 1 CreationTimestamp 1\n101 0.0 Job Machine\n101 1.0 Job Machine\n")
    f = Follower(log)
    f.poll()
    log.write_bytes(b"107 1 CreationTimestamp 1\n101 0.0 Job Machine\n101 2.0 Job Machine\n103 2.0 A 1\n")
    r = f.poll()
    assert r.probe == F.PROBE_ERROR and f.queue.ids() == [(2, 0)]


def test_first_record_not_107_is_fatal_and_leaves_the_queue(tmp_path):
    """htcondor.md §3.5 step 1: no 107 first → PROBE_FATAL_ERROR (the router asserts)."""
    log = tmp_path / "job_queue.log"
    log.write_bytes(b"107 1 CreationTimestamp 1\n101 1.0 Job Machine\n")
    f = Follower(log)
    f.poll()
    log.write_bytes(b"101 0.0 Job Machine\n")
    r = f.poll()
    assert r.probe == F.FATAL and r.problems[0].severity == "fatal" and f.queue.ids() == [(1, 0)]


def test_events_are_coalesced_per_poll(tmp_path):
    # Source: RouteDeck event batching (no HTCondor behaviour); log format htcondor.md §3.1
    """One poll = one batch of events: additions and removals in order, then one JobChanged per
    surviving job with the names that changed; cluster-ad changes reach every proc."""
    log = tmp_path / "job_queue.log"
    schedd, _ = open_queue(log, T0)
    _submit(schedd)
    f = Follower(log)
    f.poll()
    seen = []
    f.queue.subscribe(seen.append)
    with schedd.transaction(now=T0 + 1) as t:
        t.set_attribute((1, 0), "JobStatus", "2")
        t.set_attribute((1, 0), "JobStatus", "5")
        t.set_attribute((1, -1), "Cmd", '"x"')
        t.destroy((1, 1))
        p = t.new_proc(1)
        t.set_attribute(p, "JobStatus", "1")
    f.poll()
    assert seen == [JobRemoved((1, 1)), JobAdded((1, 2)), JobChanged((1, 0), frozenset({"JobStatus", "Cmd"}))]


def test_missing_file_is_reported(tmp_path):
    # Source: RouteDeck decision: a missing log is a state, not an exception
    f = Follower(tmp_path / "nope.log")
    assert f.poll().probe == F.MISSING


def test_watcher_wakes_on_change_and_stops(tmp_path):
    # Source: RouteDeck watcher (no HTCondor behaviour)
    """watch.py: the directory watch (watchfiles; the slow poll is 30 s here) calls poll() after a write;
    stop() ends the thread. Bounded by event waits, never a sleep."""
    log = tmp_path / "job_queue.log"
    schedd, _ = open_queue(log, T0)
    got, first = threading.Event(), threading.Event()
    results = []

    def on_poll(r):
        results.append(r)
        first.set()
        if r.probe == F.ADDITION:
            got.set()

    w = Watcher(Follower(log), on_poll, slow_poll=30, debounce=0.01).start()
    try:
        assert first.wait(10)
        _submit(schedd)
        assert got.wait(10), [r.probe for r in results]
        got.clear()
        _submit(schedd, now=T0 + 1)  # long after the watcher started: only a change event wakes it
        assert got.wait(10), [r.probe for r in results]
    finally:
        w.stop()
    assert not w.alive and results[0].probe == F.INIT


def test_fallback_poll_loop_without_watchfiles(tmp_path):
    # Source: RouteDeck watcher (no HTCondor behaviour)
    """The slow-poll fallback polls until the stop event is set."""
    log = tmp_path / "job_queue.log"
    open_queue(log, T0)
    stop = threading.Event()
    polls = []

    def on_poll(r):
        polls.append(r)
        if len(polls) >= 2:
            stop.set()

    run_watch(Follower(log), stop, on_poll, slow_poll=0.01, use_watchfiles=False)
    assert [p.probe for p in polls] == [F.INIT, F.NO_CHANGE]


def test_corrupt_appended_record_stops_then_fatal_once_a_106_follows(tmp_path):
    """htcondor.md §3.5: a bad record with no 106 after it is treated like EOF — its offset is
    kept and it is read again next poll; once a 106 follows, HTCondor's router asserts (here: a
    fatal problem, reported once, and the line is skipped). Record numbers count from the file
    start."""
    log = tmp_path / "job_queue.log"
    log.write_bytes(b"107 1 CreationTimestamp 1\n101 1.0 Job Machine\n")
    f = Follower(log)
    f.poll()
    with open(log, "ab") as fh:
        fh.write(b"105 \nZMG 1.0 X 1\n")
    r = f.poll()
    assert [(p.record, p.severity) for p in r.problems] == [(4, "error")] and f.next_offset == 51
    with open(log, "ab") as fh:
        fh.write(b"103 1.0 JobStatus 2\n106 \n")
    r = f.poll()
    assert [(p.record, p.severity) for p in r.problems] == [(4, "fatal")]
    assert f.queue.get((1, 0)).status == 2 and f.poll().probe == F.NO_CHANGE
