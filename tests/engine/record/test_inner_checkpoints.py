"""Inner state checkpoints of a segment (issue 27: "periodic state checkpoints, so that a seek into
the middle of a month costs one checkpoint and one segment"): the recorder's state after a write,
every ``checkpoint_bytes`` of a segment (engine.record.archive, ``Inner``), so a seek applies at
most about that much after a checkpoint instead of up to a segment.

Each test checks the archive against the recording never compacted (tests/engine/record/
test_recorder.py's ``assert_replays_as``: every transaction boundary holds the same ads), and the
states a seek starts from (``state_near``, which reads the last inner checkpoint before it) against
the same. A torn tail, a ``kill -9`` at each file operation of a write that takes a checkpoint,
and retention of segments that hold some: the archive stays what ``recorder.json`` counts.
"""

from __future__ import annotations

import pytest

import engine.record.archive as archive_mod
from engine.feeds.replay.archive import open_archive, state_near
from engine.record.archive import Archive
from tests.engine.record.test_recorder import DEMO, assert_replays_as, recorder, uncompacted
from tests.engine.record.test_reframe import _Kill, _Killed  # a kill -9 at the n-th file operation
from tests.helpers.compaction import ScheddLog

SEGMENT, EVERY = 40_000, 10_000


def inner_recorder(tmp_path, files=None, **kw):
    kw.setdefault("segment_bytes", SEGMENT)
    return recorder(tmp_path, files=files, checkpoint_bytes=EVERY, **kw)


def states(archive) -> list[dict]:
    return [x for x in Archive.open(archive, readonly=True).index_lines() if x["kind"] == "state"]


def follow(rec, schedd, polls: int, t0: int = 0, steps: int = 20) -> None:
    for i in range(polls):
        schedd.advance(steps)
        rec.poll(t0 + i, flush=True)


