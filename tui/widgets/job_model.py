"""The jobs view's data model: filter and sort over the engine's job rows, without widgets.

Invariants and decisions:

- Rows are the snapshot's jobs sequence (the engine's chunked ``engine.rowseq.RowSeq``, or a
  tuple), never copied on adoption; the model holds a list of indices (``order``) into it — the
  rows that pass the filter, in the chosen sort order. The default (queue order, no filter)
  costs nothing, so adopting a new table of 100,000 jobs costs what is drawn, not the queue.
- Loops over every row iterate the sequence (C speed for both kinds). The one loop that indexes
  rows at random (a constraint over a sorted view) reads a flat tuple of them, made at most once
  per jobs sequence (``_flat``): an index into a ``RowSeq`` is a Python call, ~5x a tuple's.
- The lower-case search text of each row and each column's sort keys are built lazily, once per
  ``jobs_version`` (the engine bumps it only when the queue changed), so a keypress that narrows
  the filter scans strings and a re-sort reuses the keys.
- ``prepare`` builds the search text and the job-id sort order ahead of time; the jobs screen
  runs it in a thread worker when a large jobs tuple arrives, so the first filter keystroke or
  sort does not pay for 100,000 rows. Results are adopted under a lock and only if the rows are
  still the same ones (a newer tuple may have arrived meanwhile).
- ``position_of`` (where the selected job went after a new tuple, filter or sort) looks the job
  up near its last known row, else (the engine's table, in job id order) by bisection, else (any
  other sequence) in an index job id -> row built at most once per jobs tuple
  (in ``prepare``'s thread when the jobs screen prepares it), then finds the row in the view order: the row number itself in queue
  order, else one C-speed ``list.index`` over integers — no Python loop over the rows.
- ``route_of`` names a source row's route from its routed copy when the row lacks one; the copy
  -> route map (``CopyRoutes``) is kept across jobs sequences and reads only the chunks a new
  ``RowSeq`` did not share with the last, so such a row on screen does not cost a pass over the
  queue per snapshot.
- A ClassAd constraint is evaluated by the caller (it needs the ClassAd layer and may be slow);
  the model takes its result as a set of job ids (ids survive a new jobs tuple; jobs that
  arrived since are not shown until the constraint is evaluated again).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Sequence

from tui.engine_api import RowSeq, job_order, row_order
from engine.contract.codes import STATUS_NAMES
from engine.contract.snapshot import JobRow


HINT_WINDOW = 64  # rows either side of a job's last known row tried before the full index


def job_key(job: str) -> tuple[int, int]:
    c, _, p = job.partition(".")
    try:
        return int(c), int(p or 0)
    except ValueError:
        return (1 << 62, 0)


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    width: int  # the most it takes (the hold reason: the terminal's width)
    sort: Callable[[JobRow], object]
    least: int = 0  # narrowest it goes when the terminal is narrow (0: its title's width)


# Ordered by what an operator reads first: the id (pinned), the status, whose and where, then the
# hold reason (what a CE operator reads first about a held job); the rest scroll in from the right.
COLUMNS: tuple[Column, ...] = (
    Column("job", "Job", 12, lambda r: job_key(r.job)),
    Column("status", "Status", 10, lambda r: r.status),
    Column("owner", "Owner", 24, lambda r: r.owner, 6),
    Column("route", "Route", 28, lambda r: r.route or "", 8),
    Column("cmd", "Cmd / hold reason", 10_000, lambda r: r.cmd, 24),
    Column("since", "In status", 10, lambda r: -(r.entered_status or 0)),
    Column("kind", "Kind", 7, lambda r: r.kind),
    Column("link", "To/From", 14, lambda r: job_key(r.routed_to or r.routed_from or "")),
    Column("qdate", "Submitted", 12, lambda r: r.qdate or 0),
)
COLUMN_KEYS = tuple(c.key for c in COLUMNS)


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def resolve_column(name: str) -> str:
    """A column's key from its key or its header title, any case, spaces and ``/`` ignored
    (``Submitted``, ``in status``, ``To/From``, ``hold reason`` …)."""
    want = _norm(name)
    for c in COLUMNS:
        if want in (_norm(c.key), _norm(c.title)):
            return c.key
    for c in COLUMNS:  # a word of a title: "hold", "reason", "cmd"
        if want and any(want == _norm(w) for w in c.title.split()):
            return c.key
    raise ValueError(f"unknown column {name!r}; columns: {', '.join(c.title for c in COLUMNS)}")


def search_text(r: JobRow) -> str:
    return " ".join(
        (r.job, STATUS_NAMES.get(r.status, str(r.status)), r.owner, r.kind, r.route or "",
         r.routed_to or "", r.routed_from or "", r.cmd, r.hold_reason or "")
    ).lower()


def copy_routes(rows: Sequence[JobRow]) -> dict[str, str]:
    """Routed copy id -> its route, to name the route of source jobs."""
    return {r.job: r.route for r in rows if r.kind == "routed" and r.route}


class CopyRoutes:
    """``copy_routes`` kept from one jobs sequence to the next: of the engine's ``RowSeq`` only
    the chunks the last one did not have are read (the others are the same tuples), so a source
    row without a route on screen costs what changed per new sequence, not a pass over 100,000
    rows. Any other sequence is read whole. Job ids are unique in a sequence, so a job that moved
    to another chunk is dropped with its old chunk before it is added with its new one."""

    def __init__(self) -> None:
        self.parts: dict[int, tuple[tuple, dict[str, str]]] = {}  # id(chunk) -> (chunk, its copies)
        self.merged: dict[str, str] = {}

    def of(self, rows: Sequence[JobRow]) -> dict[str, str]:
        if not isinstance(rows, RowSeq):
            self.parts, self.merged = {}, {}
            return copy_routes(rows)
        parts, merged = self.parts, self.merged
        chunks = {id(c): c for c in rows.chunks}
        for k in [k for k, (c, _) in parts.items() if chunks.get(k) is not c]:
            for job in parts.pop(k)[1]:
                del merged[job]
        for k, c in chunks.items():
            if k not in parts:
                part = parts[k] = (c, copy_routes(c))
                merged.update(part[1])
        return merged


class JobModel:
    def __init__(self) -> None:
        self.rows: Sequence[JobRow] = ()
        self.version: int | None = None
        self.text = ""
        self.constraint_hits: frozenset[str] | None = None
        self.sort_key: str | None = None
        self.reverse = False
        self.order: Sequence[int] = range(0)
        self._hay: list[str] | None = None
        self._sorted: dict[str, list[int]] = {}
        self._lock = threading.Lock()
        self._copy_routes: dict[str, str] | None = None
        self._copies = CopyRoutes()  # kept across jobs sequences (not reset by ``_take``)
        self._row_of: dict[str, int] | None = None  # job id -> row index in ``rows``
        self._flat_rows: tuple[JobRow, ...] | None = None  # ``rows`` as a tuple (``_flat``)
        self._hint: dict[str, int] = {}  # the last job looked up -> its row index then
        # Search text by row object: the engine rebuilds only changed rows, so consecutive jobs
        # tuples share most JobRow objects and their text is reused (the row is kept in the
        # value, so its id cannot be recycled while cached).
        self._text_cache: dict[int, tuple[JobRow, str]] = {}

    def _build_haystack(self, rows: Sequence[JobRow]) -> list[str]:
        cache, fresh, hay = self._text_cache, {}, []
        for r in rows:
            entry = cache.get(id(r))
            if entry is None or entry[0] is not r:
                entry = (r, search_text(r))
            fresh[id(r)] = entry
            hay.append(entry[1])
        self._text_cache = fresh  # rows that left the queue are dropped
        return hay

    def prepare(self, rows: Sequence[JobRow], keys: tuple[str, ...] = ("job",)) -> None:
        """Build search text and sort orders for ``rows`` (any thread); adopted if still current."""
        hay = self._build_haystack(rows)
        orders = {k: self._sort_order(rows, k) for k in keys}
        row_of = {r.job: i for i, r in enumerate(rows)}
        with self._lock:
            if rows is self.rows:
                if self._hay is None:
                    self._hay = hay
                if self._row_of is None:
                    self._row_of = row_of
                for k, idx in orders.items():
                    self._sorted.setdefault(k, idx)

    @staticmethod
    def _sort_order(rows: Sequence[JobRow], key: str) -> list[int]:
        col = COLUMNS[COLUMN_KEYS.index(key)]
        keys = [col.sort(r) for r in rows]
        return sorted(range(len(rows)), key=keys.__getitem__)

    def set_rows(self, rows: Sequence[JobRow], version: int) -> bool:
        """Adopt a new jobs tuple; returns True when the view must be recomputed."""
        if version == self.version and rows is self.rows:
            return False
        self._take(rows, version)
        self._recompute()
        return True

    def _take(self, rows: Sequence[JobRow], version: int, copies: dict[str, str] | None = None) -> None:
        """A new jobs tuple: what was derived from the old one is dropped."""
        with self._lock:
            self.rows, self.version = rows, version
            self._hay = None
            self._sorted = {}
            self._copy_routes = copies  # None: built from the rows when first needed
            self._row_of = None
            self._flat_rows = None

    def adopt(self, rows: Sequence[JobRow], version: int, hits: frozenset[str], order: list[int],
              copies: dict[str, str] | None = None) -> bool:
        """Adopt a jobs tuple already narrowed to ``hits`` by the caller (in a worker): ``order``
        is the rows whose job is in ``hits``, in queue order. Used by views without a text filter
        or sort (the route detail's jobs); with one set, the model recomputes as usual. ``copies``:
        the tuple's ``copy_routes``, when the caller built it already (not again on this thread)."""
        if version == self.version and rows is self.rows and hits == self.constraint_hits:
            return False
        self._take(rows, version, copies)
        self.constraint_hits = hits
        if self.text or self.sort_key:
            self._recompute()
        else:
            self.order = order
        return True

    def set_filter(self, text: str) -> None:
        text = text.strip().lower()
        narrowing = bool(self.text) and text.startswith(self.text)
        previous, self.text = self.order, text
        if narrowing:
            hay = self._haystack()
            self.order = [i for i in previous if text in hay[i]]
        else:
            self._recompute()

    def set_constraint_hits(self, hits: frozenset[str] | None) -> None:
        self.constraint_hits = hits
        self._recompute()

    def set_sort(self, key: str | None, reverse: bool = False) -> None:
        if key is not None:
            key = resolve_column(key)
        self.sort_key, self.reverse = key, reverse
        self._recompute()

    @staticmethod
    def from_copy(r: JobRow) -> bool:
        """A source job whose row lacks its route: :meth:`route_of` takes its routed copy's."""
        return not r.route and bool(r.routed_to)

    def route_of(self, r: JobRow) -> str | None:
        """The row's route; for a source job whose row lacks it, the route of its routed copy."""
        if not self.from_copy(r):
            return r.route
        if self._copy_routes is None:
            self._copy_routes = self._copies.of(self.rows)
        return self._copy_routes.get(r.routed_to)

    def row(self, position: int) -> JobRow:
        return self.rows[self.order[position]]

    def rows_between(self, start: int, stop: int) -> list[JobRow]:
        """The rows at view positions ``start`` to ``stop - 1`` (clipped to the view): in queue
        order one slice of the rows (a ``RowSeq`` slice walks its chunks at C speed), else one
        lookup per row."""
        order = self.order[max(0, start):max(0, stop)]
        if isinstance(order, range):
            return list(self.rows[order.start:order.stop]) if order.step == 1 else [self.rows[i] for i in order]
        rows = self.rows
        return [rows[i] for i in order]

    def __len__(self) -> int:
        return len(self.order)

    def position_of(self, job: str) -> int | None:
        """The view position of ``job`` (None when it is not shown): an index lookup, see above."""
        i = self.row_index(job)
        if i is None:
            return None
        order = self.order
        if isinstance(order, range):
            return order.index(i) if i in order else None
        try:
            return order.index(i)  # a list of ints: one C-level pass, no Python per row
        except ValueError:
            return None

    def row_index(self, job: str) -> int | None:
        """Index of ``job`` in ``rows``. The job's last known row and its neighbourhood are
        tried first (consecutive tuples mostly shift by the few jobs added or removed), then the
        id -> row index of this tuple, built at most once per tuple."""
        rows = self.rows
        hint = self._hint.get(job)
        if hint is not None:
            lo, hi = max(0, hint - HINT_WINDOW), min(len(rows), hint + HINT_WINDOW + 1)
            for i in sorted(range(lo, hi), key=lambda k: abs(k - hint)):
                if rows[i].job == job:
                    self._hint = {job: i}
                    return i
        if getattr(rows, "key", None) is row_order and self._row_of is None:  # the engine's table
            i = rows.find(job_order(job), lambda r: r.job == job)  # ids not c.p may share a key
            self._hint = {job: i} if i is not None else {}
            return i
        row_of = self._row_of
        if row_of is None:
            row_of = {r.job: k for k, r in enumerate(rows)}
            with self._lock:
                if rows is self.rows:
                    self._row_of = row_of
        i = row_of.get(job)
        self._hint = {job: i} if i is not None else {}
        return i

    def _flat(self) -> Sequence[JobRow]:
        """``rows`` for indexing in a loop: itself when a tuple or list, else a tuple of it made
        once per jobs sequence (only views that cost O(rows) anyway ask for it)."""
        rows = self.rows
        if isinstance(rows, (tuple, list)):
            return rows
        flat = self._flat_rows
        if flat is None:
            flat = tuple(rows)
            with self._lock:
                if rows is self.rows:
                    self._flat_rows = flat
        return flat

    def _haystack(self) -> list[str]:
        hay = self._hay
        if hay is None:
            hay = self._build_haystack(self.rows)
            with self._lock:
                self._hay = hay
        return hay

    def _base_order(self) -> Sequence[int]:
        n = len(self.rows)
        if self.sort_key is None:
            return range(n)
        idx = self._sorted.get(self.sort_key)
        if idx is None:
            idx = self._sort_order(self.rows, self.sort_key)
            with self._lock:
                self._sorted[self.sort_key] = idx
        return idx[::-1] if self.reverse else idx

    def _recompute(self) -> None:
        order = self._base_order()
        if self.constraint_hits is not None:
            hits = self.constraint_hits
            if isinstance(order, range):  # queue order: one pass over the rows, no index
                order = [i for i, r in enumerate(self.rows) if r.job in hits]
            else:
                rows = self._flat()
                order = [i for i in order if rows[i].job in hits]
        if self.text:
            hay, text = self._haystack(), self.text
            order = [i for i in order if text in hay[i]]
        self.order = order
