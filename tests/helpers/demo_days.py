"""Days of demo history: the shipped 3-hour recording repeated end to end (issue 27's benches
and archive tests).

sample_configs/recordings/demo-3h.job_queue.log is copied ``copies`` times after one 107; copy
``k``'s ``106 #`` stamps are shifted by ``3 h × k``. Each copy re-submits the same cluster ids (a
real CE would not; the records are the same size).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from tests.helpers.paths import REPO

DEMO = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"
_STAMP = re.compile(rb"^106 # (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)$", re.M)


def long_log(copies: int, data: bytes | None = None) -> bytes:
    """The demo ``copies`` times, each copy's 106 stamps shifted by 3 h more."""
    return b"".join(iter_long_log(copies, data))


def write_long_log(path, copies: int) -> int:
    """:func:`long_log` written to ``path`` one copy at a time (30 days are 1.5 GB); its size."""
    size = 0
    with open(path, "wb") as fh:
        for part in iter_long_log(copies):
            fh.write(part)
            size += len(part)
    return size


def iter_long_log(copies: int, data: bytes | None = None):
    """:func:`long_log`'s parts: the 107 line, then each copy."""
    data = DEMO.read_bytes() if data is None else data
    head, body = data.split(b"\n", 1)
    yield head + b"\n"
    for k in range(copies):
        shift = timedelta(hours=3 * k)

        def sub(m, shift=shift):
            t = datetime.fromisoformat(m[1].decode()) + shift
            return b"106 # " + t.isoformat(timespec="microseconds").encode()

        yield _STAMP.sub(sub, body) if k else body
