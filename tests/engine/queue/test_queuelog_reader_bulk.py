"""The fast queue-log loader's bulk paths against the record-by-record reference loader.

htcondor.md §3 (job_queue.log format: §3.1 records, §3.3 the owner's reading rules, §3.5 the
follower's): ``engine.queue.reader`` reads a log in chunks, keeps one ad per run of 103 records on
one key, and checks a chunk's distinct values together; ``engine.queue.plain_loader`` is the oracle.
"""

from __future__ import annotations


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.queue import reader
from engine.queue import records as R
from engine.queue.reader import load_bytes

from tests.helpers.queuelog_paths import chunk_size, fast_load, reference_load

HEAD = "107 1 CreationTimestamp 1736935000\n101 0.0 Job Machine\n103 0.0 NextClusterNum 3\n"
KEYS = ["1.0", "1.1", "01.-1", "2.0"]
# mixed-case spellings of one attribute, repeated names, one HTCondor spelling, one unknown
NAMES = ["JobStatus", "jobstatus", "JOBSTATUS", "Cmd", "cmd", "Foo", "FOO", "fOo", "Args"]
GOOD = ["1", "2", "0", "-7", "1.5", '"x"', '"a b c"', "true", "UNDEFINED", "A && B", "(x + 1) * 2",
        '"a\\"b"', "{1, 2}", "[a = 1; b = 2]", "time() - QDate > 3600"]
BAD = ["::", "(", "007", '"unterminated', "a &&"]


def _summary(res):
    return (res.queue.snapshot_state(), res.queue.seq, res.queue.created,
            [tuple(p.as_dict().items()) for p in res.problems], res.records, res.next_offset, res.probe,
            res.clean, res.needs_rotation, res.fatal)


# Each strategy is built once (one built inside the composite was built and validated again at every
# draw, most of the generation's CPU); the draws, and so the logs, are the same.
_TXNS, _KEYS_IN_TXN, _RUN = st.integers(1, 12), st.integers(1, 3), st.integers(1, 12)
_KEY, _NAME = st.sampled_from(KEYS), st.sampled_from(NAMES)
_GOOD, _GOOD_OR_BAD = st.sampled_from(GOOD), st.sampled_from(GOOD + BAD)
_ONE_IN_4, _ONE_IN_5, _SECOND = st.integers(0, 3), st.integers(0, 4), st.integers(10, 59)


@st.composite
def _runs_log(draw):
    """Committed transactions of 103 runs on one key (mixed-case and repeated names), with 104
    deletes between runs and now and then an invalid value inside a run."""
    bad = draw(st.booleans())
    values = _GOOD_OR_BAD if bad else _GOOD
    out = [HEAD, "105 \n"]
    out += [f"101 {k} Job Machine\n" for k in KEYS]
    out.append("106 \n")
    for _ in range(draw(_TXNS)):
        out.append("105 \n")
        for _ in range(draw(_KEYS_IN_TXN)):
            key = draw(_KEY)
            for _ in range(draw(_RUN)):
                out.append(f"103 {key} {draw(_NAME)} {draw(values)}\n")
            if draw(_ONE_IN_4) == 0:
                out.append(f"104 {draw(_KEY)} {draw(_NAME)}\n")
        out.append(f"106 # 2025-01-15T10:00:{draw(_SECOND)}.000000\n")
    data = "".join(out).encode()
    if draw(_ONE_IN_5) == 0:  # a torn tail: an uncommitted transaction, a cut line
        data += b"105 \n103 1.0 JobStatus 2\n103 1.0 Cmd"
    return data


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_runs_log(), st.integers(1, 400), st.sampled_from(["owner", "follow"]))
def test_runs_of_103_load_as_the_reference_loads_them(data, chunk, mode):
    """htcondor.md §3.3/§3.5: any chunk size (a run of 103s cut at any point), mixed-case and
    repeated names in a run, 104s between runs, an invalid value inside a run: the loader gives
    exactly the reference loader's queue (ads, name spellings, types, ids, seq), problems and
    offsets; the fast path itself takes every log whose values all parse."""
    ref = reference_load(data, mode)
    with chunk_size(chunk):
        assert _summary(load_bytes(data, mode=mode, source="x")) == _summary(ref)
        fast = fast_load(data, mode)
    if fast is not None:
        assert _summary(fast) == _summary(ref)
    lines = data.decode().split("\n")[:-1]  # complete lines only
    values = [line.split(" ", 3)[3] for line in lines if line.startswith("103 ")]
    if all(R.value_is_valid(v) for v in values):
        assert fast is not None, "the fast path gave up on a log it is meant to take"
    elif mode == "owner":
        assert fast is None, "an invalid value must send the owner's load to the reference loader"


