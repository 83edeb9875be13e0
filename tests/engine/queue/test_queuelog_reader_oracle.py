"""The fast queue-log loader against the record-by-record reference loader, internals and order.

htcondor.md §3 (§3.1 records, §3.3 the owner's reading rules, §3.5 the follower's):
``engine.queue.plain_loader.load_reference`` is the oracle. These tests compare more than the
snapshot the other reader tests compare: the order of the ads, of each ad's attributes, of the job
ids and of the other kinds of keys, and the name spellings learnt (first spelling wins,
``records.canonical_name``), on the bench log (``bench/queue_log.py``'s writer), on every real log
in the repository and on generated logs with mixed-case names, deletes, destroys and re-creations,
torn tails and bad values, read in chunks of any size.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.paths import REPO
from engine.queue import reader
from engine.queue.jobqueue import JobQueue

from tests.helpers.queuelog_paths import chunk_size, fast_load, reference_load

ROOT = REPO
REAL_LOGS = sorted(
    [*(ROOT / "tests" / "data" / "queuelog").glob("*.log"),
     ROOT / "sample_configs" / "recordings" / "demo-3h.job_queue.log",
     *Path("/work/shared/data/real").glob("**/*job_submission*.log")], key=str)


def _internals(q: JobQueue) -> tuple:
    return ([(k, list(a.items())) for k, a in q._ads.items()], list(q._types.items()), list(q._ids.items()),
            list(q._kinds.items()), list(q._canon.items()), list(q._lower.items()), q.seq, q.created,
            q.next_cluster_num() if hasattr(q, "next_cluster_num") else None)


def _result(res) -> tuple:
    return (_internals(res.queue), [tuple(p.as_dict().items()) for p in res.problems], res.records,
            res.next_offset, res.probe, res.clean, res.needs_rotation, res.fatal)


def _reference(data: bytes, mode: str) -> tuple:
    return _result(reference_load(data, mode))


def _fast(data: bytes, mode: str, validate: bool = True):
    """The fast path alone; None when it gives up (the reference loader would be used)."""
    res = fast_load(data, mode, validate)
    return _result(res) if res is not None else None


@pytest.fixture(scope="module")
def bench_log(tmp_path_factory) -> bytes:
    spec = importlib.util.spec_from_file_location("bench_queue_log", ROOT / "bench" / "queue_log.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    path = tmp_path_factory.mktemp("bench") / "job_queue.log"
    mod.write_log(path, 30_000, seed=7)
    return path.read_bytes()


@pytest.mark.parametrize("mode", ["owner", "follow"])
def test_bench_log_loads_as_the_reference_loads_it(bench_log, mode):
    """htcondor.md §3.3/§3.5: the bench's schedd-like log (clusters, status changes, 104s, 102s,
    commit comments), whole and with a torn tail, loads to exactly the reference loader's
    internals, in the same order; the fast path takes it itself."""
    for data in (bench_log, bench_log + b"105 \n103 0.0 CurrentTime 5\n103 0.0 Cu"):
        ref = _reference(data, mode)
        fast = _fast(data, mode)
        assert fast is not None, "the fast path gave up on the bench log"
        assert fast == ref
        assert _fast(data, mode, validate=False) == ref


@pytest.mark.slow
@pytest.mark.parametrize("path", REAL_LOGS, ids=lambda p: p.name)
@pytest.mark.parametrize("mode", ["owner", "follow"])
def test_real_logs_load_as_the_reference_loads_them(path, mode):
    """htcondor.md §3.1/§3.3/§3.5 on real and recorded logs (tests/data/queuelog, the shipped
    3-hour recording, /work/shared/data/real): same internals and order as the reference, with
    the loader's normal chunk size and with small chunks (runs cut anywhere)."""
    data = path.read_bytes()
    ref = _reference(data, mode)
    for size in (reader.CHUNK, 97):
        with chunk_size(size):
            fast = _fast(data, mode)
            full = reader.load_bytes(data, mode=mode, source="x")
        if fast is not None:
            assert fast == ref
        assert _result(full) == ref


