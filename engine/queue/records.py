"""job_queue.log records: op codes, keys and the exact line format (htcondor.md §3.1).

Design decisions and invariants:

- A record is a small immutable :class:`Record` (op, key, name, value) that mirrors HTCondor's
  ``ClassAdLogEntry``: for 101 ``name`` is MyType and ``value`` TargetType (``(empty)`` reads back
  as ""); for 106 ``value`` is the commit comment; for 107 ``key`` is the sequence number and
  ``value`` the creation timestamp, both as decimal text.
- :func:`parse_line` follows ``LogRecord::readword``/``readline`` on one line: words are separated
  by runs of blanks, each word consumes exactly one terminating blank, a 103 value is the rest of
  the line after the name's terminator (extra leading blanks are kept), ``105`` must be followed by
  one blank and the newline, ``106`` by one blank and then the newline or ``#comment``. Anything
  that would make HTCondor's reader read across the newline (a missing field, trailing blanks, a
  101 without TargetType) is reported as corrupt: RouteDeck never reads a record across lines.
- Strict parsing (``CLASSAD_LOG_STRICT_PARSING``, default true): a 103 value must parse as a
  ClassAd expression. :func:`value_is_valid` checks plain literals with a regex first (the common
  case, and the reader's hot path) and asks :func:`engine.classad.is_valid_expr` for the rest.
  :func:`parse_line` reports such a record as ``Corrupt(value_only=True)``; what the loaders do
  with it is theirs (the owner keeps the raw text, see ``reference.py``), and
  :func:`bad_value_message` is the one line that names job, attribute and why.
- :func:`format_record` is what the writer writes: single spaces, ``(empty)`` for empty types, 101
  always with three fields, ``105 `` / ``106 `` with their trailing space. It refuses (raises
  :class:`RecordFormatError`) any field that would corrupt the file, e.g. a newline in a value.
"""

from __future__ import annotations

import functools
import re
import time
from datetime import datetime
from typing import Iterable, NamedTuple

from engine.classad import is_valid_expr, parse_problem

NEW_AD = 101
DESTROY_AD = 102
SET_ATTR = 103
DELETE_ATTR = 104
BEGIN_TXN = 105
END_TXN = 106
HIST_SEQ = 107
OPS = frozenset({NEW_AD, DESTROY_AD, SET_ATTR, DELETE_ATTR, BEGIN_TXN, END_TXN, HIST_SEQ})

EMPTY_TYPE = "(empty)"
HEADER_KEY = "0.0"
# C isspace() minus the newline: what readword skips and stops at.
BLANKS = " \t\v\f\r"


class RecordFormatError(ValueError):
    """A record that cannot be written without corrupting the log."""


class Record(NamedTuple):
    op: int
    key: str = ""
    name: str = ""
    value: str = ""


class Corrupt(NamedTuple):
    """A line that HTCondor's reader would reject. ``op_end`` is the character index just after
    the op word and its terminator, which is where HTCondor's message puts the byte offset."""

    reason: str
    op_end: int
    value_only: bool = False  # structure fine, only the 103 value fails strict parsing


# ------------------------------------------------------------------------------------------
# constructors

BEGIN = Record(BEGIN_TXN)


def new_ad(key: str, mytype: str = "Job") -> Record:
    return Record(NEW_AD, key, mytype, target_type_for(mytype))


def destroy_ad(key: str) -> Record:
    return Record(DESTROY_AD, key)


def set_attr(key: str, name: str, value: str) -> Record:
    # the commonest record (every attribute a transaction sets): made without NamedTuple's
    # generated __new__, the same Record
    return _tuple_new(Record, (SET_ATTR, key, name, value))


_tuple_new = tuple.__new__


def delete_attr(key: str, name: str) -> Record:
    return Record(DELETE_ATTR, key, name)


def end_txn(comment: str = "") -> Record:
    return Record(END_TXN, value=comment)


def hist_seq(seq: int, created: int) -> Record:
    return Record(HIST_SEQ, str(int(seq)), "CreationTimestamp", str(int(created)))


