"""The recorder across compactions, restarts, a torn archive, a full disk and retention (issue 27).

Compaction as the schedd does it: htcondor.md §3.4 (``TruncateClassAdLog``,
src/condor_utils/classad_log.cpp), done by ``engine.queue.writer.QueueLogWriter.compact`` through
tests/helpers/compaction.py. The transactions are the first steps of the shipped recording
sample_configs/recordings/demo-3h.job_queue.log. Every test checks the archive against the same
log never compacted: replayed at every transaction boundary it holds the same ads (and the same
number of transactions: nothing lost, nothing twice). Time is a number passed to ``poll``.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from engine.feeds.replay.archive import open_archive, state_near
from engine.feeds.replay.index import build_index
from engine.record.archive import Archive, DiskFull, Files
from engine.record.recorder import Recorder
from engine.record.state import load_state
from tests.helpers.compaction import ScheddLog, steps_of
from tests.helpers.paths import REPO
import os

DEMO = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"
_DATA = DEMO.read_bytes()
HEADER, STEPS = steps_of(_DATA)


def uncompacted(n: int):
    """The index of the recording's first ``n`` steps, never compacted."""
    return build_index("<uncompacted>", tz="UTC", data=HEADER + b"".join(raw for raw, _ in STEPS[:n]))


def assert_replays_as(archive: Path, n: int, every: int = 1) -> None:
    """The archive replays as the recording's first ``n`` steps, step by step."""
    ref = uncompacted(n)
    got = open_archive(archive, tz="UTC").index
    assert got.steps == ref.steps == n
    a, b = got.state_at(0), ref.state_at(0)
    assert a.snapshot_state() == b.snapshot_state()
    for i in range(1, n):
        got.advance(a, i - 1, i)
        ref.advance(b, i - 1, i)
        if (i % every == 0 or i == n - 1) and not same_state(a, b):
            assert a.snapshot_state() == b.snapshot_state(), f"step {i}"
    assert list(got.times) == list(ref.times)


def same_state(a, b) -> bool:
    """``a.snapshot_state() == b.snapshot_state()`` without copying every ad: the copies at every
    step were most of the CPU of the tests that replay an archive step by step (test_reframe.py)."""
    table = a.table
    return table == b.table and all((a.my_type(k) or "") == (b.my_type(k) or "") for k in table)


def gaps(archive: Path) -> list[dict]:
    return [x for x in Archive.open(archive, create=False).index_lines() if x["kind"] == "gap"]


def recorder(tmp_path, files=None, **kw) -> Recorder:
    kw.setdefault("segment_bytes", 40_000)
    return Recorder(tmp_path / "job_queue.log", tmp_path / "archive", files=files, tz="UTC", **kw)


def test_compaction_while_the_recorder_follows(tmp_path, schedd):
    rec = recorder(tmp_path)
    for i in range(12):
        schedd.advance(25)
        rec.poll(i, flush=True)
        if i % 4 == 3:
            schedd.compact()  # seen at the next poll: a new 107 sequence, a dump equal to the state
    rec.poll(100, flush=True)
    assert schedd.seq == 4 and not gaps(tmp_path / "archive")
    assert len(Archive.open(tmp_path / "archive").segments()) > 1  # checkpoints at segment starts
    assert_replays_as(tmp_path / "archive", 300)


def test_compaction_between_polls_reads_the_rest_from_the_rotated_copy(tmp_path, schedd):
    rec = recorder(tmp_path)
    schedd.advance(40)
    rec.poll(0, flush=True)
    schedd.advance(30)  # not read before the compaction: only job_queue.log.1 has them
    schedd.compact()
    schedd.advance(20)
    rep = rec.poll(1, flush=True)
    assert rep.gaps == [] and rep.generations == [2] and rep.archived == 50
    assert_replays_as(tmp_path / "archive", 90)


