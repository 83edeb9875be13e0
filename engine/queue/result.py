"""What a load of job_queue.log returns: the problems found and where reading stopped.

Design decisions and invariants:

- A :class:`Problem` names the file, the 1-based record number (one record per line), the byte
  offset of the start of that record's line, and what is wrong. For a corrupt record,
  ``condor_offset`` is the offset HTCondor's own message prints (just after the op word and its
  blank, ``InstantiateLogEntry``), so the two can be compared (htcondor.md §6 "job_queue.log: facts",
  the ZMG example: record 5, byte offset 89).
- Severities: ``fatal`` — the schedd would refuse to start (corrupt record inside a committed
  transaction, htcondor.md §3.3) or the router would assert (§3.5); ``error`` — records were dropped
  (torn write, unfinished transaction, unterminated line); ``warning`` — HTCondor goes on (nested 105,
  106 without 105, 107 not first, unknown key, unparsable value in a follower).
- Loading never raises on bad input: the state is the last good one, the problems say what was
  skipped.
- A file without a single valid record that holds anything but blanks (binary garbage, some
  other file) is not a job queue log at all; :meth:`LoadResult.not_a_log` says so in one line, and
  commands that read a finished log refuse it (exit 2) instead of showing an empty queue.
- An empty file, or one of blank characters only (``blank``), is an empty queue, as the schedd
  reads it: ``LoadClassAdLog`` (src/condor_utils/classad_log.cpp) reads no record there
  (``LogRecord::readword`` in log.cpp gives up at a newline with no word before it), and having
  read none (``!count``) writes a fresh 107 and starts with no job. A log holding only its 107
  record is an empty queue too (a brand-new log, htcondor.md §3.4). :meth:`LoadResult.no_record`
  says so in one line. A follower of a live schedd waits for the first record instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OWNER = "owner"  # the schedd's rules at startup (htcondor.md §3.3)
FOLLOW = "follow"  # the job router's follower rules (htcondor.md §3.5)

MAX_PROBLEMS = 200


@dataclass(frozen=True)
class Problem:
    file: str
    record: int
    offset: int
    message: str
    severity: str = "error"
    condor_offset: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}: record {self.record} (byte offset {self.offset})"
        return f"{where}: {self.severity}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        d = {"file": self.file, "record": self.record, "offset": self.offset,
             "severity": self.severity, "message": self.message}
        if self.condor_offset is not None:
            d["condor_offset"] = self.condor_offset
        return d


@dataclass
class LoadResult:
    queue: Any  # engine.queue.jobqueue.JobQueue
    problems: list[Problem] = field(default_factory=list)
    records: int = 0  # complete records read (including 105/106/107)
    next_offset: int = 0  # where a follower continues: the first byte not consumed
    probe: tuple[int, bytes] | None = None  # (offset, raw line) of the last consumed record
    clean: bool = True  # no 105 seen: the log was compacted or cleanly closed
    needs_rotation: bool = False  # torn tail, unfinished transaction or corrupt record
    fatal: bool = False
    dropped_problems: int = 0
    source: str = ""  # the file name problems use
    size: int = -1  # bytes read; -1 when the file could not be read
    blank: bool = False  # no record, and nothing but blank characters (an empty queue: module docstring)

    def not_a_log(self) -> str | None:
        """One line saying why the input holds no job queue log at all, or None when it has at
        least one valid record, is empty or blank (an empty queue: :meth:`no_record`), or could
        not be read (that problem is reported already)."""
        if self.size <= 0 or self.records or self.blank:
            return None
        first = self.problems[0] if self.problems else None
        where = f"{self.source}:{first.record}" if first else self.source
        why = f" ({first.message.split(';')[0]})" if first else ""
        return f"{where}: not a job queue log: no valid record{why}"

    def no_record(self) -> str | None:
        """One line saying that the file holds no record and is read as an empty queue (the
        schedd's reading, module docstring), or None when it has a record or is not a log."""
        if self.records or self.size < 0 or (self.size and not self.blank):
            return None
        what = "empty" if self.size == 0 else "blank"
        return (f"{self.source}: the file is {what}: an empty queue (the schedd reads no record and "
                "starts the log with a new 107 record)")

    def add(self, problem: Problem) -> None:
        if problem.severity == "fatal":
            self.fatal = True
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(problem)
        else:
            self.dropped_problems += 1