def target_type_for(mytype: str) -> str:
    """TargetType written for compatibility with HTCondor < 23.0 (htcondor.md §3.1, op 101)."""
    if mytype.lower() == "job":
        return "Machine"
    if mytype.startswith("*"):
        return mytype
    return ""


# ------------------------------------------------------------------------------------------
# keys (ProcIdToStr, qmgmt.h; htcondor.md §3.1 "Keys")


def job_key(cluster: int, proc: int) -> str:
    return f"{cluster}.{proc}"


def cluster_key(cluster: int) -> str:
    """The cluster ad's key: written with a leading zero, e.g. ``01.-1``."""
    return f"0{cluster}.-1"


def cluster_pvt_key(cluster: int) -> str:
    return f"{cluster}.-2"


def jobset_key(jobset: int) -> str:
    return f"{jobset}.-100"


_KEY_RE = re.compile(r"(-?\d+)\.(-?\d+)")


def parse_key(key: str) -> tuple[int, int] | None:
    """``"1.0"`` → (1, 0), ``"01.-1"`` → (1, -1); None for anything that is not ``<int>.<int>``."""
    c, dot, p = key.partition(".")
    if dot and key.isascii() and c.isdigit() and (p.isdigit() or (p[:1] == "-" and p[1:].isdigit())):
        return int(c), int(p)  # the common spelling, without the pattern (the same answer)
    m = _KEY_RE.fullmatch(key.strip())
    if not m:
        return None
    return int(m[1]), int(m[2])


def job_order(key: str) -> tuple[int, int]:
    """Sort key of a ``c.p`` job key: by cluster, then proc, numerically; anything else last."""
    c, _, p = key.partition(".")
    return (int(c), int(p)) if c.isdigit() and p.isdigit() else (1 << 62, 0)


def is_proc_key(key: str) -> bool:
    """A proc ad's key (``c.p`` with ``p >= 0``), told by its spelling alone — cheap, for the
    scans that look at every key of a transaction (cluster ads start with ``0``)."""
    if key[:1] == "0":
        return False
    _c, dot, p = key.partition(".")
    return bool(dot and p and p[0] != "-")


HEADER, JOB, CLUSTER, CLUSTER_PVT, JOBSET, USER, OTHER = (
    "header", "job", "cluster", "clusterpvt", "jobset", "user", "other")


def key_kind(key: str) -> str:
    """Classify a key by its exact spelling (keys are strings to HTCondor: ``1.-1`` without the
    leading zero is not the cluster ad). ``USER`` covers every ``0.<n>`` record; the queue tells
    users (MyType Owner) from projects by MyType."""
    ids = parse_key(key)
    if ids is None:
        return OTHER
    c, p = ids
    if key == HEADER_KEY:
        return HEADER
    if c == 0 and p > 0 and key == f"0.{p}":
        return USER
    if c > 0 and p >= 0 and key == f"{c}.{p}":
        return JOB
    if c > 0 and p == -1 and key == f"0{c}.-1":
        return CLUSTER
    if c > 0 and p == -2 and key == f"{c}.-2":
        return CLUSTER_PVT
    if c > 0 and p == -100 and key == f"{c}.-100":
        return JOBSET
    return OTHER


def record_kinds(types: Iterable[tuple[str, str]]) -> dict[str, int]:
    """How many records of each non-job kind a queue holds, from (key, MyType) pairs: ``user``
    (``0.<n>`` MyType Owner), ``project`` (``0.<n>`` MyType Project), ``jobset`` (``<c>.-100``),
    ``cluster_private`` (``<c>.-2``), ``other`` (any other non-job key or MyType, e.g. a record
    kind of a later HTCondor). The 25.x kinds (htcondor.md §3.1; HTCONDOR-3362); the job router's
    ``NewClassAdJobLogConsumer::key_to_table`` keeps them out of its job collection the same way."""
    out: dict[str, int] = {}
    for key, mytype in types:
        kind = key_kind(key)
        if kind in (JOB, CLUSTER, HEADER):
            continue
        if kind == USER:
            name = {"owner": "user", "project": "project"}.get((mytype or "").lower(), "other")
        else:
            name = {JOBSET: "jobset", CLUSTER_PVT: "cluster_private"}.get(kind, "other")
        out[name] = out.get(name, 0) + 1
    return out


