"""Re-framing: following a busy log writes small frames, re-written as big ones (issue 27).

``routedeck record --lag`` writes a busy log's transactions every ``write_after`` seconds, each
write a small zstd frame and an index line. The archive holds them and re-frames them into the
frames one write of them all gives (``Archive.reframe``): when they add up to a frame, before a
segment starts, ``flush_every`` after the first, at stop. Kill-safe order: ``recorder.json`` as
before them, the files cut and the merged frame appended, ``recorder.json`` again. A kill at any
of those steps re-reads them from the log: no gap, no duplicate. The archive is checked against
the shipped recording never compacted, at every transaction (tests/engine/record/test_recorder.py).
Time is a number passed to ``poll``; nothing sleeps.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from engine.feeds.replay.archive import summarize
from engine.record.archive import Archive, ArchiveError, Files
from engine.record.recorder import Recorder
from tests.engine.record.test_recorder import _DATA, assert_replays_as, gaps
from tests.helpers.compaction import ScheddLog
from tests.helpers.routerlog import poll_block

START = 1795219200.0  # the demo recording's first moment
LAG = 0.05


def follower(tmp_path, files=None, **kw) -> Recorder:
    kw.setdefault("frame_bytes", 32 << 10)
    kw.setdefault("segment_bytes", 200_000)
    return Recorder(tmp_path / "job_queue.log", tmp_path / "archive", files=files, tz="UTC",
                    flush_every=60.0, write_after=LAG, **kw)


def follow(schedd: ScheddLog, rec: Recorder, polls: int, t: float, steps: int = 25) -> float:
    """``polls`` times: ``steps`` more transactions (8-16 KiB), a poll just over ``write_after``
    later (a small write each)."""
    for _ in range(polls):
        schedd.advance(steps)
        t += LAG + 0.01
        rec.poll(t)
    return t


def frame_lines(archive) -> list[dict]:
    return [x for x in Archive.open(archive, readonly=True).index_lines() if x["kind"] == "frame"]


def test_small_frames_are_re_framed_and_replay_as_the_log(tmp_path, schedd):
    # Source: RouteDeck recorder (no HTCondor behaviour): issue 27's limits, archive <= 0.15x the
    # log and replay DIR --at in <= 1 s (it reads the whole index), with <= 100 ms of lag
    rec = follower(tmp_path, frame_bytes=64 << 10, segment_bytes=400_000)
    t = follow(schedd, rec, 40, 0.0)
    schedd.compact()  # a generation mark among the small frames' index lines
    t = follow(schedd, rec, 40, t)
    small = [x for x in frame_lines(tmp_path / "archive") if x["raw"] < 16 << 10]
    assert rec.archive.run is not None and small  # the last writes are small frames, held
    rec.flush(t, reframe=True)  # at stop
    assert rec.archive.run is None
    frames = frame_lines(tmp_path / "archive")
    # every frame but a segment's last one holds over half a frame (a write is 8-20 KiB): 80 writes, few frames
    by_seg: dict[int, list] = {}
    for x in frames:
        by_seg.setdefault(x["seg"], []).append(x)
    assert all(x["raw"] > 32 << 10 for xs in by_seg.values() for x in xs[:-1])
    assert len(frames) < 80 / 3
    assert [x["first"] for x in frames] == sorted({x["first"] for x in frames})  # each once, in order
    assert gaps(tmp_path / "archive") == []
    assert_replays_as(tmp_path / "archive", schedd.done)


def test_a_held_run_is_re_framed_flush_every_after_its_first_frame(tmp_path, schedd):
    # Source: RouteDeck recorder (no HTCondor behaviour): routedeck record --flush
    rec = follower(tmp_path, frame_bytes=1 << 20)
    t = follow(schedd, rec, 5, 0.0)
    assert len(frame_lines(tmp_path / "archive")) == 5
    assert rec.flush_in(t) == pytest.approx(60.0)  # the run loop wakes for it if the log is quiet
    t = follow(schedd, rec, 1, 60.0)  # the next write, flush_every after the first one: with them
    assert len(frame_lines(tmp_path / "archive")) == 1 and rec.archive.run is None and rec.flush_in(t) is None
    t = follow(schedd, rec, 2, t)
    assert len(frame_lines(tmp_path / "archive")) == 3
    rec.poll(t + 30.0)
    assert len(frame_lines(tmp_path / "archive")) == 3
    rec.poll(t + 60.0)  # a quiet log: re-framed flush_every after the last write
    assert len(frame_lines(tmp_path / "archive")) == 2 and rec.flush_in(t + 60.0) is None
    assert_replays_as(tmp_path / "archive", schedd.done)


def _files(archive) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(archive.iterdir())}


def test_re_framed_at_stop_the_archive_is_a_catch_ups_byte_for_byte(tmp_path, schedd):
    # Source: RouteDeck recorder (no HTCondor behaviour): issue 27, one archive format whatever
    # the way it was recorded
    rec = follower(tmp_path, frame_bytes=1 << 20, segment_bytes=8 << 20)
    t = follow(schedd, rec, 8, 0.0)
    assert len(frame_lines(tmp_path / "archive")) == 8
    rec.flush(t, reframe=True)
    once = Recorder(tmp_path / "job_queue.log", tmp_path / "once", tz="UTC")  # routedeck record --once
    once.poll(0.0, flush=True)
    assert len(frame_lines(tmp_path / "once")) == 1
    assert _files(tmp_path / "archive") == _files(tmp_path / "once")


class _Kill(Files):
    """Records every write; once ``armed``, the ``at``-th one (from 0) 'kills the process' —
    before it (``torn`` False) or after writing half of an append."""

    def __init__(self, at: int | None = None, torn: bool = False) -> None:
        self.at, self.torn = at, torn
        self.armed = False
        self.ops: list[str] = []

    def _op(self, kind: str, path, data: bytes = b"") -> None:
        if not self.armed:
            return
        self.ops.append(f"{kind} {path.name.split('-')[0].split('.')[0]}")
        if len(self.ops) - 1 == self.at:
            if self.torn and kind == "append":
                with open(path, "ab") as fh:
                    fh.write(data[: len(data) // 2])
            raise _Killed

    def append(self, path, data):
        self._op("append", path, data)
        super().append(path, data)

    def replace(self, path, data, **kw):
        self._op("replace", path)
        super().replace(path, data, **kw)

    def truncate(self, path, size):
        self._op("truncate", path)
        super().truncate(path, size)


class _Killed(BaseException):
    pass


MERGE = ["replace recorder", "truncate seg", "truncate rlog", "truncate index", "append seg", "append index",
         "replace recorder"]
# re-framed because the next write takes the run past a frame: that write follows, in the same appends
# and the same last recorder.json
MERGE_AND_WRITE = MERGE


def _writes_to_a_full_run() -> int:
    """How many polls of ``follow`` make a run full (another write like its would not fit)."""
    with tempfile.TemporaryDirectory() as d:
        probe = ScheddLog(Path(d) / "job_queue.log", _DATA)
        rec = follower(Path(d), frame_bytes=128 << 10, segment_bytes=1 << 20)
        t, n = 0.0, 0
        while rec.archive.run is None or rec.archive.run.merged is None:
            t = follow(probe, rec, 1, t)
            n += 1
        return n


def _run_to_merge(tmp_path, schedd, files, how: str) -> float:
    if how == "after":  # the write after the one that made the run full lands the re-frame
        polls = _writes_to_a_full_run()
        rec = follower(tmp_path, files=files, frame_bytes=128 << 10, segment_bytes=1 << 20)
        t = follow(schedd, rec, polls, 0.0)
        assert rec.archive.run is not None and rec.archive.run.merged is not None
        files.armed = True
        try:
            return follow(schedd, rec, 1, t)
        finally:
            files.armed = False
    rec = follower(tmp_path, files=files, frame_bytes=128 << 10, segment_bytes=1 << 20)
    t = 0.0
    if how == "stop":  # a run after a first frame of the segment (one write: nothing to re-frame)
        t = follow(schedd, rec, 1, t)
        rec.flush(t, reframe=True)
        assert rec.archive.run is None
    # else the run's first frame starts the segment: a re-frame writes its first frame again
    t = follow(schedd, rec, 4, t)  # small frames, held
    assert rec.archive.run is not None and rec.archive.run.raw < 96 << 10
    files.armed = True
    try:
        if how == "stop":
            rec.flush(t + 1.0, reframe=True)
        else:  # the run plus the next write are more than a frame
            schedd.advance(300)
            rec.poll(t + 1.0)
    finally:
        files.armed = False
    return t + 1.0


@pytest.mark.parametrize("how,ops", [("stop", MERGE), ("size", MERGE_AND_WRITE), ("after", MERGE_AND_WRITE)])
def test_a_re_frame_writes_in_the_kill_safe_order(tmp_path, schedd, how, ops):
    # Source: RouteDeck recorder (no HTCondor behaviour): issue 27, "killed (kill -9) at any
    # moment and started again, it resumes with no gap and no duplicate"
    files = _Kill()
    _run_to_merge(tmp_path, schedd, files, how)
    assert files.ops == ops


@pytest.mark.parametrize("torn", [False, True])
@pytest.mark.parametrize("how,at", [("stop", k) for k in range(len(MERGE))] +
                         [("size", k) for k in range(len(MERGE_AND_WRITE))] +
                         [("after", k) for k in range(len(MERGE_AND_WRITE))])
def test_killed_at_any_step_of_a_re_frame_resumes_without_gap_or_duplicate(tmp_path, schedd, how, at, torn):
    # Source: RouteDeck recorder (no HTCondor behaviour): issue 27, "killed (kill -9) at any
    # moment and started again, it resumes with no gap and no duplicate"
    files = _Kill(at, torn)
    with pytest.raises(_Killed):
        t = _run_to_merge(tmp_path, schedd, files, how)
    # what the dead process left is a prefix of the log, as recorder.json counts it (a reader sees no damage)
    kept = summarize(tmp_path / "archive", tz="UTC").steps
    if kept:  # (0: the run's first frame started the archive)
        assert_replays_as(tmp_path / "archive", kept)
    rec = follower(tmp_path)  # a new process: cuts what recorder.json does not count, reads the log on
    t = follow(schedd, rec, 3, 10.0)
    rec.flush(t, reframe=True)
    assert gaps(tmp_path / "archive") == []
    assert_replays_as(tmp_path / "archive", schedd.done)


def test_a_reader_of_the_index_before_a_re_frame_gets_an_error_not_other_transactions(tmp_path, schedd):
    # Source: RouteDeck recorder (no HTCondor behaviour): replay DIR of an archive a recorder writes
    rec = follower(tmp_path, frame_bytes=1 << 20)
    t = follow(schedd, rec, 6, 0.0)
    stale = Archive.open(tmp_path / "archive", readonly=True)  # recorder.json and index as they are now
    lines = [x for x in stale.index_lines() if x["kind"] == "frame"]
    truth = {x["first"]: stale.frame(x) for x in lines}
    rec.flush(t, reframe=True)
    follow(schedd, rec, 3, t)  # more small frames after the merged one
    seg = str(stale.seg_path(lines[0]["seg"]))
    for x in lines:  # the first small frame's place holds the merged frame, the others' more of it
        with pytest.raises(ArchiveError, match=seg):
            stale.frame(x)
    with pytest.raises(ArchiveError, match=seg):  # the segment read to recorder.json's old end
        list(stale.frames(lines[0]["seg"]))
    fresh = Archive.open(tmp_path / "archive", readonly=True)
    merged = [x for x in fresh.index_lines() if x["kind"] == "frame"]
    assert b"".join(fresh.frame(x) for x in merged)[: sum(len(v) for v in truth.values())] == \
        b"".join(truth[x["first"]] for x in lines)


def test_router_log_lines_of_small_writes_are_kept_in_order(tmp_path, schedd):
    # Source: RouteDeck recorder (no HTCondor behaviour): routedeck record --router-log (issue 27)
    rlog = tmp_path / "JobRouterLog"
    rlog.write_text("")
    rec = follower(tmp_path, router_log=rlog, frame_bytes=1 << 20)
    t = 0.0
    for k in range(6):
        with open(rlog, "a") as fh:
            fh.write(poll_block(START + 600 + 10 * k, 0, k))
        t = follow(schedd, rec, 1, t)
    arch = Archive.open(tmp_path / "archive", readonly=True)
    assert len([x for x in arch.index_lines() if x["kind"] == "rlog"]) == 6
    rec.flush(t, reframe=True)
    arch = Archive.open(tmp_path / "archive", readonly=True)
    lines = arch.index_lines()
    frames = [x for x in lines if x["kind"] == "rlog"]
    assert len(frames) == 1 and [x["kind"] for x in lines][-1] == "rlog"
    assert [line for x in frames for line in arch.router_frame(x)] == rlog.read_text().splitlines()
    assert_replays_as(tmp_path / "archive", schedd.done)


def test_retention_re_frames_the_held_run_first(tmp_path, schedd):
    # Source: RouteDeck recorder (no HTCondor behaviour): routedeck record --max-size (issue 27)
    rec = follower(tmp_path, frame_bytes=64 << 10, segment_bytes=80_000)
    t = follow(schedd, rec, 3, 0.0)
    assert rec.archive.run is not None and rec.archive.run.writes == 3
    assert rec.archive.retain(t, max_size=1 << 30) == [] and rec.archive.run.writes == 3  # nothing to drop: held on
    t = follow(schedd, rec, 20, t)
    while rec.archive.run is None or rec.archive.run.writes < 2:
        t = follow(schedd, rec, 1, t)
    dropped = rec.archive.retain(t, max_size=1)  # as small as it gets: every segment but the current one
    assert dropped and rec.archive.run is None
    t = follow(schedd, rec, 3, t)
    rec.flush(t, reframe=True)
    reopened = follower(tmp_path)  # what recorder.json names is all there
    assert reopened.archive.meta.next_txn == rec.archive.meta.next_txn
    assert gaps(tmp_path / "archive") == []


class _Saves(Files):
    """Records, for each save of recorder.json, whether the directory was fsynced after its rename."""

    def __init__(self) -> None:
        self.dir_synced: list[bool] = []

    def replace(self, path, data, *, sync_dir=True):
        if path.name == "recorder.json":
            self.dir_synced.append(sync_dir)
        super().replace(path, data, sync_dir=sync_dir)


def test_recorder_json_s_rename_is_fsynced_only_where_losing_it_would_lose_something(tmp_path, schedd):
    # Source: RouteDeck recorder (no HTCondor behaviour): issue 27, kill -9 and power loss keep
    # the archive as the last recorder.json says. A write's rename lost to a power loss leaves the
    # one before, which counts a prefix of what is on disk (its appends were fsynced): cut on open
    # and read again from the log. The re-frame's first step must be on disk before the cut, and a
    # file made (a segment's) in the directory before a recorder.json that names it.
    files = _Saves()
    rec = follower(tmp_path, files=files, frame_bytes=128 << 10, segment_bytes=1 << 20)
    files.dir_synced = []
    t = follow(schedd, rec, 1, 0.0)  # the first write makes the segment's and the index's files
    assert files.dir_synced == [True]
    files.dir_synced = []
    t = follow(schedd, rec, 3, t)  # small frames appended to files that are there
    assert files.dir_synced == [False, False, False]
    files.dir_synced = []
    rec.flush(t, reframe=True)  # (1) as before them, (3) after the merged frame
    assert files.dir_synced == [True, False]
    assert_replays_as(tmp_path / "archive", schedd.done)


def _killed_holding_small_frames(tmp_path, schedd) -> int:
    """A follower writes one frame, then 6 small ones, and is killed holding them (nothing more
    runs); returns the transactions recorder.json counts before the 6."""
    rec = follower(tmp_path, frame_bytes=1 << 20)
    t = follow(schedd, rec, 1, 0.0)
    rec.flush(t, reframe=True)
    first = rec.archive.meta.next_txn
    follow(schedd, rec, 6, t)
    assert rec.archive.run is not None and rec.archive.run.writes == 6
    assert len(frame_lines(tmp_path / "archive")) == 7
    return first


def test_small_frames_a_killed_recorder_held_are_written_again_as_one_frame(tmp_path, schedd):
    # Source: RouteDeck recorder (no HTCondor behaviour): issue 27, after a kill the archive's
    # ratio and index stay a catch-up's; "resumes with no gap and no duplicate"
    first = _killed_holding_small_frames(tmp_path, schedd)
    rec = follower(tmp_path, frame_bytes=1 << 20)  # started again: back to before them, read again from the log
    assert rec.archive.meta.next_txn == first and len(frame_lines(tmp_path / "archive")) == 1
    t = follow(schedd, rec, 2, 100.0)
    rec.flush(t, reframe=True)
    assert len(frame_lines(tmp_path / "archive")) == 2
    assert gaps(tmp_path / "archive") == []
    assert_replays_as(tmp_path / "archive", schedd.done)


def test_small_frames_the_log_no_longer_holds_are_kept(tmp_path, schedd):
    # Source: RouteDeck recorder (no HTCondor behaviour); htcondor.md §3.4: two compactions
    # while the recorder was down, the rotated copy of the small frames' generation is gone
    first = _killed_holding_small_frames(tmp_path, schedd)
    archived = Archive.open(tmp_path / "archive", readonly=True).meta.next_txn
    schedd.compact()
    schedd.compact()
    rec = follower(tmp_path, frame_bytes=1 << 20)
    assert rec.archive.meta.next_txn == archived > first and len(frame_lines(tmp_path / "archive")) == 7
    t = follow(schedd, rec, 2, 100.0)
    rec.flush(t, reframe=True)
    assert gaps(tmp_path / "archive") == []
    assert_replays_as(tmp_path / "archive", schedd.done)
