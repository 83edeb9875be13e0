"""The job queue log loader's two paths, run alone for the tests that compare them: the fast
loader (``engine.queue.reader._fast``) and the record-by-record reference
(``engine.queue.plain_loader.load_reference``), each on a fresh queue set up as
``reader._load_bytes`` sets it up (a reload batch), plus the fast loader's chunk size for a block."""

from __future__ import annotations

from contextlib import contextmanager

from engine.queue import reader
from engine.queue.jobqueue import JobQueue
from engine.queue.plain_loader import load_reference


def reference_load(data: bytes, mode: str):
    """The reference loader's ``LoadResult``."""
    q = JobQueue()
    with q.batch():
        q._batch.reloaded = True  # as reader._load_bytes sets it up
        return load_reference(data, q, "x", mode, True)


def fast_load(data: bytes, mode: str, validate: bool = True):
    """The fast path's ``LoadResult``; None when it gives up (then the reference loader is used)."""
    q = JobQueue()
    try:
        with q.batch():
            q._batch.reloaded = True
            return reader._fast(data, q, "x", mode, validate)
    except reader._Bail:
        return None


@contextmanager
def chunk_size(n: int):
    """reader.CHUNK set to ``n`` bytes for the block."""
    saved, reader.CHUNK = reader.CHUNK, n
    try:
        yield
    finally:
        reader.CHUNK = saved
