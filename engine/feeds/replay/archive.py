"""Replay of a recorder's archive (issue 27) through the log replay's index.

Design decisions and invariants:

- An archive is shown to replay as one log: ``107 <seq> CreationTimestamp <birth>`` of the first
  kept segment's state checkpoint, that checkpoint's records (outside any transaction: replay's
  step 0, as a compacted log's body is), then every archived transaction in order. The result
  is indexed by :func:`engine.feeds.replay.index.build_index` — one step scanner, one timeline,
  the same checkpoints and seeks as a log — so ``replay DIR`` is ``replay LOG`` on that text.
- A gap is a made-up transaction (``engine.record.recorder``); its step's time is set to the
  gap's end (the moment its state is known), kept non-decreasing. :class:`ArchiveReplay` lists
  the gaps by step for the JSON and the text output.
- Retention moves the start: the first kept segment's checkpoint is the state replay starts
  from, and ``start`` says so.
- Reading the whole archive costs its decompression: :func:`open_archive` is what the dashboard
  and ``--reroute`` use. A moment (``replay DIR --at`` / ``--transaction`` / ``--json``) opens a
  *window* instead (:func:`open_window`): the state checkpoint of one segment and the frames of
  the segments from it to the one holding the moment — O(1) segments whatever the archive's
  length; each frame is read at its place in the index (``Archive.frame``), never a whole
  segment. The window starts at the last transaction stamped at least ``WINDOW`` seconds (the
  router's 600 s stats window and two polls) before the moment (the start of the first frame
  that late when none is) and ends at the first transaction stamped after it; the state there is
  the checkpoint with the segment's earlier transactions applied by the fast loader
  (:func:`state_after`), dated at the last of them (not at its ads' latest time attribute, which
  in days of demo history is the first day's), so the per-route recent figures,
  computed on the window with the archive's own poll grid (``RouteHistory(grid_start=…)``), see
  every event of the stats window in force then. Numbers stay the archive's: ``base`` maps a
  window step to its step in the whole archive (:meth:`ArchiveReplay.global_step`), and
  :func:`summarize` gives the whole archive's step count, start and end from the index and the
  first kept checkpoint only. The throttle carried over from windows before it comes from the
  recorder's per-route window counts (``engine.record.counts``; :func:`throttle_seeds`, folded
  with ``--config``'s thresholds). What a window cannot know (documented departure): that
  throttle in an archive without those counts (recorded before they were kept), after
  retention moved its start (the poll grid moved with it) or with a ``JobFailureTest`` the
  recorder could not evaluate — it is then estimated, starting at none at the window's start (a
  route the whole recording shows throttled since hours may show none; ``--json`` says which:
  ``replay.archive.window.throttle``) —, router events and cron deferrals
  older than the window, and a time the window must infer for a step without a ``106 #`` stamp
  (carried from the window's checkpoint instead of from the steps before it). So an archive of
  at most ``WHOLE_BELOW`` bytes of transactions (a few hours of a busy CE; read whole in about
  the time a window takes) is read whole, and a window is said in ``--json``
  (``replay.archive.window``).
"""

from __future__ import annotations

import functools
import math
import os
import re
from bisect import bisect_right
from itertools import islice
from dataclasses import dataclass, field
from typing import Iterator

from engine.contract.snapshot import ReplayMark
from engine.feeds.replay.index import LogIndex, build_index
from engine.queue.jobqueue import JobQueue
from engine.queue.reader import committed_state
from engine.queue.steps import scan_steps
from engine.record.archive import Archive, parse_lines
from engine.record.counts import fold
from engine.queue.timeline import TIME_ATTRS, parse_comment_time, step_time
from engine.record.state import load_state


@dataclass
class ArchiveReplay:
    index: LogIndex
    first_txn: int  # archive number of the first transaction kept
    offset: int  # step of that transaction (1 when the checkpoint is a step, else 0)
    gaps: list = field(default_factory=list)  # index lines of kind "gap", each with its "step"
    generations: list = field(default_factory=list)
    base: int = 0  # step in the whole archive of the index's step 0 (0 unless a window)
    window_time: float | None = None  # a window: the time of its first frame
    summary: "ArchiveSummary | None" = None  # the whole archive (a window's index holds a part)
    throttle: str | None = None  # a window: "recorded" (the recorder's counts) or "estimated" (from the window)

    def step_of(self, txn: int) -> int:
        return txn - self.first_txn + self.offset

    def global_step(self, step: int) -> int:
        """The step in the whole archive of the index's ``step`` (-1 stays before the first)."""
        return step + self.base if step >= 0 else step


