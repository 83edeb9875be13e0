"""What an archive holds: ``routedeck record --status DIR`` (issue 27).

The figures come from ``recorder.json`` and the index (no segment is decompressed): oldest and
newest moment, size on disk, uncompressed size of the transactions kept and the ratio, the
gaps, and how far the archive is behind the live log it follows (bytes of the same generation
not archived yet, or that the log has moved on to a newer generation). :func:`recorder_figures`
are a running recorder's (``routedeck record --metrics``), with the same :func:`log_lag`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from engine.record.archive import Archive
from engine.record.checkpoint import Meta
from engine.record.recorder import Recorder
from engine.record.state import read_head


def archive_status(path: str | os.PathLike, now: float, log: str | os.PathLike | None = None) -> dict:
    arch = Archive.open(path, readonly=True)
    m = arch.meta
    lines = arch.index_lines()
    frames = [x for x in lines if x["kind"] == "frame"]
    size = arch.size()
    out: dict = {
        "archive": os.fspath(path),
        "oldest": frames[0]["t0"] if frames else m.first_time,
        "newest": m.last_time,
        "transactions": m.next_txn - (frames[0]["first"] if frames else m.next_txn),
        "first_transaction": frames[0]["first"] if frames else m.next_txn,
        "segments": len(arch.segments()),
        "size": size,
        "uncompressed": m.raw_total,
        "ratio": (size / m.raw_total) if m.raw_total else None,
        "gaps": [{k: x[k] for k in ("txn", "t0", "t1", "seq_from", "seq_to", "why")}
                 for x in lines if x["kind"] == "gap"],
        "generations": [x["seq"] for x in lines if x["kind"] == "generation"],
        "log": None,
    }
    out["log"] = log_lag(m, now, log)
    return out


def log_lag(m: Meta, now: float, log: str | os.PathLike | None = None) -> dict | None:
    """How far the archive of ``m`` is behind the live log it follows (``log``, else the one it
    recorded): ``--status``'s ``log`` and the recorder's ``--metrics`` lag. None: no log known."""
    pos = m.log
    source = log if log is not None else m.source
    if source is None or pos is None:
        return None
    head = read_head(Path(source))
    lag: dict = {"file": os.fspath(source), "seq": None if head is None else head.seq, "archived_seq": pos.seq,
                 "seconds": None if m.last_time is None else max(0.0, now - m.last_time)}
    if head is None:
        lag["state"] = "cannot read the log's 107 record"
    elif head.seq == pos.seq:
        try:
            lag["bytes"] = max(0, os.stat(source).st_size - pos.offset)
            lag["state"] = "following"
        except OSError as exc:
            lag["state"] = f"cannot stat: {exc.strerror or exc}"
    else:
        lag["state"] = f"the log is at generation {head.seq}, the archive at {pos.seq}: not caught up"
    return lag


@dataclass(frozen=True)
class RecorderFigures:
    """A running recorder's figures at one poll (``routedeck record --metrics``; immutable, one
    reference replaced whole for the scrape thread)."""

    time: float  # when they were taken
    archived: int  # transactions archived by this process
    errors: int  # polls that failed (a write, the archive unreadable) in this process
    failing: bool  # archiving is stopped by the last failure
    size: int | None = None  # bytes on disk (None: the archive could not be opened)
    segments: int | None = None
    pending_bytes: int | None = None  # read from the log, waiting for the next write
    last_transaction: float | None = None  # the newest archived transaction's time
    lag: dict | None = None  # log_lag()


def recorder_figures(rec: Recorder | None, now: float, archived: int, errors: int, failing: bool,
                     log: str | os.PathLike | None = None) -> RecorderFigures:
    """The figures of ``rec`` (None: not open after a failure; only the counts are known)."""
    if rec is None:
        return RecorderFigures(now, archived, errors, failing)
    arch = rec.archive
    return RecorderFigures(now, archived, errors, failing, size=arch.size(), segments=len(arch.segments()),
                           pending_bytes=rec.pending_bytes, last_transaction=arch.meta.last_time,
                           lag=log_lag(arch.meta, now, log))
