"""Status mirroring (``VanillaToGrid.cpp`` ``update_job_status``, htcondor.md §1.6): the routed
copy's attributes that differ from the source's are pushed back, names compared case-insensitively
(ClassAd names), whatever spelling each queue keeps (a queue keeps the first spelling it saw)."""

from __future__ import annotations

from engine.queue.jobqueue import JobQueue
from engine.router import schedd_ops as ops
from tests.helpers.router_fixtures import T0, schedd_set, submit


def _queue(spellings: list[str]) -> JobQueue:
    """A queue that has seen these spellings first (in a job of its own)."""
    q = JobQueue()
    (key,) = submit(q, 1)
    schedd_set(q, key, **{name: "0" for name in spellings})
    return q


def test_copied_attributes_compare_across_spellings_and_cluster_ads():
    # the source queue spells two copied names in lower case, the copy's queue as HTCondor does
    src_q = _queue(["imagesize", "remotewallclocktime"])
    dst_q = _queue(["ImageSize", "RemoteWallClockTime", "ExitCode"])
    (src,) = submit(src_q, 1, ImageSize="100")  # ImageSize in the source's cluster ad
    schedd_set(src_q, src, RemoteWallClockTime="5.0", JobStatus="2")
    (dst,) = submit(dst_q, 1, ImageSize="100")
    schedd_set(dst_q, dst, RemoteWallClockTime="7.0", ExitCode="0", JobStatus="2", BytesSent="3")
    update = ops.update_job_status(ops.View.of(src_q.get(src)), ops.View.of(dst_q.get(dst)), T0)
    # the same ImageSize (read through the source's cluster ad) is not pushed; the others are,
    # spelled as the copy spells them
    assert update == {"RemoteWallClockTime": "7.0", "ExitCode": "0", "BytesSent": "3"}
    schedd_set(src_q, src, remotewallclocktime="7.0", exitcode="0", bytessent="3")
    assert ops.update_job_status(ops.View.of(src_q.get(src)), ops.View.of(dst_q.get(dst)), T0) == {}


def test_a_view_of_a_queue_job_finds_names_in_any_spelling():
    q = _queue(["imagesize"])
    (key,) = submit(q, 1, ImageSize="100")
    v = ops.View.of(q.get(key))
    assert v.attrs["imagesize"] == "100"  # the queue's own spelling
    assert (v.get("IMAGESIZE"), v.name("ImageSize"), v.get("NoSuch"), v.name("NoSuch")) == ("100", "imagesize", None, None)
    # a name the queue knows but this job lacks
    other = _queue(["Foo"])
    (k2,) = submit(other, 1)
    w = ops.View.of(other.get(k2))
    assert w.attrs and (w.get("foo"), w.name("FOO")) == (None, None)
