"""Loading a job_queue.log fast, with HTCondor's rules (htcondor.md §3.3 owner, §3.5 follower).

Design decisions and invariants:

- Two implementations, one behaviour. The fast path below handles what real logs contain — well
  formed records, an unfinished last transaction, an unterminated last line — with a tight loop:
  the file is read in one go, decoded and split in 64 KB chunks (peak memory stays near the file
  size plus one chunk, and a chunk's lines and set of values stay in the CPU caches: the 1 M-record
  bench log loads ~25% faster than with 4 MB chunks), records are dispatched on the op word,
  keys/names are shared strings and values are stored as text. The moment it meets anything else
  (a corrupt or odd-looking record, an unknown key, a nested 105, a value that fails strict
  parsing, a NUL byte) it gives up and ``reference.load_reference`` reloads from scratch, record
  by record, with exact problem reporting. Tests check that both give the same state and problems.
- Owner rules without buffering: records of a transaction apply at its 106, and nothing else
  interleaves, so applying at once gives the same final state *provided* the uncommitted trailing
  transaction is never applied. That transaction is found before the loop from the end of the
  file: the first 105 after the last line that starts with ``106``. Everything from there to the
  end is checked (not applied) and reported as discarded.
- The loop looks an ad up once per run of SetAttributes on one key (a transaction's attributes)
  and forgets it at every 101/102/104; values go straight into a set of the chunk's distinct
  values (an empty one among them: give up). A 103 costs one split, two dict subscripts (the
  canonical name, the store) and a set add; a name never spelled before and a missing ad both
  surface as a KeyError, handled out of the loop. A 101 only creates the ad and its type, a 102
  only drops them: job ids and key kinds are indexed once at the end from the surviving ads
  (their order is the ads' order, the order of creation).
- Where the time goes (``bench/queue_log.py --breakdown``, 1 M-record bench log, CPython 3.11):
  the loop is at the floor of a per-line loop that splits each line, collects the values and
  stores each attribute into its ad (~0.3 s); splitting and collecting alone cost ~0.17 s, the
  stores ~0.13 s more because the ads (tens of MB) are mostly out of the CPU caches when a
  transaction touches them. Keeping the runs as raw lines to parse when an ad is read was
  measured too (no faster: keeping a million line strings alive costs what the stores cost).
- Strict parsing (§3.3): each chunk's distinct values are checked after the chunk: the plain
  literals (``records.PLAIN_VALUE``) are sieved out by one regex pass over the values joined by
  newlines, and ``engine.classad.is_valid_expr`` parses each one left; a failure falls back to the
  reference loader, which reports the first bad record. ``validate=False`` skips the check (for
  measuring only; not HTCondor's default).
- Never raises on bad input: an unreadable file is a problem, not an exception.
"""

from __future__ import annotations

import os
import re
import stat
import sys

from engine.classad import is_valid_expr
from engine.queue.jobqueue import JobQueue
from engine.queue import records as R
from engine.queue.records import PLAIN_VALUE, Corrupt, key_kind, parse_line
from engine.queue.plain_loader import load_reference
from engine.queue.result import FOLLOW, OWNER, LoadResult, Problem

CHUNK = 64 << 10
_W = r"[^ \t\v\f\r]+"
_NEW = re.compile(rf"101 (([1-9][0-9]*)\.(0|[1-9][0-9]*)|{_W}) ({_W}) ({_W})").fullmatch
_NEW_AD = re.compile(rf"101 ({_W}) ({_W}) {_W}").fullmatch  # the loader's: key, MyType
_SEQ = re.compile(rf"107 ([0-9]+) {_W} (-?[0-9]+)").fullmatch
# over the keys joined by newlines: the job keys (key, cluster, proc), and every other key
_PROC_KEYS = re.compile(r"(?m)^(([1-9][0-9]*)\.(0|[1-9][0-9]*))$").findall
_OTHER_KEYS = re.compile(r"(?m)^(?![1-9][0-9]*\.(?:0|[1-9][0-9]*)$).+$").findall
_NAME = re.compile(_W).fullmatch
_BLANK_BYTES = (b" ", b"\t", b"\v", b"\f", b"\r")
BLANKS_OR_EMPTY = frozenset(("",) + tuple(R.BLANKS))  # first character of a 103 value that needs a closer look


