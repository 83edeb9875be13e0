"""Replay of a recorder's archive (issue 27) through the log replay's index.

Design decisions and invariants:

- An archive is shown to replay as one log: ``107 <seq> CreationTimestamp <birth>`` of the first
  kept segment's state checkpoint, that checkpoint's records (outside any transaction: replay's
  step 0, as a compacted log's body is), then every archived transaction in order. The result
  is indexed by :func:`engine.feeds.replay.index.build_index` — one step scanner, one timeline,
  the same checkpoints and seeks as a log — so ``replay DIR`` is ``replay LOG`` on that text.
- A gap is a made-up transaction (``engine.record.recorder``); its step's time is set to the
  gap's end (the moment its state is known), kept non-decreasing. :class:`ArchiveReplay` lists
  the gaps by step for the JSON and the text output.
- Retention moves the start: the first kept segment's checkpoint is the state replay starts
  from, and ``start`` says so.
- Reading the whole archive costs its decompression (a first step; a seek that reads one
  checkpoint and one segment is ``state_near``).
"""

from __future__ import annotations

import os
from bisect import bisect_right
from dataclasses import dataclass, field

from engine.feeds.replay.index import LogIndex, build_index
from engine.queue.jobqueue import JobQueue
from engine.queue.reader import committed_state, scan_steps
from engine.record.archive import Archive
from engine.record.recorder import load_state


@dataclass
class ArchiveReplay:
    index: LogIndex
    first_txn: int  # archive number of the first transaction kept
    offset: int  # step of that transaction (1 when the checkpoint is a step, else 0)
    gaps: list = field(default_factory=list)  # index lines of kind "gap", each with its "step"
    generations: list = field(default_factory=list)

    def step_of(self, txn: int) -> int:
        return txn - self.first_txn + self.offset


def is_archive(path: str | os.PathLike) -> bool:
    return os.path.isdir(path) and os.path.exists(os.path.join(path, "recorder.json"))


def archive_text(arch: Archive) -> tuple[bytes, int, bool]:
    """(the archive as one log's text, first transaction number, whether the checkpoint has records)."""
    segs = arch.segments()
    if not segs:
        return b"", 0, False
    state = arch.read_state(segs[0])
    nl = state.find(b"\n") + 1
    parts = [state]
    first_txn = None
    for k in segs:
        for first, _count, raw in arch.frames(k):
            if first_txn is None:
                first_txn = first
            parts.append(raw)
    if first_txn is None:
        first_txn = arch.meta.next_txn
    return b"".join(parts), first_txn, len(state) > nl


def open_archive(path: str | os.PathLike, tz: str | None = None) -> ArchiveReplay:
    arch = Archive.open(path, readonly=True)
    data, first_txn, has_state = archive_text(arch)
    index = build_index(os.fspath(path), tz=tz, data=data)
    rep = ArchiveReplay(index, first_txn, 1 if has_state else 0)
    for x in arch.index_lines():
        if x["kind"] == "gap" and x["txn"] >= first_txn:
            step = rep.step_of(x["txn"])
            rep.gaps.append(dict(x, step=step))
            if 0 <= step < index.steps:
                index.times[step] = max(index.times[step], x["t1"])
        elif x["kind"] == "generation" and x["txn"] >= first_txn:
            rep.generations.append(dict(x, step=rep.step_of(x["txn"])))
    times = index.times
    for i in range(1, len(times)):  # keep time non-decreasing after the gaps' times
        if times[i] < times[i - 1]:
            times[i] = times[i - 1]
    return rep


def state_near(path: str | os.PathLike, txn: int) -> JobQueue:
    """The state after archive transaction ``txn``, read from one state checkpoint and the frames
    of one segment (what a seek into the middle of a month costs)."""
    arch = Archive.open(path, readonly=True)
    starts = [(x["first"], x["seg"]) for x in arch.index_lines() if x["kind"] == "segment"]
    k = starts[max(0, bisect_right([f for f, _ in starts], txn) - 1)][1]
    parts = [arch.read_state(k)]
    for first, count, raw in arch.frames(k):
        if first > txn:
            break
        if first + count - 1 > txn:  # cut the frame after transaction ``txn``
            ends: list[int] = []
            scan_steps(raw, 0, len(raw), _Null(), lambda _s, e, _l, _r, _e=None: ends.append(e), None)
            raw = raw[: ends[txn - first]]
        parts.append(raw)
    data = b"".join(parts)
    # the fast loader when it takes the text (it gives up on anything unusual: then step by step)
    q = committed_state(data)
    return q if q is not None else load_state(data)


class _Null:
    @staticmethod
    def apply_quiet(records: list) -> int:
        return 0
