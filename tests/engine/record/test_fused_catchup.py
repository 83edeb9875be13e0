"""The recorder's catch-up reads a chunk of the log in one loop (``Recorder._chunk_steps``, issue 27):
it must give the steps one ``scan_steps`` over the same bytes gives, whatever the log holds (plain
transactions, 104s, records outside a transaction, stray or odd 105/106 lines, corrupt lines,
non-ASCII values, an uncommitted trailing transaction)."""

from __future__ import annotations

import random

from engine.queue.steps import scan_steps
from engine.queue.records import plain_record
from engine.queue.timeline import _STAMP_LINE, parse_comment_time, stamp_time
from engine.record.chunks import _Sink
from engine.record.recorder import Recorder
from engine.record.report import Report
from tests.helpers.paths import REPO

DEMO = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"
_LINES = DEMO.read_bytes()[:60_000].split(b"\n")[1:-1]  # whole lines after the 107
ODD = [b"104 1.0 HoldReason", b"103 1.0 Weird \t", b"103 1.0 Empty ", b"106 ", b"105 ", b"106 junk", b"xyz",
       b"101 9.0 Job Machine", b"102 9.0", b"103 1.0 Name \"caf\xc3\xa9\"", b"106 # 2026-11-21T00:00:01.5",
       b"105", b"106", b"103 0.0 NextClusterNum 7", b"", b"103 1.0 Tab\tx 1",
       b"106 # 2026-11-21T00:00:02.25 NONDURABLE", b"106 # 2026-13-45T00:00:01.5", b"106 #2026-11-21T00:00:03"]


def _whole(data: bytes, end: int):
    steps, problems = [], []
    scan_steps(data, 0, end, _Sink(), lambda s, e, _l, r, el=None: steps.append((s, e, el, list(r))),
               lambda n, m: problems.append((n, m)))
    return steps, [p for p in problems if "has no EndTransaction" not in p[1]]


def _fused(rec: Recorder, data: bytes, end: int):
    rep = Report()
    steps = []
    for s, e, el, r, f, stamp in rec._chunk_steps(data, end, rec.log, rep):
        if f is None:
            assert stamp is None
            steps.append((s, e, el, list(r)))
            continue
        # the stamp read in the match: exactly when the 106 line is the schedd's, the same time
        assert (stamp is not None) == (_STAMP_LINE(el) is not None), el
        if stamp is not None:
            assert stamp_time(*stamp, "UTC") == parse_comment_time(el, "UTC"), el
        records = [(103, k, a, v) if o == "3" else plain_record(o, k, a, v) for o, k, a, v in f]
        assert (r or []) == [x[1] for x in records if x[0] in (101, 102)]  # the keys of its 101s and 102s
        steps.append((s, e, el, records))
    return steps, rep.problems


def test_the_fused_loop_gives_the_steps_of_one_scan(tmp_path):
    rec = Recorder(tmp_path / "job_queue.log", tmp_path / "arch", tz="UTC")
    rng = random.Random(27)
    for n in range(200):
        lines = list(_LINES[: rng.randrange(20, 400)])
        for _ in range(rng.randrange(0, 6)):
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(ODD))
        for _ in range(rng.randrange(0, 3)):
            del lines[rng.randrange(len(lines))]
        data = b"\n".join(lines) + b"\n" + (b"103 1.0 Torn 1" if n % 3 == 0 else b"")
        end = data.rfind(b"\n") + 1
        steps, problems = _whole(data, end)
        got, got_problems = _fused(rec, data, end)
        assert got == steps, n
        want = [f"{rec.log}: {m} (line {line} of the part read)" for line, m in problems]
        assert got_problems == want, n
