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
    data = DEMO.read_bytes() if data is None else data
    head, body = data.split(b"\n", 1)
    parts = [head + b"\n"]
    for k in range(copies):
        shift = timedelta(hours=3 * k)

        def sub(m, shift=shift):
            t = datetime.fromisoformat(m[1].decode()) + shift
            return b"106 # " + t.isoformat(timespec="microseconds").encode()

        parts.append(_STAMP.sub(sub, body) if k else body)
    return b"".join(parts)