class _Bail(Exception):
    """The fast path met something only the reference loader reports exactly."""


def read_log(path, queue: JobQueue | None = None, *, mode: str = OWNER,
             validate: bool = True) -> tuple[JobQueue, list[Problem]]:
    """Load ``path``; returns (queue, problems). Never raises on bad input."""
    res = load_log(path, queue, mode=mode, validate=validate)
    return res.queue, res.problems


def load_log(path, queue: JobQueue | None = None, *, mode: str = OWNER, validate: bool = True) -> LoadResult:
    source = str(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # /dev/zero never ends, a FIFO blocks
            raise OSError(0, "Is a directory" if os.path.isdir(path) else "not a regular file")
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        res = LoadResult(queue if queue is not None else JobQueue())
        res.add(Problem(source, 0, 0, f"cannot read the log: {exc.strerror or exc}", "fatal"))
        return res
    return load_bytes(data, queue, source=source, mode=mode, validate=validate)


def load_bytes(data: bytes, queue: JobQueue | None = None, *, source: str = "<bytes>",
               mode: str = OWNER, validate: bool = True) -> LoadResult:
    """Replace the contents of ``queue`` (a new one if None) with the state ``data`` describes."""
    q = queue if queue is not None else JobQueue()
    hook = q.transaction_hook
    if hook is not None and mode == FOLLOW:
        # a follower whose hook wants every transaction (watch rebuilding the router's figures):
        # the reference reader tells it of each one; the fast path would not
        hook.reloading()
        return _load_bytes(data, q, source, mode, validate, fast=False)
    q.transaction_hook = None  # a bulk load is one reload, not transactions
    try:
        return _load_bytes(data, q, source, mode, validate)
    finally:
        q.transaction_hook = hook


def _load_bytes(data: bytes, q: JobQueue, source: str, mode: str, validate: bool, fast: bool = True) -> LoadResult:
    with q.batch():
        q._batch.reloaded = True  # type: ignore[union-attr]
        q._reset()
        res = None
        try:
            res = _fast(data, q, source, mode, validate) if fast else None
        except _Bail:
            res = None  # leave the except block first: its traceback keeps the fast path's lines alive
        if res is None:
            q._reset()
            res = load_reference(data, q, source, mode, validate)
        q._finish_bulk()
    res.source, res.size = source, len(data)
    if not res.records and data:
        res.blank = not data.strip()  # C isspace's characters only: the schedd reads no record (result.py)
    return res


# ------------------------------------------------------------------------------------------


def _commit_limit(data: bytes, end: int) -> int:
    """Offset of the 105 that opens a transaction never committed before ``end``, else ``end``."""
    i = data.rfind(b"\n106", 0, end)
    if i >= 0:
        start = data.find(b"\n", i + 1, end) + 1
    elif data.startswith(b"106"):
        start = data.find(b"\n", 0, end) + 1
    else:
        start = 0
    j = start
    while j < end:
        if data.startswith(b"105", j) and data[j + 3 : j + 4] in _BLANK_BYTES:
            return j
        k = data.find(b"\n105", j, end)
        if k < 0:
            return end
        j = k + 1
    return end


def _new_name(q: JobQueue, name: str) -> str:
    if not _NAME(name):
        raise _Bail
    return q._name(name)


class _State:
    __slots__ = ("in_txn", "saw_begin", "replay")

    def __init__(self) -> None:
        self.in_txn = False
        self.saw_begin = False
        self.replay = False  # replay's rule for a 101 of an existing key (ignored) instead of giving up


def _run(lines: list[str], q: JobQueue, st: _State, owner: bool, validate: bool) -> None:
    ads = q._ads
    ag = ads.get
    types = q._types
    cg = q._canon.get
    intern = sys.intern
    new_m = _NEW_AD
    vals: set[str] = set()  # distinct values, checked after the chunk ("" among them: bail)
    va = vals.add
    try:
        _run_lines(lines, q, st, owner, ads, ag, types, cg, intern, new_m, va)
    except ValueError:  # a 103 line without its four fields
        raise _Bail from None
    if "" in vals:
        raise _Bail
    if validate:
        _check_values(vals)


def _check_values(vals: set[str]) -> None:
    """Strict parsing of a chunk's distinct 103 values (§3.3): the plain literals are sieved out
    together, by one regex pass over the values joined by newlines; each value left is parsed by
    classad2. Gives up (``_Bail``) at the first that does not parse."""
    if vals:
        rest = _PLAIN_LINES("", "\n".join(vals) + "\n")
        if rest:
            for v in rest[:-1].split("\n"):
                if not is_valid_expr(v):
                    raise _Bail


# PLAIN_VALUE once per line of a newline-joined text: anchored at line starts and never crossing a
# newline (a value never holds one), so what the sieve leaves is exactly the values it does not match
_PLAIN_ML = PLAIN_VALUE.pattern.replace('[^"\\\\]', '[^"\\\\\\n]')
if _PLAIN_ML == PLAIN_VALUE.pattern or "\\n" not in _PLAIN_ML:
    raise ImportError("engine.queue.reader: PLAIN_VALUE changed; update _PLAIN_ML")
_PLAIN_LINES = re.compile(f"(?m)^(?:{_PLAIN_ML})\n").sub


def _run_lines(lines, q, st, owner, ads, ag, types, cg, intern, new_m, va) -> None:
    """The loop of :func:`_run` (its locals passed in: they are read per line).

    Per 103 line it does one split, an op comparison, one unpack, a key comparison (the ad is looked
    up once per run of one key), two dict subscripts and a set add; a name not spelled before
    (``canon[name]`` raises KeyError, rare after the first chunks) and the other ops leave the
    tight path."""
    canon = q._canon
    in_txn = st.in_txn
    saw_begin = st.saw_begin
    last_key = None  # a transaction sets many attributes of one ad: look it up once
    ad = None
    it = iter(lines)
    while True:
        try:
            for line in it:
                parts = line.split(" ", 3)  # before the op test: a 103 is split anyway
                if parts[0] == "103":
                    _, key, name, value = parts
                    if key != last_key:
                        ad = ads[key]
                        last_key = key
                    ad[canon[name]] = value
                    va(value)
                elif line == "105 ":
                    if owner and in_txn:
                        raise _Bail
                    in_txn = saw_begin = True
                elif line[:5] == "106 #" and len(line) > 5 or line == "106 ":
                    if owner:
                        if not in_txn:
                            raise _Bail
                        in_txn = False
                elif parts[0] == "101":
                    m = new_m(line)
                    if m is None:
                        raise _Bail
                    key, mt = m.groups()
                    if key in ads:
                        if not st.replay:
                            raise _Bail
                        last_key = None  # replay's rule: a NewClassAd for an existing ad is ignored
                        continue
                    ads[key] = {}
                    types[key] = "" if mt == R.EMPTY_TYPE else intern(mt)
                    last_key = None  # an ad under this key may be new
                else:
                    _other(parts, q, ads, ag, types, cg)
                    last_key = None  # an ad under this key may be destroyed
            break
        except KeyError:  # ads[key]: no such ad (give up); canon[name]: a name not spelled before
            if parts[0] != "103" or key not in ads:
                raise _Bail from None
            last_key = key
            ad[_new_name(q, name)] = value
            va(value)
    st.in_txn = in_txn
    st.saw_begin = saw_begin


def _other(parts, q, ads, ag, types, cg) -> None:
    """A 102 or 104 record, split (anything else: give up)."""
    op = parts[0]
    if op == "102":
        if len(parts) != 2:
            raise _Bail
        key = parts[1]
        if ads.pop(key, None) is None:
            raise _Bail
        del types[key]
    elif op == "104":
        if len(parts) != 3:
            raise _Bail
        target = ag(parts[1])
        if target is None:
            raise _Bail
        name = cg(parts[2])
        if name is None:
            name = _new_name(q, parts[2])
        target.pop(name, None)
    else:
        raise _Bail


def _fast(data: bytes, q: JobQueue, source: str, mode: str, validate: bool, replay: bool = False) -> LoadResult:
    res = LoadResult(q)
    owner = mode != FOLLOW
    end = data.rfind(b"\n") + 1
    limit = _commit_limit(data, end) if owner and end else end
    if data.find(b"\0", 0, end) >= 0:
        raise _Bail
    st = _State()
    st.replay = replay
    pos = 0
    records = 0
    while pos < limit:
        cut = limit
        if pos + CHUNK < limit:
            cut = data.rfind(b"\n", pos, pos + CHUNK) + 1
            if cut <= pos:  # one line longer than a chunk
                cut = data.find(b"\n", pos + CHUNK) + 1
        lines = data[pos:cut].decode("utf-8", "surrogateescape").split("\n")
        lines.pop()
        records += len(lines)  # the chunk's newlines: no count over the whole file
        if pos == 0 and lines and lines[0].startswith("107 "):
            m = _SEQ(lines[0])
            if m is None:
                raise _Bail
            q.seq, q.created = int(m[1]), int(m[2])
            del lines[0]
        _run(lines, q, st, owner, validate)
        pos = cut
    if owner and st.in_txn:
        raise _Bail
    _index_keys(q)
    discarded = _check_tail(data, limit, end, validate) if limit < end else 0
    res.records = records + (data.count(b"\n", limit, end) if limit < end else 0)
    res.clean = not st.saw_begin and limit == end
    res.next_offset = end
    if end:
        s = data.rfind(b"\n", 0, end - 1) + 1
        res.probe = (s, data[s:end])
    if owner and end < len(data):
        res.add(Problem(source, res.records + 1, end,
                        f"unterminated last line ({len(data) - end} bytes) discarded; the log needs a rotation"))
        res.needs_rotation = True
    if limit < end:
        res.add(Problem(source, data.count(b"\n", 0, limit) + 1, limit,
                        f"transaction begun here was not committed; its {discarded} records were discarded"))
        res.needs_rotation = True
    return res


def _index_keys(q: JobQueue) -> None:
    """Job ids and the kinds of the other keys, from the ads left at the end of the load: the
    loop only creates and destroys ads (a 101 is a regex match and two stores, a 102 two
    deletions), and both ``_ids`` and ``_kinds`` are in the order their ads were created, which
    is the order of ``_ads``. The keys are matched together, in one text (a key holds no
    newline: lines are split on it)."""
    ids = q._ids
    kinds = q._kinds
    ids.clear()
    kinds.clear()
    q._max_cluster = None  # next_cluster_num recomputes it once
    text = "\n".join(q._ads)
    procs = _PROC_KEYS(text)
    if procs:
        keys, cs, ps = zip(*procs)
        ids.update(zip(zip(map(int, cs), map(int, ps)), keys))
    for key in _OTHER_KEYS(text):
        kind = key_kind(key)
        if kind != R.CLUSTER:
            kinds[key] = kind


def _check_tail(data: bytes, limit: int, end: int, validate: bool) -> int:
    """The uncommitted trailing transaction: a 105 then plain 101–104 records, or give up.
    Returns how many records it holds."""
    lines = data[limit:end].decode("utf-8", "surrogateescape").split("\n")
    lines.pop()
    first = parse_line(lines[0], validate)
    if isinstance(first, Corrupt) or first.op != R.BEGIN_TXN:
        raise _Bail
    for line in lines[1:]:
        rec = parse_line(line, validate)
        if isinstance(rec, Corrupt) or rec.op not in (R.NEW_AD, R.DESTROY_AD, R.SET_ATTR, R.DELETE_ATTR):
            raise _Bail
    return len(lines) - 1


def committed_state(data: bytes) -> JobQueue | None:
    """The queue after every record of ``data`` (whole lines ending at a step boundary: replay's
    checkpoints, ``engine.feeds.replay.index``), read by the fast path with the owner's rules
    (§3.3) and no value checks; None when the fast path meets anything it does not take (the
    caller then reads record by record with replay's lenient rules). One of replay's rules is
    the fast path's too: a ``101`` of an ad that exists is ignored (``JobQueue.apply``), as the
    caller would, instead of giving up (days of demo history re-submit live cluster ids)."""
    q = JobQueue()
    try:
        res = _fast(data, q, "<replay>", OWNER, False, replay=True)
    except _Bail:
        return None
    if res.problems:
        return None
    q._finish_bulk()
    return q