def test_the_recorder_down_over_two_compactions_records_a_gap(tmp_path, schedd):
    rec = recorder(tmp_path)
    schedd.advance(40)
    rec.poll(0, flush=True)
    schedd.advance(30)
    schedd.compact()  # job_queue.log.1 kept
    schedd.advance(30)
    schedd.compact()  # job_queue.log.2 kept, .1 unlinked (MAX_JOB_QUEUE_LOG_ROTATIONS = 1)
    schedd.advance(10)
    assert not (tmp_path / "job_queue.log.1").exists()
    rep = rec.poll(50, flush=True)
    assert len(rep.gaps) == 1 and (rep.gaps[0]["seq_from"], rep.gaps[0]["seq_to"]) == (1, 2)
    # generation 2's rotated copy is read as a generation of its own: the gap is before it
    assert rep.generations == [2, 3]
    arch = open_archive(tmp_path / "archive", tz="UTC")
    ref = uncompacted(110)
    gap = arch.gaps[0]
    # steps 0..39 as recorded (step 0: the header run the archive starts from), the gap is step 40
    assert gap["step"] == 40
    assert arch.index.state_at(39).snapshot_state() == ref.state_at(39).snapshot_state()
    # after the gap: the state generation 2's dump held (the schedd's state after 70 steps)
    assert arch.index.state_at(40).snapshot_state() == ref.state_at(69).snapshot_state()
    last = arch.index.steps - 1
    assert last == 40 + 30 + 10 and arch.index.state_at(last).snapshot_state() == ref.state_at(109).snapshot_state()
    assert gap["t0"] <= arch.index.times[40] and gap["t1"] == arch.index.times[40]
    # the resumed state is a state checkpoint: the segment after the gap starts from it
    a = Archive.open(tmp_path / "archive")
    seg = next(x for x in a.index_lines() if x["kind"] == "segment" and x["first"] == 40)
    assert load_state(a.read_state(seg["seg"])).snapshot_state() == ref.state_at(69).snapshot_state()


def test_a_gap_when_the_rotated_copy_is_gone(tmp_path):
    schedd = ScheddLog(tmp_path / "job_queue.log", _DATA, max_rotations=0)  # keeps no history
    rec = recorder(tmp_path)
    schedd.advance(40)
    rec.poll(0, flush=True)
    schedd.advance(30)
    schedd.compact()
    rep = rec.poll(1, flush=True)
    assert len(rep.gaps) == 1 and "does not follow" in rep.gaps[0]["why"]
    # (the default rotation count with the copy removed: the test below)
    schedd.advance(5)
    rec.poll(2, flush=True)
    arch = open_archive(tmp_path / "archive", tz="UTC")
    assert arch.index.state_at(arch.index.steps - 1).snapshot_state() == uncompacted(75).state_at(74).snapshot_state()


def test_a_gap_when_the_rotated_copy_was_removed_before_the_recorder_read_it(tmp_path, schedd):
    """The schedd's default MAX_JOB_QUEUE_LOG_ROTATIONS (1) kept ``job_queue.log.1``
    (htcondor.md §3.4), but it is gone (removed by hand, a clean-up job) before the recorder,
    down over the compaction, read the rest of generation 1 from it: a gap, the new generation's
    dump as the state it resumes from, nothing archived twice."""
    rec = recorder(tmp_path)
    schedd.advance(40)
    rec.poll(0, flush=True)
    schedd.advance(30)  # only job_queue.log.1 holds these once compacted
    schedd.compact()
    assert (tmp_path / "job_queue.log.1").exists()
    (tmp_path / "job_queue.log.1").unlink()
    schedd.advance(10)
    rep = rec.poll(1, flush=True)
    assert len(rep.gaps) == 1 and rep.archived == 10
    arch = open_archive(tmp_path / "archive", tz="UTC")
    ref = uncompacted(80)
    assert arch.gaps[0]["step"] == 40 and arch.index.steps == 40 + 1 + 10
    assert arch.index.state_at(39).snapshot_state() == ref.state_at(39).snapshot_state()
    assert arch.index.state_at(40).snapshot_state() == ref.state_at(69).snapshot_state()  # the dump
    assert arch.index.state_at(50).snapshot_state() == ref.state_at(79).snapshot_state()
    rep = rec.poll(2, flush=True)  # and it goes on from there: no second gap, nothing twice
    assert (rep.gaps, rep.archived) == ([], 0)


def test_an_equal_dump_adds_nothing(tmp_path, schedd):
    rec = recorder(tmp_path)
    schedd.advance(40)
    rec.poll(0, flush=True)
    before = Archive.open(tmp_path / "archive").meta.next_txn
    schedd.compact()
    rep = rec.poll(1, flush=True)
    assert (rep.archived, rep.gaps, rep.generations) == (0, [], [2])
    assert Archive.open(tmp_path / "archive").meta.next_txn == before