@settings(max_examples=300, deadline=None)
@given(st.sets(st.one_of(st.sampled_from(GOOD + BAD + ['"', '"\\', "1e5", "1.5e+07", "-0", "--1", "tRuE"]),
                         st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)),
                                 max_size=12)), max_size=12))
def test_value_sieve_agrees_with_strict_parsing_one_value_at_a_time(vals):
    """htcondor.md §3.1 "Values" / §3.3 strict parsing: the loader checks a chunk's distinct
    values together (plain literals sieved out by one regex pass over the values joined by
    newlines); it gives up exactly when one of them fails ``records.value_is_valid``, the
    one-value check the reference loader uses — including values that only look plain when read
    across the joining newlines (``"x`` then ``"``)."""
    vals = set(vals)
    expected_ok = all(R.value_is_valid(v) for v in vals)
    try:
        reader._check_values(vals)
        ok = True
    except reader._Bail:
        ok = False
    assert ok == expected_ok


def test_values_that_look_plain_only_across_the_joining_newline_are_checked():
    """htcondor.md §3.1 "Values": ``"x`` and ``"`` are each unterminated strings; joined by a
    newline they would read as one string literal ``"x\\n"`` if the sieve let a literal cross it."""
    with pytest.raises(reader._Bail):
        reader._check_values({'"x', '"'})
    reader._check_values({'"x"', '"y z"', "12", "1.5e3", "true"})  # plain ones pass


@pytest.mark.parametrize("mode", ["owner", "follow"])
def test_a_run_cut_by_every_chunk_boundary(mode):
    """htcondor.md §3.3: one transaction setting twelve attributes of one job (mixed-case names, a
    repeated name) reads the same whatever byte the chunk boundary falls after. (Names first seen
    here: the first spelling of a name is kept per queue, ``JobQueue._lower``.)"""
    body = "".join(f"103 1.0 {n} {v}\n" for n, v in [
        ("JobStatus", "1"), ("Cmd", '"/bin/sleep"'), ("jobstatus", "2"), ("Args", '"a b"'), ("CMD", '"x"'),
        ("BulkFoo", "A && B"), ("bulkfoo", "3"), ("BulkBar", "true"), ("JobStatus", "5"),
        ("BulkBaz", '"q"'), ("HoldReason", '"out of memory"'), ("BULKBAR", "false")])
    data = (HEAD + "105 \n101 1.0 Job Machine\n" + body + "106 \n").encode()
    ref = reference_load(data, mode)
    assert list(ref.queue.ad("1.0").items()) == [
        ("JobStatus", "5"), ("Cmd", '"x"'), ("Args", '"a b"'), ("BulkFoo", "3"), ("BulkBar", "false"),
        ("BulkBaz", '"q"'), ("HoldReason", '"out of memory"')]
    for chunk in range(1, len(data) + 2):
        with chunk_size(chunk):
            fast = fast_load(data, mode)
        assert fast is not None and _summary(fast) == _summary(ref), chunk


@pytest.mark.parametrize("mode", ["owner", "follow"])
def test_a_104_on_another_ad_does_not_redirect_the_run_under_way(mode):
    """htcondor.md §3.3: records apply in order, each to the ad its key names. A 104 on job 1.0
    between two 103s on the cluster ad 01.-1 must not make the second 103 land in 1.0 (the fast
    loop keeps the ad of a run of 103s on one key; the 104 once overwrote it)."""
    data = (HEAD + "105 \n101 01.-1 Job Machine\n101 1.0 Job Machine\n106 \n"
            "105 \n103 01.-1 JobStatus 1\n104 1.0 JobStatus\n103 01.-1 Cmd \"x\"\n106 \n").encode()
    fast = fast_load(data, mode)
    assert fast is not None
    assert fast.queue.ad("1.0") == {} and fast.queue.ad("01.-1") == {"JobStatus": "1", "Cmd": '"x"'}
    assert _summary(fast) == _summary(reference_load(data, mode))