# seconds of archive a window holds before its moment: the router's stats window in force at a
# moment began at its last poll closing one, at most 600 s + a polling period earlier (periods up
# to 150 s; engine.views.figures.next_close), and the recent figures count from there
WINDOW = 600 + 300
WHOLE_BELOW = 32 << 20  # bytes of archived transactions up to which replay reads the archive whole


@dataclass
class ArchiveSummary:
    """The whole archive as replay numbers it, from ``recorder.json``, the index and the first
    kept segment's state checkpoint (no frame is read)."""

    first_txn: int
    offset: int  # 1 when the first checkpoint holds records (replay's step 0)
    steps: int
    start: float | None
    end: float | None
    segments: list  # [(segment, first transaction, first time or None)] in order
    lines: list  # the index lines, the window closes' apart (``closes``)
    creation_timestamp: float | None = None
    raw: int = 0  # bytes of transactions kept (recorder.json's raw_total)
    grid: tuple | None = None  # (start, polling period) of the recorder's window counts (None: none kept)
    closes: list = field(default_factory=list)  # the window closes' index lines, raw (not in ``lines``: close_lines)
    index_path: object = "the archive's index"  # the index file ``closes`` come from (close_lines' error names it)

    def step_of(self, txn: int) -> int:
        return txn - self.first_txn + self.offset


def _gaps_and_generations(rep: ArchiveReplay, lines: list) -> None:
    for x in lines:
        if x["kind"] == "gap" and x["txn"] >= rep.first_txn:
            rep.gaps.append(dict(x, step=rep.step_of(x["txn"])))
        elif x["kind"] == "generation" and x["txn"] >= rep.first_txn:
            rep.generations.append(dict(x, step=rep.step_of(x["txn"])))


def _fix_times(index: LogIndex, gaps: list, base: int) -> None:
    """A gap's step takes the gap's end as its time; times stay non-decreasing."""
    for g in gaps:
        step = g["step"] - base
        if 0 <= step < index.steps:
            index.times[step] = max(index.times[step], g["t1"])
    times = index.times
    for i in range(1, len(times)):
        if times[i] < times[i - 1]:
            times[i] = times[i - 1]


def replay_marks(rep: ArchiveReplay) -> tuple[ReplayMark, ...]:
    """The generation boundaries and gaps of an archive opened whole, for the replay bar, in time
    order: each at the time of the step where it is replayed (a generation that began the
    archive is its start, not a boundary: left out)."""
    times = rep.index.times
    out = []
    for kind, marks in (("generation", rep.generations), ("gap", rep.gaps)):
        for g in marks:
            step = g["step"] - rep.base
            if kind == "generation" and g["txn"] <= rep.first_txn:
                continue  # the archive's first generation: where it starts
            if 0 <= step < len(times):
                out.append(ReplayMark(times[step], kind, g["step"]))
    return tuple(sorted(out, key=lambda m: (m.time, m.transaction)))


def is_archive(path: str | os.PathLike) -> bool:
    return os.path.isdir(path) and os.path.exists(os.path.join(path, "recorder.json"))


def archive_text(arch: Archive) -> tuple[bytes, int, bool]:
    """(the archive as one log's text, first transaction number, whether the checkpoint has records)."""
    segs = arch.segments()
    if not segs:
        return b"", 0, False
    state = arch.read_state(segs[0])
    nl = state.find(b"\n") + 1
    parts = [state]
    first_txn = None
    for k in segs:
        for first, _count, raw in arch.frames(k):
            if first_txn is None:
                first_txn = first
            parts.append(raw)
    if first_txn is None:
        first_txn = arch.meta.next_txn
    return b"".join(parts), first_txn, len(state) > nl


def open_archive(path: str | os.PathLike, tz: str | None = None) -> ArchiveReplay:
    arch = Archive.open(path, readonly=True)
    data, first_txn, has_state = archive_text(arch)
    index = build_index(os.fspath(path), tz=tz, data=data)
    rep = ArchiveReplay(index, first_txn, 1 if has_state else 0)
    _gaps_and_generations(rep, arch.index_lines())
    _fix_times(index, rep.gaps, 0)
    return rep


