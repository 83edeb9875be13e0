"""The recorder's view of a queue state (issue 27): a generation's 107 head, the state as a
compacted log (a segment's state checkpoint) and back, and the records that turn one state into
another (a gap). Facts: htcondor.md §3.4 (what a compaction writes), §3.1 ("Values": the dump
writes each value as the ClassAd unparser gives it). Moved from ``engine.record.recorder``, where
the recorder's following of the log stays."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from engine.classad import unparse_old
from engine.queue import records as R
from engine.queue.jobqueue import JobQueue
from engine.queue.steps import scan_steps
from engine.queue.writer import dump_chunks


@dataclass
class Head:
    seq: int
    created: int
    header_end: int  # byte offset after the 107 line


def canonical(q: JobQueue) -> dict:
    """The state as the comparison of a dump with the replayed state sees it."""
    return {k: (q._types.get(k, ""), {n.lower(): v.strip() for n, v in a.items()}) for k, a in q._ads.items()}


def diff_records(old: JobQueue, new: JobQueue) -> list[R.Record]:
    """Records that turn ``old`` into ``new`` (a gap transaction)."""
    out: list[R.Record] = []
    a, b = canonical(old), canonical(new)
    for key in a:
        if key not in b:
            out.append(R.destroy_ad(key))
    for key, attrs in new._ads.items():
        mytype, lower = b[key]
        before = a.get(key)
        if before is not None and before[0] != mytype:
            out.append(R.destroy_ad(key))
            before = None
        if before is None:
            out.append(R.Record(R.NEW_AD, key, mytype, R.target_type_for(mytype)))
            out.extend(R.set_attr(key, n, v) for n, v in attrs.items())
            continue
        old_attrs = before[1]
        for n, v in attrs.items():
            if not same_value(old_attrs.get(n.lower()), v.strip()):
                out.append(R.set_attr(key, n, v))
        for n in old_attrs:
            if n not in lower:
                out.append(R.delete_attr(key, old.spelling(n) or n))
    return out


def same_value(old: str | None, new: str) -> bool:
    """Equal value texts, or texts the ClassAd unparser writes the same: the schedd's dump
    writes each value as ``ExprTreeToString`` gives it (htcondor.md §3.1 "Values"), which need
    not be the text a client logged (spacing, parentheses)."""
    if old is None:
        return False
    if old == new:
        return True
    try:
        return unparse_old(old) == unparse_old(new)
    except Exception:  # noqa: BLE001 - classad2 raises its own exception for a value it does not parse: only the same text is the same
        return False


def state_dump(q: JobQueue, seq: int, created: int) -> bytes:
    """The state as a compacted log (§3.4): a state checkpoint's content."""
    return R.format_record(R.hist_seq(seq, created)).encode() + b"\n" + b"".join(dump_chunks(q))


def load_state(data: bytes, q: JobQueue | None = None) -> JobQueue:
    q = q if q is not None else JobQueue()
    scan_steps(data, 0, len(data), q, None, None)
    return q


def read_head(path: Path) -> Head | None:
    """The 107 of ``path`` (None: no such file, or its first line is not a complete 107)."""
    try:
        with open(path, "rb") as fh:
            return head_of(fh)
    except OSError:
        return None


def head_of(fh) -> Head | None:
    """The 107 at the start of the open file ``fh``."""
    fh.seek(0)
    first = fh.readline(4096)
    if not first.endswith(b"\n"):
        return None
    rec = R.parse_line(first[:-1].decode("utf-8", "surrogateescape"))
    if not isinstance(rec, R.Record) or rec.op != R.HIST_SEQ:
        return None
    try:
        return Head(int(rec.key), int(float(rec.value)), len(first))
    except ValueError:
        return None


def dump_records(dump: bytes) -> list:
    """The records of a state dump, for its time (``TimeInference``)."""
    out: list = []

    class _Keep:
        @staticmethod
        def apply_quiet(records: list) -> int:
            out.extend(records)
            return 0

    scan_steps(dump, 0, len(dump), _Keep(), None, None)  # type: ignore[arg-type]
    return out


_TXN_START = re.compile(rb"^105[ \t\r]*$", re.M)


def dump_of(fh, start: int, chunk_size: int) -> tuple[bytes, bytes]:
    """(the complete lines from ``start`` up to the first 105 line, the text from that 105 to the
    end of its transaction's 106 line, or b"" when there is none yet) of the open log ``fh``, read
    ``chunk_size`` bytes at a time (the recorder's: engine.record.recorder)."""
    fh.seek(start)
    buf = bytearray()
    m = None
    while m is None:
        chunk = fh.read(chunk_size)
        if not chunk:
            break
        scan_from = max(0, buf.rfind(b"\n") + 1)
        buf += chunk
        m = _TXN_START.search(buf, scan_from)
    if m is None:
        return bytes(buf[: buf.rfind(b"\n") + 1]), b""
    at = m.start()
    end = _END_TXN.search(buf, at)
    while end is None:
        chunk = fh.read(chunk_size)
        if not chunk:
            return bytes(buf[:at]), b""
        buf += chunk
        end = _END_TXN.search(buf, at)
    return bytes(buf[:at]), bytes(buf[at: end.end()])


_END_TXN = re.compile(rb"^106[^\n]*\n", re.M)
