"""What an archive holds: ``routedeck record --status DIR`` (issue 27).

The figures come from ``recorder.json`` and the index (no segment is decompressed): oldest and
newest moment, size on disk, uncompressed size of the transactions kept and the ratio, the
gaps, and how far the archive is behind the live log it follows (bytes of the same generation
not archived yet, or that the log has moved on to a newer generation).
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.record.archive import Archive, Meta
from engine.record.recorder import read_head


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