def summarize(path: str | os.PathLike, tz: str | None = None,
              arch: Archive | None = None) -> ArchiveSummary:
    """The whole archive's numbers without reading a frame (see :class:`ArchiveSummary`). The
    window closes' lines (most of the index's bytes) are kept raw (:func:`close_lines`)."""
    arch = arch or Archive.open(path, readonly=True)
    raw = arch.index_lines(raw=True)
    closes = [line for line in raw if line.startswith(CLOSE_LINE)]
    lines = parse_lines([line for line in raw if not line.startswith(CLOSE_LINE)] if closes else raw, arch.index_path)
    if any(x["kind"] == "close" for x in lines):  # a close written otherwise: every line parsed, in order
        closes, lines = [], parse_lines(raw, arch.index_path)
    segs = arch.segments()
    seg_first = {x["seg"]: x["first"] for x in lines if x["kind"] == "segment"}
    seg_t0: dict[int, float] = {}
    end = None
    for x in lines:
        if x["kind"] == "frame":
            seg_t0.setdefault(x["seg"], x["t0"])
            end = x["t1"] if end is None else max(end, x["t1"])
    segments = [(k, seg_first.get(k, arch.meta.next_txn), seg_t0.get(k)) for k in segs]
    if not segs:
        return ArchiveSummary(arch.meta.next_txn, 0, 0, None, None, [], lines)
    state = arch.read_state(segs[0])
    nl = state.find(b"\n") + 1
    has_state = len(state) > nl
    first_txn = next((x["first"] for x in lines if x["kind"] == "frame"), arch.meta.next_txn)
    offset = 1 if has_state else 0
    steps = offset + arch.meta.next_txn - first_txn
    dated, start, creation = checkpoint_time(state)  # the checkpoint alone: step 0's time
    if not dated:
        start = next((t for _k, _f, t in segments if t is not None), None)
    for x in lines:  # a gap's step is dated at the gap's end
        if x["kind"] == "gap" and x["txn"] >= first_txn and end is not None:
            end = max(end, x["t1"])
    if end is None:
        end = start
    elif start is not None:
        end = max(end, start)
    counts = arch.meta.figures
    grid = (counts["start"], counts["period"]) if counts else None
    return ArchiveSummary(first_txn, offset, steps, start, end, segments, lines, creation,
                          arch.meta.raw_total, grid, closes, arch.index_path)


# how a window close's index line begins, and its time as the archive writes it (``json.dumps`` of
# engine.record.counts' ``dict(kind="close", txn=…, t=…, …)`` without spaces)
CLOSE_LINE = b'{"kind":"close",'
_CLOSE_TIME = re.compile(rb'\{"kind":"close","txn":-?[0-9]+,"t":(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)[,}]').match


def close_lines(summary: ArchiveSummary, until: float | None = None) -> list[dict]:
    """The window closes of the archive (``summary.closes``; the closes among ``summary.lines``
    when those are none), the ones at or before ``until`` only (``fold`` reads none after it): a
    line is dated by its ``"t"`` without a parse; one that does not show it so is parsed. A damaged
    line among those is the index file's ArchiveError, as when the whole index was parsed; one
    after ``until`` is not read, so not checked: the moment needs nothing from it, and checking it
    would mean parsing every close line, the cost this split avoids (issue 27)."""
    if not summary.closes:
        return summary.lines
    raw = summary.closes
    if until is not None:
        raw = [line for line in raw if (m := _CLOSE_TIME(line)) is None or float(m[1]) <= until]
    return parse_lines(raw, summary.index_path)


def checkpoint_time(state: bytes) -> tuple[bool, float | None, float | None]:
    """(whether it is a step, step 0's time, its CreationTimestamp) of a state checkpoint read as a
    log, as ``build_index(data=state)`` gives them, from its ``107`` line and the ``103`` lines of
    time attributes alone (``step_time`` of them; ``TimeInference.finish``'s floor at the
    creation time): after retention the first kept checkpoint is a whole queue, and every moment
    dates it (an index pass over its tens of thousands of lines cost ~30-40 ms a moment)."""
    nl = state.find(b"\n") + 1
    words = state[:nl].split()
    creation = None
    if words[:1] == [b"107"]:
        try:
            int(words[1])
            creation = float(words[3])
        except (IndexError, ValueError):
            creation = None
    if len(state) <= nl:
        return False, None, creation
    records = [(103, "", name.decode("utf-8", "surrogateescape"), value.decode("utf-8", "surrogateescape"))
               for name, value in _time_lines()(state, nl)]
    t, _source = step_time(records, None)
    if creation is not None:
        t = creation if t is None or t < creation else t
    return True, 0.0 if t is None else t, creation


