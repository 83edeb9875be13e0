"""Writing job_queue.log as the schedd does (htcondor.md §3.1, §3.2, §3.4).

Design decisions and invariants:

- Every line comes from ``records.format_record``; a transaction is formatted completely *before*
  anything is written, so a refused value (newline, blank) leaves the file untouched.
- A transaction is one ``write`` of ``105 ``, its records and ``106`` (``106 # <local ISO time>``
  when timestamps are on, `` NONDURABLE`` appended for non-durable commits), then flush and fsync
  (fdatasync as HTCondor's ``Transaction::Commit``; ``durable=True``, the schedd's default). A
  non-durable commit (``CommitNonDurableTransaction``: the schedd's job start, job stop and
  DestroyProc, htcondor.md §3.2) is written and flushed but not fdatasync'ed; the next durable
  commit's fdatasync covers it. HTCondor leaves it in the stdio buffer until then (or until the
  ``SCHEDD_JOB_QUEUE_LOG_FLUSH_DELAY`` timer's fflush), so a killed schedd can lose it; written at
  once, it survives a killed process here and can be lost only to a crash of the machine, as
  there. Records outside a transaction are written and fsynced one by one. If a write fails the writer is marked ``broken`` and the error propagates (the schedd
  EXCEPTs there); whatever reached the file is a torn tail that the reader discards.
- Compaction (``compact``) follows ``TruncateClassAdLog``: hard-link (or copy) the log to
  ``<log>.<seq>`` and unlink ``<log>.<seq - max_rotations>`` (0 keeps no history; if saving fails
  the rotation is skipped), write ``<log>.tmp`` with ``107 <seq+1> CreationTimestamp <birth>`` and
  each ad's own attributes (no 105/106), fsync, ``rename`` over the log, fsync the directory,
  reopen for append. A log the writer produces always loads under the owner's rules.
- ``open_queue`` is the schedd's startup: create a new log (``107 1`` + header ad) or load an
  existing one with the owner's rules, refuse a log the schedd would refuse (fatal problems), and
  rotate at once when the log was not cleanly closed or needs cleaning (§3.3).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, Iterable, Iterator

from engine.queue.jobqueue import JobQueue
from engine.queue import records as R
from engine.queue.reader import load_log
from engine.queue.result import OWNER, Problem


class QueueLogError(RuntimeError):
    """The log cannot be opened for writing (e.g. the schedd would refuse it)."""

    def __init__(self, message: str, problems: list[Problem] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


# HTCondor's commit ends with fflush + fdatasync (htcondor.md §3.2, ``condor_fdatasync``): the
# data and the file size reach the disk, the rest of the inode's metadata (mtime) need not.
_datasync = getattr(os, "fdatasync", os.fsync)


def _encode(lines: Iterable[str]) -> bytes:
    """Each line and its newline (one join, not a string per line)."""
    lines = lines if isinstance(lines, list) else list(lines)
    return ("\n".join(lines) + "\n" if lines else "").encode("utf-8", "surrogateescape")


class QueueLogWriter:
    # how every file of the log is opened; fault tests put a full or read-only disk here
    _open = staticmethod(open)

    def __init__(self, path: str | os.PathLike, *, seq: int, created: int, durable: bool = True,
                 timestamps: bool = True, max_rotations: int = 1,
                 monotonic: Callable[[], float] | None = None) -> None:
        self.path = Path(path)
        self.seq = int(seq)
        self.created = int(created)
        self.durable = durable
        self.timestamps = timestamps
        self.max_rotations = max(0, int(max_rotations))
        self.broken = False
        # grouped sync (issue 30): None = sync each durable commit (HTCondor's schedd, speed 1);
        # a number = fdatasync at most every ``group_interval`` seconds of ``monotonic`` time,
        # and always at ``barrier()`` (before anything outside the log sees a commit's effect)
        self.monotonic = monotonic
        self.group_interval: float | None = None
        self.pending = False
        self._last_sync = 0.0
        self._fh = self._open(self.path, "ab")

    @classmethod
    def create(cls, path: str | os.PathLike, now: float, **options) -> "QueueLogWriter":
        """A brand-new log: ``107 1 CreationTimestamp <now>`` (§3.4 last line)."""
        p = Path(path)
        with cls._open(p, "xb") as fh:
            fh.write(_encode([R.format_record(R.hist_seq(1, int(now)))]))
            fh.flush()
            os.fsync(fh.fileno())
        return cls(p, seq=1, created=int(now), **options)

    # ------------------------------------------------------------------ appending
    def _write(self, data: bytes, sync: bool) -> None:
        if self.broken:
            raise QueueLogError(f"{self.path}: an earlier write failed; the log must be rotated first")
        try:
            self._fh.write(data)
            self._fh.flush()
            if sync:
                if self.group_interval is None or self.monotonic is None:
                    self._sync()
                else:
                    self.pending = True
                    if self.monotonic() - self._last_sync >= self.group_interval:
                        self._sync()
        except OSError:
            self.broken = True
            raise

    def _sync(self) -> None:
        _datasync(self._fh.fileno())
        self.pending = False
        if self.monotonic is not None:
            self._last_sync = self.monotonic()

    def barrier(self) -> None:
        """Sync now if a grouped durable commit is pending: called before a commit's effect
        leaves the log (a hook or a job's program starting, a history line, a snapshot)."""
        if self.pending and not self._fh.closed and not self.broken:
            try:
                self._sync()
            except OSError:
                self.broken = True
                raise

    def set_grouping(self, interval: float | None) -> None:
        """``None``: sync each durable commit (real time); a number: group the syncs (faster
        than real time). Switching to sync-each syncs what is pending."""
        self.group_interval = interval if self.monotonic is not None else None
        if interval is None:
            self.barrier()

    def write_records(self, recs: Iterable[R.Record]) -> None:
        """Records outside a transaction, each written and synced on its own."""
        lines = [R.format_record(r) for r in recs]
        for line in lines:
            self._write(_encode([line]), self.durable)

    def write_transaction(self, recs: Iterable[R.Record], now: float | None = None,
                          lines: list[str] | None = None, durable: bool = True) -> None:
        """``lines``: the records already formatted by ``format_record`` (a Transaction does it
        as each record is added), so they are not formatted twice. ``durable=False``: a
        non-durable commit (``Transaction::Commit(..., nondurable)``: no fdatasync)."""
        body = lines if lines is not None else [R.format_record(r) for r in recs]
        if type(body) is not list:
            body = list(body)
        sync = self.durable and durable
        comment = R.commit_comment(now, sync) if self.timestamps and now is not None else ""
        # format_record's 105 line, the body and its 106 line, joined once
        # (test_write_transaction_bytes_are_the_records_lines)
        end = R.end_line(comment) + "\n"
        text = (R.BEGIN_LINE + "\n" + "\n".join(body) + "\n" + end) if body else (R.BEGIN_LINE + "\n" + end)
        self._write(text.encode("utf-8", "surrogateescape"), sync)

    # ------------------------------------------------------------------ compaction
    def compact(self, queue: JobQueue) -> bool:
        """Rotate: write the queue's ads into a fresh log with sequence + 1. False if skipped."""
        path = self.path
        if self.max_rotations > 0 and path.exists():
            hist = path.with_name(f"{path.name}.{self.seq}")
            try:
                if hist.exists():
                    hist.unlink()
                try:
                    os.link(path, hist)
                except OSError:
                    shutil.copyfile(path, hist)
            except OSError:
                return False
            try:
                path.with_name(f"{path.name}.{self.seq - self.max_rotations}").unlink()
            except OSError:
                pass
        tmp = path.with_name(path.name + ".tmp")
        with self._open(tmp, "wb") as fh:
            fh.write(_encode([R.format_record(R.hist_seq(self.seq + 1, self.created))]))
            for chunk in dump_chunks(queue):
                fh.write(chunk)
            fh.flush()
            os.fsync(fh.fileno())
        self._fh.close()
        os.replace(tmp, path)
        fsync_dir(path.parent)
        self._fh = self._open(path, "ab")
        self.seq += 1
        self.broken = False
        self.pending = False  # the fresh log was fsynced whole
        queue.seq, queue.created = self.seq, self.created
        return True

    def close(self) -> None:
        if not self._fh.closed:
            try:
                self._fh.flush()
                if self.pending and not self.broken:
                    self._sync()
            finally:
                self._fh.close()

    def abandon(self) -> None:
        """Close without raising (after a failed write: what did not reach the file is lost, as
        it is for a schedd that EXCEPTs there; the next open discards the torn tail)."""
        try:
            self.close()
        except OSError:
            pass

    def __enter__(self) -> "QueueLogWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def dump_chunks(queue: JobQueue, lines_per_chunk: int = 8192) -> Iterator[bytes]:
    """The body of a compacted log (§3.4): ``101`` and the ``103``s of each ad's own attributes,
    in the queue's order, no 105/106, encoded in chunks (the compaction above and the recorder's
    state checkpoints, ``engine.record``, write the same text)."""
    batch: list[str] = []
    words: set[str] = set()  # attribute names already checked
    for key, attrs in queue._ads.items():
        mytype = queue._types.get(key, "")
        batch.append(R.format_record(R.new_ad(key, mytype)))  # checks the key
        if R.attrs_writable(attrs, words):  # format_record's checks, made once per ad: the same lines
            prefix = f"103 {key} "
            batch.extend([f"{prefix}{n} {v}" for n, v in attrs.items()])
        else:  # the error format_record gives for its first bad record
            batch.extend(R.format_record(R.set_attr(key, n, v)) for n, v in attrs.items())
        if len(batch) > lines_per_chunk:
            yield _encode(batch)
            batch = []
    if batch:
        yield _encode(batch)




def fsync_dir(directory: Path) -> None:
    """fsync a directory (a rename or a new file in it is durable); a failure is ignored, as on
    file systems that cannot sync a directory."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def open_queue(path: str | os.PathLike, now: float, *, durable: bool = True, timestamps: bool = True,
               max_rotations: int = 1) -> tuple[JobQueue, list[Problem]]:
    """Open (or create) a job queue persisted in ``path``, as the schedd does at startup."""
    p = Path(path)
    options = dict(durable=durable, timestamps=timestamps, max_rotations=max_rotations)
    if not p.exists() or p.stat().st_size == 0:
        if p.exists():
            p.unlink()
        writer = QueueLogWriter.create(p, now, **options)
        q = JobQueue()
        q.seq, q.created, q.writer = 1, int(now), writer
        q.log_untransacted([R.new_ad(R.HEADER_KEY, "Job"), R.set_attr(R.HEADER_KEY, "NextClusterNum", "1")])
        return q, []
    res = load_log(p, mode=OWNER)
    if res.fatal:
        first = next(pr for pr in res.problems if pr.severity == "fatal")
        raise QueueLogError(f"refusing to write to {p}: {first}", res.problems)
    q = res.queue
    writer = QueueLogWriter(p, seq=q.seq or 1, created=q.created or int(now), **options)
    q.writer = writer
    if not res.clean or res.needs_rotation or q.seq is None:
        writer.compact(q)
    if q.ad(R.HEADER_KEY) is None:
        q.log_untransacted([R.new_ad(R.HEADER_KEY, "Job"),
                            R.set_attr(R.HEADER_KEY, "NextClusterNum", str(q.next_cluster_num()))])
    return q, res.problems