# Attribute names are case-insensitive in HTCondor. The queue model (engine.queue.jobqueue, also
# behind replay's checkpoints) stores each name under one spelling: HTCondor's own for the attributes
# RouteDeck reads, else the first spelling that queue saw (kept per queue, ``JobQueue._lower``), so
# ``ad.get("RouteName")`` finds ``routename`` and one log's spellings never depend on another's.
KNOWN_NAMES = (
    "JobStatus", "RouteName", "RoutedFromJobId", "RoutedToJobId", "Managed", "ManagedManager", "Owner", "User",
    "Cmd", "QDate", "EnteredCurrentStatus", "HoldReason", "HoldReasonCode", "HoldReasonSubCode", "DeferralTime",
    "DeferralWindow", "DeferralPrepTime", "CronMinute", "CronHour", "CronDayOfMonth", "CronMonth",
    "CronDayOfWeek", "ExitCode", "ExitBySignal", "ClusterId", "ProcId", "JobUniverse", "GridResource",
    "NextClusterNum", "LastHoldReason", "CompletionDate", "JobCurrentStartDate", "JobStartDate",
)
_SPELLING: dict[str, str] = {n.lower(): n for n in KNOWN_NAMES}


def canonical_name(name: str) -> str:
    """HTCondor's spelling of ``name`` if it is one of ``KNOWN_NAMES``, else ``name`` as given (the
    queue that asks keeps it as that queue's spelling). Stateless: the result never depends on
    what was read before in this process."""
    return _SPELLING.get(name.lower(), name)


# ------------------------------------------------------------------------------------------
# values

# Literals that certainly parse; no leading zeros (classad2 rejects "007"), no backslashes.
PLAIN_VALUE = re.compile(
    r'-?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]+(?:[eE][-+]?[0-9]{1,3})?)?'
    r'|"[^"\\]*"'
    r'|(?i:true|false|undefined|error)'
)
_plain = PLAIN_VALUE.fullmatch


def value_is_valid(text: str) -> bool:
    """Strict parsing of a 103 value (htcondor.md §3.1 "Values", §3.3)."""
    return bool(_plain(text)) or is_valid_expr(text)


def bad_value_message(key: str, name: str, value: str) -> str:
    """``job 3.0 attribute Foo: value does not parse (why)`` for a 103 value failing strict parsing."""
    kind = key_kind(key)
    what = {JOB: "job", CLUSTER: "cluster ad"}.get(kind, "ad")
    return f"{what} {_word_shown(key)} attribute {_word_shown(name)}: value does not parse ({parse_problem(value)})"


def _word_shown(word: str, limit: int = 60) -> str:
    """A key or name for a message: as is when short and printable, else quoted and escaped."""
    return word if len(word) <= limit and word.isprintable() else shown(word, limit)


# ------------------------------------------------------------------------------------------
# parsing one line (without its newline)


def _word(line: str, pos: int) -> tuple[str, int, bool] | None:
    """readword at ``pos``: (word, position after its terminator, ended_at_newline) or None when
    the newline comes before any word."""
    n = len(line)
    while pos < n and line[pos] in BLANKS:
        pos += 1
    if pos >= n:
        return None
    start = pos
    while pos < n and line[pos] not in BLANKS:
        pos += 1
    if pos >= n:
        return line[start:], n, True
    return line[start:pos], pos + 1, False


def shown(text: str, limit: int = 80) -> str:
    """``text`` quoted for a message: undecodable bytes (surrogate escapes) as ``\\xNN``,
    control characters escaped, cut to ``limit`` characters (a binary file is one long word)."""
    raw = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    out = repr(raw[:limit]).replace("\\\\x", "\\x")
    return out + f"… ({len(text)} characters)" if len(raw) > limit else out


