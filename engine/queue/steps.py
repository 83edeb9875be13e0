"""Step scanning: a log cut into the steps replay moves by (``105 … 106`` transactions and runs of
records outside one), each applied to a queue (``scan_steps``; replay's index in
engine.feeds.replay.index, the recorder in engine.record.recorder), with the plain-transaction
patterns the recorder's catch-up reads by (``PLAIN_TXN``, ``PLAIN_FIELDS``) and the verdict helpers
of ``record --once`` (``first_corrupt``, ``plain_end_ok``). Moved out of engine.queue.reader (the
loader), which it shares the record parser and the 101 pattern with.
"""

from __future__ import annotations

import re

from engine.gcpause import gc_paused
from engine.queue import records as R
from engine.queue.jobqueue import JobQueue
from engine.queue.reader import _NEW, BLANKS_OR_EMPTY
from engine.queue.records import Corrupt, parse_line
from engine.queue.timeline import STAMP


def step_record(line: str) -> tuple | str:
    """One complete line as replay reads it: a state record ``(op, key, name, value)`` (101:
    ``name`` MyType, ``value`` TargetType; 102/104: unused fields ""), ``"105"``/``"106"``/``"107"``
    for the step structure, or an ``"error: …"`` text for a line :func:`parse_line` rejects.

    Well-formed records (what real logs hold) take a fast path that splits the line as the fast
    loader does; anything else is parsed by :func:`parse_line` — one record parser, one set of
    messages. Values are not checked as ClassAd expressions here (replay keeps them as text and
    shows a log as far as it can). The structure lines are read leniently (``105`` without its
    blank is a 105) because a step boundary decides what replay shows, not what it stores."""
    parts = line.split(" ", 3)
    op = parts[0]
    n = len(parts)
    if op == "103":
        if n == 4 and parts[1] and parts[2] and parts[2].isprintable() and parts[3].strip():
            return (103, parts[1], parts[2], parts[3])
    elif op == "106":
        rest = line[3:].strip()
        if rest and not rest.startswith("#"):
            return "error: EndTransaction (106) must be followed by a newline or a # comment"
        return "106"
    elif op == "105":
        if line[3:].strip():
            return "error: BeginTransaction (105) must be followed by a newline"
        return "105"
    elif op == "101":
        m = _NEW(line)
        if m is not None:
            mt = m[4]
            return (101, m[1], R.my_type(mt), R.my_type(m[5]))
    elif op == "102":
        if n == 2 and parts[1] and parts[1].isprintable():
            return (102, parts[1], "", "")
    elif op == "104":
        if n == 3 and parts[1] and parts[2] and parts[2].isprintable():
            return (104, parts[1], parts[2], "")
    elif op == "107":
        return "107"
    rec = parse_line(line, validate=False)
    if isinstance(rec, Corrupt):
        return "error: " + rec.reason
    if rec.op == R.SET_ATTR and not rec.value.strip():
        return "error: 103 record has an empty value"
    if rec.op in (R.BEGIN_TXN, R.END_TXN, R.HIST_SEQ):  # odd blanks the fast path did not take
        return str(rec.op)
    return tuple(rec)


def scan_steps(data: bytes, start: int, end: int, queue: JobQueue, on_step, on_problem,
               first_line: int = 1) -> bool:
    """Read the records of ``data[start:end]`` and apply each committed *step* to ``queue``
    (``JobQueue.apply_quiet``): a 105 … 106 transaction at its 106, or a maximal run of records
    outside any transaction. A trailing transaction without its 106 is not applied (htcondor.md
    §3.3); corrupt lines are skipped and told to ``on_problem(line_no, message)``.

    ``on_step(step_start, step_end, line_no, records, end_line=None)`` is called after each step
    is applied (offsets absolute; ``end_line`` is the 106 line of a transaction).

    The cyclic garbage collector is paused for the scan (and resumed as it was): the scan makes
    a tuple per record and keeps a step's records alive, which is what starts the collector's
    full passes over the whole heap (a scan of the 0.5-day demo history spends about a third of
    its CPU in them, ``bench/scan_steps.py``), and it makes no cycles for the collector to find.

    Returns True when ``data[start:end]`` ends at a step boundary (its last step was committed or
    ended, no transaction is open and no record waits): a scan of ``data[start:end]`` and then
    one of ``data[end:e]`` give the same steps as one scan of ``data[start:e]``."""
    with gc_paused():
        return _scan_steps(data, start, end, queue, on_step, on_problem, first_line)


# A transaction of plain records only (most steps of a real log): matched whole, its records taken
# by one findall. Stricter than step_record's fast paths (keys, names and types visible ASCII, a
# value with a visible character; the 105/106 lines as the schedd writes them): what it does not
# match is read line by line, with the same result.
# One pass, nothing backtracked into: a value is its run of characters up to its first visible
# one, that one, and the rest of the line, each taken possessively (``*+``; a lookahead for the
# visible character read each value twice: the whole match cost 1.3x more). The records are
# taken atomically too (``(?>...)``), which changes no match: every alternative starts with a
# literal ``101 ``, ``102 `` or ``103 `` and group 2 with ``106``, so giving back whole records
# never lets group 2 match; and a record line matches in one way only (the alternatives'
# prefixes differ, each field's class stops at the space or newline after it). An atomic group,
# not ``(?:...)*+``: a possessive repeat of a group with alternatives matches wrongly on CPython
# 3.11.0-3.11.4 (gh-106052: it may keep a failed partial record), where ``(?>...)`` is right;
# 3.11.5 made ``x*+`` the same code as ``(?>x*)``. A possessive single class (``[!-~]++``) is right on both.
# groups: 1 the records, 2 the 106 line, 3 and 4 its stamp (``timeline.STAMP``) when the line is
# exactly ``106 <STAMP>``, as the schedd writes it (else None: ``timeline.parse_comment_time``)
PLAIN_TXN = re.compile(r"105 \n((?>(?:103 [!-~]++ [!-~]++ [^\n!-~]*+[!-~][^\n]*+\n|102 [!-~]++\n"
                       r"|101 [!-~]++ [!-~]++ [!-~]++\n)*))(106(?: (?:" + STAMP + r"(?=\n)|#[^\n]*)?)?)\n").match
