"""The record-at-a-time loader: HTCondor's reading rules written out plainly.

Design decisions and invariants:

- This is the reference for both rule sets; ``reader.py``'s fast path must give the same state
  and problems, and falls back to this module whenever it meets anything unusual (tests compare
  the two on generated logs).
- Owner rules (``LoadClassAdLog``, htcondor.md §3.3): records between 105 and 106 are buffered and
  applied at the 106; a nested 105 or an unmatched 106 is a warning; a 107 that is not first is a
  warning; at a corrupt record the rest of the file is ignored, fatally so if any later line starts
  with op 106 (the schedd EXCEPTs); an unfinished trailing transaction and an unterminated last
  line are discarded and mark the log as needing a rotation.
- Departure (RouteDeck decision): a 103 whose value does not parse (strict parsing) is *not* a
  corrupt record for the owner. Its raw text is kept as the attribute's value (it evaluates to
  ``error``, as the python bindings' LogReader gives it, htcondor.md §6) with a warning naming
  the job, attribute and line; the transaction around it applies. HTCondor with strict parsing
  would EXCEPT (inside a committed transaction) or drop the rest of the file; with
  ``CLASSAD_LOG_STRICT_PARSING = false`` it warns and goes on (``classad_log.cpp``
  ``LogSetAttribute::ReadBody``). One bad value must not hide every good job around it.
- Follower rules (``ClassAdLogReader``/``ClassAdLogParser``, §3.5): 105/106/107 are no-ops and every
  complete record is applied at once; an unparsable value or an unknown key is reported and
  ignored; a structurally corrupt record stops the pass there (it is read again at the next poll)
  unless a 106 follows, where HTCondor's router asserts — RouteDeck reports it as fatal and skips
  the line so a dashboard keeps following. A partial last line is simply not consumed yet.
"""

from __future__ import annotations

import re

from engine.queue import records as R
from engine.queue.records import Corrupt, parse_line
from engine.queue.result import FOLLOW, LoadResult, Problem

_LEADING_INT = re.compile(rb"\s*([-+]?\d+)")


def _op_of(raw: bytes) -> int | None:
    """The op as ``sscanf(line, "%d ")`` sees it when HTCondor scans past a corrupt record."""
    m = _LEADING_INT.match(raw)
    if not m:
        return None
    try:
        return int(m[1])
    except ValueError:
        return None


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def corrupt_problem(source: str, recno: int, offset: int, line: str, bad: Corrupt, fatal: bool,
                    mode: str) -> Problem:
    condor_offset = offset + len(line[: bad.op_end].encode("utf-8", "surrogateescape"))
    if mode == FOLLOW:
        tail = ("a 106 follows, where HTCondor's router would assert; skipped" if fatal else
                "the follower stops here and reads it again at the next poll")
    else:
        tail = ("it is inside a committed transaction (a 106 follows): the schedd would refuse to "
                "start; the state before its transaction is kept" if fatal else
                "treated as a torn write: it and everything after it are ignored")
    return Problem(source, recno, offset, f"corrupt record: {bad.reason}; {tail}",
                   "fatal" if fatal else "error", condor_offset)


def load_reference(data: bytes, queue, source: str, mode: str, validate: bool = True) -> LoadResult:
    """Fill ``queue`` (already reset, inside a reload batch) from ``data``."""
    res = LoadResult(queue)
    lines = data.split(b"\n")
    tail = lines.pop()
    last106 = -1
    for i in range(len(lines) - 1, -1, -1):
        if lines[i][:1] in b" \t\v\f\r+-0123456789" and _op_of(lines[i]) == R.END_TXN:
            last106 = i
            break
    if mode == FOLLOW:
        _follow(lines, last106, queue, res, source, validate)
    else:
        _owner(lines, tail, last106, queue, res, source, validate)
    return res


