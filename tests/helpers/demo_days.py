"""Days of demo history: the shipped 3-hour recording repeated end to end, as one schedd would
have written it (issue 27's benches and archive tests).

sample_configs/recordings/demo-3h.job_queue.log is copied ``copies`` times after one 107; copy
``k``'s ``106 #`` stamps are shifted by ``3 h × k`` and its cluster ids by ``k ×`` the clusters one
copy submits (keys, ``ClusterId``, ``NextClusterNum``, ``RoutedFromJobId``/``RoutedToJobId``): a
schedd never gives a cluster id twice. Copy 0 is the recording itself. A copy after the first
starts with one transaction that destroys what the copy before it left in the queue (its last
stamp), and without the recording's leading records outside a transaction (the ``0.0`` header ad,
which stays): so no key is created while it exists (the schedd writes a 102 before a key is
used again), the queue does not grow with the number of copies, and every copy's transactions
apply as they do in the recording.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from tests.helpers.paths import REPO

DEMO = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"
_STAMP = rb"^106 # (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)$"
# a 106 stamp (group 1), or a cluster number: in a key (``C.P``, ``0C.-1``, ``C.-2``, group 2; not
# the header ad ``0.0``), a ClusterId / NextClusterNum value (3, 5), the cluster of a
# RoutedFromJobId / RoutedToJobId value (4)
_PARTS = re.compile(_STAMP + rb'|^10[1-4] 0?([1-9][0-9]*)\.-?[0-9]+(?: (?:ClusterId|NextClusterNum) ([0-9]+)$'
                    rb'| Routed(?:From|To)JobId "([0-9]+)\.)?|^103 0\.0 NextClusterNum ([0-9]+)$', re.M)
_KEYS = re.compile(rb"^10([12]) ([!-~]+)", re.M)


def long_log(copies: int, data: bytes | None = None) -> bytes:
    """The demo ``copies`` times (module docstring)."""
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
    """:func:`long_log`'s parts: the 107 line, then each copy (module docstring)."""
    data = DEMO.read_bytes() if data is None else data
    head, body = data.split(b"\n", 1)
    yield head + b"\n"
    if copies <= 0:
        return
    yield body
    if copies == 1:
        return
    first = body.find(b"105 \n")
    rest = body[first:] if first > 0 else body
    # the text between the numbers and stamps (``texts``), and each of them in order: a stamp
    # (``stamps``) or a cluster number (``numbers``), ``order`` indexing numbers + stamps
    texts: list[bytes] = []
    numbers: list[int] = []
    stamps: list[datetime] = []
    kinds: list[bool] = []  # True: a stamp
    at = 0
    for m in _PARTS.finditer(rest):
        for g, (s, e) in enumerate(m.regs[1:], 1):
            if s < 0:
                continue
            texts.append(rest[at:s])
            if g == 1:
                stamps.append(datetime.fromisoformat(rest[s:e].decode()))
            else:
                numbers.append(int(rest[s:e]))
            kinds.append(g == 1)
            at = e
    texts.append(rest[at:])
    n_numbers, seen_n, seen_s = len(numbers), 0, 0
    order = []
    for stamp in kinds:
        order.append(n_numbers + seen_s if stamp else seen_n)
        seen_s += stamp
        seen_n += not stamp
    per_copy = max(numbers) - 1  # NextClusterNum's last value is one past the last cluster
    live: dict[bytes, None] = {}  # the keys the recording leaves, in the order they were made
    for m in _KEYS.finditer(body):
        if m[1] == b"1":
            live[m[2]] = None
        else:
            live.pop(m[2], None)
    live.pop(b"0.0", None)
    left = list(reversed(live))  # procs before their cluster's ads
    last_stamp = stamps[-1]
    key_cluster = re.compile(rb"^(0?)([1-9][0-9]*)(\.)")
    out: list = [None] * (len(texts) + len(order))
    out[0::2] = texts
    for k in range(1, copies):
        shift, before = timedelta(hours=3 * k), per_copy * (k - 1)
        stamp = (last_stamp + timedelta(hours=3 * (k - 1))).isoformat(timespec="microseconds").encode()
        gone = [b"102 " + key_cluster.sub(lambda m, d=before: m[1] + str(int(m[2]) + d).encode() + m[3], key)
                for key in left]
        yield b"105 \n" + b"\n".join(gone) + b"\n106 # " + stamp + b"\n"
        values = (" ".join(map(str, map((per_copy * k).__add__, numbers))).encode().split(b" ")
                  + [(t + shift).isoformat(timespec="microseconds").encode() for t in stamps])
        out[1::2] = map(values.__getitem__, order)
        yield b"".join(out)
