"""The frames of the archive (issue 27): their header, how one write of transactions is cut into
frames and compressed, and the held small frames a re-frame rewrites (``_Run``, ``_Compress``).
The archive's layout, write order and re-framing are described in ``engine.record.archive``;
moved out of it (the archive's files and their kill-safe order stay there).
"""

from __future__ import annotations

import struct
import threading
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Iterator

import zstandard

from engine.record.checkpoint import RAW, Txn

MAGIC = b"RDF1"
HEAD = struct.Struct("<4sIQIddI")  # magic, payload length, first txn, count, t0, t1, crc32
LEVEL = 3
MAX_FRAME = 1 << 26  # a frame's payload is never larger (a corrupt length is caught before reading)


@dataclass
class _Run:
    """Small frames written and held for a re-frame (``engine.record.archive``'s docstring): ``recorder.json`` before
    the first, and what their writes were given, in order."""

    before: dict  # Meta.as_json() before the first small frame
    new_segment: list[dict] | None  # the first one started a segment: its index line
    frame_bytes: int
    txns: list[Txn] = field(default_factory=list)
    extra: list[dict] = field(default_factory=list)
    router: list[tuple[float, str]] = field(default_factory=list)
    raw: int = 0
    figures: dict | None = None  # recorder.json's figures after the last small frame
    writes: int = 0
    merged: "_Compress | None" = None  # full: no small frame joins it, its frames compressed on a thread


class _Compress(threading.Thread):
    """A full run's merged frames compressed on a thread (zstd does not hold the GIL while it
    compresses): the run loop reads the log meanwhile, and the write that lands the re-frame
    finds them ready. It only reads the run's transactions (bytes, never changed); every file
    is still written by the loop's thread, in the kill-safe order."""

    def __init__(self, txns: list[Txn], frame_bytes: int, router: list[tuple[float, str]]) -> None:
        super().__init__(name="routedeck-record-reframe", daemon=True)
        self.args = (list(txns), frame_bytes, list(router))
        self.result: tuple[list[bytes], bytes] | None = None
        self.start()

    def run(self) -> None:
        self.result = _compress(*self.args)

    def payloads(self) -> tuple[list[bytes], bytes]:
        self.join()
        if self.result is None:  # it failed (it only compresses): compressed again by the caller
            return _compress(*self.args)
        return self.result


def _chunks(txns: list[Txn], frame_bytes: int) -> Iterator[tuple[int, int]]:
    """(i, j): the transactions ``txns[i:j]`` of each frame one write of ``txns`` makes: greedy,
    at least one transaction, at most ``frame_bytes`` of them unless one alone is more (found by
    a bisection of the running sizes: no step per transaction in Python)."""
    ends = list(accumulate(map(len, map(RAW, txns))))  # ends[j]: bytes of txns[:j + 1]
    n = len(txns)
    i = done = 0
    while i < n:
        j = max(bisect_right(ends, done + frame_bytes, i, n), i + 1)
        yield i, j
        done = ends[j - 1]
        i = j


def _router_body(router: list[tuple[float, str]]) -> bytes:
    return "".join(text + "\n" for _t, text in router).encode("utf-8", "surrogateescape")


def _compress(txns: list[Txn], frame_bytes: int, router: list[tuple[float, str]]) -> tuple[list[bytes], bytes]:
    """The compressed payloads of the frames of one write of ``txns`` (``_chunks``) and of its
    router-log frame (b"" without router lines)."""
    cctx = zstandard.ZstdCompressor(level=LEVEL)
    frames = [cctx.compress(b"".join(map(RAW, txns[i:j]))) for i, j in _chunks(txns, frame_bytes)]
    return frames, cctx.compress(_router_body(router)) if router else b""
