"""How one write cuts its transactions into frames (``engine.record.frames._chunks``): greedy, at
least one transaction a frame, at most ``frame_bytes`` of them unless one alone is more. The
bisection is checked against the greedy loop it replaced (an equivalence guard: it passes on the
code before it too; an off-by-one in the bisection's bounds would otherwise show only in archive
byte comparisons outside the suite)."""

from __future__ import annotations

import random

from engine.record.checkpoint import Txn
from engine.record.frames import _chunks


def _greedy(txns: list[Txn], frame_bytes: int):
    i = 0
    while i < len(txns):
        j, raw = i, 0
        while j < len(txns) and (j == i or raw + len(txns[j].raw) <= frame_bytes):
            raw += len(txns[j].raw)
            j += 1
        yield i, j
        i = j


def test_frames_are_cut_as_the_greedy_loop_cuts_them():
    rng = random.Random(27)
    for _ in range(20_000):
        txns = [Txn(b"x" * rng.choice((0, 0, 1, 2, 3, 5, 8, 13, 40)), 0.0) for _ in range(rng.randrange(12))]
        frame_bytes = rng.choice((-1, 0, 1, 2, 3, 5, 8, 10, 16, 40, 100))
        assert list(_chunks(txns, frame_bytes)) == list(_greedy(txns, frame_bytes)), (
            frame_bytes, [len(t.raw) for t in txns])
