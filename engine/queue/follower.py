"""Following a live job_queue.log with the job router's rules (htcondor.md §3.5).

Design decisions and invariants:

- ``poll()`` is one ``ClassAdLogReader::Poll``: open the file, probe it, then load. The probe reads
  the first record, which must be a 107 (anything else is HTCondor's ``PROBE_FATAL_ERROR``, where
  the router asserts: here it is a fatal problem and the queue is left as it was). Then:
  first poll → INIT, 107 sequence changed → COMPRESSED, otherwise the saved record is read again at
  its offset and compared: same size and equal → NO_CHANGE, larger and equal → ADDITION (read on
  from the saved next offset), anything else → PROBE_ERROR. INIT, COMPRESSED and PROBE_ERROR are a
  bulk reload: clear the queue and read from offset 0.
- The saved record is the last record consumed (HTCondor keeps the one before it, an artefact of
  its parser; either detects a rewrite). Bytes past the last newline are not consumed: a partial
  last record is read again at the next poll. Only the bytes present when the file was probed are
  read, so the size saved always matches what was consumed.
- A file replaced under the same name (a new inode: ``mv new job_queue.log``) with the same 107
  is a PROBE_ERROR too, whatever its probe record holds: HTCondor's probe would compare one
  record and could read the new file on from the old offset; RouteDeck reloads it.
- A reload that reads a new generation of the log — rotated (new 107 sequence), replaced (new
  inode), or rewritten (truncated, changed before the last record read, or a new first line) —
  says so in ``PollResult.replaced`` (what happened, in words), and the problems of the new
  generation are reported afresh: each problem is told once per generation (a record stuck at
  the end would repeat every poll), not once per (sequence, offset, message), which hid a new
  file's problem at the same place as the old one's. The same unreadable first line read again
  is not a new generation.
- Transaction boundaries are ignored: every complete record is applied as soon as it is read
  (a rewrite that rolls a transaction back changes the sequence number and forces a reload).
- Bulk reloads use the fast loader in follower mode; additions go record by record through
  ``JobQueue.apply`` inside one batch, so subscribers see one coalesced set of events per poll.
- No waiting here: ``engine.feeds.watch`` decides when to call ``poll()``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from engine.queue.jobqueue import JobQueue
from engine.queue import records as R
from engine.queue.reader import load_bytes
from engine.queue.records import Corrupt, parse_line
from engine.queue.plain_loader import load_reference
from engine.queue.result import FOLLOW, LoadResult, Problem

INIT, COMPRESSED, PROBE_ERROR, ADDITION, NO_CHANGE, FATAL, MISSING = (
    "init", "compressed", "probe_error", "addition", "no_change", "fatal", "missing")


@dataclass
class PollResult:
    probe: str  # one of INIT, COMPRESSED, PROBE_ERROR, ADDITION, NO_CHANGE, FATAL, MISSING
    records: int = 0  # complete records read in this poll
    reloaded: bool = False
    problems: list[Problem] = field(default_factory=list)
    replaced: str | None = None  # a new generation of the log was read: how it changed (module docstring)


class Follower:
    def __init__(self, path: str | os.PathLike, queue: JobQueue | None = None, *, validate: bool = True) -> None:
        self.path = Path(path)
        self.queue = queue if queue is not None else JobQueue()
        self.validate = validate
        self.last_size = 0
        self.seq: int | None = None
        self.created: int | None = None
        self.next_offset = 0
        self.saved: tuple[int, bytes] | None = None
        self.inode: tuple[int, int] | None = None  # (st_dev, st_ino) of the file last read
        self.lines_consumed = 0  # complete lines before next_offset, for record numbers
        self.head: bytes | None = None  # the first line last read (a new one is a new generation)
        self._reported: set[tuple[int, str]] = set()  # (offset, message) told in this generation

    def poll(self) -> PollResult:
        source = str(self.path)
        try:
            if not stat.S_ISREG(os.stat(self.path).st_mode):  # a FIFO would block, /dev/zero never end
                raise OSError(0, "not a regular file")
            fh = open(self.path, "rb")
        except OSError as exc:
            return PollResult(MISSING, problems=self._fresh([Problem(source, 0, 0, f"cannot open: {exc.strerror or exc}",
                                                                     "error")]))
        with fh:
            st = os.fstat(fh.fileno())
            size, inode = st.st_size, (st.st_dev, st.st_ino)
            replaced, self.inode = self.inode is not None and inode != self.inode, inode
            first = fh.readline()
            rec = parse_line(first[:-1].decode("utf-8", "surrogateescape")) if first.endswith(b"\n") else None
            if isinstance(rec, R.Record) and rec.op != R.HIST_SEQ:
                return PollResult(FATAL, problems=self._fresh([Problem(
                    source, 1, 0, "the first record is not a 107 (historical sequence number); "
                    "HTCondor's router would assert here", "fatal")]))
            if rec is None or isinstance(rec, Corrupt):
                probe = PROBE_ERROR
                seq = created = None
            else:
                seq, created = int(rec.key), int(rec.value)
                probe = self._probe(fh, size, seq)
                if replaced and probe in (NO_CHANGE, ADDITION):
                    probe = PROBE_ERROR
            if probe == NO_CHANGE:
                result = PollResult(NO_CHANGE)
            elif probe == ADDITION:
                result = self._addition(fh, size)
            else:
                why = None
                if self.last_size and (probe == COMPRESSED or replaced or self.saved is not None or first != self.head):
                    why = (f"rotated (sequence {self.seq} -> {seq})" if probe == COMPRESSED else "replaced" if replaced
                           else "rewritten (truncated or changed before the last record read)")
                    self._reported.clear()  # a new generation: its problems are news
                fh.seek(0)
                result = self._bulk(fh.read(size), probe)
                result.replaced = why
        self.last_size, self.seq, self.created, self.head = size, seq, created, first
        return result

    def _probe(self, fh, size: int, seq: int) -> str:
        if self.last_size == 0:
            return INIT
        if seq != self.seq:
            return COMPRESSED
        if self.saved is None:
            return PROBE_ERROR
        offset, raw = self.saved
        fh.seek(offset)
        equal = fh.read(len(raw)) == raw
        if equal and size == self.last_size:
            return NO_CHANGE
        if equal and size > self.last_size:
            return ADDITION
        return PROBE_ERROR

    def _bulk(self, data: bytes, probe: str) -> PollResult:
        res = load_bytes(data, self.queue, source=str(self.path), mode=FOLLOW, validate=self.validate)
        self.next_offset, self.saved = res.next_offset, res.probe
        self.lines_consumed = data.count(b"\n", 0, res.next_offset)
        return PollResult(probe, res.records, True, self._fresh(res.problems))

    def _addition(self, fh, size: int) -> PollResult:
        fh.seek(self.next_offset)
        data = fh.read(max(0, size - self.next_offset))
        end = data.rfind(b"\n") + 1
        if end == 0:
            return PollResult(ADDITION)
        q = self.queue
        res = LoadResult(q)
        with q.batch():
            load_reference_into(data[:end], q, str(self.path), res, self.validate)
        base, lines = self.next_offset, self.lines_consumed
        shifted = [Problem(p.file, lines + p.record, base + p.offset, p.message, p.severity,
                           None if p.condor_offset is None else base + p.condor_offset) for p in res.problems]
        if res.probe is not None:
            self.saved = (base + res.probe[0], res.probe[1])
        self.next_offset = base + res.next_offset
        self.lines_consumed = lines + data.count(b"\n", 0, res.next_offset)
        return PollResult(ADDITION, res.records, False, self._fresh(shifted))

    def _fresh(self, problems: list[Problem]) -> list[Problem]:
        """Report each problem once per log generation (a stuck record would repeat every poll)."""
        out = []
        for p in problems:
            key = (p.offset, p.message)
            if key not in self._reported:
                self._reported.add(key)
                out.append(p)
        return out


def load_reference_into(data: bytes, queue: JobQueue, source: str, res: LoadResult, validate: bool) -> None:
    """Apply complete records of an appended piece with the follower's rules (no reset)."""
    part = load_reference(data, queue, source, FOLLOW, validate)
    res.records, res.next_offset, res.probe = part.records, part.next_offset, part.probe
    for p in part.problems:
        res.add(p)
