"""A seek reads each frame it needs at its place in the index (``Archive.frame``), not its whole
segment (issue 27: a seek costs one checkpoint and the frames of one segment). The layout is
the one every archive has had (``seg-<k>.rds`` frames, ``index-<n>.jsonl`` frame lines with
``off``/``len``), so an archive written before reads the same; an index that points elsewhere is
refused naming the segment file."""

from __future__ import annotations

import pytest

from engine.record.archive import Archive, ArchiveError
from engine.record.recorder import Recorder
from tests.helpers.demo_days import DEMO


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    d = tmp_path_factory.mktemp("frames")
    data = DEMO.read_bytes()
    cut = data.index(b"\n106 ", 400_000)
    (d / "job_queue.log").write_bytes(data[: data.index(b"\n", cut + 1) + 1])
    Recorder(d / "job_queue.log", d / "arch", tz="UTC", segment_bytes=96 << 10, frame_bytes=16 << 10).poll(0, flush=True)
    return Archive.open(d / "arch", readonly=True)


def test_each_frame_read_at_its_place_is_the_frame_the_segment_holds(archive):
    lines = [x for x in archive.index_lines() if x["kind"] == "frame"]
    assert len(archive.segments()) >= 3 and len(lines) >= 20
    whole = {(first, count): raw for k in archive.segments() for first, count, raw in archive.frames(k)}
    assert {(x["first"], x["count"]): archive.frame(x) for x in lines} == whole


def test_an_index_line_pointing_elsewhere_is_refused_naming_the_segment(archive):
    a, b = [x for x in archive.index_lines() if x["kind"] == "frame" and x["seg"] == 1][:2]
    with pytest.raises(ArchiveError, match=r"seg-000001\.rds: byte \d+: frame of transactions"):
        archive.frame(dict(b, off=a["off"], len=a["len"]))
    with pytest.raises(ArchiveError, match=r"seg-000001\.rds: byte \d+: "):
        archive.frame(dict(a, off=a["off"] + 1))