# ------------------------------------------------------------------ when it writes


def test_what_was_read_is_written_write_after_the_last_write_whatever_its_size(tmp_path, schedd):
    # Source: RouteDeck recorder (no HTCondor behaviour): issue 27's lag limit, "following a live
    # log adds <= 100 ms of lag at the demo's x600"
    """A transaction read is written ``write_after`` after the last write, however few bytes wait
    (a slow log's too: small frames are merged, so a write's size costs neither ratio nor index);
    ``flush_in`` says when, for the run loop. Nothing waiting: only the re-frame, ``flush_every``
    after the first small frame."""
    rec = recorder(tmp_path, flush_every=60.0, write_after=0.05)
    schedd.advance(10)
    rec.poll(0.0)  # the first poll writes
    written = Archive.open(tmp_path / "archive").meta.next_txn
    # nothing read waits; the small frame just written is re-framed flush_every after it
    assert written > 0 and rec.archive.run is not None and rec.flush_in(0.0) == pytest.approx(60.0)
    schedd.advance(1)  # one transaction, a few hundred bytes
    assert rec.poll(0.01).archived == 1 and 0 < rec.pending_bytes < 1024
    assert rec.flush_in(0.01) == pytest.approx(0.04)
    rec.poll(0.05)  # write_after after the last write
    assert rec.pending_bytes == 0 and Archive.open(tmp_path / "archive").meta.next_txn == written + 1
    schedd.advance(1)  # read long after the last write: written at once
    rec.poll(30.0)
    assert rec.pending_bytes == 0 and Archive.open(tmp_path / "archive").meta.next_txn == written + 2
    assert rec.flush_in(30.0) == pytest.approx(60.0)  # a quiet log: re-framed flush_every after the last write
    rec.poll(90.0)
    assert rec.archive.run is None and rec.flush_in(90.0) is None
    assert len([x for x in rec.archive.index_lines() if x["kind"] == "frame"]) == 1
    assert_replays_as(tmp_path / "archive", 12)


# ------------------------------------------------------------------ kill -9


def test_killed_with_unwritten_transactions_resumes_without_gap_or_duplicate(tmp_path, schedd):
    rec = recorder(tmp_path)
    schedd.advance(30)
    rec.poll(0, flush=True)
    schedd.advance(30)
    rec.poll(1, flush=False)  # read, not written: lost with the process
    del rec
    schedd.advance(10)
    rec = recorder(tmp_path)
    rec.poll(2, flush=True)
    assert_replays_as(tmp_path / "archive", 70)


