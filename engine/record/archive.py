"""The on-disk archive of a recorded CE (issue 27): segments, index, state checkpoints.

Layout of an archive directory::

    recorder.json         the recorder's checkpoint: the authority on what the archive holds
    index-<n>.jsonl       one JSON object a line: segments, frames, generations, gaps, window
                          closes (the router's per-route counts, engine.record.counts)
    seg-<k>.rds           frames of whole transactions, each zstd-compressed
    state-<k>.zst         the live state before segment k's first transaction (a compacted log)
    rlog-<k>.rds          the JobRouterLog lines read while segment k was written (``--router-log``),
                          in frames of the same format, each indexed ``{"kind": "rlog", "seg", "off",
                          "len", "t0", "t1", "count"}`` by its lines' times
    inner-<k>.rds         inner state checkpoints of segment k: the live state after a write, every
                          ``Inner.every`` bytes of transactions (4 MiB by default), in frames of the
                          same format (count 0, first: the transaction the state is before), each
                          indexed ``{"kind": "state", "seg", "off", "len", "txn", "time"}``

Design decisions and invariants:

- Compression: ``zstandard`` (python-zstandard, G. Szorc): a maintained binding of the reference
  C library with wheels for every platform we ship to; level 3, one independent zstd frame per
  archive frame, so a frame is read without the ones before it.
- A *transaction* of the archive is the raw text of one committed step of the log
  (``engine.queue.steps.scan_steps``: ``105 … 106`` with its ``106 #`` time stamp), or a run of
  records written outside a transaction wrapped in ``105``/``106`` so that every archived
  transaction stays one replay step. Transactions are numbered from 0, in order, across the
  whole archive. A *gap* is a transaction the recorder made up: the difference between the state
  it had replayed and the state a new log generation's dump holds (``recorder.py``).
- A frame: a 40-byte header (magic, payload length, first transaction, count, first and last
  time, CRC-32 of the payload) and the compressed payload. Frames are appended; each segment
  starts with a state checkpoint written before it, so a seek costs one checkpoint + the frames
  of one segment.
- Inner state checkpoints (``Inner``): a write that leaves at least ``every`` bytes of
  transactions in its segment since the segment's last checkpoint, and does not fill the
  segment, appends the recorder's state after it (a compacted log whose ``107`` line is the
  segment's checkpoint's, so a window read from it reads as one read from the segment's) to the
  segment's inner file, with the write, in its kill-safe order (``recorder.json`` counts its
  length as it counts the segment's). Only a write that is not held takes one (a held small
  frame may be re-framed: its state would not be at a frame's end; a re-frame with the
  recorder's next write takes one), so each is at the start of a frame of its segment, or at
  the segment's end. A seek then applies at most about ``every`` bytes (plus the write that
  passed it) after a checkpoint, instead of up to a segment. An archive without them (written
  before they were, or by a recorder told not to) is read from its segments' checkpoints.
  Their cost: one state dump per ``every`` bytes (~100 kB compressed, ~55 ms of the recorder's
  CPU at 30 days of demo history); at 4 MiB, half a default segment, a catch-up (writes of
  ``PENDING_FRAMES`` MiB) and a follower both take one per segment: the archive grows from
  0.114x to 0.126x the log (30 days); every 2 MiB a follower would take three (~0.15x).
- Write order: state checkpoint (tmp + fsync + rename) → frame appended + fsync → index lines
  appended + fsync → ``recorder.json`` (tmp + fsync + rename). ``recorder.json`` names the
  segment, its length, the index file and its length: on open, anything past those (a torn
  frame, index lines of an unfinished write, a next segment's files) is cut or removed, so a
  ``kill -9`` at any point leaves the archive exactly as the last ``recorder.json`` says.
  The directory is fsynced after a rename only where losing that rename to a power loss would
  lose something: a state checkpoint, a new archive, retention (it removes files next), the
  re-frame's step (1) (it cuts files next) and a write that made a file (a ``recorder.json``
  naming it must not outlive it). A write's rename lost leaves the ``recorder.json`` before,
  which counts a prefix of what is on disk (every append was fsynced first): cut on open, and
  the rest read again from the log, as after a kill.
- Re-framing (following a busy log, ``routedeck record --lag``): a write of less than a frame
  may be *held* (``append(hold=True)``): written at once as a small frame, and kept in memory
  (its transactions, index lines and router-log lines, with ``recorder.json`` as it was before
  the first of them) until :meth:`Archive.reframe` rewrites the run of small frames as the
  frames one write of them all gives (what a catch-up writes): with the next write once another
  write of their average size would take them past a frame (the run is *full*: its merged frames
  are compressed on a thread right after the write that filled it, in the ``--lag`` a follower
  waits, and the next write finds them ready), before a write that would not fit, before a
  segment starts, before retention drops one, and when the recorder says (``--flush``, at stop).
  A re-frame and the write after it append once to each file and save one ``recorder.json``
  (the re-frame's step 3). While a run is held, ``recorder.json`` also keeps itself as it was
  before the run (``held``): a recorder started after a kill rewinds to it (:meth:`rewind`,
  the re-frame's step 1) when the log still holds those transactions, and writes them again as
  one write, so they do not stay small frames. Kill-safe order: (1) ``recorder.json`` as before the small frames (a
  kill from here re-reads them from the log, as after any unwritten batch), (2) the segment,
  the router-log file and the index cut to those lengths (no fsync: the next write to each file
  fsyncs it, and an open cuts to what ``recorder.json`` counts anyway), then the merged frame
  and its index lines appended, then the window-close, generation and router-log lines of the
  small writes in their order, (3) ``recorder.json`` again. A reader that read the index before
  a re-frame finds the frame at its place different (its transactions, length or CRC) and gets
  :class:`ArchiveError`, never other transactions; so does one whose ``recorder.json`` counts a
  segment's end from before a re-frame (frames must follow each other and stay within the
  transactions it counts).
- Every write goes through a :class:`Files` object (``engine.record.files``); tests inject one whose writes fail with
  ENOSPC. A failed write raises :class:`DiskFull` (or :class:`ArchiveError`) and leaves
  ``recorder.json`` as it was: the next open drops the partial write, nothing archived is lost.
- Retention deletes whole segments only, oldest first, never the one being written: a new index
  file without their lines, then ``recorder.json`` naming it, then the files are removed (an
  interrupted removal is finished by the next open).
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import zstandard

from engine.record.checkpoint import GAP, RAW, Inner, LogPosition, Meta, Txn
from engine.record.files import (  # noqa: F401  (ArchiveError, DiskFull, Files, parse_lines: part of this API)
    ArchiveError, DiskFull, Files, failed, parse_lines,
)
from engine.record.frames import (
    HEAD, LEVEL, MAGIC, MAX_FRAME, _chunks, _Compress, _router_body, _Run,
)

CHECKPOINT = "recorder.json"


@dataclass
class Archive:
    path: Path
    meta: Meta
    files: Files = field(default_factory=Files)
    run: _Run | None = field(default=None, repr=False)  # held small frames (``append(hold=True)``)
    # appends of one write not made yet, by file in order: a re-frame and the write after it
    # append once to each file (``_append(save=False)``, then the write's ``_write_out``)
    _out: dict[Path, bytearray] = field(default_factory=dict, repr=False)
    _head: tuple[int, bytes] | None = field(default=None, repr=False)  # a segment's 107 line (_segment_head)

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | os.PathLike, files: Files | None = None, *, create: bool = True,
             readonly: bool = False) -> "Archive":
        """Open (or create) the archive in ``path`` and cut whatever the last ``recorder.json``
        does not cover (a torn frame, half-written index lines, files of an unfinished segment).
        ``readonly`` (replay, ``--status``): cut nothing — a recorder may be writing — and read
        only what ``recorder.json`` counts."""
        p = Path(path)
        files = files or Files()
        ck = p / CHECKPOINT
        if not ck.exists():
            if not create or readonly:
                raise ArchiveError(f"{p}: not a RouteDeck archive (no {CHECKPOINT})")
            if p.exists() and any(p.glob("seg-*.rds")):
                raise ArchiveError(f"{p}: segments without {CHECKPOINT}; refusing to overwrite them")
            p.mkdir(parents=True, exist_ok=True)
            arch = cls(p, Meta(), files)
            arch.save_meta()  # from now on recorder.json says what the directory holds (nothing yet)
            return arch
        try:
            meta = Meta.from_json(json.loads(ck.read_text()))
        except (ValueError, TypeError) as exc:
            raise ArchiveError(f"{ck}: unreadable checkpoint: {exc}") from None
        arch = cls(p, meta, files)
        if not readonly:
            arch._cut_tail()
        return arch

    def _cut_tail(self) -> None:
        m = self.meta
        for f in self.path.iterdir():
            name = f.name
            num = _number(name)
            stale = (name.endswith(".tmp")
                     or (name.startswith(("seg-", "state-", "rlog-", "inner-")) and num is not None
                         and (num > m.segment or num < m.first_segment))
                     or (name.startswith("index-") and num is not None and num != m.index))
            if stale:
                f.unlink()
        if m.segment:
            _truncate(self.seg_path(m.segment), m.segment_size)
            _truncate(self.rlog_path(m.segment), m.rlog_size)
            _truncate(self.inner_path(m.segment), m.inner_size)
        _truncate(self.index_path, m.index_size)

    # ------------------------------------------------------------------ paths
    def seg_path(self, k: int) -> Path:
        return self.path / f"seg-{k:06d}.rds"

    def state_path(self, k: int) -> Path:
        return self.path / f"state-{k:06d}.zst"

    def rlog_path(self, k: int) -> Path:
        return self.path / f"rlog-{k:06d}.rds"

    def inner_path(self, k: int) -> Path:
        return self.path / f"inner-{k:06d}.rds"

    def segment_files(self, k: int) -> tuple[Path, ...]:
        """The files of segment ``k`` (retention removes them together)."""
        return self.seg_path(k), self.state_path(k), self.rlog_path(k), self.inner_path(k)

    @property
    def index_path(self) -> Path:
        return self.path / f"index-{self.meta.index}.jsonl"

    @property
    def empty(self) -> bool:
        return self.meta.segment == 0

    # ------------------------------------------------------------------ writing
    def start_segment(self, state_dump: bytes, first_time: float | None) -> list[dict]:
        """Write the next segment's state checkpoint; returns the index line to append with the
        segment's first frame (the segment exists for ``recorder.json`` only after that)."""
        k = self.meta.segment + 1
        path = self.state_path(k)
        try:
            self.files.replace(path, zstandard.ZstdCompressor(level=LEVEL).compress(state_dump))
        except OSError as exc:
            raise failed(path, exc) from None
        self._head = (k, _first_line(state_dump))
        return [dict(kind="segment", seg=k, first=self.meta.next_txn, time=first_time)]

    def append(self, txns: list[Txn], position: LogPosition, extra: list[dict], *,
               new_segment: list[dict] | None = None, frame_bytes: int = 1 << 20,
               router: list[tuple[float, str]] | None = None, router_pos: dict | None = None,
               hold: bool = False, reframe: bool = False, figures: dict | None = None,
               inner: Inner | None = None) -> None:
        """Archive ``txns`` (in frames of about ``frame_bytes``) and advance the checkpoint to
        ``position``. ``extra``: index lines (generation marks) to write with them. ``router``:
        JobRouterLog lines with their times, read up to ``router_pos``, archived in one frame of
        the segment's rlog file. ``figures``: the recorder's window counts after them
        (``Meta.figures``; None keeps them). ``hold``: less than a frame is written as a small frame and kept
        for :meth:`reframe` (module docstring); the held frames are re-framed first when this
        write would take them past ``frame_bytes``, starts a segment or is not held.
        ``reframe``: re-frame them with this write (one write of them all). ``inner``: the state
        after this write, taken as an inner state checkpoint when one is due (module docstring)
        and this write is not held."""
        raw = sum(map(len, map(RAW, txns)))
        run = self.run
        if run is not None and reframe and not new_segment:
            self._hold(txns, extra, router, raw)
            self._reframe(save=True, position=position, router_pos=router_pos, figures=figures, inner=inner)
            return
        hold = hold and not reframe and raw < frame_bytes
        if run is not None and (new_segment or not hold or run.merged is not None or run.raw + raw > frame_bytes):
            self._reframe(save=False)  # this write's recorder.json is the re-frame's step (3)
        before = self.meta.as_json() if hold and self.run is None else None
        if before is not None:  # in recorder.json while they are held: a recorder started after a kill
            self.meta.held = before  # may rewind to it and write them again as one (rewind)
        self._append(txns, position, extra, new_segment=new_segment, frame_bytes=frame_bytes, router=router,
                     router_pos=router_pos, figures=figures, inner=None if hold else inner)
        if before is not None:
            self.run = _Run(before, new_segment, frame_bytes)
        if hold:
            self._hold(txns, extra, router, raw)
            run = self.run
            assert run is not None
            if run.raw + run.raw / run.writes > frame_bytes:
                # another write like these would not fit: the run is full, its merged frames are
                # compressed on a thread now, in the --lag a follower waits after a write, and
                # written with the next write (one append to each file) or at the next re-frame
                run.merged = _Compress(run.txns, run.frame_bytes, run.router)

    def _hold(self, txns: list[Txn], extra: list[dict], router: list[tuple[float, str]] | None, raw: int) -> None:
        run = self.run
        assert run is not None
        run.txns += txns
        run.extra += extra
        run.router += router or ()
        run.raw += raw
        run.figures = self.meta.figures
        run.writes += 1

    def rewind(self) -> None:
        """After a kill: ``recorder.json`` as before the small frames held when it came (``Meta.held``),
        and the files cut to it. The recorder reads them again from the log (it checks first that
        the log still holds them) and writes them as one write: they do not stay small frames.
        The re-frame's step (1) and an open, in one."""
        if self.meta.held is None or self.run is not None:
            return
        vars(self.meta).update(vars(Meta.from_json(dict(self.meta.held))))
        self.save_meta()
        self._cut_tail()

    def reframe(self) -> None:
        """Rewrite the held small frames as one write of them all gives them (module docstring)."""
        self._reframe(save=True)

    def _reframe(self, *, save: bool, position: LogPosition | None = None, router_pos: dict | None = None,
                 figures: dict | None = None, inner: Inner | None = None) -> None:
        run, self.run = self.run, None
        if run is None or (run.writes == 1 and position is None):  # one write is its own frames already
            if self.meta.held is not None:  # nothing held any more (a kill need not rewind)
                self.meta.held = None
                if save:
                    self.save_meta(sync_dir=False)  # (a lost rename: a rewind that writes that frame again)
            return
        end_log, end_router = self.meta.log, self.meta.router_log
        before = Meta.from_json(dict(run.before))
        # (1) recorder.json as before the small frames: from here a kill re-reads them from the log
        vars(self.meta).update(vars(before))  # the same object: whoever holds it sees the archive
        self.save_meta()
        # (2) cut them and their index lines; write them again as one write of them all
        seg = before.segment if run.new_segment is None else before.segment + 1
        cut = before.segment_size if run.new_segment is None else 0
        rlog_cut = before.rlog_size if run.new_segment is None else 0
        # (the inner file is as ``before`` counts it: a held write takes no inner checkpoint)
        for path, size in ((self.seg_path(seg), cut), (self.rlog_path(seg), rlog_cut),
                           (self.index_path, before.index_size)):
            try:
                self.files.truncate(path, size)
            except OSError as exc:
                raise failed(path, exc) from None
        payloads = None if run.merged is None or position is not None else run.merged.payloads()
        self._append(run.txns, position or end_log, run.extra, new_segment=run.new_segment,
                     frame_bytes=run.frame_bytes, router=run.router, router_pos=router_pos or end_router,
                     figures=figures if figures is not None else run.figures, save=save, payloads=payloads,
                     inner=None if position is None else inner)

    def _append(self, txns: list[Txn], position: LogPosition, extra: list[dict], *,
                new_segment: list[dict] | None, frame_bytes: int, router: list[tuple[float, str]] | None,
                router_pos: dict | None, figures: dict | None = None, save: bool = True,
                payloads: tuple[list[bytes], bytes] | None = None, inner: Inner | None = None) -> None:
        """Write ``txns`` as one write (``_chunks``), its index lines and ``router``'s frame, then
        ``recorder.json``; with ``save`` False the appends wait in ``_out`` for the next write's
        (a re-frame's: one append to each file for both). ``payloads``: the frames already
        compressed (``frames._compress`` of the same arguments). ``inner``: the state after them, taken
        as an inner state checkpoint when one is due (module docstring)."""
        m = self.meta
        seg = m.segment + 1 if new_segment else m.segment
        if seg == 0:
            raise ArchiveError(f"{self.path}: no segment started")
        size = 0 if new_segment else m.segment_size
        raw_seg = 0 if new_segment else m.segment_raw
        lines: list[dict] = list(new_segment or [])
        frames = bytearray()
        first = m.next_txn
        cctx = zstandard.ZstdCompressor(level=LEVEL)
        for n_frame, (i, j) in enumerate(_chunks(txns, frame_bytes)):
            chunk = txns[i:j]
            body = b"".join(map(RAW, chunk))
            payload = cctx.compress(body) if payloads is None else payloads[0][n_frame]
            head = HEAD.pack(MAGIC, len(payload), first + i, len(chunk), chunk[0].time, chunk[-1].time,
                             zlib.crc32(payload))
            lines.append(dict(kind="frame", seg=seg, off=size + len(frames), len=HEAD.size + len(payload),
                              first=first + i, count=len(chunk), t0=chunk[0].time, t1=chunk[-1].time,
                              raw=len(body), gen=position.seq))
            gaps = list(map(GAP, chunk))
            if gaps.count(None) < len(gaps):  # some is a gap (counted: no step per transaction in Python)
                for n, gap in enumerate(gaps):
                    if gap is not None:
                        lines.append(dict(kind="gap", txn=first + i + n, **gap))
            frames += head + payload
            raw_seg += len(body)
            m.raw_total += len(body)
        lines.extend(extra)
        rlog_size = 0 if new_segment else m.rlog_size
        inner_size, inner_raw = (0, 0) if new_segment else (m.inner_size, m.inner_raw)
        ck = b""
        if inner is not None and txns and raw_seg - inner_raw >= inner.every and raw_seg < inner.segment:
            dump = inner.state()
            payload = cctx.compress(self._segment_head(seg) + dump[len(_first_line(dump)):])
            t = txns[-1].time
            ck = HEAD.pack(MAGIC, len(payload), first + len(txns), 0, t, t, zlib.crc32(payload)) + payload
            lines.append(dict(kind="state", seg=seg, off=inner_size, len=len(ck), txn=first + len(txns), time=t))
            inner_raw = raw_seg
        rlog = b""
        if router:
            payload = cctx.compress(_router_body(router)) if payloads is None else payloads[1]
            rlog = HEAD.pack(MAGIC, len(payload), 0, len(router), router[0][0], router[-1][0], zlib.crc32(payload))
            rlog += payload
            lines.append(dict(kind="rlog", seg=seg, off=rlog_size, len=len(rlog), t0=router[0][0],
                              t1=router[-1][0], count=len(router)))
        out = self._out
        index = "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines).encode()
        for path, data in ((self.seg_path(seg), frames), (self.rlog_path(seg), rlog), (self.inner_path(seg), ck),
                           (self.index_path, index)):
            if data:
                out.setdefault(path, bytearray()).extend(data)
        m.segment, m.segment_size, m.segment_raw = seg, size + len(frames), raw_seg
        m.rlog_size = rlog_size + len(rlog)
        m.inner_size, m.inner_raw = inner_size + len(ck), inner_raw
        if router_pos is not None:
            m.router_log = router_pos
        m.index_size += len(index)
        m.next_txn = first + len(txns)
        if txns:
            if m.first_time is None:
                m.first_time = txns[0].time
            m.last_time = txns[-1].time
        m.log = position
        if figures is not None:
            m.figures = figures
        if save:
            self._write_out()

    def _write_out(self) -> None:
        """Make the waiting appends (``_out``; the index last), each fsynced, then save
        ``recorder.json`` without the directory's fsync unless a file was made: a power loss
        that loses this rename leaves the last one, which counts a prefix of what is on disk
        (cut on open, and the rest read again from the log); a file made must be in the
        directory before a ``recorder.json`` that names it is."""
        out, self._out = self._out, {}
        index = out.pop(self.index_path, None)
        if index is not None:
            out[self.index_path] = index
        made = False
        for path, data in out.items():
            try:
                made = made or not path.exists()
                self.files.append(path, bytes(data))
            except OSError as exc:
                raise failed(path, exc) from None
        self.save_meta(sync_dir=made)

    def save_meta(self, *, sync_dir: bool = True) -> None:
        """Replace ``recorder.json`` (``Files.replace``); ``sync_dir`` False: without the
        directory's fsync, where losing the rename to a power loss loses nothing (``_write_out``)."""
        path = self.path / CHECKPOINT
        try:
            self.files.replace(path, json.dumps(self.meta.as_json(), indent=1).encode(), sync_dir=sync_dir)
        except OSError as exc:
            raise failed(path, exc) from None

    # ------------------------------------------------------------------ reading
    def index_lines(self, raw: bool = False) -> list:
        """The index's lines parsed (``raw``: as they are, for a reader that parses only some of them:
        ``engine.record.files.parse_lines``)."""
        try:
            data = self.index_path.read_bytes()[: self.meta.index_size]
        except FileNotFoundError:
            return []
        lines = [line for line in data.splitlines() if line.strip()]
        return lines if raw else parse_lines(lines, self.index_path)

    def read_state(self, k: int) -> bytes:
        path = self.state_path(k)
        try:
            return zstandard.ZstdDecompressor().decompress(path.read_bytes())
        except (OSError, zstandard.ZstdError) as exc:
            raise ArchiveError(f"{path}: cannot read the state checkpoint: {exc}") from None

    def frames(self, k: int) -> Iterator[tuple[int, int, bytes]]:
        """(first txn, count, raw text) of each frame of segment ``k`` up to its checkpointed end.
        Frames follow each other and end within the transactions ``recorder.json`` counts, else
        ArchiveError (a re-frame since it was read: module docstring)."""
        path = self.seg_path(k)
        expect = None
        for first, count, raw in self._frames(path, self.meta.segment_size if k == self.meta.segment else None):
            if (expect is not None and first != expect) or first + count > self.meta.next_txn:
                raise ArchiveError(f"{path}: a frame of transactions {first}+{count} after transaction "
                                   f"{expect}, of {self.meta.next_txn} counted: rewritten while read "
                                   "(a recorder re-framed it); open the archive again")
            expect = first + count
            yield first, count, raw

    def frame(self, line: dict) -> bytes:
        """The transactions (raw text) of the one frame an index line ``{"kind": "frame", …}``
        names, read at its place in its segment: a seek decompresses only the frames it needs."""
        path = self.seg_path(line["seg"])
        data = self._read_at(path, line)
        if len(data) >= HEAD.size and HEAD.size + HEAD.unpack_from(data)[1] != line["len"]:
            raise ArchiveError(f"{path}: byte {line['off']}: a frame of {HEAD.size + HEAD.unpack_from(data)[1]} "
                               f"bytes, the index says {line['len']} (rewritten since the index was read: a "
                               "recorder re-framed it; open the archive again)")
        for first, count, raw in self._frames(path, None, data):
            if (first, count) != (line["first"], line["count"]):
                raise ArchiveError(f"{path}: byte {line['off']}: frame of transactions {first}+{count}, "
                                   f"the index says {line['first']}+{line['count']}")
            return raw
        raise ArchiveError(f"{path}: byte {line['off']}: no frame where the index says")

    def inner_state(self, line: dict) -> bytes:
        """The state (a compacted log) of the inner state checkpoint an index line ``{"kind":
        "state", …}`` names: the state before transaction ``line["txn"]``."""
        path = self.inner_path(line["seg"])
        for first, count, raw in self._frames(path, None, self._read_at(path, line)):
            if (first, count) != (line["txn"], 0):
                raise ArchiveError(f"{path}: byte {line['off']}: a state before transaction {first} "
                                   f"({count} transactions), the index says before {line['txn']}")
            return raw
        raise ArchiveError(f"{path}: byte {line['off']}: no state checkpoint where the index says")

    def _segment_head(self, k: int) -> bytes:
        """The ``107`` line of segment ``k``'s state checkpoint (an inner one starts with it)."""
        if self._head is None or self._head[0] != k:
            self._head = (k, _first_line(self.read_state(k)))
        return self._head[1]

    def router_frame(self, line: dict) -> list[str]:
        """The JobRouterLog lines of the router-log frame an index line ``{"kind": "rlog", …}`` names."""
        path = self.rlog_path(line["seg"])
        for _first, _count, raw in self._frames(path, None, self._read_at(path, line)):
            return raw.decode("utf-8", "surrogateescape").split("\n")[:-1]
        return []

    @staticmethod
    def _read_at(path: Path, line: dict) -> bytes:
        try:
            with open(path, "rb") as fh:
                fh.seek(line["off"])
                return fh.read(line["len"])
        except OSError as exc:
            raise ArchiveError(f"{path}: cannot read: {exc.strerror or exc}") from None

    def _frames(self, path: Path, end: int | None, data: bytes | None = None) -> Iterator[tuple[int, int, bytes]]:
        if data is None:
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                if end:  # recorder.json counts bytes in it
                    raise ArchiveError(f"{path}: missing, but {CHECKPOINT} counts {end} bytes in it") from None
                return  # a segment started, no frame yet (after a gap, before its next transaction)
        if end is not None:
            data = data[:end]
        dctx = zstandard.ZstdDecompressor()
        pos = 0
        while pos < len(data):
            if pos + HEAD.size > len(data):
                raise ArchiveError(f"{path}: byte {pos}: truncated frame header")
            magic, n, first, count, _t0, _t1, crc = HEAD.unpack_from(data, pos)
            body = data[pos + HEAD.size: pos + HEAD.size + n]
            if magic != MAGIC or n > MAX_FRAME or len(body) != n or zlib.crc32(body) != crc:
                raise ArchiveError(f"{path}: byte {pos}: damaged frame")
            yield first, count, dctx.decompress(body)
            pos += HEAD.size + n

    def segments(self) -> list[int]:
        return list(range(self.meta.first_segment, self.meta.segment + 1)) if self.meta.segment else []

    def size(self) -> int:
        return sum(f.stat().st_size for f in self.path.iterdir() if f.is_file())

    # ------------------------------------------------------------------ retention
    def retain(self, now: float, max_age: float | None = None, max_size: int | None = None) -> list[int]:
        """Delete whole old segments (never the current one) older than ``max_age`` seconds
        (their last transaction) or while the archive is larger than ``max_size`` bytes."""
        m = self.meta
        lines = self.index_lines()
        last_t: dict[int, float] = {}
        seg_bytes: dict[int, int] = {}
        for x in lines:
            if x["kind"] == "frame":
                last_t[x["seg"]] = x["t1"]
        for k in self.segments():
            seg_bytes[k] = sum(p.stat().st_size for p in self.segment_files(k) if p.exists())
        total = self.size()
        drop: list[int] = []
        for k in self.segments()[:-1]:
            old = max_age is not None and last_t.get(k, now) < now - max_age
            big = max_size is not None and total > max_size
            if not (old or big):
                break
            drop.append(k)
            total -= seg_bytes[k]
        if not drop:
            return []
        if self.run is not None:  # held small frames are cut by a re-frame, not by a new index
            self.reframe()
            lines = self.index_lines()
        gone = set(drop)
        start = _first_txn(lines, max(gone) + 1)  # the first transaction still kept
        keep = [x for x in lines if (x.get("seg") not in gone if "seg" in x else x["txn"] >= start)]
        kept_raw = sum(x.get("raw", 0) for x in keep if x["kind"] == "frame")
        new_index = m.index + 1
        data = "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in keep).encode()
        path = self.path / f"index-{new_index}.jsonl"
        try:
            self.files.replace(path, data)
        except OSError as exc:
            raise failed(path, exc) from None
        old_index = self.index_path
        m.index, m.index_size, m.first_segment = new_index, len(data), max(gone) + 1
        m.raw_total = kept_raw
        m.first_time = next((x["t0"] for x in keep if x["kind"] == "frame"), m.first_time)
        self.save_meta()
        for k in drop:
            for p in self.segment_files(k):
                p.unlink(missing_ok=True)
        old_index.unlink(missing_ok=True)
        return drop


def _first_txn(lines: list[dict], seg: int) -> int:
    return next((x["first"] for x in lines if x["kind"] == "segment" and x["seg"] == seg), 1 << 62)


def _first_line(data: bytes) -> bytes:
    return data[: data.find(b"\n") + 1]


def _number(name: str) -> int | None:
    stem = name.split(".", 1)[0]
    _, _, num = stem.partition("-")
    return int(num) if num.isdigit() else None


def _truncate(path: Path, size: int) -> None:
    try:
        actual = path.stat().st_size
    except FileNotFoundError:
        if size:
            raise ArchiveError(f"{path}: missing, but {CHECKPOINT} counts {size} bytes in it") from None
        return
    if actual < size:
        raise ArchiveError(f"{path}: {actual} bytes, but {CHECKPOINT} counts {size}: the archive lost data")
    if actual > size:
        with open(path, "r+b") as fh:
            fh.truncate(size)
            fh.flush()
            os.fsync(fh.fileno())
