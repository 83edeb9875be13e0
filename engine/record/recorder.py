"""Following a live job_queue.log into an archive, across compactions (issue 27).

Facts: htcondor.md §3.4 (``TruncateClassAdLog``: the log is hard-linked to ``<log>.<seq>``, the
copy ``<seq − MAX_JOB_QUEUE_LOG_ROTATIONS>`` unlinked, a new file ``107 <seq+1> CreationTimestamp
<birth>`` + the ``101``/``103`` of every live ad, no transaction markers, renamed over the log),
§3.5 (how a follower notices a new generation: the 107's sequence changed, or the file was
rewritten). Design decisions and invariants:

- One parser: the log is cut into steps by ``engine.queue.steps.scan_steps`` (replay's step
  scanner) and every step is applied to one ``JobQueue`` with ``apply_quiet``; steps are
  archived as their raw text (``archive.Txn``), their times given by
  ``engine.queue.timeline.TimeInference`` (the ``106 #`` stamp, else the latest time attribute
  set, else carried), made non-decreasing across the archive.
- Only committed steps are taken: a trailing transaction without its 106, or a line without its
  newline, stays in the log and is read at the next poll (the offset stops before it).
- Same generation (same 107 sequence, and the last archived transaction still where it was,
  checked by its hash): read on from the saved offset. Otherwise a new generation: first the
  rest of the old one is read from the rotated ``<log>.<old seq>`` when it is still there and
  its last archived transaction checks; then each newer generation file that exists, and the
  live log. A new generation's leading run of records outside a transaction is its state dump:
  compared with the replayed state (key, MyType, attribute names case-insensitively, values
  as text or, when the texts differ, as the ClassAd unparser writes them), equal → nothing is
  archived but a generation mark; different → a *gap*: one made-up
  transaction that turns the replayed state into the dump (102/101/103/104), with the time
  range it covers and the generation it resumed from; it is written at once and the next
  segment starts after it, so the resumed state is that segment's state checkpoint.
- Restart: ``recorder.json`` (``checkpoint.Meta``) holds the log position (sequence, birth, offset,
  hash and length of the last archived transaction); the replayed state is rebuilt from the
  current segment's state checkpoint and frames. Whatever a killed recorder wrote past the last
  ``recorder.json`` is cut on open, and the log is read again from the saved offset: no gap, no
  duplicate. Small frames held when it was killed (below) are read again too when the log (or
  its rotated copy) still holds them (``Archive.rewind``): written as one write, they do not stay
  small frames; else they are kept as they are.
- Writes are batched: steps wait in memory until ``flush`` (every ``flush_every`` seconds of
  the injected clock, when ``frame_bytes`` are waiting, or at the end of ``--once``); until then
  the saved position does not move, so a kill loses nothing the log still holds. Following a
  log, ``write_after`` (``routedeck record --lag``) writes sooner: a transaction read is written
  ``write_after`` seconds after the last write (at once when that was longer ago). Such a write
  of less than a frame is a small frame the archive holds and re-frames (``Archive.reframe``:
  the kill-safe order is there) into the frames one write of them all gives, when the next
  write would take them past ``frame_bytes``, before a segment starts, ``flush_every`` after the
  first of them, and at stop (``flush(reframe=True)``): the archive's ratio and the index's
  length (``replay DIR`` reads it whole) stay a catch-up's whatever the size of the writes, so
  there is no floor on a write's size (there was one, 8 KiB, before small frames were merged:
  a slow log's transactions waited for it, up to ``flush_every``).
- A failed write (``archive.DiskFull``) leaves this object unusable: the caller opens a new
  ``Recorder`` later, which resumes from the last ``recorder.json`` (and records a gap if the
  schedd compacted away what it had not archived).
- A ``poll`` left by an exception (``KeyboardInterrupt`` landing anywhere in a catch-up, a failed
  read) is a ``kill -9`` at that moment: the state may hold a part of a chunk (plain
  transactions read but not applied yet) and ``pending`` transactions past ``pos``, so this
  object writes nothing more (``interrupted``: ``flush`` does nothing) and the next
  ``Recorder`` resumes from the last ``recorder.json``, no gap and no duplicate.
- No clock is read here: ``poll(now)`` takes the time; the runtime loop (``engine.cli.record``)
  is the only place that waits.
"""

