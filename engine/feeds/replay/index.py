"""Index a recorded ``job_queue.log`` once, then rebuild the queue at any step fast.

Format facts: htcondor.md §3.1 (records), §3.2 (transactions, ``106 #`` comments), §3.3 (the
owner's reading rules). Design decisions and invariants:

- A *step* is what replay moves by: one committed transaction (105 … 106, applied at its 106,
  §3.3), or a maximal run of records written outside any transaction (the compacted body after a
  rotation, a header written at init, the lone ``103 0.0 NextClusterNum`` of a real log). A 107
  alone is not a step. ``seek(i)`` gives the state after applying steps ``0..i``; ``-1`` is the
  empty queue before the first step.
- A trailing transaction without its 106, and an unterminated last line, are not steps (§3.3:
  the schedd discards them). A NUL byte ends the log (§3.1).
- One queue model, one parser: the state at a step is an ``engine.queue.jobqueue.JobQueue`` (the
  model ``queue`` and watch's follower fill: case-insensitive attribute names, proc ads chained to
  their cluster ad, 25.x record kinds kept apart from jobs), filled by
  ``engine.queue.steps.scan_steps``, which reads lines with the reader's record parser
  (``step_record``: the fast loader's split for well-formed records, ``records.parse_line`` for
  everything else) and applies each step with ``JobQueue.apply_quiet`` (``apply``'s semantics).
- Departure from the schedd (documented): a corrupt record (unknown op code, missing fields, an
  empty value) is skipped with a :class:`Problem` naming the line, and reading goes on, also
  inside a closed transaction where the schedd would EXCEPT — a replay should show as much of an
  incident's log as it can. Values are not parsed as ClassAd expressions here (that would cost
  ~7 µs × every record); they stay text, as everywhere in the engine.
- One pass reads the whole file and applies nothing: per step the byte offsets of its first
  record and of its end, its time (see :mod:`engine.queue.timeline`) and its first line number,
  and every ``every`` records (at a step boundary) a *planned checkpoint* (``plan``). A
  checkpoint (a copy-on-write fork of the queue, ``JobQueue.fork``) is built by the first seek
  that needs it and kept (``built``): from the nearest built one when that re-reads less than
  half the log up to it; else, when the index pass found no problem, by the loader's fast path on
  the bytes up to its step (``reader.committed_state``, the owner's rules: on a log without
  problems the same state, about twice as fast per record; it gives up on anything replay reads
  leniently, such as a SetAttribute of an unknown ad); else interval by interval. Seeking forks
  the nearest planned checkpoint at or before the target and re-reads at most ``every``
  records' bytes, so a warm seek costs O(every) record applications plus one shallow copy of
  the key tables, and the first seek to a far moment costs one fast load of the log up to it.
- Copy-on-write: a fork shares every per-key attribute dict between the two queues and both
  forget ownership; the first write to a key after that copies its dict. A checkpoint therefore
  costs the key tables plus the ads changed since the previous one.
- Semantics of single records (``JobQueue.apply``): ``101`` on an existing key keeps the existing
  ad; ``102``/``103``/``104`` on a missing key are ignored; ``103`` replaces the value, ``104``
  removes it.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from engine.queue.jobqueue import JobQueue
from engine.queue.reader import committed_state
from engine.queue.steps import scan_steps, step_record
from engine.queue.timeline import TIME_ATTRS, TimeInference

DEFAULT_EVERY = 25_000  # records between checkpoints; a seek re-applies at most this many (bench/replay.py;
# issue 30: 50,000 gave a seek max of 2.2x its median, 25,000 halves both for ~50 MB more RSS on 1 M records)


@dataclass(frozen=True)
class Problem:
    line: int
    message: str

    def where(self, path: str) -> str:
        return f"{path}:{self.line}: {self.message}"


# A parsed record: (op, key, name, value), as ``engine.queue.steps.step_record`` gives it.
Record = tuple


@dataclass
class LogIndex:
    """Steps of one recorded log, their times, and checkpoints of the queue state."""

    path: str
    data: bytes  # the file up to its last complete line (kept: seeks re-read from it)
    starts: array  # byte offset of each step's first record
    ends: array  # byte offset just after each step's last line
    lines: array  # 1-based line number of each step's first record
    times: array  # epoch seconds of each step (non-decreasing)
    sources: bytearray  # per step: timeline.COMMENT / SET / CARRIED
    plan: list  # step indices where checkpoints go (-1 first): one every ``every`` records
    problems: list = field(default_factory=list)
    records: int = 0
    creation_timestamp: float | None = None
    sequence: int | None = None
    has_comments: bool = False
    # byte offset of the file's first NUL byte (``data`` stops before its line), -1 when it has none: with
    # ``data`` (its whole lines otherwise) it tells what the schedd's reading of the file sees
    # (engine.cli.replay.log_status reads the verdict from them, not from the file again)
    nul: int = -1
    # checkpoints built so far, by step (built on the first seek that needs them); never
    # written after being stored: each seek forks one
    built: dict = field(default_factory=lambda: {-1: JobQueue()})
    # the state of step 0 when that step has no text (``build_index(start=…)``: a window's start
    # state, handed over as a queue instead of written out and read again); else None
    head: JobQueue | None = None
    # ``build_index(keep_records=True)``: (records, 106 line or None) of each step the index's pass
    # read, in order (a window's: its history applies them instead of reading the text again, then
    # drops them, engine.feeds.replay.stats). The pass reads no text for a ``head``: then
    # ``step_records[i]`` is step ``i + 1`` (``len == steps - 1``), else step ``i``.
    # ``iter_step_records`` reads the text, not these.
    step_records: list | None = None

    @property
    def checkpoints(self) -> list:
        """[(step, JobQueue)] of the checkpoints built so far, in step order."""
        return sorted(self.built.items(), key=lambda kv: kv[0])

    @property
    def steps(self) -> int:
        return len(self.ends)

    def state_at(self, step: int) -> JobQueue:
        """A fresh state after applying steps ``0..step`` (``-1``: the empty queue)."""
        if step < -1 or step >= self.steps:
            raise IndexError(f"step {step} outside -1..{self.steps - 1}")
        cp_step = self.plan[bisect_right(self.plan, step) - 1]
        state = self._checkpoint(cp_step).fork()
        if step > cp_step:
            self.advance(state, cp_step, step)
        return state

    def _checkpoint(self, cp_step: int) -> JobQueue:
        """The checkpoint at planned step ``cp_step``, built now if needed: from the nearest
        built one, interval by interval, when that re-reads less than half the log up to it; else,
        on a log the index pass found no problem in, by the fast loader on the bytes up to the step
        (``reader.committed_state``: the same state, htcondor.md §3.3, about twice as fast per
        record as the step scanner); else interval by interval all the same."""
        q = self.built.get(cp_step)
        if q is not None:
            return q
        plan = self.plan
        j = bisect_right(plan, cp_step) - 1
        below = max(s for s in self.built if s < cp_step)
        k = plan.index(below)
        # walking costs about twice per record what the fast loader does, and reads only the
        # intervals after ``below``; the fast loader reads everything up to ``cp_step``
        if 2 * (j - k) > j and not self.problems and self.head is None:
            q = committed_state(self.data[: self.ends[cp_step]])
            if q is not None:
                self.built[cp_step] = q
                return q
        state = self.built[below]
        for nxt in plan[k + 1 : j + 1]:
            state = state.fork()
            self.advance(state, below, nxt)
            self.built[nxt] = state
            below = nxt
        return state

    def build_next_checkpoint(self) -> bool:
        """Build the first planned checkpoint not built yet (one interval from the one before it,
        as a seek would); False when every one is built. The replay feed calls it while the
        runtime is idle (issue 30), so that a seek later never walks several intervals: a seek then
        costs at most ``every`` records."""
        for step in self.plan:
            if step not in self.built:
                self._checkpoint(step)
                return True
        return False

    def advance(self, state: JobQueue, frm: int, to: int,
                on_records: Callable[[list], None] | None = None) -> None:
        """Apply steps ``frm+1..to`` to ``state`` (which must be the state after ``frm``, and
        ``frm`` ≥ 0 when step 0 is a ``head``);
        ``on_records(records)`` sees each applied step's records (the jobs table's dirty keys)."""
        if to <= frm:
            return
        if frm < 0 and self.head is not None:
            raise ValueError("step 0 is a state given as a queue (head): advance from it, not from before it")
        start = self.ends[frm] if frm >= 0 else self.starts[0]
        on_step = None if on_records is None else (lambda _s, _e, _l, records, _end=None: on_records(records))
        scan_steps(self.data, start, self.ends[to], state, on_step, None)

    def step_at_time(self, t: float) -> int:
        """The last step whose time is ≤ ``t`` (``-1`` if ``t`` is before the first)."""
        return bisect_right(self.times, t) - 1

    def describe_step(self, step: int) -> str:
        """The raw lines of one step (for a 'what happened here' pane)."""
        return self.data[self.starts[step]:self.ends[step]].decode("utf-8", "replace")


class _Discard:
    """Stands in for the queue ``scan_steps`` applies steps to: the index pass keeps nothing."""

    __slots__ = ()

    @staticmethod
    def apply_quiet(records: list) -> int:
        return 0


def build_index(path: str | os.PathLike, every: int = DEFAULT_EVERY, tz: str | None = None,
                data: bytes | None = None, start: JobQueue | None = None, follow: Any = None,
                keep_records: bool = False) -> LogIndex:
    """Read ``path`` once and index it (see the module docstring). ``start``: the state step 0
    holds, given as a queue (never written to: checkpoint 0, forked by each seek) when ``data``
    is only the ``107`` line and the transactions after that state — the index is the one the
    state's compacted body written after the ``107`` line would give (its step 0 has no text).
    ``follow`` (not with ``start``): a reader that wants every step applied, in the same pass —
    its ``state`` (a ``JobQueue``) is where the scan applies each step, and its
    ``on_step(records)`` is called after each (``replay --reroute``'s reading of the recording,
    ``engine.feeds.replay.reroute.RecordingScan``: the log is parsed once, not twice).
    ``keep_records``: the records of each step read are kept (``LogIndex.step_records``; a
    window's, for its one history pass)."""
    if follow is not None and start is not None:
        raise ValueError("build_index: follow applies steps from the empty queue; not with start")
    path = os.fspath(path)
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    problems: list[Problem] = []
    nul = data.find(b"\0")
    if nul >= 0:
        problems.append(Problem(data.count(b"\n", 0, nul) + 1, "error: NUL byte; the log is read up to it"))
        data = data[:nul]
    last_nl = data.rfind(b"\n") + 1
    if last_nl < len(data):
        problems.append(Problem(data.count(b"\n") + 1,
                                "warning: unterminated last line (a torn write); it is not applied"))
        data = data[:last_nl]
    creation = sequence = None
    first = data[: data.find(b"\n")] if data else b""
    if first.startswith(b"107 "):
        words = first.split()
        try:
            sequence = int(words[1])
            creation = float(words[3])
        except (IndexError, ValueError):
            problems.append(Problem(1, "error: malformed LogHistoricalSequenceNumber (107)"))
    elif data:
        problems.append(Problem(1, "warning: the first record is not a LogHistoricalSequenceNumber (107)"))

    timing = TimeInference(creation, tz)
    starts, ends, lines = array("q"), array("q"), array("q")
    plan = [-1]
    counter = [0, 0]  # records since the last planned checkpoint, total records
    # nothing is applied here (checkpoints are built by the seeks that need them), except to a follower's state
    sink = _Discard() if follow is None else follow.state
    then = None if follow is None else follow.on_step
    kept: list | None = [] if keep_records else None

    def on_step(s: int, e: int, line_no: int, records: list, end_line: str | None = None) -> None:
        starts.append(s)
        ends.append(e)
        lines.append(line_no)
        timing.add_step(records, end_line)
        counter[0] += len(records)
        counter[1] += len(records)
        if counter[0] >= every:
            plan.append(len(ends) - 1)
            counter[0] = 0
        if then is not None:
            then(records)
        if kept is not None:
            kept.append((records, end_line))

    def on_problem(line_no: int, message: str) -> None:
        problems.append(Problem(line_no, message))

    begin = 0
    if start is not None and start.table:
        begin = data.find(b"\n") + 1  # after the 107 line
        dated, count = _head_records(start)
        starts.append(begin)
        ends.append(begin)
        lines.append(2)
        timing.add_step(dated, None)
        counter[0] += count
        counter[1] += count
        if counter[0] >= every:
            plan.append(0)
            counter[0] = 0
    scan_steps(data, begin, len(data), sink, on_step, on_problem)  # type: ignore[arg-type]
    times, sources = timing.finish()
    problems.sort(key=lambda p: p.line)
    index = LogIndex(path=path, data=data, starts=starts, ends=ends, lines=lines, times=times,
                     sources=sources, plan=plan, problems=problems, records=counter[1],
                     creation_timestamp=creation, sequence=sequence, has_comments=timing.comments > 0,
                     nul=nul, step_records=kept)
    if begin:
        index.head = start
        index.built[0] = start
        if 0 not in plan:
            plan.insert(1, 0)
    return index


def _head_records(state: JobQueue) -> tuple[list, int]:
    """Of the compacted body of ``state`` (a ``101`` and the ``103``s of each ad): the ``103``s
    of time attributes (all that dates a step) and how many records it has. A queue spells each
    attribute one way in all its ads (``JobQueue.spelling``): the time attributes are looked up by
    that spelling, not found by lower-casing every name of every ad."""
    names = [n for n in map(state.spelling, TIME_ATTRS) if n is not None]
    times, count = [], 0
    for key, attrs in state.table.items():
        count += 1 + len(attrs)
        times.extend((103, key, n, v) for n in names if (v := attrs.get(n)) is not None)
    return times, count


def iter_step_records(index: LogIndex, step: int) -> Iterator[Record]:
    """The state-changing records of one step, parsed (for re-route and the step pane)."""
    text = index.describe_step(step)
    for line in text.split("\n"):
        rec = step_record(line) if line else None
        if rec.__class__ is tuple:
            yield rec