@functools.cache
def _time_lines():
    """``findall`` of (name, value) over the ``103`` lines of time attributes (compiled once used)."""
    names = b"|".join(re.escape(n.encode()) for n in sorted(TIME_ATTRS))
    return re.compile(rb"(?im)^103 [^ \n]+ (" + names + rb") ([^\n]*)$").findall


def throttle_seeds(summary: ArchiveSummary, rules, period: float,
                   until: float | None = None, since: float | None = None) -> dict[float, dict[str, float]] | None:
    """The throttle after each window close the recorder counted (``engine.record.counts``),
    folded with the thresholds of ``rules``, when its windows close where replay's do: the
    recorder's poll grid is replay's (the archive's start, ``period``) and no route of ``rules``
    has a ``JobFailureTest`` the recorder could not evaluate. None otherwise: a window's throttle
    is then estimated from the window alone (module docstring). ``until`` / ``since``: only the
    closes up to / from those times (``fold``)."""
    if summary.grid is None or summary.grid != (summary.start, float(period)):
        return None
    seeds, exact = fold(close_lines(summary, until), rules, until, since)
    return seeds if exact else None


def open_window(path: str | os.PathLike, tz: str | None = None, *, step: int | None = None,
                time: float | None = None, before: float = WINDOW,
                summary: ArchiveSummary | None = None) -> ArchiveReplay:
    """The archive around one moment (a whole-archive ``step``, or a ``time``), read from one state
    checkpoint and the frames after it up to the moment's (module docstring). The window starts
    at the last transaction stamped ``before`` seconds or more before the moment (at a frame's
    start when none is) and ends at the first stamped after it: the state there is its segment's
    checkpoint with that segment's earlier transactions applied, handed to the index as a queue
    (``build_index(start=…)``: its step 0, not written out and read again), so the window
    indexes and replays only the minutes that matter. Only the
    frames from the checkpoint to the moment's are read, each by its place in the index."""
    arch = Archive.open(path, readonly=True)
    s = summary or summarize(path, tz, arch)
    frames = [x for x in s.lines if x["kind"] == "frame" and x["first"] >= s.first_txn]
    if not s.segments or not frames:
        return ArchiveReplay(build_index(os.fspath(path), tz=tz, data=b""), s.first_txn, 0, summary=s)
    if step is not None:
        txn = step - s.offset + s.first_txn
        t = max(0, bisect_right([f["first"] for f in frames], txn) - 1)
        at = frames[t]["t0"]
    else:
        txn = None
        at = time if time is not None else s.end
        t = max(0, bisect_right([f["t0"] for f in frames], at) - 1)
    w = t
    while w > 0 and frames[w]["t0"] > at - before:
        w -= 1
    seg_w = frames[w]["seg"]
    first_w = next(k for k in range(w + 1) if frames[k]["seg"] == seg_w)  # the segment's first frame
    # the state the window starts from: the segment's last state checkpoint at the start of one of
    # its frames up to the window's first (an inner one, engine.record.archive), else its first
    at_frame = {frames[k]["first"]: k for k in range(first_w, w + 1)}
    inner = max(((at_frame[x["txn"]], x) for x in s.lines if x["kind"] == "state" and x["seg"] == seg_w
                 and x["txn"] in at_frame), key=lambda kx: kx[0], default=None)
    from_k = first_w if inner is None else inner[0]  # the frame the state is before
    raws = {k: arch.frame(frames[k]) for k in range(from_k, t + 1)}
    # the moment's frame up to the transaction after the moment (what follows cannot change it)
    # (the frame read only as far as that: ``_step_ends`` finds the ends one after the other)
    if txn is not None:  # the end of the transaction after it, or the frame's last when there are fewer
        upto = list(islice(_step_ends(raws[t]), max(0, txn - frames[t]["first"] + 1) + 1))[-1][0]
    else:
        upto = next((e for e, st in _step_ends(raws[t]) if st is not None and _stamp(st, tz) > at), len(raws[t]))
    raws[t] = raws[t][:upto]
    # the window's first frame from its last transaction stamped ``before`` or more before the moment
    cut, skipped = 0, 0
    last = frames[w - 1]["t1"] if w > 0 else None  # the time of the state the window starts from
    for n, (e, st) in enumerate(_step_ends(raws[w])):
        if st is not None and (stamp := _stamp(st, tz)) <= at - before:
            cut, skipped, last = e, n + 1, stamp
        elif st is not None:
            break
    prefix = [raws[k] for k in range(from_k, w)] + [raws[w][:cut]]
    state = arch.read_state(seg_w) if inner is None else arch.inner_state(inner[1])
    nl = state.find(b"\n") + 1
    # the state at the window's first transaction, handed to the index as a queue (step 0)
    seed = state_after(state, b"".join(prefix)) if len(state) > nl or any(prefix) else None
    raws[w] = raws[w][cut:]
    has_state = seed is not None and bool(seed.table)
    index = build_index(os.fspath(path), tz=tz, data=state[:nl] + b"".join(raws[k] for k in range(w, t + 1)),
                        start=seed, keep_records=True)  # its history applies the records read here
    if last is not None and has_state and index.steps:
        # that state is dated at the last transaction applied to it, not at the latest time
        # attribute its ads hold (which can be hours older: the stats' cron cycles ran from there)
        times = index.times
        times[0] = max(times[0], min(last, times[1]) if index.steps > 1 else last)
    base = s.step_of(frames[w]["first"] + skipped) - (1 if has_state else 0)
    first = 1 if has_state else 0  # the window's first transaction
    rep = ArchiveReplay(index, s.first_txn, s.offset, base=base, summary=s,
                        window_time=index.times[first] if index.steps > first else frames[w]["t0"])
    _gaps_and_generations(rep, s.lines)
    _fix_times(index, rep.gaps, base)
    return rep


