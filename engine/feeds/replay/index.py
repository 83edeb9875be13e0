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
- Departure from the schedd (documented): a corrupt record (unknown op code, missing fields, an
  empty value) is skipped with a :class:`Problem` naming the line, and reading goes on, also
  inside a closed transaction where the schedd would EXCEPT — a replay should show as much of an
  incident's log as it can. Values are not parsed as ClassAd expressions here (that would cost
  ~7 µs × every record); they stay text, as everywhere in the engine.
- One pass reads the whole file: per step the byte offsets of its first record and of its end,
  its time (see :mod:`engine.queue.timeline`) and its first line number; every ``every``
  records (at a step boundary) a *checkpoint*: a copy-on-write copy of the queue state.
  Seeking restores the nearest checkpoint at or before the target and re-reads at most
  ``every`` records' bytes from the kept file contents, so a seek costs O(every) record
  applications plus one shallow copy of the key → ad dict.
- Copy-on-write: :meth:`QueueState.copy` shares every per-key attribute dict between the two
  states and forgets ownership in both; the first write to a key after that copies its dict.
  A checkpoint therefore costs one outer dict plus the ads changed since the previous one.
- Semantics of single records (the same as the owner's ``Play``): ``101`` on an existing key
  keeps the existing ad; ``102``/``103``/``104`` on a missing key are ignored (counted in
  ``ignored``); ``103`` replaces the value, ``104`` removes it.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Callable, Iterator

from engine.queue.records import canonical_name, record_kinds
from engine.queue.timeline import TimeInference

DEFAULT_EVERY = 50_000  # records between checkpoints; a seek re-applies at most this many (bench/replay.py)


@dataclass(frozen=True)
class Problem:
    line: int
    message: str

    def where(self, path: str) -> str:
        return f"{path}:{self.line}: {self.message}"


class QueueState:
    """The recorded queue: key → {attribute: value text}, key → MyType. Copy-on-write."""

    __slots__ = ("ads", "types", "_owned", "ignored")

    def __init__(self, ads: dict | None = None, types: dict | None = None) -> None:
        self.ads: dict[str, dict[str, str]] = ads if ads is not None else {}
        self.types: dict[str, str] = types if types is not None else {}
        self._owned: set[str] = set()
        self.ignored = 0

    def copy(self) -> "QueueState":
        """An independent state; both sides copy a shared ad on their first write to it."""
        other = QueueState(dict(self.ads), dict(self.types))
        other.ignored = self.ignored
        self._owned.clear()
        return other

    def new_ad(self, key: str, mytype: str) -> None:
        if key not in self.ads:
            self.ads[key] = {}
            self.types[key] = mytype
            self._owned.add(key)

    def destroy(self, key: str) -> None:
        if self.ads.pop(key, None) is None:
            self.ignored += 1
        self.types.pop(key, None)
        self._owned.discard(key)

    def _own(self, key: str) -> dict[str, str] | None:
        ad = self.ads.get(key)
        if ad is None:
            self.ignored += 1
            return None
        if key not in self._owned:
            ad = dict(ad)
            self.ads[key] = ad
            self._owned.add(key)
        return ad

    def set(self, key: str, name: str, value: str) -> None:
        ad = self._own(key)
        if ad is not None:
            ad[canonical_name(name)] = value  # case-insensitive names, as JobQueue

    def delete(self, key: str, name: str) -> None:
        ad = self._own(key)
        if ad is not None:
            ad.pop(canonical_name(name), None)

    def record_kinds(self) -> dict[str, int]:
        """Non-job records held, by kind (``engine.queue.records.record_kinds``)."""
        return record_kinds(self.types.items())

    def same_as(self, other: "QueueState") -> bool:
        return self.ads == other.ads and self.types == other.types


# A parsed record: (op, key, name, value); op 101 carries MyType in ``name``.
Record = tuple


def _parse(line: str) -> Record | str:
    """One record line → a record tuple, ``"105"``/``"106"``/``"107"``, or an error text."""
    op = line[:3]
    if op == "103":
        parts = line[4:].split(" ", 2)
        if len(parts) < 3 or line[3:4] != " ":
            return "error: SetAttribute (103) needs a key, a name and a value"
        if not parts[2].strip():
            return "error: SetAttribute (103) with an empty value"
        return (103, parts[0], parts[1], parts[2])
    if op == "106":
        rest = line[3:].strip()
        if rest and not rest.startswith("#"):
            return "error: EndTransaction (106) must be followed by a newline or a # comment"
        return "106"
    if op == "105":
        if line[3:].strip():
            return "error: BeginTransaction (105) must be followed by a newline"
        return "105"
    if line[3:4] not in (" ", "\t"):
        return f"error: unknown record {line[:20]!r}"
    words = line[4:].split()
    if op == "101":
        if len(words) < 2:
            return "error: NewClassAd (101) needs a key, a MyType and a TargetType"
        mytype = words[1]
        return (101, words[0], "" if mytype == "(empty)" else mytype, None)
    if op == "102":
        if len(words) < 1:
            return "error: DestroyClassAd (102) needs a key"
        return (102, words[0], None, None)
    if op == "104":
        if len(words) < 2:
            return "error: DeleteAttribute (104) needs a key and a name"
        return (104, words[0], words[1], None)
    if op == "107":
        return "107"
    return f"error: unknown op code {op!r}"


def _apply(state: QueueState, records: list) -> None:
    for op, key, name, value in records:
        if op == 103:
            state.set(key, name, value)
        elif op == 101:
            state.new_ad(key, name)
        elif op == 102:
            state.destroy(key)
        else:
            state.delete(key, name)


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
    checkpoints: list  # [(step index, QueueState)], first (-1, empty)
    problems: list = field(default_factory=list)
    records: int = 0
    creation_timestamp: float | None = None
    sequence: int | None = None
    has_comments: bool = False

    @property
    def steps(self) -> int:
        return len(self.ends)

    def state_at(self, step: int) -> QueueState:
        """A fresh state after applying steps ``0..step`` (``-1``: the empty queue)."""
        if step < -1 or step >= self.steps:
            raise IndexError(f"step {step} outside -1..{self.steps - 1}")
        i = bisect_right(self._cp_steps, step) - 1
        cp_step, cp_state = self.checkpoints[i]
        state = cp_state.copy()
        if step > cp_step:
            self.advance(state, cp_step, step)
        return state

    def advance(self, state: QueueState, frm: int, to: int,
                on_records: Callable[[list], None] | None = None) -> None:
        """Apply steps ``frm+1..to`` to ``state`` (which must be the state after ``frm``);
        ``on_records(records)`` sees each applied step's records (the jobs table's dirty keys)."""
        if to <= frm:
            return
        start = self.ends[frm] if frm >= 0 else self.starts[0]
        on_step = None if on_records is None else (lambda _s, _e, _l, records, _end=None: on_records(records))
        _scan(self.data, start, self.ends[to], state, on_step, None)

    def step_at_time(self, t: float) -> int:
        """The last step whose time is ≤ ``t`` (``-1`` if ``t`` is before the first)."""
        return bisect_right(self.times, t) - 1

    @property
    def _cp_steps(self) -> list[int]:
        cps = self.__dict__.get("_cps")
        if cps is None or len(cps) != len(self.checkpoints):
            cps = [s for s, _ in self.checkpoints]
            self.__dict__["_cps"] = cps
        return cps

    def describe_step(self, step: int) -> str:
        """The raw lines of one step (for a 'what happened here' pane)."""
        return self.data[self.starts[step]:self.ends[step]].decode("utf-8", "replace")


def _scan(data: bytes, start: int, end: int, state: QueueState,
          on_step: Callable[[int, int, int, list], None] | None,
          on_problem: Callable[[int, str], None] | None, first_line: int = 1) -> None:
    """Read records of ``data[start:end]`` applying committed steps to ``state``.

    ``on_step(step_start, step_end, line_no, records)`` is called after each step is applied
    (the index pass uses it for times and checkpoints). Offsets are absolute.
    """
    text = data[start:end].decode("utf-8", "surrogateescape")
    pos = start
    line_no = first_line
    pending: list = []  # records of the open transaction, or of the out-of-transaction run
    in_txn = False
    step_start = -1
    step_line = 0
    for line in text.split("\n"):
        nbytes = len(line.encode("utf-8", "surrogateescape")) + 1 if not line.isascii() else len(line) + 1
        if line:
            rec = _parse(line)
            if rec.__class__ is tuple:
                if not pending:
                    if not in_txn:
                        step_start, step_line = pos, line_no
                pending.append(rec)
            elif rec == "105":
                if in_txn:
                    if on_problem:
                        on_problem(line_no, "warning: nested BeginTransaction (105) ignored")
                else:
                    if pending:  # an out-of-transaction run ends here
                        _apply(state, pending)
                        if on_step:
                            on_step(step_start, pos, step_line, pending)
                        pending = []
                    in_txn = True
                    step_start, step_line = pos, line_no
            elif rec == "106":
                if in_txn:
                    _apply(state, pending)
                    if on_step:
                        on_step(step_start, pos + nbytes, step_line, pending, line)
                    pending = []
                    in_txn = False
                elif on_problem:
                    on_problem(line_no, "warning: EndTransaction (106) without a BeginTransaction")
            elif rec == "107":
                if on_problem and line_no != 1:
                    on_problem(line_no, "warning: LogHistoricalSequenceNumber (107) is not the first record")
            elif on_problem:
                on_problem(line_no, rec)
        pos += nbytes
        line_no += 1
    if pending and not in_txn:
        _apply(state, pending)
        if on_step:
            on_step(step_start, end, step_line, pending)
    elif in_txn and on_problem:
        on_problem(step_line, "warning: the last transaction has no EndTransaction (106); it is not applied")


def build_index(path: str | os.PathLike, every: int = DEFAULT_EVERY, tz: str | None = None,
                data: bytes | None = None) -> LogIndex:
    """Read ``path`` once and index it (see the module docstring)."""
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
    state = QueueState()
    checkpoints: list = [(-1, QueueState())]
    counter = [0, 0]  # records since the last checkpoint, total records

    def on_step(s: int, e: int, line_no: int, records: list, end_line: str | None = None) -> None:
        starts.append(s)
        ends.append(e)
        lines.append(line_no)
        timing.add_step(records, end_line)
        counter[0] += len(records)
        counter[1] += len(records)
        if counter[0] >= every:
            checkpoints.append((len(ends) - 1, state.copy()))
            counter[0] = 0

    def on_problem(line_no: int, message: str) -> None:
        problems.append(Problem(line_no, message))

    _scan(data, 0, len(data), state, on_step, on_problem)
    times, sources = timing.finish()
    problems.sort(key=lambda p: p.line)
    return LogIndex(path=path, data=data, starts=starts, ends=ends, lines=lines, times=times,
                    sources=sources, checkpoints=checkpoints, problems=problems, records=counter[1],
                    creation_timestamp=creation, sequence=sequence, has_comments=timing.comments > 0)


def iter_step_records(index: LogIndex, step: int) -> Iterator[Record]:
    """The state-changing records of one step, parsed (for re-route and the step pane)."""
    text = index.describe_step(step)
    for line in text.split("\n"):
        rec = _parse(line) if line else None
        if rec.__class__ is tuple:
            yield rec
