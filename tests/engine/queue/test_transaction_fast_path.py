"""``Transaction.set_attribute`` writes a 103 line without the general formatter when its key and
name are plain words (issue 14 item 4: the router writes ~80 attributes per routed copy); the line
and the refusals must be those of ``records.format_record`` (htcondor.md §3.1 table: ``103 key
name value``; ``LogSetAttribute::WriteBody`` refuses a value with a newline)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.queue import records as R
from engine.queue.jobqueue import JobQueue
from engine.queue.transaction import check_value

WORDISH = st.text(alphabet=st.sampled_from("Ab1_.- \t\n\0é"), min_size=0, max_size=6)


def _queue_with(key: str) -> JobQueue:
    q = JobQueue()
    with q.transaction(now=1) as t:
        t.new_ad(key, "Job")
    return q


@settings(max_examples=300, deadline=None)
@given(key=WORDISH, name=WORDISH, value=st.sampled_from(["1", '"x"', "a + b", "true", "1 +", " 2", "", "\n"]))
def test_the_fast_line_is_the_formatter_line(key, name, value):
    """§3.1: the same line as format_record, or the same refusal, for any key, name and value."""
    try:
        q = _queue_with(key)
    except (R.RecordFormatError, ValueError, KeyError):
        return  # the ad itself cannot be written: nothing to set in
    with pytest.raises(RuntimeError):  # abort: only the collected line is looked at
        with q.transaction(now=2) as t:
            try:
                expected = R.format_record(R.set_attr(key, name, value))
            except R.RecordFormatError:
                expected = None
            try:
                t.set_attribute(key, name, value)
            except (R.RecordFormatError, ValueError, TypeError):
                got = None
            else:
                got = t._lines[-1]
            if got is not None:
                assert got == expected
            raise RuntimeError("abort")


def test_a_key_with_a_blank_is_refused_by_the_formatter():
    """§3.1: a key is one word; a key with a blank cannot be written."""
    q = JobQueue()
    with pytest.raises(R.RecordFormatError, match="must be one non-empty word"):
        with q.transaction(now=1) as t:
            t.new_ad("1.0", "Job")
            t._alive["1 .0"] = True  # pretend the ad exists, to reach the line check
            t.set_attribute("1 .0", "A", "1")
    with q.transaction(now=1) as t:
        t.new_ad("1.0", "Job")
        t.set_attribute("1.0", "A", "1")
        assert t._lines[-1] == "103 1.0 A 1"


@settings(max_examples=200, deadline=None)
@given(value=st.text(alphabet=st.sampled_from('1a +"()\t\n\0x'), min_size=0, max_size=8))
def test_a_remembered_value_is_accepted_as_check_value_accepts_it(value):
    """§3.1 "Values" (the schedd checks that a value parses): ``set_attribute`` remembers the
    texts it accepted; the first and the second call (remembered) both agree with
    ``check_value`` (the oracle) — accepted or refused with its ValueError."""
    try:
        check_value("A", value)
        ok = True
    except ValueError:
        ok = False
    q = _queue_with("1.0")
    for _ in range(2):
        with pytest.raises(RuntimeError):
            with q.transaction(now=2) as t:
                if ok:
                    t.set_attribute("1.0", "A", value)
                else:
                    with pytest.raises(ValueError):
                        t.set_attribute("1.0", "A", value)
                raise RuntimeError("abort")


@settings(max_examples=200, deadline=None)
@given(key=st.sampled_from(["1.0", "01.-1", "1.-2", "0.0", "7.0", "1 .0"]),
       items=st.lists(st.tuples(st.sampled_from(["A", "jobstatus", "ProcId", "b c", "Owner", ""]),
                                st.sampled_from(["1", '"x"', "1 +", "", "a\\nb", "true"])), max_size=6))
def test_set_attributes_is_set_attribute_in_a_loop(key, items):
    """§3.1 table and "Values", §3.6 (JobStatus/ProcId belong to procs): set_attributes gives the
    records and lines of set_attribute called item by item (the oracle), or the same refusal."""
    def run(batch: bool):
        q = JobQueue()
        with q.transaction(now=1) as t:
            t.new_ad("01.-1", "Job")
            t.new_ad("1.-2", "ClusterPvt")
            t.new_ad("1.0", "Job")
        err = None
        with pytest.raises(RuntimeError):
            with q.transaction(now=2) as t:
                try:
                    if batch:
                        t.set_attributes(key, items)
                    else:
                        for name, text in items:
                            t.set_attribute(key, name, text)
                except (KeyError, ValueError, R.RecordFormatError) as exc:
                    err = (type(exc), str(exc))
                got = (list(t.records), list(t._lines), err)
                raise RuntimeError("abort")
        return got

    run(False)  # the values it accepts are remembered: the batch takes its fast path for them
    assert run(True) == run(False)
