"""One index of the shipped recording (sample_configs/recordings/demo-3h.job_queue.log) per test
process and time zone, shared by the tests that only read it (issue 30: the suite's time).

``build_index`` of the 6 MB recording costs ~0.17 s, and each far seek builds a checkpoint with
the plain loader (``reader.committed_state``); a shared index builds each checkpoint once for all
its readers. The index's own text, step tables and plan are never written after ``build_index``,
and a built checkpoint is never written either (``LogIndex.built``: every seek forks one): the
``shipped_index`` fixture (tests/conftest.py) checks both after each test with :func:`digest`, so a
test that wrote to the shared index fails there instead of passing a changed index to the next.
"""

from __future__ import annotations

import hashlib

from engine.feeds.replay.index import LogIndex, build_index
from tests.helpers.paths import REPO

DEMO = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"


_BUILT: dict[str | None, LogIndex] = {}


def shipped_index(tz: str | None = None) -> LogIndex:
    """``build_index(DEMO, tz=tz)``, built once per process: read it, never write to it."""
    if tz not in _BUILT:
        _BUILT[tz] = build_index(DEMO, tz=tz)
    return _BUILT[tz]


def shipped_indexes() -> list[LogIndex]:
    """The indexes built so far in this process."""
    return list(_BUILT.values())


def digest(index: LogIndex) -> tuple[str, dict[int, str]]:
    """(the digest of what ``build_index`` wrote, {step: the digest of each built checkpoint})."""
    h = hashlib.blake2b(index.data, digest_size=16)
    for part in (index.starts, index.ends, index.lines, index.times):
        h.update(part.tobytes())
    h.update(bytes(index.sources))
    h.update(repr((index.path, index.plan, index.problems, index.records, index.creation_timestamp,
                   index.sequence, index.has_comments, index.head, index.step_records)).encode())
    return h.hexdigest(), {step: _queue_digest(q) for step, q in index.built.items()}


def _queue_digest(q) -> str:
    h = hashlib.blake2b(digest_size=16)
    h.update(repr((sorted(q._types.items()), sorted(q._kinds.items()), q._max_cluster, q.seq, q.created)).encode())
    for key in sorted(q._ads):
        h.update(repr((key, sorted(q._ads[key].items()))).encode())
    return h.hexdigest()