def parse_line(line: str, validate: bool = True) -> Record | Corrupt:
    """Parse one complete line (its newline removed) as HTCondor's reader would."""
    if "\0" in line:
        return Corrupt("NUL byte in record", 0)
    w = _word(line, 0)
    if w is None:
        return Corrupt("blank line where a record was expected", len(line))
    opword, pos, ended = w
    try:
        op = int(opword)
    except ValueError:
        op = 0
    if op not in OPS:
        return Corrupt(f"bad op code {shown(opword)}", pos)
    op_end = pos

    def words(count: int) -> list[str] | Corrupt:
        out: list[str] = []
        p, end = pos, ended
        for i in range(count):
            if end:
                return Corrupt(f"record {op} has {i} of its {count} fields", op_end)
            w = _word(line, p)
            if w is None:
                return Corrupt(f"record {op} has {i} of its {count} fields", op_end)
            word, p, end = w
            out.append(word)
        if not end or p != len(line):
            return Corrupt(f"record {op} has text after its {count} fields", op_end)
        return out

    if op == BEGIN_TXN:
        if ended or line[pos:] != "":
            return Corrupt("105 must be followed by one blank and the end of the line", op_end)
        return BEGIN
    if op == END_TXN:
        rest = line[pos:]
        if ended or not (rest == "" or (rest[0] == "#" and len(rest) > 1)):
            return Corrupt("106 must be followed by one blank and the end of the line or #comment", op_end)
        return Record(END_TXN, value=rest[1:])
    if op == SET_ATTR:
        got = []
        p, end = pos, ended
        for _ in range(2):
            w = None if end else _word(line, p)
            if w is None or w[2]:
                return Corrupt("103 record needs a key, a name and a value", op_end)
            got.append(w[0])
            p = w[1]
        value = line[p:]
        if not value:
            return Corrupt("103 record has an empty value", op_end)
        if validate and not value_is_valid(value):
            return Corrupt(f"value of {got[1][:80]} does not parse as a ClassAd expression: {shown(value)}",
                           op_end, True)
        return Record(SET_ATTR, got[0], got[1], value)
    if op == NEW_AD:
        ws = words(3)
        if isinstance(ws, Corrupt):
            return ws
        key, mytype, target = ws
        return Record(NEW_AD, key, my_type(mytype), my_type(target))
    if op == DESTROY_AD:
        ws = words(1)
        return ws if isinstance(ws, Corrupt) else Record(DESTROY_AD, ws[0])
    if op == DELETE_ATTR:
        ws = words(2)
        return ws if isinstance(ws, Corrupt) else Record(DELETE_ATTR, ws[0], ws[1])
    # HIST_SEQ
    ws = words(3)
    if isinstance(ws, Corrupt):
        return ws
    if not ws[0].isdigit() or not ws[2].lstrip("-").isdigit():
        return Corrupt("107 record needs a decimal sequence number and timestamp", op_end)
    return Record(HIST_SEQ, ws[0], ws[1], ws[2])


# ------------------------------------------------------------------------------------------
# formatting (what the writer writes)


_NOT_A_WORD = re.compile("[" + re.escape(BLANKS + "\n\0") + "]").search


def is_word(s: str) -> bool:
    """One non-empty word without blanks, newlines or NUL (a key, name or type the writer takes)."""
    return bool(s) and _NOT_A_WORD(s) is None


def _check_word(what: str, s: str) -> None:
    if not is_word(s):
        raise RecordFormatError(f"{what} {s!r} must be one non-empty word without blanks or newlines")


_BLANK_VALUE = re.compile(r"(?m)^\s*$").search  # \s: what str.strip() strips


def attrs_writable(attrs: dict[str, str], words: set[str]) -> bool:
    """Every attribute of ``attrs`` passes :func:`format_record`'s checks for a 103 (names one word,
    values one line without NUL and not blank); ``words``: names already checked (grows)."""
    if not attrs:
        return False
    for n in attrs:
        if n not in words:
            if not is_word(n):
                return False
            words.add(n)
    values = "\n".join(attrs.values())
    return "\0" not in values and values.count("\n") == len(attrs) - 1 and _BLANK_VALUE(values) is None