KEYS = ["0.0", "1.0", "01.-1", "1.1", "0.1", "1.-2", "2.0", "02.-1", "1.-100", "x.y", "10.0"]
NAMES = ["JobStatus", "jobstatus", "JOBSTATUS", "Cmd", "cMD", "Foo", "FOO", "foo", "Args", "Owner"]
GOOD = ["1", "2", "-7", "1.5", '"x"', '"a b"', "true", "UNDEFINED", "A && B", '"a\\"b"', "{1, 2}", " 5"]
BAD = ["::", "(", "007", '"open', ""]


# Each strategy is built once: a strategy built inside the composite was built and validated again at
# every draw (about 60% of this file's CPU went to that). The draws, and so the logs, are the same.
_BAD_LOG = st.integers(0, 5)
_TXNS, _OPS, _RUN = st.integers(1, 25), st.integers(1, 6), st.integers(1, 8)
_WHAT, _TAIL = st.integers(0, 9), st.integers(0, 3)
_KEY, _NAME, _NEW_NAME = st.sampled_from(KEYS), st.sampled_from(NAMES), st.sampled_from(NAMES + ["NewName", "NEWNAME"])
_GOOD, _GOOD_OR_BAD = st.sampled_from(GOOD), st.sampled_from(GOOD + BAD)
_MYTYPE = st.sampled_from(["Job Machine", "Owner (empty)", "ClusterPvt (empty)", "(empty) (empty)"])
_COMMIT = st.sampled_from(["106 ", "106 # 2025-01-15T10:00:00.000000", "106 # 2025-01-15T10:00:01.000000 NONDURABLE"])


@st.composite
def _logs(draw):
    """Committed transactions and untransacted records over a few keys: creations (some of keys
    that already exist), destroys and re-creations, 103 runs with mixed-case names, 104s of known
    and new spellings; now and then a bad value, a torn tail or an unterminated last line."""
    bad = draw(_BAD_LOG) == 0
    values = _GOOD_OR_BAD if bad else _GOOD
    out = ["107 3 CreationTimestamp 1736935000"]
    live: set[str] = set()
    for _ in range(draw(_TXNS)):
        txn = draw(st.booleans())
        if txn:
            out.append("105 ")
        for _ in range(draw(_OPS)):
            key = draw(_KEY)
            what = draw(_WHAT)
            if key not in live or what == 0:
                if key in live:
                    out.append(f"102 {key}")
                out.append(f"101 {key} {draw(_MYTYPE)}")
                live.add(key)
                if draw(st.booleans()):  # a run on the new ad right after (the loop's cached ad)
                    out.append(f"103 {key} {draw(_NAME)} {draw(_GOOD)}")
            elif what == 1:
                out.append(f"104 {key} {draw(_NEW_NAME)}")
            elif what == 2 and draw(st.booleans()):
                out.append(f"102 {key}")
                live.discard(key)
            else:
                for _ in range(draw(_RUN)):
                    value = draw(values)
                    out.append(f"103 {key} {draw(_NAME)} {value}")
        if txn:
            out.append(draw(_COMMIT))
    data = ("\n".join(out) + "\n").encode()
    tail = draw(_TAIL)
    if tail == 1:
        data += b"105 \n103 1.0 JobStatus 2\n"
    elif tail == 2:
        data += b"103 1.0 Cmd"
    return data


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_logs(), st.integers(1, 300), st.sampled_from(["owner", "follow"]))
def test_generated_logs_load_as_the_reference_loads_them(data, chunk, mode):
    """htcondor.md §3.3/§3.5: any such log, read in chunks of any size, loads to the reference
    loader's internals in the same order (load_bytes always; the fast path whenever it does not
    give up). Bad values and creations of live keys make the fast path give up; it must take
    the rest."""
    ref = _reference(data, mode)
    with chunk_size(chunk):
        fast = _fast(data, mode)
        assert _result(reader.load_bytes(data, mode=mode, source="x")) == ref
    if fast is not None:
        assert fast == ref