PLAIN_FIELDS = re.compile(r"10([123]) ([!-~]+) ?([!-~]*) ?([^\n]*)\n").findall

# Runs of lines the schedd's reader (records.parse_line, validate=False) takes as they are
# written (the records of PLAIN_TXN without a NUL byte, a 104, 105 and 106 as the schedd writes
# them): first_corrupt parses only the lines after such a run.
_OWNER_PLAIN = re.compile(rb"(?:103 [!-~]+ [!-~]+ (?=[^\n]*[!-~])[^\n\0]*\n|102 [!-~]+\n|101 [!-~]+ [!-~]+ [!-~]+\n"
                          rb"|104 [!-~]+ [!-~]+\n|105 \n|106 (?:#[^\n\0]+)?\n)*").match


def first_corrupt(data: bytes, start: int, end: int) -> int | None:
    """The offset of the first complete line of ``data[start:end]`` that the schedd's reader finds
    corrupt (``records.parse_line`` with values not parsed: what ``load_log(validate=False)``
    stops at, htcondor.md §3.3), or None: how a reader that takes a log its own faster way (the
    recorder) tells that a log holds one, the case where the exit status needs ``load_log``'s
    verdict."""
    i = start
    while i < end:
        i = _OWNER_PLAIN(data, i, end).end()
        j = data.find(b"\n", i, end)
        if j < 0:
            return None
        if isinstance(parse_line(data[i:j].decode("utf-8", "surrogateescape"), validate=False), Corrupt):
            return i
        i = j + 1
    return None


def plain_end_ok(end_line: str) -> bool:
    """A ``PLAIN_TXN`` match's 106 line (group 2) is one the schedd's reader takes: ``106 `` or
    ``106 #`` and a comment (``records.parse_line``; PLAIN_TXN also matches ``106`` and
    ``106 #``). Every other line of a PLAIN_TXN match is, unless it holds a NUL byte."""
    return end_line == "106 " or (end_line[:5] == "106 #" and len(end_line) > 5)


def _scan_steps(data: bytes, start: int, end: int, queue: JobQueue, on_step, on_problem, first_line: int) -> bool:
    raw = data[start:end]
    ascii_only = raw.isascii()  # then characters are bytes: no per-line byte count, whole-step matches
    text = raw.decode("utf-8", "surrogateescape")
    del raw
    pos = start
    line_no = first_line
    pending: list = []  # records of the open transaction, or of the out-of-transaction run
    in_txn = False
    step_start = -1
    step_line = 0
    apply = queue.apply_quiet
    parse = step_record
    plain = PLAIN_TXN if ascii_only else None
    fields = PLAIN_FIELDS
    plain_records = R.plain_records
    n = len(text)
    i = 0  # character offset of the line in text
    while i <= n:
        if plain is not None and not in_txn:
            m = plain(text, i)
            if m is not None:
                if pending:  # an out-of-transaction run ends here
                    apply(pending)
                    if on_step:
                        on_step(step_start, pos, step_line, pending)
                    pending = []
                body = m.group(1)
                records = plain_records(fields(body))
                apply(records)
                j = m.end()
                if on_step:
                    on_step(pos, pos + j - i, line_no, records, m.group(2))
                pos += j - i
                line_no += body.count("\n") + 2
                i = j
                continue
        j = text.find("\n", i)
        if j < 0:
            j = n
        line = text[i:j]
        nbytes = j - i + 1 if ascii_only or line.isascii() else len(line.encode("utf-8", "surrogateescape")) + 1
        i = j + 1
        if line:
            if line[:4] == "103 ":  # step_record's fast path for the commonest record, inlined
                parts = line.split(" ", 3)
                if (len(parts) == 4 and parts[1] and parts[2] and parts[2].isprintable()
                        and (parts[3][:1] not in BLANKS_OR_EMPTY or parts[3].strip())):
                    if not pending and not in_txn:
                        step_start, step_line = pos, line_no
                    pending.append((103, parts[1], parts[2], parts[3]))
                    pos += nbytes
                    line_no += 1
                    continue
            rec = parse(line)
            if rec.__class__ is tuple:
                if not pending and not in_txn:
                    step_start, step_line = pos, line_no
                pending.append(rec)
            elif rec == "105":
                if in_txn:
                    if on_problem:
                        on_problem(line_no, "warning: nested BeginTransaction (105) ignored")
                else:
                    if pending:  # an out-of-transaction run ends here
                        apply(pending)
                        if on_step:
                            on_step(step_start, pos, step_line, pending)
                        pending = []
                    in_txn = True
                    step_start, step_line = pos, line_no
            elif rec == "106":
                if in_txn:
                    apply(pending)
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
        apply(pending)
        if on_step:
            on_step(step_start, end, step_line, pending)
    elif in_txn and on_problem:
        on_problem(step_line, "warning: the last transaction has no EndTransaction (106); it is not applied")
    return not pending and not in_txn
