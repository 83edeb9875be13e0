"""A job_queue.log written step by step from a recording, compacted as the schedd compacts it.

Compaction is ``engine.queue.writer.QueueLogWriter.compact`` (htcondor.md §3.4,
``TruncateClassAdLog`` in src/condor_utils/classad_log.cpp): hard-link to ``<log>.<seq>``,
unlink ``<log>.<seq - MAX_JOB_QUEUE_LOG_ROTATIONS>``, write ``107 <seq+1>`` + the live ads to
``<log>.tmp``, rename over the log. Steps are cut by ``engine.queue.steps.scan_steps``.
"""

from __future__ import annotations

import functools
from pathlib import Path

from engine.queue.jobqueue import JobQueue
from engine.queue.steps import scan_steps
from engine.queue.writer import QueueLogWriter
from engine.record.state import read_head


class _Sink:
    @staticmethod
    def apply_quiet(records):
        return 0


@functools.lru_cache(maxsize=2)
def steps_of(data: bytes) -> tuple[bytes, list[tuple[bytes, list]]]:
    """(the 107 line, [(raw text, records)] of every step after it)."""
    header_end = data.find(b"\n") + 1
    out: list = []
    scan_steps(data, header_end, data.rfind(b"\n") + 1, _Sink(),
               lambda s, e, _l, recs, _end=None: out.append((data[s:e], recs)), None)
    return data[:header_end], out


class ScheddLog:
    """The recording's steps appended to ``path`` on demand; ``compact()`` rotates."""

    def __init__(self, path: Path, data: bytes, max_rotations: int = 1) -> None:
        self.path = Path(path)
        header, self.steps = steps_of(data)  # cached: the tests cut the same recording
        self.path.write_bytes(header)
        head = read_head(self.path)
        self.seq, self.created = head.seq, head.created
        self.queue = JobQueue()
        self.done = 0
        self.max_rotations = max_rotations

    def advance(self, n: int) -> int:
        """Append the next ``n`` steps (one write); returns how many were appended."""
        chunk = self.steps[self.done: self.done + n]
        with open(self.path, "ab") as fh:
            fh.write(b"".join(raw for raw, _ in chunk))
        for _raw, recs in chunk:
            self.queue.apply_quiet(recs)
        self.done += len(chunk)
        return len(chunk)

    def compact(self) -> None:
        writer = QueueLogWriter(self.path, seq=self.seq, created=self.created, max_rotations=self.max_rotations)
        assert writer.compact(self.queue)
        writer.close()
        self.seq += 1

    @property
    def finished(self) -> bool:
        return self.done >= len(self.steps)
