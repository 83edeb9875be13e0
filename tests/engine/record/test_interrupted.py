"""A recorder whose ``poll`` was left partway (issue 27's "killed at any moment and started again,
it resumes with no gap and no duplicate"): Ctrl-C lands while a catch-up reads a chunk, when
the state may hold only part of it (plain transactions read but not applied yet) and the
transactions waiting to be written run past the position ``recorder.json`` would get. Such a
recorder writes nothing more, as after a ``kill -9``: the next one resumes from the last
``recorder.json``. And the places where the catch-up brings its state up to date before it is
looked at (engine.record.recorder, ``_archive_chunk``): before a write partway through a chunk,
before a step that is not a plain transaction.
"""

from __future__ import annotations

import pytest

from engine.record.archive import Archive
from engine.record.recorder import Recorder
from engine.record.state import load_state, state_dump
from tests.engine.record.test_recorder import DEMO, assert_replays_as, recorder


def checkpoints_replay(archive) -> int:
    """Every inner state checkpoint, and every segment's state checkpoint, equals the replay of
    the frames before it; returns how many were checked."""
    a = Archive.open(archive, readonly=True)
    inner = {(x["seg"], x["txn"]): x for x in a.index_lines() if x["kind"] == "state"}
    segs = a.segments()
    checked = 0
    for k in segs:
        q = load_state(a.read_state(k))
        at = None
        for first, count, raw in a.frames(k):
            if (k, first) in inner:
                checked += 1
                assert state_dump(load_state(a.inner_state(inner[k, first])), 0, 0) == state_dump(q, 0, 0), (k, first)
            load_state(raw, q)
            at = first + count
        if (k, at) in inner:  # one taken at the segment's end (the archive's)
            checked += 1
            assert state_dump(load_state(a.inner_state(inner[k, at])), 0, 0) == state_dump(q, 0, 0), (k, at)
        if k + 1 in segs:  # the next segment's state: this one's replayed to its end
            checked += 1
            assert state_dump(load_state(a.read_state(k + 1)), 0, 0) == state_dump(q, 0, 0), k + 1
    return checked


def interrupt_after(rec: Recorder, k: int) -> None:
    """Ctrl-C in ``rec``'s next catch-up, after its ``k``-th step was read."""
    steps = rec._chunk_steps

    def limited(*a, **kw):
        for i, x in enumerate(steps(*a, **kw)):
            if i == k:
                raise KeyboardInterrupt
            yield x

    rec._chunk_steps = limited  # type: ignore[method-assign]


@pytest.mark.parametrize(("k", "frame_bytes"), [(700, 8192), (1500, 8192), (1500, 1 << 20)])
def test_a_poll_interrupted_partway_writes_nothing_more_and_the_next_run_resumes(tmp_path, schedd, k, frame_bytes):
    """Small frames: writes before the interrupt in the same chunk; large: none (all waits)."""
    schedd.advance(2000)
    rec = recorder(tmp_path, frame_bytes=frame_bytes, checkpoint_bytes=20_000, segment_bytes=1 << 22)
    interrupt_after(rec, k)
    with pytest.raises(KeyboardInterrupt):
        rec.poll(0.0, flush=True)
    written = rec.flush(1.0, reframe=True)  # what `routedeck record`'s stop did
    arch = tmp_path / "archive"
    assert checkpoints_replay(arch) >= (frame_bytes < 20_000)  # the writes partway through the chunk before it
    recorder(tmp_path, frame_bytes=frame_bytes, checkpoint_bytes=20_000, segment_bytes=1 << 22).poll(2.0, flush=True)
    assert_replays_as(arch, schedd.done, every=50)  # no duplicate, no gap
    assert checkpoints_replay(arch) > 0
    assert written == 0 and rec.interrupted


def test_checkpoints_written_partway_through_a_chunk_are_the_replayed_state(tmp_path):
    """Small frames: writes (and inner checkpoints) inside the chunk, among stretches of 103-only
    transactions whose state waits to be applied."""
    (tmp_path / "job_queue.log").write_bytes(DEMO.read_bytes()[:400_000].rsplit(b"\n106 ", 1)[0] + b"\n106 \n")
    rec = recorder(tmp_path, frame_bytes=4096, segment_bytes=100_000, checkpoint_bytes=12_000)
    rec.poll(0.0, flush=True)
    assert len(Archive.open(tmp_path / "archive", readonly=True).segments()) > 2
    assert checkpoints_replay(tmp_path / "archive") > 10


def test_a_step_that_is_not_plain_sees_the_plain_transactions_before_it(tmp_path):
    """A 104 after a stretch of 103-only transactions: applied after them, not before."""
    head = DEMO.read_bytes()[:200_000]
    head = head[: head.find(b"\n", head.rfind(b"\n106 ") + 1) + 1]
    log = head + b"105 \n103 0.0 Probe 1\n106 \n105 \n104 0.0 Probe\n106 \n"
    (tmp_path / "job_queue.log").write_bytes(log)
    rec = recorder(tmp_path)
    rec.poll(0.0, flush=True)
    assert state_dump(rec.state, 0, 0) == state_dump(load_state(log), 0, 0)
    assert "Probe" not in rec.state._ads["0.0"]
