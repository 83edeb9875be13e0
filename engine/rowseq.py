"""A persistent sequence in chunks: the jobs table a snapshot hands to the UI thread.

Why: the jobs table of 100,000 rows changes by a handful of rows per engine step. Handing out a
fresh ``tuple`` of it copied 100,000 references per snapshot (and freeing the previous one
dropped as many), so a snapshot cost grew with the queue, not with what changed (issue 14
item 2). A :class:`RowSeq` holds its items in chunks (tuples of a few hundred); the builder
(:class:`ChunkedRows`) replaces only the chunks a change touches, so two consecutive sequences
share every unchanged chunk, and handing one out costs O(number of chunks).

Invariants and decisions:

- A ``RowSeq`` is immutable: its ``chunks`` is a tuple of non-empty tuples and never changes
  after construction (the UI thread reads one while the engine thread builds the next).
- ``starts[c]`` is the index of the first item of chunk ``c``: integer indexing is one bisection
  over the chunks plus a tuple index; iteration is ``itertools.chain`` over the chunks (C speed).
  A loop over every row should iterate (or use :meth:`RowSeq.chunks`), not index.
- One handed out by ``ChunkedRows`` knows its order (``key``): ``first_at`` finds an item by its
  sort key in O(log n), with no index to build.
- It compares equal to a tuple or list with the same items (and hashes like that tuple), so it
  stands where a ``tuple`` of rows stood; a slice is a plain ``tuple``.
- ``ChunkedRows`` keeps items in the order of a sort key (``key(item)``); items with equal sort
  keys keep the order they arrived in. Chunks are split past ``2 * size`` items and merged with
  a neighbour below ``size // 4``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate, chain, islice
from typing import Any, Callable, Iterable, Iterator

CHUNK = 256  # items per chunk when built in bulk; a change copies at most 2 * CHUNK references
# (256: a change at 100k jobs costs ~10% less than with 512; its 391 chunks hand out in ~10 us)


class RowSeq(Sequence):
    """An immutable sequence stored as a tuple of tuples (module docstring)."""

    __slots__ = ("chunks", "starts", "_len", "key")

    def __init__(self, chunks: Iterable[tuple] = ()) -> None:
        self._set(tuple(c if type(c) is tuple else tuple(c) for c in chunks if c))  # never a list
        self.key: Callable[[Any], Any] | None = None  # the sort key its items are in order of, if any

    def _set(self, chunks: tuple[tuple, ...]) -> None:
        self.chunks: tuple[tuple, ...] = chunks
        lengths = list(accumulate(map(len, chunks)))
        self._len = lengths[-1] if lengths else 0
        self.starts: list[int] = [0] + lengths[:-1] if lengths else []

    @classmethod
    def _of_chunks(cls, chunks: list[tuple], key: Callable[[Any], Any]) -> "RowSeq":
        """From chunks known to be non-empty tuples in ``key`` order (``ChunkedRows``): C-speed
        steps only."""
        seq = cls.__new__(cls)
        seq._set(tuple(chunks))
        seq.key = key
        return seq

    def first_at(self, k: Any) -> int:
        """The index of the first item whose sort key is not less than ``k`` (``len`` if none):
        two bisections, over the chunks and in one. Only for a sequence in ``key`` order (one
        that ``ChunkedRows`` handed out)."""
        key, chunks = self.key, self.chunks
        if key is None:
            raise TypeError("RowSeq.first_at needs a sequence kept in key order")
        c = bisect_left(chunks, k, key=lambda chunk: key(chunk[-1]))  # the first chunk ending at or after k
        if c == len(chunks):
            return self._len
        return self.starts[c] + bisect_left(chunks[c], k, key=key)

    def find(self, k: Any, match: Callable[[Any], bool]) -> int | None:
        """The index of the first item with sort key ``k`` for which ``match`` holds (None if
        none): ``first_at`` then a walk over the items sharing that key."""
        key, n = self.key, self._len
        i = self.first_at(k)
        while i < n:
            item = self[i]
            if key(item) != k:  # type: ignore[misc]
                return None
            if match(item):
                return i
            i += 1
        return None

    @classmethod
    def of(cls, items: Iterable, size: int = CHUNK) -> "RowSeq":
        items = items if isinstance(items, (tuple, list)) else tuple(items)
        return cls(tuple(items[i:i + size]) for i in range(0, len(items), size))

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._len)
            if step != 1:
                return tuple(self)[i]
            if stop <= start:
                return ()
            c = bisect_right(self.starts, start) - 1
            return tuple(islice(chain.from_iterable(islice(self.chunks, c, None)),
                                start - self.starts[c], stop - self.starts[c]))
        n = self._len
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("RowSeq index out of range")
        starts = self.starts
        c = bisect_right(starts, i) - 1
        return self.chunks[c][i - starts[c]]

    def __iter__(self) -> Iterator:
        return chain.from_iterable(self.chunks)

    def __reversed__(self) -> Iterator:
        return chain.from_iterable(map(reversed, reversed(self.chunks)))

    def __contains__(self, item: object) -> bool:
        return any(item in c for c in self.chunks)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RowSeq):
            if self.chunks == other.chunks:
                return True
            return self._len == other._len and all(a == b for a, b in zip(self, other))
        if isinstance(other, (tuple, list)):
            return self._len == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"RowSeq({self._len} items in {len(self.chunks)} chunks)"


EMPTY = RowSeq()


class ChunkedRows:
    """The engine side: items in sort-key order, changed in place, handed out as ``RowSeq``.

    ``insert``, ``remove`` and ``replace`` change the working chunks (a chunk that is changed is
    copied into a list once, the published tuples are never touched); ``freeze`` puts the changed
    chunks back as tuples (split or merged as needed) and returns a ``RowSeq`` sharing every
    other chunk with the previous one."""

    def __init__(self, key: Callable[[Any], Any], size: int = CHUNK) -> None:
        self.key = key
        self.size = size
        self.chunks: list = []  # tuples, or lists for chunks changed since the last freeze
        self.firsts: list = []  # a lower bound of the sort key of each chunk's items
        self.open: set[int] = set()  # indexes of the chunks that are lists
        self.frozen: RowSeq = EMPTY

    def reset(self, items: Sequence) -> None:
        """All items at once (already in sort-key order)."""
        size = self.size
        self.chunks = [tuple(items[i:i + size]) for i in range(0, len(items), size)]
        self.firsts = [self.key(c[0]) for c in self.chunks]
        self.open = set()
        self.frozen = RowSeq._of_chunks(self.chunks, self.key)

    def _chunk(self, c: int) -> list:
        chunk = self.chunks[c]
        if c not in self.open:
            chunk = self.chunks[c] = list(chunk)
            self.open.add(c)
        return chunk

    def _find(self, item: Any) -> tuple[int, int]:
        """Chunk and position of ``item`` (compared by identity after its sort key)."""
        k = self.key(item)
        key, firsts, chunks = self.key, self.firsts, self.chunks
        c = max(0, bisect_left(firsts, k) - 1)
        while c < len(chunks) and firsts[c] <= k:
            chunk = chunks[c]
            j = bisect_left(chunk, k, key=key)
            while j < len(chunk) and key(chunk[j]) == k:
                if chunk[j] is item:
                    return c, j
                j += 1
            c += 1
        raise ValueError("item not in ChunkedRows")

    def insert(self, item: Any) -> None:
        """Put ``item`` after every item whose sort key is not greater than its own."""
        k = self.key(item)
        if not self.chunks:
            self.chunks.append([item])
            self.firsts.append(k)
            self.open.add(0)
            return
        c = max(0, bisect_right(self.firsts, k) - 1)
        chunk = self._chunk(c)
        chunk.insert(bisect_right(chunk, k, key=self.key), item)
        if k < self.firsts[c]:
            self.firsts[c] = k

    def remove(self, item: Any) -> None:
        c, j = self._find(item)
        del self._chunk(c)[j]

    def replace(self, old: Any, new: Any) -> None:
        """``new`` in the place of ``old``; both have the same sort key."""
        c, j = self._find(old)
        self._chunk(c)[j] = new

    def freeze(self) -> RowSeq:
        if not self.open:
            return self.frozen
        chunks, firsts, key = self.chunks, self.firsts, self.key
        size, low = self.size, max(1, self.size // 4)
        # last to first, so splitting or dropping a chunk does not move the ones still to do
        for c in sorted(self.open, reverse=True):
            chunk = chunks[c]
            if len(chunk) < low and c + 1 < len(chunks):
                chunk = chunk + list(chunks[c + 1])  # a small chunk joins its right neighbour
                end = c + 2
            else:
                end = c + 1
            if not chunk:
                pieces: list[tuple] = []
            elif len(chunk) > 2 * size:
                pieces = [tuple(chunk[i:i + size]) for i in range(0, len(chunk), size)]
            else:
                pieces = [tuple(chunk)]
            chunks[c:end] = pieces
            firsts[c:end] = [key(p[0]) for p in pieces]
        self.open = set()
        self.frozen = RowSeq._of_chunks(chunks, key)
        return self.frozen