def _owner(lines, tail, last106, queue, res, source, validate) -> None:
    txn: list | None = None
    txn_start = (0, 0)
    off = 0
    stopped = False
    for i, raw in enumerate(lines):
        recno = i + 1
        line = _decode(raw)
        rec = parse_line(line, validate)
        if isinstance(rec, Corrupt) and rec.value_only:
            rec = parse_line(line, validate=False)
            res.add(Problem(source, recno, off, R.bad_value_message(rec.key, rec.name, rec.value)
                            + "; its raw text is kept (it evaluates to error)", "warning"))
        if isinstance(rec, Corrupt):
            res.add(corrupt_problem(source, recno, off, line, rec, last106 > i, "owner"))
            res.needs_rotation = True
            stopped = True
            break
        res.records += 1
        op = rec.op
        if op == R.BEGIN_TXN:
            res.clean = False
            if txn is not None:
                res.add(Problem(source, recno, off, "nested 105 (BeginTransaction) ignored", "warning"))
            else:
                txn, txn_start = [], (recno, off)
        elif op == R.END_TXN:
            if txn is None:
                res.add(Problem(source, recno, off, "106 (EndTransaction) without a 105 ignored", "warning"))
            else:
                for r, rn, ro in txn:
                    _play(queue, r, rn, ro, res, source)
                txn = None
        elif op == R.HIST_SEQ:
            if recno != 1:
                res.add(Problem(source, recno, off, "107 (historical sequence number) is not the first record",
                                "warning"))
            queue.seq, queue.created = int(rec.key), int(rec.value)
        elif txn is not None:
            txn.append((rec, recno, off))
        else:
            _play(queue, rec, recno, off, res, source)
        res.probe = (off, raw + b"\n")
        off += len(raw) + 1
    res.next_offset = off
    if not stopped and tail:
        res.add(Problem(source, len(lines) + 1, off,
                        f"unterminated last line ({len(tail)} bytes) discarded; the log needs a rotation"))
        res.needs_rotation = True
    if txn is not None:
        recno, at = txn_start
        why = "ended at the corrupt record" if stopped else "was not committed"
        res.add(Problem(source, recno, at,
                        f"transaction begun here {why}; its {len(txn)} records were discarded"))
        res.needs_rotation = True


def _play(queue, rec, recno, off, res, source) -> None:
    warning = queue._apply(rec)
    if warning:
        res.add(Problem(source, recno, off, warning, "warning"))


def _end_line(lines, j: int) -> str | None:
    """The first 106 line at or after ``lines[j]`` (a transaction's end), if written yet."""
    while j < len(lines):
        if _op_of(lines[j]) == R.END_TXN:
            return _decode(lines[j])
        j += 1
    return None


def _follow(lines, last106, queue, res, source, validate) -> None:
    hook = queue.transaction_hook
    touched: set[str] = set()
    off = 0
    for i, raw in enumerate(lines):
        recno = i + 1
        line = _decode(raw)
        rec = parse_line(line, validate=False)
        if isinstance(rec, Corrupt):
            fatal = last106 > i
            res.add(corrupt_problem(source, recno, off, line, rec, fatal, FOLLOW))
            if not fatal:
                break
            off += len(raw) + 1
            res.next_offset = off
            continue
        res.records += 1
        op = rec.op
        if op == R.SET_ATTR and validate and not R.value_is_valid(rec.value):
            res.add(Problem(source, recno, off, R.bad_value_message(rec.key, rec.name, rec.value)
                            + "; ignored, as HTCondor's router does (the previous value stays)", "warning"))
        elif op == R.BEGIN_TXN:
            res.clean = False
            if hook is not None:  # the transaction's time is on its 106, read ahead in this piece
                hook.begin(_end_line(lines, i + 1))
            touched = set()
        elif op == R.HIST_SEQ:
            if recno == 1:
                queue.seq, queue.created = int(rec.key), int(rec.value)
        elif op == R.END_TXN:
            if hook is not None:
                hook.commit(line, touched)
            touched = set()
        else:
            _play(queue, rec, recno, off, res, source)
            if hook is not None:
                touched.add(rec.key)
        res.probe = (off, raw + b"\n")
        off += len(raw) + 1
        res.next_offset = off