def format_record(rec: Record) -> str:
    """The exact line for ``rec``, without the newline (htcondor.md §3.1 table)."""
    op = rec.op
    if op == SET_ATTR:
        _check_word("key", rec.key)
        _check_word("attribute name", rec.name)
        if "\n" in rec.value or "\0" in rec.value:
            raise RecordFormatError(
                f"refusing to write {rec.name} of {rec.key}: the value contains a newline or NUL, "
                "which would corrupt the log (LogSetAttribute::WriteBody refuses it too)")
        if not rec.value.strip():
            raise RecordFormatError(f"refusing to write an empty value for {rec.name} of {rec.key}")
        return f"103 {rec.key} {rec.name} {rec.value}"
    if op == NEW_AD:
        _check_word("key", rec.key)
        mytype = rec.name or EMPTY_TYPE
        target = rec.value or EMPTY_TYPE
        _check_word("MyType", mytype)
        _check_word("TargetType", target)
        return f"101 {rec.key} {mytype} {target}"
    if op == DESTROY_AD:
        _check_word("key", rec.key)
        return f"102 {rec.key}"
    if op == DELETE_ATTR:
        _check_word("key", rec.key)
        _check_word("attribute name", rec.name)
        return f"104 {rec.key} {rec.name}"
    if op == BEGIN_TXN:
        return BEGIN_LINE
    if op == END_TXN:
        return end_line(rec.value)
    if op == HIST_SEQ:
        if not rec.key.isdigit() or not rec.value.lstrip("-").isdigit():
            raise RecordFormatError(f"107 needs decimal numbers, not {rec.key!r} / {rec.value!r}")
        return f"107 {rec.key} CreationTimestamp {rec.value}"
    raise RecordFormatError(f"unknown op code {op}")


BEGIN_LINE = "105 "  # a transaction's first line, as format_record writes a BEGIN_TXN


def end_line(comment: str = "") -> str:
    """A transaction's last line, as format_record writes an END_TXN: ``106 `` and, with a commit
    comment, ``106 #`` and the comment (one line)."""
    if not comment:
        return "106 "
    if "\n" in comment or "\0" in comment:
        raise RecordFormatError("a commit comment cannot contain a newline")
    return f"106 #{comment}"


# ------------------------------------------------------------------------------------------
# commit comments (SCHEDD_JOB_QUEUE_TIMESTAMPS format, htcondor.md §3.2)


def commit_comment(now: float, durable: bool = True) -> str:
    """The text after ``106 #``: a blank, the local ISO-8601 time with microseconds, and
    `` NONDURABLE`` for non-durable commits."""
    stamp = _stamp(now, (time.timezone, time.altzone, time.daylight))
    return stamp if durable else stamp + " NONDURABLE"


@functools.lru_cache(maxsize=1)
def _stamp(now: float, _zone: tuple) -> str:
    """`` <local ISO time>`` of ``now``: the last one kept (an engine step commits a dozen
    transactions at one ``now``); ``_zone`` (the zone offsets) makes it again after a change."""
    return " " + datetime.fromtimestamp(now).isoformat(timespec="microseconds")


def commit_time(comment: str) -> float | None:
    """Epoch seconds of a commit comment written as above (None if it is not one)."""
    text = comment.strip().removesuffix("NONDURABLE").strip()
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def plain_record(op: str, key: str, name: str, value: str) -> tuple:
    """A 101 or 102 of a plain transaction (``engine.queue.steps.PLAIN_FIELDS``) as
    ``steps.step_record`` gives it."""
    if op == "2":
        return (102, key, "", "")
    return (101, key, my_type(name), my_type(value))


def my_type(text: str) -> str:
    """A 101's MyType (or TargetType) as the queue keeps it: ``""`` for the placeholder written
    when there is none (``EMPTY_TYPE``)."""
    return "" if text == EMPTY_TYPE else text


def plain_records(fields: Iterable[tuple[str, str, str, str]]) -> list[tuple]:
    """A plain transaction's ``PLAIN_FIELDS`` as the ``(op, key, name, value)`` records of
    ``JobQueue.apply_quiet``."""
    return [(103, k, a, v) if o == "3" else plain_record(o, k, a, v) for o, k, a, v in fields]
