"""What the recorder's checkpoint ``recorder.json`` holds (issue 27): where the recorder is in the
live log (:class:`LogPosition`, with a hash of the last transaction archived, :func:`txn_hash`),
what the archive holds (:class:`Meta`), one transaction to archive (:class:`Txn`) and what an inner
state checkpoint needs (:class:`Inner`). The archive's layout and write order are described in
``engine.record.archive``; this module is kept apart so that what reads a position (the recorder,
``--status``) needs no archive writer, and what reads an archive needs no hashing.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Callable

VERSION = 1


@dataclass(slots=True)
class Txn:
    """One transaction to archive: its raw text (``105 … 106`` lines) and its time."""

    raw: bytes
    time: float
    gap: dict | None = None  # for a gap transaction: what the index says about it


# getters of many Txns' fields without a step per one in Python (``map(RAW, txns)``)
RAW = attrgetter("raw")  # its text
GAP = attrgetter("gap")  # its gap (None: not a gap)


@dataclass
class LogPosition:
    """Where the recorder is in the live log: generation, byte offset, last transaction read."""

    seq: int
    created: int
    offset: int
    last_hash: str = ""
    last_len: int = 0

    def as_json(self) -> dict:
        return dict(seq=self.seq, created=self.created, offset=self.offset, last_hash=self.last_hash,
                    last_len=self.last_len)


@dataclass
class Meta:
    """``recorder.json``'s content."""

    next_txn: int = 0
    segment: int = 0  # the segment being written (0: none yet)
    segment_size: int = 0
    segment_raw: int = 0  # uncompressed bytes in that segment
    first_segment: int = 1
    index: int = 1  # index-<n>.jsonl
    index_size: int = 0
    first_time: float | None = None
    last_time: float | None = None
    log: LogPosition | None = None
    raw_total: int = 0  # uncompressed transaction bytes kept (for the compression ratio)
    source: str | None = None  # the live log followed (for --status's lag)
    figures: dict | None = None  # the per-route window counts at the archive's end (recorder.RouteCounts)
    rlog_size: int = 0  # bytes of router-log frames in the current segment's rlog file
    router_log: dict | None = None  # where the followed JobRouterLog was read up to: path, ino, offset
    held: dict | None = None  # recorder.json before the held small frames (a run), while there are some
    inner_size: int = 0  # bytes of inner state checkpoints in the current segment's inner file
    inner_raw: int = 0  # segment_raw where the current segment's last state checkpoint was taken

    def as_json(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k != "log" and (k != "held" or v is not None)}
        d["version"] = VERSION  # (no "held" when nothing is: what a recorder before it wrote and reads)
        d["log"] = None if self.log is None else self.log.as_json()
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Meta":
        log = d.pop("log", None)
        d.pop("version", None)
        m = cls(**d)
        m.log = None if log is None else LogPosition(**log)
        return m


SEGMENT_BYTES = 8 << 20  # a segment is full at this many bytes of transactions (the recorder's default)
CHECKPOINT_BYTES = 4 << 20  # bytes of transactions between two state checkpoints of a segment (default)


@dataclass(frozen=True)
class Inner:
    """What :meth:`Archive.append` needs to take an inner state checkpoint (``engine.record.archive``'s docstring)."""

    state: Callable[[], bytes]  # the state after the write, as a compacted log (``record.state.state_dump``)
    every: int = CHECKPOINT_BYTES  # bytes of transactions between two checkpoints of a segment
    segment: int = SEGMENT_BYTES  # the segment is full at this size (the recorder's): none at its end


def txn_hash(raw: bytes) -> str:
    import hashlib  # noqa: PLC0415 - what reads an archive hashes nothing (module docstring): OpenSSL is not loaded for it

    return hashlib.sha256(raw).hexdigest()[:32]
