"""Reading job_queue.log with the schedd's rules (htcondor.md §3.3) and the follower's (§3.5)."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.paths import TESTS
from engine.queue.jobqueue import JobQueue
from engine.queue import reader
from engine.queue.reader import load_bytes, load_log, read_log

from tests.helpers.queuelog_paths import fast_load, reference_load

DATA = TESTS / "data" / "queuelog"


def lines(*ls: str) -> bytes:
    return "".join(line + "\n" for line in ls).encode()


HEAD = ("107 1 CreationTimestamp 1736935000", "101 0.0 Job Machine", "103 0.0 NextClusterNum 1")


def test_real_log_job_ends_held_with_the_later_cmd():
    """htcondor.md §6 (golang-htcondor test on real_job_submission.log): job 1.0 ends Held
    (JobStatus 5) with Cmd "sleep" — the later 103 overrides the earlier "/bin/sleep"."""
    q, problems = read_log(DATA / "real_job_submission.log")
    assert problems == []
    job = q.get((1, 0))
    assert job.status == 5 and job.get("Cmd") == '"sleep"' and job.get("SUBMIT_Cmd") == '"/bin/sleep"'
    assert job.get("Iwd").endswith('spool/1/0/cluster1.proc0.subproc0"')
    assert (q.seq, q.created) == (1, 1763853165)
    assert list(q.users) == ["0.2"] and q.users["0.2"]["Owner"] == '"bbockelm"'
    assert q.header["NextClusterNum"] == "2" and q.cluster_private == {"1.-2": {}}
    assert q.counts_by_status() == {5: 1}


def test_example_3_6_final_state():
    """htcondor.md §3.6: after the constructed scenario only 1.1 is left (1.0 and the routed
    copy 2.0 were removed, cluster 2 with it), and the header says NextClusterNum 3."""
    res = load_log(DATA / "example_3_6.log")
    q = res.queue
    assert res.problems == [] and not res.clean and res.records == 107
    assert q.ids() == [(1, 1)] and q.header["NextClusterNum"] == "3"
    assert q.get((1, 1)).get("Cmd") == '"/bin/sleep"' and q.ad("02.-1") is None and q.ad("2.-2") is None


def test_records_inside_a_transaction_apply_at_the_106_and_unfinished_one_is_dropped():
    """htcondor.md §3.3: records between 105 and 106 apply at the 106; a trailing transaction
    without its 106 is discarded and the log is marked as needing a rotation."""
    data = lines(*HEAD, "105 ", "101 1.0 Job Machine", "103 1.0 JobStatus 1", "106 ",
                 "105 ", "103 1.0 JobStatus 2", "103 1.0 Foo 1")
    res = load_bytes(data, source="q.log")
    assert res.queue.get((1, 0)).status == 1 and res.queue.get((1, 0)).get("Foo") is None
    assert res.needs_rotation
    [p] = res.problems
    assert (p.file, p.record, p.offset) == ("q.log", 8, data.index(b"105 \n103 1.0 JobStatus 2"))
    assert "not committed" in p.message and "2 records" in p.message


def test_unterminated_last_line_is_dropped():
    """htcondor.md §3.3: bytes after the last newline are discarded; rotation needed."""
    data = lines(*HEAD) + b"103 0.0 NextClusterNum 5"
    res = load_bytes(data, source="q.log")
    assert res.queue.header["NextClusterNum"] == "1" and res.needs_rotation
    [p] = res.problems
    assert p.record == 4 and p.offset == len(lines(*HEAD)) and "unterminated" in p.message


def test_zmg_bad_op_code_record_5_byte_offset_89():
    """htcondor.md §6 (erikerlandson blog): a corrupt op code `ZMG` as record 5 is reported at
    byte offset 89 (just after the op word, with `105 ` carrying its blank) and is fatal inside a
    closed transaction; the state before that transaction is returned, nothing raises."""
    data = lines("107 1 CreationTimestamp 1334245749", "101 0.0 Job Machine", "103 0.0 NextClusterNum 1",
                 "105 ", "ZMG 1.0 JobStatus 2", "103 1.0 EnteredCurrentStatus 1334245771",
                 "103 1.0 LastSuspensionTime 0", "103 1.0 CurrentHosts 1", "106 ",
                 "105 ", "103 1.1 LastJobStatus 1", "103 1.1 JobStatus 2")
    res = load_bytes(data, source="job_queue.log")
    p = res.problems[0]
    assert (p.record, p.offset, p.condor_offset, p.severity) == (5, 85, 89, "fatal")
    assert res.fatal and res.queue.header["NextClusterNum"] == "1"


def test_corrupt_record_without_a_later_106_is_a_torn_write():
    """htcondor.md §3.3 (and §6 blog): a bad expression in the final unterminated transaction
    only warns: it and everything after it are ignored."""
    data = lines(*HEAD, "105 ", "101 1.0 Job Machine", "106 ", "105 ", "103 1.0 Foo ::", "103 1.0 Bar 1")
    res = load_bytes(data, source="q.log")
    assert not res.fatal and res.needs_rotation
    assert res.queue.get((1, 0)) is not None and res.queue.get((1, 0)).get("Bar") is None
    assert res.problems[0].record == 8 and "does not parse" in res.problems[0].message
    # the value only warns (RouteDeck keeps a bad value's text, see reference.py); its transaction
    # was never committed, so it is discarded
    assert [p.severity for p in res.problems] == ["warning", "error"] and "not committed" in res.problems[1].message


def test_warnings_nested_105_unmatched_106_late_107():
    """htcondor.md §3.3: a nested 105, a 106 with no open transaction and a 107 that is not the
    first record give warnings and nothing else."""
    data = lines(*HEAD, "105 ", "101 1.0 Job Machine", "105 ", "103 1.0 JobStatus 2", "106 ", "106 ",
                 "107 4 CreationTimestamp 1")
    res = load_bytes(data, source="q.log")
    assert [p.record for p in res.problems] == [6, 9, 10]
    assert {p.severity for p in res.problems} == {"warning"}
    assert res.queue.get((1, 0)).status == 2 and res.queue.seq == 4


def test_compacted_log_without_transactions_loads_clean():
    """htcondor.md §3.4: a rotated log has no 105/106; proc ads may come before their cluster."""
    data = lines("107 7 CreationTimestamp 1736935000", "101 0.0 Job Machine", "103 0.0 NextClusterNum 3",
                 "101 2.0 Job Machine", "103 2.0 JobStatus 2", "101 02.-1 Job Machine", "103 02.-1 Owner \"bob\"")
    res = load_bytes(data)
    assert res.problems == [] and res.clean and not res.needs_rotation and res.queue.seq == 7
    assert res.queue.get((2, 0)).get("owner") == '"bob"'


def test_follower_rules_ignore_transactions_and_skip_bad_values():
    """htcondor.md §3.5: the follower applies every complete record at once (an open trailing
    transaction included); an unparsable value or unknown key is reported and ignored."""
    data = lines(*HEAD, "105 ", "101 1.0 Job Machine", "103 1.0 Foo ::", "103 9.9 X 1", "103 1.0 JobStatus 1")
    res = load_bytes(data, mode="follow", source="q.log")
    job = res.queue.get((1, 0))
    assert job.status == 1 and job.get("Foo") is None
    assert [p.severity for p in res.problems] == ["warning", "warning"]
    assert res.next_offset == len(data)


def test_unreadable_file_is_a_problem_not_an_exception(tmp_path):
    # Source: RouteDeck decision (project rule: bad input is reported, never raised)
    q, problems = read_log(tmp_path / "nope.log")
    assert len(q) == 0 and problems[0].severity == "fatal" and "cannot read" in problems[0].message


def test_clean_generated_log_takes_the_fast_path():
    """The fast path must handle ordinary logs itself (the performance target depends on it)."""
    data = (DATA / "example_3_6.log").read_bytes() + b"105 \n103 1.1 JobStatus 2\n103 1.1 X"
    q = JobQueue()
    res = reader._fast(data, q, "x", "owner", True)
    assert [p.message.split(";")[0] for p in res.problems] == [
        "unterminated last line (9 bytes) discarded", "transaction begun here was not committed"]


# ---------------------------------------------------------------- fast path == reference

_KEYS = ["0.0", "1.0", "01.-1", "1.1", "0.1", "1.-2"]
_good = st.one_of(
    st.builds(lambda k, t: f"101 {k} {t}", st.sampled_from(_KEYS), st.sampled_from(["Job Machine", "Owner (empty)", "ClusterPvt (empty)"])),
    st.builds(lambda k: f"102 {k}", st.sampled_from(_KEYS)),
    st.builds(lambda k, n, v: f"103 {k} {n} {v}", st.sampled_from(_KEYS),
              st.sampled_from(["JobStatus", "jobstatus", "Cmd", "Foo"]),
              st.sampled_from(["1", "2", '"x"', "true", "A && B", " 5", "::", "(", '"a\\"b"'])),
    st.builds(lambda k, n: f"104 {k} {n}", st.sampled_from(_KEYS), st.sampled_from(["JobStatus", "Cmd"])),
    st.sampled_from(["105 ", "106 ", "106 # 2025-01-15T10:00:00.000000", "107 2 CreationTimestamp 5"]),
)
_odd = st.sampled_from(["ZMG 1", "", "105", "106", "106 x", " 103 1.0 Foo 1", "103 1.0\tFoo 1",
                        "103 1.0 Foo\t1", "102 1.0 extra", "101 1.0 Job", "105\t", "1060 x", "103 1.0 Foo \0"])


@st.composite
def _logs(draw):
    body = draw(st.lists(st.one_of(_good, _good, _good, _odd), max_size=30))
    data = lines("107 1 CreationTimestamp 1736935000", *body)
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return data


def _summary(res):
    return (res.queue.snapshot_state(), res.queue.seq, [tuple(p.as_dict().items()) for p in res.problems],
            res.records, res.next_offset, res.probe, res.clean, res.needs_rotation, res.fatal)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_logs(), st.sampled_from(["owner", "follow"]))
def test_fast_path_agrees_with_the_reference(data, mode):
    """reader.py's fast path and reference.py (HTCondor's rules written out record by record)
    give the same state, problems and follower offsets whenever the fast path does not give up."""
    fast = fast_load(data, mode)
    if fast is None:
        return
    assert _summary(fast) == _summary(reference_load(data, mode))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.sampled_from(["owner", "follow"]))
def test_never_raises_on_arbitrary_bytes(data, mode):
    """The reader never raises on bad input; it returns a state plus problems."""
    res = load_bytes(b"107 1 CreationTimestamp 1\n" + data, mode=mode)
    assert isinstance(res.problems, list)


@pytest.mark.parametrize("mode", ["owner", "follow"])
def test_example_loads_identically_both_ways(mode):
    """Both implementations on htcondor.md §3.6."""
    data = (DATA / "example_3_6.log").read_bytes()
    assert _summary(load_bytes(data, mode=mode, source="x")) == _summary(reference_load(data, mode))


@pytest.mark.parametrize("mode", ["owner", "follow"])
def test_fast_path_forgets_a_destroyed_ad_between_setattributes(mode):
    """The fast loop looks an ad up once for a run of SetAttributes on one key; a DestroyClassAd
    and a NewClassAd of the same key between two runs must not let the later run write into the
    destroyed ad (htcondor.md §3.3: records apply in order; a SetAttribute on a missing ad is the
    reference loader's to report)."""
    recreated = lines("107 1 CreationTimestamp 1736935000", "105 ", "101 1.0 Job Machine",
                      "103 1.0 JobStatus 1", "106 ", "105 ", "103 1.0 Cmd \"a\"", "102 1.0",
                      "101 1.0 Job Machine", "103 1.0 JobStatus 2", "106 ")
    q = JobQueue()
    with q.batch():
        q._batch.reloaded = True
        fast = reader._fast(recreated, q, "x", mode, True)
    assert fast.queue.snapshot_state() == {"1.0": ("Job", {"JobStatus": "2"})}
    assert _summary(fast) == _summary(reference_load(recreated, mode))
    destroyed = lines("107 1 CreationTimestamp 1736935000", "105 ", "101 1.0 Job Machine",
                      "103 1.0 JobStatus 1", "102 1.0", "103 1.0 JobStatus 2", "106 ")
    with pytest.raises(reader._Bail):
        reader._fast(destroyed, JobQueue(), "x", mode, True)
    res = load_bytes(destroyed, mode=mode, source="x")
    assert _summary(res) == _summary(reference_load(destroyed, mode))
    assert "1.0" not in res.queue.snapshot_state()