def _step_ends(raw: bytes) -> Iterator[tuple[int, bytes | None]]:
    """(byte offset after, ``106`` comment or None) of each archived transaction of a frame's text
    (every archived transaction is one ``105 … 106``: engine.record.archive), in order, found as
    they are asked for: each complete line that is ``106`` or ``106 <comment>``, found by
    ``bytes.find`` (a multi-line regex over the frame's megabyte cost two to three times more),
    the comment kept when it starts with ``#``."""
    find = raw.find
    # s: where a line beginning 106 starts (-1: there is none left)
    s = 0 if raw.startswith(b"106") else (find(b"\n106") + 1 or -1)
    while s >= 0:
        e = find(b"\n", s) + 1
        if not e:
            break  # a line without its end: not a record
        after = raw[s + 3:s + 4]
        if after == b"\n":
            yield e, None
        elif after == b" ":
            comment = raw[s + 4:e - 1]
            yield e, (comment if comment.startswith(b"#") else None)
        s = find(b"\n106", e - 1) + 1 or -1


def _stamp(comment: bytes, tz: str | None) -> float:
    # as the 106 line reads (``106 # <time>``): parse_comment_time's fast path for the schedd's form
    t = parse_comment_time("106 " + comment.decode("utf-8", "replace"), tz)
    return math.inf if t is None else t


def state_after(checkpoint: bytes, text: bytes) -> JobQueue:
    """The state of a state checkpoint (a compacted log) with the transactions ``text`` applied:
    by the fast loader when it takes the whole text, else the checkpoint by the fast loader (a
    dump of distinct ads always is) and the transactions step by step with replay's rules."""
    q = committed_state(checkpoint + text)
    if q is not None:
        return q
    q = committed_state(checkpoint)
    q = q if q is not None else load_state(checkpoint)
    return load_state(text, q)


ROUTER_LOG_AROUND = 30.0  # seconds of JobRouterLog lines shown each side of a moment
ROUTER_LOG_LINES = 200  # … at most