class _Torn(Files):
    """Writes the first half of the n-th append and then 'dies' (raises KeyboardInterrupt-like)."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.count = 0

    def append(self, path, data):
        self.count += 1
        if self.count == self.at:
            with open(path, "ab") as fh:
                fh.write(data[: len(data) // 2])
            raise _Killed
        super().append(path, data)


class _Killed(BaseException):
    pass


@pytest.mark.parametrize("at", [1, 2, 3, 4])  # the segment write, the index write, of two flushes
def test_killed_in_the_middle_of_a_write(tmp_path, schedd, at):
    rec = recorder(tmp_path, files=_Torn(at))
    try:
        for i in range(4):
            schedd.advance(20)
            rec.poll(i, flush=True)
    except _Killed:
        pass
    rec = recorder(tmp_path)  # a new process: the torn tail is cut, the log read again from the checkpoint
    schedd.advance(20)
    rec.poll(10, flush=True)
    assert_replays_as(tmp_path / "archive", schedd.done)


@pytest.mark.parametrize("when", ["before", "during", "after"])
def test_killed_around_a_compaction(tmp_path, schedd, when):
    rec = recorder(tmp_path)
    schedd.advance(30)
    rec.poll(0, flush=True)
    schedd.advance(20)
    if when == "before":
        rec.poll(1, flush=False)
        del rec
        schedd.compact()
    elif when == "during":
        # the schedd is between its hard link and its rename: job_queue.log.1 and .tmp exist
        log = tmp_path / "job_queue.log"

        os.link(log, tmp_path / "job_queue.log.1")
        (tmp_path / "job_queue.log.tmp").write_bytes(b"107 2 CreationTimestamp 1795219200\n")
        rec.poll(1, flush=True)
        del rec
        (tmp_path / "job_queue.log.1").unlink()
        (tmp_path / "job_queue.log.tmp").unlink()
        schedd.compact()
    else:
        schedd.compact()
        schedd.advance(5)
        rec.poll(1, flush=False)  # read from the rotated copy and the new generation, not written
        del rec
    schedd.advance(15)
    rec = recorder(tmp_path)
    rep = rec.poll(5, flush=True)
    assert rep.gaps == []
    assert_replays_as(tmp_path / "archive", schedd.done)


# ------------------------------------------------------------------ torn tail, full disk


def test_a_torn_archive_tail_is_dropped_on_start(tmp_path, schedd):
    rec = recorder(tmp_path)
    schedd.advance(50)
    rec.poll(0, flush=True)
    arch = Archive.open(tmp_path / "archive")
    seg = arch.seg_path(arch.meta.segment)
    size = seg.stat().st_size
    with open(seg, "ab") as fh:
        fh.write(b"RDF1\x99\x00\x00")  # a frame header cut short
    with open(arch.index_path, "ab") as fh:
        fh.write(b'{"kind":"fra')
    (tmp_path / "archive" / f"seg-{arch.meta.segment + 1:06d}.rds").write_bytes(b"junk")
    rec = recorder(tmp_path)
    assert seg.stat().st_size == size
    assert not (tmp_path / "archive" / f"seg-{arch.meta.segment + 1:06d}.rds").exists()
    schedd.advance(10)
    rec.poll(1, flush=True)
    assert_replays_as(tmp_path / "archive", 60)


class _FullDisk(Files):
    full = False

    def _check(self):
        if self.full:
            raise OSError(errno.ENOSPC, "No space left on device")

    def append(self, path, data):
        self._check()
        super().append(path, data)

    def replace(self, path, data, **kw):
        self._check()
        super().replace(path, data, **kw)


@pytest.mark.parametrize("compacted_meanwhile", [False, True])
def test_a_full_disk_stops_archiving_and_loses_nothing(tmp_path, schedd, compacted_meanwhile):
    disk = _FullDisk()
    rec = recorder(tmp_path, files=disk)
    schedd.advance(40)
    rec.poll(0, flush=True)
    disk.full = True
    schedd.advance(20)
    with pytest.raises(DiskFull, match="disk full.*everything archived before is kept"):
        rec.poll(1, flush=True)
    assert_replays_as(tmp_path / "archive", 40)  # what was archived is intact
    if compacted_meanwhile:
        schedd.compact()
        schedd.advance(10)
        schedd.compact()  # the generation the recorder was in is gone
    schedd.advance(10)
    disk.full = False
    rec = recorder(tmp_path, files=disk)  # space is back: a new recorder resumes from the checkpoint
    rep = rec.poll(2, flush=True)
    if compacted_meanwhile:
        assert len(rep.gaps) == 1
        arch = open_archive(tmp_path / "archive", tz="UTC")
        assert arch.index.state_at(arch.index.steps - 1).snapshot_state() == \
            uncompacted(schedd.done).state_at(schedd.done - 1).snapshot_state()
    else:
        assert rep.gaps == []
        assert_replays_as(tmp_path / "archive", schedd.done)


# ------------------------------------------------------------------ retention, seeks


def test_retention_deletes_whole_old_segments(tmp_path, schedd):
    rec = recorder(tmp_path, segment_bytes=100_000)
    for i in range(10):
        schedd.advance(300)  # 3,000 steps: the recording's first 29 minutes
        rec.poll(i, flush=True)
    arch = Archive.open(tmp_path / "archive")
    segs = arch.segments()
    assert len(segs) >= 4
    lines = arch.index_lines()
    last_t = {x["seg"]: x["t1"] for x in lines if x["kind"] == "frame"}
    cut = last_t[segs[1]]  # segments whose last transaction is before this moment + 1 s are old
    assert last_t[segs[2]] > cut + 1
    dropped = arch.retain(now=cut + 1 + 3600, max_age=3600)
    assert dropped == segs[:2]
    assert not arch.seg_path(segs[0]).exists() and not arch.state_path(segs[1]).exists()
    replay = open_archive(tmp_path / "archive", tz="UTC")
    first = replay.first_txn
    ref = uncompacted(schedd.done)
    # the archive starts at the first kept segment's checkpoint: step 0 is that state
    assert replay.index.state_at(0).snapshot_state() == ref.state_at(first).snapshot_state()
    last = replay.index.steps - 1
    assert replay.index.state_at(last).snapshot_state() == ref.state_at(schedd.done - 1).snapshot_state()
    # by size: down to the current segment at most
    size_before = arch.size()
    dropped = arch.retain(now=0, max_size=1)
    assert dropped and arch.segments() == [arch.meta.segment] and arch.size() < size_before
    rec = recorder(tmp_path)  # still opens and goes on
    schedd.advance(5)
    rec.poll(20, flush=True)


def test_a_seek_reads_one_checkpoint_and_one_segment(tmp_path, schedd):
    rec = recorder(tmp_path, segment_bytes=20_000)
    for i in range(6):
        schedd.advance(50)
        rec.poll(i, flush=True)
    ref = uncompacted(300)
    for txn in (0, 1, 57, 149, 150, 151, 298):
        # archive transaction ``txn`` is step txn + 1 (step 0: the header run of the recording)
        assert state_near(tmp_path / "archive", txn).snapshot_state() == ref.state_at(txn + 1).snapshot_state()


def test_a_dump_written_by_the_classad_unparser_is_not_a_gap(tmp_path, schedd):
    """The schedd's dump writes each value as ``ExprTreeToString`` gives it (htcondor.md §3.1
    "Values"), not as the client logged it: the same expression in other spacing is no gap."""
    rec = recorder(tmp_path)
    schedd.advance(40)
    rec.poll(0, flush=True)
    key = next(k for k in schedd.queue.table if k.endswith(".0"))
    log = schedd.path
    with open(log, "ab") as fh:
        fh.write(f"105 \n103 {key} Requirements (TARGET.Arch==\"X86_64\")&&(TARGET.Memory>=2048)\n106 \n".encode())
    rec.poll(1, flush=True)
    schedd.queue.apply_quiet([(103, key, "Requirements", '(TARGET.Arch == "X86_64") && (TARGET.Memory >= 2048)')])
    schedd.compact()
    rep = rec.poll(2, flush=True)
    assert rep.gaps == [] and rep.generations == [2]
    # a value that really differs is a gap
    schedd.queue.apply_quiet([(103, key, "JobPrio", "7")])
    schedd.compact()
    rep = rec.poll(3, flush=True)
    assert len(rep.gaps) == 1
    arch = Archive.open(tmp_path / "archive")
    last = [f for k in arch.segments() for f in arch.frames(k)][-1][2].decode()
    assert last == f"105 \n103 {key} JobPrio 7\n106 \n"  # the gap transaction: just the difference


def test_restart_right_after_a_gap(tmp_path):
    """After a gap the next segment starts with no frame yet; a restart there rebuilds the
    state from its checkpoint alone."""
    schedd = ScheddLog(tmp_path / "job_queue.log", _DATA, max_rotations=0)
    rec = recorder(tmp_path)
    schedd.advance(40)
    rec.poll(0, flush=True)
    schedd.advance(30)
    schedd.compact()
    assert len(rec.poll(1, flush=True).gaps) == 1
    rec = recorder(tmp_path)
    assert rec.state.snapshot_state() == uncompacted(70).state_at(69).snapshot_state()
    schedd.advance(10)
    assert rec.poll(2, flush=True).gaps == []
    arch = open_archive(tmp_path / "archive", tz="UTC")
    assert arch.index.state_at(arch.index.steps - 1).snapshot_state() == uncompacted(80).state_at(79).snapshot_state()


def test_a_compaction_in_the_middle_of_a_poll_is_no_gap(tmp_path, schedd):
    """The schedd renames the compacted log over job_queue.log between the recorder's reading of
    the 107 and of the transactions (htcondor.md §3.4, step 3): the poll reads one file."""

    class Racing(Recorder):
        race = False

        def _checks(self, fh, pos):
            if self.race:
                self.race = False
                schedd.compact()
            return super()._checks(fh, pos)

    rec = Racing(tmp_path / "job_queue.log", tmp_path / "archive", tz="UTC")
    schedd.advance(40)
    rec.poll(0, flush=True)
    schedd.advance(20)
    rec.race = True
    rep = rec.poll(1, flush=True)
    assert (rep.archived, rep.gaps) == (20, [])
    schedd.advance(10)
    rep = rec.poll(2, flush=True)
    assert rep.gaps == [] and rep.generations == [2]
    assert_replays_as(tmp_path / "archive", 70)