def assert_seeks_from_checkpoints(archive, n: int, most: int = 6) -> None:
    """``state_near`` at inner checkpoints' transactions and the ones around them (it starts from
    the checkpoint, or from the one before) equals the recording there (``most`` checkpoints, the
    last among them, spread over the archive)."""
    ref = uncompacted(n)
    kept = states(archive)
    for x in kept[::-(-len(kept) // most) or 1] + kept[-1:]:
        for txn in (x["txn"] - 2, x["txn"] - 1, x["txn"], x["txn"] + 1):
            if 0 <= txn < n - 1:  # archive transaction txn is step txn + 1 (step 0: the recording's header run)
                assert state_near(archive, txn).snapshot_state() == ref.state_at(txn + 1).snapshot_state(), txn


def test_a_segment_holds_inner_checkpoints_at_frame_starts_and_seeks_start_from_them(tmp_path, schedd, monkeypatch):
    rec = inner_recorder(tmp_path)
    follow(rec, schedd, 15)
    arch = tmp_path / "archive"
    lines = Archive.open(arch, readonly=True).index_lines()
    inner = [x for x in lines if x["kind"] == "state"]
    frames = [x for x in lines if x["kind"] == "frame"]
    segments = {x["seg"] for x in frames}
    assert len(segments) >= 3 and len(inner) >= 2 * len(segments) - 2, (len(segments), len(inner))
    # each at the start of a frame of its segment (or at its end: the archive's, or before a segment
    # a gap starts), at least EVERY bytes of transactions after the last
    starts = {(f["seg"], f["first"]) for f in frames} | {(f["seg"], f["first"] + f["count"]) for f in frames}
    assert all((x["seg"], x["txn"]) in starts for x in inner)
    assert sum((x["seg"], x["txn"]) in {(f["seg"], f["first"]) for f in frames} for x in inner) >= len(inner) - 1
    for seg in segments:
        raw_at = 0
        marks = [0]
        for f in (f for f in frames if f["seg"] == seg):
            if any(x["seg"] == seg and x["txn"] == f["first"] for x in inner):
                marks.append(raw_at)
            raw_at += f["raw"]
        assert all(b - a >= EVERY for a, b in zip(marks, marks[1:])), (seg, marks)
    assert_replays_as(arch, schedd.done)
    # a seek reads the checkpoint it starts from, no segment checkpoint
    read = []
    monkeypatch.setattr(Archive, "read_state", lambda self, k: read.append(k) or b"")
    state_near(arch, inner[-1]["txn"])
    assert read == []
    monkeypatch.undo()
    assert_seeks_from_checkpoints(arch, schedd.done)


def test_without_checkpoint_bytes_a_segment_has_none_and_replays_the_same(tmp_path, schedd):
    rec = recorder(tmp_path, segment_bytes=SEGMENT, checkpoint_bytes=None)
    follow(rec, schedd, 8)
    assert states(tmp_path / "archive") == []
    assert not list((tmp_path / "archive").glob("inner-*"))
    assert_replays_as(tmp_path / "archive", schedd.done)


def test_a_torn_tail_after_an_inner_checkpoint_is_dropped_on_start(tmp_path, schedd):
    rec = inner_recorder(tmp_path)
    follow(rec, schedd, 6)
    arch = Archive.open(tmp_path / "archive")
    assert any(x["seg"] == arch.meta.segment for x in states(tmp_path / "archive"))
    inner = arch.inner_path(arch.meta.segment)
    size = inner.stat().st_size
    assert size == arch.meta.inner_size
    # a checkpoint's header cut short, its index line cut short, the next segment's inner file
    for path, torn in ((inner, b"RDF1\x99\x00\x00"), (arch.index_path, b'{"kind":"state","seg":')):
        path.write_bytes(path.read_bytes() + torn)
    (tmp_path / "archive" / f"inner-{arch.meta.segment + 1:06d}.rds").write_bytes(b"junk")
    rec = inner_recorder(tmp_path)
    assert inner.stat().st_size == size
    assert not (tmp_path / "archive" / f"inner-{arch.meta.segment + 1:06d}.rds").exists()
    follow(rec, schedd, 6, t0=10)
    assert_replays_as(tmp_path / "archive", schedd.done)
    assert_seeks_from_checkpoints(tmp_path / "archive", schedd.done)


def test_retention_deletes_the_inner_checkpoints_with_their_segment(tmp_path, schedd):
    rec = inner_recorder(tmp_path, segment_bytes=100_000)
    follow(rec, schedd, 40, steps=75)
    arch = Archive.open(tmp_path / "archive")
    segs = arch.segments()
    assert len(segs) >= 4 and all(arch.inner_path(k).exists() for k in segs[:2])
    last_t = {x["seg"]: x["t1"] for x in arch.index_lines() if x["kind"] == "frame"}
    assert arch.retain(now=last_t[segs[1]] + 1 + 3600, max_age=3600) == segs[:2]
    assert not any(arch.inner_path(k).exists() for k in segs[:2])
    kept = states(tmp_path / "archive")
    assert kept and {x["seg"] for x in kept} <= set(segs[2:])
    replay = open_archive(tmp_path / "archive", tz="UTC")
    ref = uncompacted(schedd.done)
    assert replay.index.state_at(replay.index.steps - 1).snapshot_state() == \
        ref.state_at(schedd.done - 1).snapshot_state()
    assert_seeks_from_checkpoints(tmp_path / "archive", schedd.done)
    rec = inner_recorder(tmp_path, segment_bytes=100_000)  # still opens and goes on
    follow(rec, schedd, 2, t0=20)
    assert_replays_as_from(tmp_path / "archive", schedd.done)


def assert_replays_as_from(archive, n: int) -> None:
    """After retention: the archive's last state is the recording's after its ``n`` steps."""
    replay = open_archive(archive, tz="UTC")
    assert replay.index.state_at(replay.index.steps - 1).snapshot_state() == \
        uncompacted(n).state_at(n - 1).snapshot_state()


WRITE_WITH_A_CHECKPOINT = ["append seg", "append inner", "append index", "replace recorder"]


def _polls_to_a_write_with_a_checkpoint(tmp_path) -> int:
    """The poll (from 0, 20 steps each) whose write takes an inner checkpoint in the segment it
    writes to (the first such write that does not start a segment), found on a copy."""
    probe = tmp_path / "probe"
    probe.mkdir()
    log = ScheddLog(probe / "job_queue.log", DEMO.read_bytes())
    rec = inner_recorder(probe)
    for i in range(100):
        n, seg = len(states(probe / "archive")), rec.archive.meta.segment
        log.advance(20)
        rec.poll(i, flush=True)
        if len(states(probe / "archive")) > n and rec.archive.meta.segment == seg:
            return i
    raise AssertionError("no write took an inner checkpoint")


def _to_a_write_with_a_checkpoint(tmp_path, schedd, files) -> None:
    """Follow up to the poll whose write takes an inner checkpoint, that poll ``armed``."""
    last = _polls_to_a_write_with_a_checkpoint(tmp_path)
    rec = inner_recorder(tmp_path, files=files)
    for i in range(last + 1):
        schedd.advance(20)
        files.armed = i == last
        try:
            rec.poll(i, flush=True)
        finally:
            files.armed = False


def test_a_write_appends_its_inner_checkpoint_before_its_index_lines_and_recorder_json(tmp_path, schedd):
    files = _Kill()
    _to_a_write_with_a_checkpoint(tmp_path, schedd, files)
    assert files.ops == WRITE_WITH_A_CHECKPOINT


@pytest.mark.parametrize("torn", [False, True])
@pytest.mark.parametrize("at", range(len(WRITE_WITH_A_CHECKPOINT) + 1))
def test_killed_around_writing_an_inner_checkpoint_resumes_without_gap_or_duplicate(tmp_path, schedd, at, torn):
    # Source: RouteDeck recorder (no HTCondor behaviour): issue 27, "killed (kill -9) at any
    # moment and started again, it resumes with no gap and no duplicate"
    files = _Kill(at, torn)
    try:
        _to_a_write_with_a_checkpoint(tmp_path, schedd, files)
        killed = False
    except _Killed:
        killed = True
    assert killed == (at < len(WRITE_WITH_A_CHECKPOINT))
    rec = inner_recorder(tmp_path)  # a new process: cut to recorder.json, the log read again from there
    inner = rec.archive.inner_path(rec.archive.meta.segment)
    assert (inner.stat().st_size if inner.exists() else 0) == rec.archive.meta.inner_size
    follow(rec, schedd, 3, t0=50)
    assert_replays_as(tmp_path / "archive", schedd.done)
    assert_seeks_from_checkpoints(tmp_path / "archive", schedd.done)


def test_an_inner_checkpoint_is_checked_against_the_index(tmp_path, schedd):
    rec = inner_recorder(tmp_path)
    follow(rec, schedd, 6)
    x = states(tmp_path / "archive")[0]
    arch = Archive.open(tmp_path / "archive", readonly=True)
    assert arch.inner_state(x).startswith(arch.read_state(x["seg"])[:20])  # the segment's 107 line
    with pytest.raises(archive_mod.ArchiveError, match="the index says before"):
        arch.inner_state(dict(x, txn=x["txn"] + 1))