def router_log_at(path: str | os.PathLike, time: float, tz: str | None = None,
                  lines: list | None = None, around: float = ROUTER_LOG_AROUND, cache: dict | None = None) -> dict | None:
    """The archived JobRouterLog (``routedeck record --router-log``) at ``time``: the real
    router's last routing table at or before it (``table``: its time and per-route figures as the
    router printed them, htcondor.md §1.5) and the lines within ``around`` seconds of it
    (``lines``: time and text). None when the archive holds no JobRouterLog. Reads the router-log
    frames overlapping that span and the last one starting before it (its table may begin there).
    ``cache`` (a dict the caller keeps; the dashboard's, as the replay moves): the frames last
    read and what they gave, kept while the next moment needs the same frames (a catch-up with
    ``--once`` archives hours of the router's log in one frame)."""
    index = [x for x in (lines if lines is not None else Archive.open(path, readonly=True).index_lines())
             if x["kind"] == "rlog"]
    if not index:
        return None
    last = max((k for k, x in enumerate(index) if x["t0"] <= time), default=None)
    chosen = [k for k, x in enumerate(index) if x["t1"] >= time - around and x["t0"] <= time + around]
    if last is not None and last not in chosen:
        chosen.insert(0, last)
    chosen.sort()
    key = (os.fspath(path), tz, tuple((x["seg"], x["off"]) for x in (index[k] for k in chosen)))
    if cache is not None and cache.get("key") == key:
        timed, tables = cache["timed"], cache["tables"]
    else:
        timed, tables = _read_router_frames(Archive.open(path, readonly=True), [index[k] for k in chosen], tz)
        if cache is not None:
            cache.clear()
            cache.update(key=key, timed=timed, tables=tables)
    before = [tb for tb in tables if tb.time is not None and tb.time <= time]
    table = before[-1] if before else None
    shown = [{"time": t, "text": text} for t, text in timed if time - around <= t <= time + around]
    return {
        "table": None if table is None else {
            "time": table.time,
            "routes": [{"name": r.name, "submitted": r.submitted, "max_jobs": r.max_jobs, "idle": r.idle,
                        "max_idle": r.max_idle, "throttle": r.throttle_per_window, "throttle_text": r.throttle_text,
                        "recent_started": r.recent_started, "recent_succeeded": r.recent_succeeded,
                        "recent_failed": r.recent_failed} for r in table.rows]},
        "lines": shown[:ROUTER_LOG_LINES],
    }


def _read_router_frames(arch: Archive, frames: list[dict], tz: str | None) -> tuple[list, list]:
    """The lines of router-log ``frames`` (in order) with their times, and the routing tables
    they hold (a table may run from one frame into the next)."""
    # the JobRouterLog parser: only for an archive recorded with --router-log (off replay's start-up)
    from engine.router.routerlog import RouterLogParser, parse_stamp  # noqa: PLC0415 - only with a router log

    parser = RouterLogParser(tz)
    timed: list[tuple[float, str]] = []
    for frame in frames:
        t = frame["t0"]
        for text in arch.router_frame(frame):
            t = parse_stamp(text, tz) or t
            parser.feed(text)
            timed.append((t, text))
    parser.finish()
    return timed, parser.tables


def state_near(path: str | os.PathLike, txn: int) -> JobQueue:
    """The state after archive transaction ``txn``, read from one state checkpoint and the frames
    of one segment after it (what a seek into the middle of a month costs): the segment's last
    inner state checkpoint before ``txn + 1`` (engine.record.archive), else its first."""
    arch = Archive.open(path, readonly=True)
    lines = arch.index_lines()
    starts = [(x["first"], x["seg"]) for x in lines if x["kind"] == "segment"]
    k = starts[max(0, bisect_right([f for f, _ in starts], txn) - 1)][1]
    inner = max((x for x in lines if x["kind"] == "state" and x["seg"] == k and x["txn"] <= txn + 1),
                key=lambda x: x["txn"], default=None)
    parts = [arch.read_state(k) if inner is None else arch.inner_state(inner)]
    for first, count, raw in arch.frames(k):
        if inner is not None and first < inner["txn"]:
            continue
        if first > txn:
            break
        if first + count - 1 > txn:  # cut the frame after transaction ``txn``
            ends: list[int] = []
            scan_steps(raw, 0, len(raw), _Null(), lambda _s, e, _l, _r, _e=None: ends.append(e), None)
            raw = raw[: ends[txn - first]]
        parts.append(raw)
    data = b"".join(parts)
    # the fast loader when it takes the text (it gives up on anything unusual: then step by step)
    q = committed_state(data)
    return q if q is not None else load_state(data)


class _Null:
    @staticmethod
    def apply_quiet(records: list) -> int:
        return 0