from __future__ import annotations

import os
from itertools import chain
from pathlib import Path

from engine.router.routerlog import RouterLogFollower, parse_stamp
from engine.queue import records as R
from engine.gcpause import gc_paused
from engine.queue.jobqueue import JobQueue
from engine.queue.steps import first_corrupt
from engine.queue.timeline import TimeInference, minute_time, step_time
from engine.record.archive import Archive, Files
from engine.record.chunks import chunk_steps, scan_part
from engine.record.checkpoint import CHECKPOINT_BYTES, SEGMENT_BYTES, Inner, LogPosition, Txn, txn_hash
from engine.record.counts import RouteCounts
from engine.record.report import Report
from engine.record.state import Head, diff_records, dump_of, dump_records, head_of, load_state, state_dump

READ_CHUNK = 1 << 20  # bytes of log read (and their parsed steps held) at a time: bounds memory (bench/record.py)
PENDING_FRAMES = 4  # frames of transactions a catch-up holds before writing them
MAX_GENERATIONS_BACK = 64  # rotated copies looked for between two generations (bounded)


def _open(path: Path):
    try:
        return open(path, "rb")
    except OSError:
        return None


class Recorder:
    def __init__(self, log: str | os.PathLike, archive: str | os.PathLike, *, files: Files | None = None,
                 tz: str | None = None, segment_bytes: int = SEGMENT_BYTES, frame_bytes: int = 1 << 20,
                 flush_every: float = 60.0, router_log: str | os.PathLike | None = None,
                 write_after: float | None = None, checkpoint_bytes: int | None = CHECKPOINT_BYTES) -> None:
        """``checkpoint_bytes``: an inner state checkpoint after a write once that many bytes of
        transactions were archived in the segment since its last (``archive.Inner``; None: none)."""
        self.log = Path(log)
        self.archive = Archive.open(archive, files)
        self.tz = tz
        self.segment_bytes, self.frame_bytes, self.flush_every = segment_bytes, frame_bytes, flush_every
        self.checkpoint_bytes = checkpoint_bytes
        self.write_after = write_after  # None: only flush_every and frame_bytes (module docstring)
        held = self.archive.meta.held  # small frames a killed recorder held: written again as one if the log has them
        if held is not None and held.get("log") and self._in_log(LogPosition(**held["log"])):
            self.archive.rewind()
        self.archive.meta.held = None  # (else they stay small frames)
        meta = self.archive.meta
        meta.source = os.path.abspath(self.log)
        self.state = self._restore()
        self.counts = RouteCounts(self.state.table, meta.figures, enabled=self.archive.empty)  # counts.py
        self.pos: LogPosition | None = meta.log  # where the archived transactions end in the log
        self.pending: list[Txn] = []
        self._pending_bytes = 0
        self.marks: list[dict] = []
        self.last_time = meta.last_time
        self.last_flush: float | None = None
        self.run_since: float | None = None  # the first small frame the archive holds was written then
        self.need_segment = self.archive.empty
        # the state at the archive's end, kept only while the next flush starts a segment (its
        # state checkpoint): a fork makes every ad written after it a copy (``_rolls``)
        self.base = self.state.fork() if self._rolls() else None
        # --router-log: the JobRouterLog's lines, archived beside the transactions with their times
        self.router = None if router_log is None else RouterLogFollower(os.path.abspath(router_log), tz,
                                                                        keep_lines=True)
        if self.router is not None and meta.router_log:
            self.router.resume(meta.router_log)
        self.router_lines: list[tuple[float, str]] = []
        self.router_time: float | None = None  # the last stamp read (rows of a block have none)
        self.interrupted = False  # a poll was left by an exception: nothing more is written (module docstring)

    def _restore(self) -> JobQueue:
        arch = self.archive
        if arch.empty:
            return JobQueue()
        k = arch.meta.segment
        q = load_state(arch.read_state(k))
        for _first, _count, raw in arch.frames(k):
            load_state(raw, q)
        return q

    @property
    def pending_bytes(self) -> int:
        return self._pending_bytes

    # ------------------------------------------------------------------ polling
    def poll(self, now: float, *, flush: bool | None = None) -> Report:
        """Archive whatever the log holds that is not archived yet (see the module docstring).
        ``flush``: True writes now, False keeps it in memory, None follows ``flush_every``."""
        try:
            with gc_paused():  # see _poll
                return self._poll(now, flush)
        except BaseException:  # KeyboardInterrupt too: a kill -9 here (module docstring)
            self.interrupted = True
            raise

    def _poll(self, now: float, flush: bool | None) -> Report:
        """``poll`` with the cyclic collector paused: a catch-up makes a few objects per record
        (steps, transactions waiting to be written) and keeps them until a flush, which is what
        starts the collector's full passes over the whole heap (10-20% of a catch-up's CPU,
        ``bench/record.py``); the recorder makes no cycles for it to find."""
        rep = Report()
        # one open file per generation for the whole poll: a rename over the log between two
        # reads cannot mix two generations (the schedd's compaction renames job_queue.log.tmp)
        fh = _open(self.log)
        head = head_of(fh) if fh is not None else None
        try:
            if head is None:
                rep.missing = f"{self.log}: cannot read a 107 record at its start (missing, empty or not a queue log)"
            elif self.pos is None:
                self._generation(fh, self.log, head, now, rep)
            elif head.seq == self.pos.seq and self._checks(fh, self.pos):
                self._read_on(fh, self.log, rep)
            else:
                if head.seq != self.pos.seq:
                    old = self.pos.seq
                    self._other(self._rotated(old), old, now, rep, rest=True)
                    for s in range(max(old + 1, head.seq - MAX_GENERATIONS_BACK), head.seq):
                        self._other(self._rotated(s), s, now, rep, rest=False)
                self._generation(fh, self.log, head, now, rep)
        finally:
            if fh is not None:
                fh.close()
        self._read_router(now)
        if flush or (flush is None and self._due(now)):
            self.flush(now)
        return rep

    def _due(self, now: float) -> bool:
        """``poll(now)`` writes what waits: ``flush_every`` after the last write, a frame's worth,
        or ``write_after`` after the last write once a transaction waits."""
        return (self.last_flush is None or now - self.last_flush >= self._batch()
                or self.pending_bytes >= self.frame_bytes)

    def _batch(self) -> float:
        """Seconds after the last write that what waits now is written."""
        if self.write_after is not None and self.pending:
            return min(self.write_after, self.flush_every)
        return self.flush_every

    def flush_in(self, now: float) -> float | None:
        """Seconds from ``now`` until a ``poll`` writes what was read and waits (0: the next
        poll does; None: nothing waits): how long the run loop may wait for the log to change."""
        if not self._waiting():
            return None
        if self._due(now):
            return 0.0
        assert self.last_flush is not None  # else _due
        return self.last_flush + self._batch() - now

    def _other(self, path: Path, seq: int, now: float, rep: Report, *, rest: bool) -> None:
        """A rotated copy ``<log>.<seq>``: the rest of the generation being read (``rest``) when
        its last archived transaction checks, or a whole generation between two others."""
        fh = _open(path)
        if fh is None:
            return
        with fh:
            h = head_of(fh)
            if h is None or h.seq != seq:
                return
            if rest:
                if self._checks(fh, self.pos):
                    self._read_on(fh, path, rep)
            else:
                self._generation(fh, path, h, now, rep)

    def _rotated(self, seq: int) -> Path:
        """The schedd's rotated copy of generation ``seq`` (``job_queue.log.<seq>``, classad_log.cpp)."""
        return self.log.with_name(f"{self.log.name}.{seq}")

    def _in_log(self, pos: LogPosition) -> bool:
        """The log, or its rotated copy of ``pos``'s generation, still holds the transaction ``pos`` ends at."""
        for path in (self.log, self._rotated(pos.seq)):
            fh = _open(path)
            if fh is not None:
                with fh:
                    h = head_of(fh)
                    if h is not None and h.seq == pos.seq and self._checks(fh, pos):
                        return True
        return False

    def _checks(self, fh, pos: LogPosition) -> bool:
        """The last archived transaction is still where ``pos`` says in the open log ``fh``."""
        try:
            if pos.last_len == 0:
                h = head_of(fh)
                return h is not None and (h.seq, h.created, h.header_end) == (pos.seq, pos.created, pos.offset)
            fh.seek(pos.offset - pos.last_len)
            return txn_hash(fh.read(pos.last_len)) == pos.last_hash
        except (OSError, ValueError):
            return False

    def _read_on(self, fh, path: Path, rep: Report) -> None:
        """Archive the committed steps of the open log ``fh`` after ``self.pos.offset``."""
        pos = self.pos
        assert pos is not None
        while True:
            fh.seek(pos.offset)
            data = fh.read(READ_CHUNK)
            end = data.rfind(b"\n") + 1
            if end == 0:
                return
            if not self._archive_chunk(data, end, pos.seq, pos.created, pos.offset, path, rep):
                if len(data) < READ_CHUNK:
                    return
                data += fh.read()  # one step longer than a chunk: read it whole
                end = data.rfind(b"\n") + 1
                if not self._archive_chunk(data, end, pos.seq, pos.created, pos.offset, path, rep):
                    return
            pos = self.pos
            if len(data) < READ_CHUNK:
                return

    def _times(self, steps: list, fallback: float | None) -> list[float]:
        timing = TimeInference(self.last_time if self.last_time is not None else fallback, self.tz)
        for _s, _e, records, end_line in steps:
            timing.add_step(records, end_line)
        times, _sources = timing.finish()
        return list(times)

    def _chunk_steps(self, data: bytes, end: int, path: Path, rep: Report, base: int = 0):
        """:func:`engine.record.chunks.chunk_steps` (a method: the tests interrupt a catch-up here)."""
        return chunk_steps(data, end, path, rep, base)

    def _archive_chunk(self, data: bytes, end: int, seq: int, created: int, base: int, path: Path,
                       rep: Report) -> int:
        """Apply and queue the committed steps of ``data[:end]`` (``data`` starts at byte ``base``
        of the log); returns how many. A long run is written every ``PENDING_FRAMES ×
        frame_bytes`` so that segments roll and memory stays bounded (never after the chunk's
        last step: the write waits for the next step).

        One loop reads and applies (``_chunk_steps``): a plain transaction goes to
        ``JobQueue.apply_plain`` as the regex gives its fields (those of a stretch of them at once,
        applied before anything looks at the state: a write, a step with a 101 or 102 or not
        plain, the chunk's end; an exception partway leaves them unapplied, and the recorder is
        then ``interrupted``); one of 103s only is not counted (the window counts close a window
        at ``RouteCounts.due`` from their own figures); a step with a 101 or 102 is counted
        before (``refresh`` sees the ads before the step) and after it is applied. Times as
        ``TimeInference`` gives them (comment, else time attributes, else carried; made
        non-decreasing from the last archived one)."""
        tz = self.tz
        state = self.state
        plain, apply = state.apply_plain, state.apply_quiet
        counts = self.counts
        before, before_keys, after, due_of = counts.before, counts.before_keys, counts.after, counts.due
        due = due_of()
        pending = self.pending
        append = pending.append
        marks = self.marks
        limit = self.frame_bytes * PENDING_FRAMES
        next_txn = self.archive.meta.next_txn
        size = self._pending_bytes
        last = float(self.last_time if self.last_time is not None else created)
        n = 0
        s = e = 0
        write = False
        minutes: dict[str, float | None] = {}  # a stamp's minute → minute_time (stamp_time's parts)
        # the fields of the plain transactions read since the state was last brought up to date:
        # applied by one apply_plain call where the state is looked at (a step with a 101 or 102
        # or not plain, a write, the chunk's end) instead of one per transaction; and before a
        # window's close, which today's counts do not read the ads for (views.figures close_until
        # reads their own figures): kept in case a close comes to read them
        unapplied: list[list[tuple[str, str, str, str]]] = []
        joined = chain.from_iterable

        def apply_unapplied() -> None:
            if unapplied:
                plain(joined(unapplied))
                unapplied.clear()

        for s, e, end_line, records, fields, stamp in self._chunk_steps(data, end, path, rep, base):
            if write:  # the step before filled the frames: written now that another follows
                apply_unapplied()
                self._pending_bytes = size
                self.flush(None)
                pending = self.pending
                append = pending.append
                marks = self.marks
                next_txn = self.archive.meta.next_txn
                size = self._pending_bytes
                write = False
            if stamp is None:
                t = None
            else:
                minute, seconds = stamp
                t = minutes.get(minute)
                if t is None:
                    t = minutes[minute] = minute_time(minute, tz)
                if t is not None:
                    t += float(seconds)
            if t is None:  # step_time reads the 106 comment first
                t, _source = step_time(records if fields is None else
                                       [(103, k, a, v) for _o, k, a, v in fields], end_line, tz)
            t = last if t is None or t < last else float(t)
            last = t
            raw = data[s:e]
            if fields is not None:  # a plain transaction
                txn = True
                if records:  # the keys of its 101s and 102s
                    apply_unapplied()
                    closes = before_keys(t, records, next_txn + len(pending))
                    if closes:
                        marks.extend(closes)
                    plain(fields)
                    after(None, True)
                    due = due_of()
                else:
                    if t >= due:
                        apply_unapplied()
                        closes = before_keys(t, (), next_txn + len(pending))
                        if closes:
                            marks.extend(closes)
                        due = due_of()
                    unapplied.append(fields)
            else:
                apply_unapplied()
                closes = before(t, records, next_txn + len(pending))
                if closes:
                    marks.extend(closes)
                apply(records)
                txn = raw.startswith(b"105")
                after(records, txn)
                due = due_of()
                if not txn:  # records outside a transaction: wrapped to stay one step
                    raw = b"105 \n" + raw + b"106 \n"
            append(Txn(raw, t))
            size += len(raw)
            n += 1
            if size >= limit:
                self.pos = LogPosition(seq, created, base + e, txn_hash(data[s:e]), e - s)
                self.last_time = t
                write = True
        apply_unapplied()
        self._pending_bytes = size
        if n:
            self.pos = LogPosition(seq, created, base + e, txn_hash(data[s:e]), e - s)
            self.last_time = last
            rep.archived += n
        return n

    def _generation(self, fh, path: Path, head: Head, now: float, rep: Report) -> None:
        """Read a new generation of the log (open as ``fh``): its dump (the records before the
        first 105) against the replayed state, then its transactions in chunks (``_read_on``):
        memory is bounded by the dump, the live queue, not by the generation's length."""
        try:
            dump_bytes, first_txn = dump_of(fh, head.header_end, READ_CHUNK)
        except OSError as exc:
            rep.problems.append(f"{path}: cannot read: {exc.strerror or exc}")
            return
        bad = first_corrupt(dump_bytes, 0, len(dump_bytes))
        if bad is not None:
            rep.saw_corrupt(path, head.header_end + bad)
        dump = load_state(dump_bytes)
        first = scan_part(first_txn, 0, len(first_txn), path, [])[0] if first_txn else []
        first_time = self._times(first[:1], head.created)[0] if first else None
        rep.generations.append(head.seq)
        if self.pos is None:  # the archive starts here
            self.state = dump
            self.base = dump.fork()
            self.counts.rebind(dump.table)
            if dump.table:  # replay's first step is this state: its time starts the router's windows
                self.counts.begin(self._times([(0, 0, dump_records(dump_bytes), None)], head.created)[0])
        else:
            diff = diff_records(self.state, dump)
            if diff:
                to = first_time if first_time is not None else max(now, self.last_time or now)
                frm = self.last_time if self.last_time is not None else to
                old_seq = self.pos.seq
                gap = dict(t0=frm, t1=max(to, frm), seq_from=old_seq, seq_to=head.seq,
                           why=(f"generation {head.seq} of {self.log.name} does not follow from what was "
                                f"archived of generation {old_seq} (records missed while the recorder "
                                "was not reading, or the log was replaced)"))
                raw = "".join(R.format_record(r) + "\n" for r in [R.BEGIN, *diff, R.end_txn()]).encode(
                    "utf-8", "surrogateescape")
                recs = [tuple(r) for r in diff]
                self.marks.extend(self.counts.before(max(to, frm), recs,
                                                     self.archive.meta.next_txn + len(self.pending)))
                self.state.apply_quiet(recs)
                self.counts.after(recs, True)
                self.pending.append(Txn(raw, max(to, frm), gap))
                self._pending_bytes += len(raw)
                self.last_time = max(to, frm)
                rep.gaps.append(gap)
                # the resumed state becomes a state checkpoint: the gap is written now (with the
                # old position: a restart finds the dump equal to it) and a new segment follows
                self.flush(None)
                self.need_segment = True
                if self.base is None:
                    self.base = self.state.fork()
        self.marks.append(dict(kind="generation", txn=self.archive.meta.next_txn + len(self.pending),
                               seq=head.seq, created=head.created,
                               time=first_time if first_time is not None else self.last_time))
        dump_end = head.header_end + len(dump_bytes)
        if dump_bytes:  # the dump's last record is what the next read checks
            prev = dump_bytes.rfind(b"\n", 0, len(dump_bytes) - 1) + 1
            self.pos = LogPosition(head.seq, head.created, dump_end, txn_hash(dump_bytes[prev:]),
                                   len(dump_bytes) - prev)
        else:
            self.pos = LogPosition(head.seq, head.created, head.header_end)
        if first_txn:
            self._read_on(fh, path, rep)


    def _read_router(self, now: float) -> None:
        """The JobRouterLog's new complete lines, each with its stamp's time (a line without one,
        such as a routing-table row, takes the last stamp's; before any, ``now``)."""
        if self.router is None:
            return
        self.router.poll()
        lines, self.router.lines = self.router.lines, []
        for line in lines or ():
            t = parse_stamp(line, self.tz)
            if t is not None:
                self.router_time = t
            self.router_lines.append((self.router_time if self.router_time is not None else now, line))

    # ------------------------------------------------------------------ writing
    def flush(self, now: float | None, *, reframe: bool = False) -> int:
        """Write what is waiting and advance ``recorder.json``; returns transactions written.
        Following a busy log (``write_after``), a write of less than a frame is a small frame that
        the archive holds and re-frames (``Archive.reframe``) when they add up to a frame, before
        a segment starts, ``flush_every`` after the first of them, or with ``reframe`` (at stop).
        Nothing once a poll was ``interrupted``: what it held may be a half-applied chunk."""
        if self.interrupted:
            return 0
        if now is not None:
            self.last_flush = now
        merge = self.archive.run is not None and (reframe or (now is not None and self.run_since is not None
                                                              and now - self.run_since >= self.flush_every))
        if not self._unwritten():
            if merge:
                self.archive.reframe()
                self.run_since = None
            return 0
        new_segment = None
        if self._rolls():
            first_t = self.pending[0].time if self.pending else self.last_time
            assert self.base is not None, "a segment starts without the state at the archive's end"
            new_segment = self.archive.start_segment(state_dump(self.base, self.pos.seq, self.pos.created), first_t)
        n = len(self.pending)
        hold = self.write_after is not None and self._pending_bytes < self.frame_bytes
        pos = self.pos
        inner = None if self.checkpoint_bytes is None else Inner(
            lambda: state_dump(self.state, pos.seq, pos.created), self.checkpoint_bytes, self.segment_bytes)
        self.archive.append(self.pending, self.pos, self.marks, new_segment=new_segment, frame_bytes=self.frame_bytes,
                            router=self.router_lines, router_pos=None if self.router is None else self.router.position,
                            figures=self.counts.state(), hold=hold, reframe=merge, inner=inner)
        if self.archive.run is None:
            self.run_since = None
        elif self.run_since is None:
            self.run_since = self.last_flush if self.last_flush is not None else 0.0
        self.pending, self.marks, self.need_segment, self.router_lines = [], [], False, []
        self._pending_bytes = 0
        self.base = self.state.fork() if self._rolls() else None
        return n

    def _waiting(self) -> bool:
        """``flush`` has work: something read is not written yet, or small frames wait for a re-frame."""
        return self._unwritten() or self.archive.run is not None

    def _unwritten(self) -> bool:
        """Something read is not written yet."""
        if self.pos is None:
            return False
        return bool(self.pending or self.marks or self.need_segment or self.pos != self.archive.meta.log
                    or self.router_lines)

    def _rolls(self) -> bool:
        """The next flush starts a segment (the one after a gap, or the current one is full)."""
        return self.need_segment or self.archive.meta.segment_raw >= self.segment_bytes
