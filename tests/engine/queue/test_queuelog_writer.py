"""Writing job_queue.log (htcondor.md §3.1, §3.2, §3.4) and reading back what was written."""

import os
from pathlib import Path

import pytest

from tests.helpers.paths import TESTS
from engine.queue.jobqueue import JobQueue
from engine.queue import records as R
from engine.queue.reader import load_bytes, load_log
from engine.queue.records import parse_line
from engine.queue.writer import QueueLogError, QueueLogWriter, open_queue
import engine.queue.writer as W

DATA = TESTS / "data" / "queuelog"
T0 = 1736935000


def _transactions(text: str) -> list[list[R.Record]]:
    txns, cur = [], None
    for line in text.split("\n")[:-1]:
        rec = parse_line(line)
        if rec.op == R.BEGIN_TXN:
            cur = []
        elif rec.op == R.END_TXN:
            txns.append(cur)
            cur = None
        elif cur is not None:
            cur.append(rec)
    return txns


def test_example_3_6_is_written_byte_for_byte_through_the_qmgmt_calls(tmp_path):
    """htcondor.md §3.6: driving the transaction API with the scenario's calls (NewCluster,
    NewProc, SetAttribute, DestroyClassAd) writes exactly the constructed example, header and
    `105 `/`106 ` lines included (timestamps off, as in the example)."""
    example = (DATA / "example_3_6.log").read_text()
    log = tmp_path / "job_queue.log"
    q, problems = open_queue(log, T0, timestamps=False)
    assert problems == []
    for txn in _transactions(example):
        with q.transaction() as t:
            for rec in txn:
                kind = R.key_kind(rec.key)
                if rec.op == R.NEW_AD and kind == R.CLUSTER:
                    assert t.new_cluster() == R.parse_key(rec.key)[0]
                elif rec.op == R.NEW_AD and kind == R.JOB:
                    assert t.new_proc(R.parse_key(rec.key)[0]) == R.parse_key(rec.key)
                elif rec.op == R.NEW_AD and kind != R.CLUSTER_PVT:
                    t.new_ad(rec.key, rec.name)
                elif rec.op == R.SET_ATTR and not (rec.key == "0.0" and rec.name == "NextClusterNum"):
                    t.set_attribute(rec.key, rec.name, rec.value)
                elif rec.op == R.DESTROY_AD and t.exists(rec.key):
                    t.destroy(rec.key)
    assert log.read_text() == example
    assert load_log(log).queue.snapshot_state() == q.snapshot_state()


def _build(log: Path, checkpoints: list):
    """A log with header records, transactions of every kind and commit comments; records
    (file size, in-memory state) after every commit."""
    q = JobQueue()
    q.writer = QueueLogWriter.create(log, T0)
    checkpoints.append((log.stat().st_size, q.snapshot_state()))
    for rec in [R.new_ad("0.0", "Job"), R.set_attr("0.0", "NextClusterNum", "1")]:
        q.log_untransacted([rec])  # outside a transaction each record is its own commit
        checkpoints.append((log.stat().st_size, q.snapshot_state()))
    steps = [
        lambda t: (t.new_ad("0.1", "Owner"), t.set_attribute("0.1", "User", '"alice@example.org"')),
        lambda t: [t.set_attribute(t.new_proc(c), "JobStatus", "1") for c in [t.new_cluster()] for _ in range(3)],
        lambda t: (t.set_attribute((1, -1), "Owner", '"alice"'), t.set_attribute((1, -1), "Cmd", '"/bin/sleep"')),
        lambda t: t.set_attribute((1, 1), "JobStatus", "2"),
        lambda t: (t.delete_attribute((1, -1), "Cmd"), t.set_attribute((1, 2), "Cmd", '"x y"')),
        lambda t: t.destroy((1, 0)),
        lambda t: (t.set_attribute((1, 1), "JobStatus", "4"), t.set_attribute((1, 1), "RemoteWallClockTime", "62.0")),
        lambda t: t.destroy((1, -1)),
    ]
    for i, step in enumerate(steps):
        with q.transaction(now=T0 + 10 * i) as t:
            step(t)
        checkpoints.append((log.stat().st_size, q.snapshot_state()))
    return q


def test_fault_injection_every_cut_loads_a_committed_prefix(tmp_path):
    """htcondor.md §3.3: cut at every byte offset, a log the writer produced loads to the state of
    the last commit before the cut (state recorded in memory while writing), never raises, and is
    marked as needing a rotation unless the cut falls exactly on a commit boundary."""
    log = tmp_path / "job_queue.log"
    checkpoints: list = []
    _build(log, checkpoints)
    data = log.read_bytes()
    boundaries = {size for size, _ in checkpoints}
    assert len(data) == checkpoints[-1][0]
    for cut in range(len(data) + 1):
        res = load_bytes(data[:cut], source="cut")
        expected = [state for size, state in checkpoints if size <= cut]
        want = expected[-1] if expected else {}
        assert res.queue.snapshot_state() == want, f"cut at {cut}"
        assert not res.fatal
        if cut in boundaries:
            assert res.problems == [] and not res.needs_rotation, f"cut at {cut}"


def test_commit_comment_durability_and_fsync(tmp_path, monkeypatch):
    """htcondor.md §3.2: `106 # <timestamp>`; fdatasync at each commit (once per transaction,
    as ``Transaction::Commit``) and per record outside a transaction."""
    syncs = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (syncs.append(fd), real(fd)))
    monkeypatch.setattr(W, "_datasync", lambda fd: (syncs.append(fd), real(fd)))
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, T0)
    assert len(syncs) == 3  # the 107 on creation, then 101 0.0 and 103 0.0 NextClusterNum one by one
    with q.transaction(now=T0 + 5) as t:
        c = t.new_cluster()
        t.new_proc(c)
    assert len(syncs) == 4
    last = log.read_text().split("\n")[-2]
    assert last.startswith("106 # ") and R.commit_time(last[5:]) == pytest.approx(T0 + 5)


@pytest.mark.parametrize("timestamps", [True, False])
@pytest.mark.parametrize("durable", [True, False])
@pytest.mark.parametrize("body", [[], [R.set_attr("1.0", "A", "1")],
                                  [R.new_ad("1.0", "Job"), R.set_attr("1.0", "Cmd", '"é \\ x"'), R.destroy_ad("2.0")]])
def test_write_transaction_bytes_are_the_records_lines(tmp_path, body, durable, timestamps):
    """A transaction is written as ``105``, each record's ``format_record`` line and the ``106`` of its
    commit comment (htcondor.md §3.1–3.2), each line ended by a newline; records given as lines or
    as records, as a list or an iterable, give the same bytes."""
    want = [R.format_record(R.BEGIN), *map(R.format_record, body)]
    comment = R.commit_comment(T0, durable) if timestamps else ""
    want.append(R.format_record(R.end_txn(comment)))
    want_bytes = "".join(line + "\n" for line in want).encode("utf-8", "surrogateescape")
    for i, lines in enumerate([None, [R.format_record(r) for r in body], (R.format_record(r) for r in body)]):
        w = QueueLogWriter(tmp_path / f"log{i}", seq=1, created=int(T0), durable=True, timestamps=timestamps)
        w.write_transaction(body, now=T0, lines=lines, durable=durable)
        w._fh.close()
        assert (tmp_path / f"log{i}").read_bytes() == want_bytes


def test_non_durable_commit_is_written_not_synced_and_says_so(tmp_path, monkeypatch):
    """htcondor.md §3.2 and log_transaction.cpp ``Transaction::Commit(..., nondurable)``: a
    non-durable commit (qmgmt.cpp ``CommitNonDurableTransactionOrDieTrying``) writes its records
    and ``106 # <time> NONDURABLE`` but no fdatasync; the next durable commit syncs as before.
    It is in the file at once, so a reader (and a restart after a killed process) sees it."""
    syncs = []
    real = W._datasync
    monkeypatch.setattr(W, "_datasync", lambda fd: (syncs.append(fd), real(fd)))
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, T0)
    with q.transaction(now=T0 + 1) as t:
        c = t.new_cluster()
        t.new_proc(c)
    synced = len(syncs)
    with q.transaction(now=T0 + 2, durable=False) as t:
        t.set_attribute(R.job_key(c, 0), "JobStatus", "2")
    assert len(syncs) == synced
    last = log.read_text().split("\n")[-2]
    assert last.startswith("106 # ") and last.endswith(" NONDURABLE")
    assert R.commit_time(last[5:]) == pytest.approx(T0 + 2)
    res = load_log(log)
    assert res.problems == [] and res.queue.ad(R.job_key(c, 0))["JobStatus"] == "2"
    with q.transaction(now=T0 + 3) as t:
        t.set_attribute(R.job_key(c, 0), "JobStatus", "4")
    assert len(syncs) == synced + 1 and not log.read_text().split("\n")[-2].endswith("NONDURABLE")


def test_refused_value_and_aborted_transaction_write_nothing(tmp_path):
    """htcondor.md §3.1/§3.2: a newline is refused rather than corrupting the file; an aborted
    transaction writes nothing and changes nothing in memory."""
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, T0)
    before, state = log.read_bytes(), q.snapshot_state()
    with pytest.raises(ValueError):
        with q.transaction(now=T0) as t:
            t.new_cluster()
            t.set_attribute((1, -1), "Cmd", '"a\nb"')
    with pytest.raises(RuntimeError):
        with q.transaction(now=T0) as t:
            t.new_cluster()
            raise RuntimeError("client went away")
    with pytest.raises(ValueError):
        with q.transaction(now=T0) as t:
            t.set_attribute("0.0", "Foo", "::")
    assert log.read_bytes() == before and q.snapshot_state() == state
    with pytest.raises(R.RecordFormatError):
        q.writer.write_transaction([R.set_attr("0.0", "Foo", '"a\nb"')], now=T0)
    assert log.read_bytes() == before


def test_compaction_rotation(tmp_path):
    """htcondor.md §3.4: historical copy log.<seq>, a fresh log starting `107 <seq+1>
    CreationTimestamp <original birth>`, then each ad's own attributes (chains broken), no 105/106;
    the older history file is removed (MAX_JOB_QUEUE_LOG_ROTATIONS = 1)."""
    log = tmp_path / "job_queue.log"
    q = _build(log, [])
    before = log.read_bytes()
    assert q.writer.compact(q)
    assert (tmp_path / "job_queue.log.1").read_bytes() == before
    text = log.read_text()
    assert text.startswith(f"107 2 CreationTimestamp {T0}\n")
    assert "\n105 " not in text and "\n106" not in text and not (tmp_path / "job_queue.log.tmp").exists()
    res = load_log(log)
    assert res.problems == [] and res.clean and res.queue.snapshot_state() == q.snapshot_state()
    assert res.queue.seq == 2 == q.seq
    with q.transaction(now=T0 + 100) as t:
        t.set_attribute("0.0", "Foo", "1")
    assert q.writer.compact(q)
    assert (tmp_path / "job_queue.log.2").exists() and not (tmp_path / "job_queue.log.1").exists()
    assert load_log(log).queue.snapshot_state() == q.snapshot_state()


def test_proc_ad_written_alone_after_compaction(tmp_path):
    """htcondor.md §3.4: proc ads contain only proc attributes after a rewrite."""
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, T0)
    with q.transaction(now=T0) as t:
        c = t.new_cluster()
        t.set_attribute((c, -1), "Owner", '"alice"')
        t.set_attribute(t.new_proc(c), "JobStatus", "1")
    q.writer.compact(q)
    text = log.read_text()
    assert "103 1.0 JobStatus 1" in text and "103 1.0 Owner" not in text and '103 01.-1 Owner "alice"' in text


def test_open_queue_rotates_an_unclean_log_and_refuses_a_fatal_one(tmp_path):
    """htcondor.md §3.3: a log with transactions or a torn tail is rotated at startup; a log with a
    corrupt record inside a committed transaction makes the schedd refuse to start."""
    log = tmp_path / "job_queue.log"
    log.write_bytes((DATA / "example_3_6.log").read_bytes() + b"105 \n103 1.1 JobStatus 2\n")
    q, problems = open_queue(log, T0 + 1000)
    assert [p.record for p in problems] == [108]
    assert log.read_text().startswith(f"107 2 CreationTimestamp {T0}\n")
    assert (tmp_path / "job_queue.log.1").exists() and q.get((1, 1)).status == 1
    with q.transaction(now=T0 + 1001) as t:
        assert t.new_cluster() == 3
    bad = tmp_path / "bad.log"
    bad.write_bytes(b"107 1 CreationTimestamp 1\n101 0.0 Job Machine\n105 \n103 0.0 X\n106 \n")  # no value
    with pytest.raises(QueueLogError) as err:
        open_queue(bad, T0)
    assert err.value.problems[0].severity == "fatal"


def test_write_failure_marks_the_writer_broken(tmp_path):
    """htcondor.md §3.2: a failed write EXCEPTs in the schedd; here the writer refuses further
    writes until a rotation."""
    log = tmp_path / "job_queue.log"
    w = QueueLogWriter.create(log, T0)
    w._fh.close()
    with pytest.raises((OSError, ValueError)):
        w.write_records([R.new_ad("0.0", "Job")])
    w._fh = open(log, "ab")
    w.broken = True
    with pytest.raises(QueueLogError):
        w.write_records([R.new_ad("0.0", "Job")])


def test_dump_chunks_checks_each_attribute_as_format_record_does():
    """The state dump (compaction, the recorder's checkpoints) checks an ad's attributes at once;
    the lines and the first error are format_record's, record by record."""
    dump_chunks = W.dump_chunks

    def slow(q):
        out = []
        for key, attrs in q._ads.items():
            out.append(R.format_record(R.new_ad(key, q._types.get(key, ""))))
            out.extend(R.format_record(R.set_attr(key, n, v)) for n, v in attrs.items())
        return "".join(x + "\n" for x in out).encode()

    good = JobQueue()
    good.apply_quiet([(101, "1.0", "Job", "Machine"), (103, "1.0", "Cmd", '"/bin/true"'), (101, "2.0", "", ""),
                      (103, "1.0", "Args", '"a\tb"'), (103, "2.0", "Weird", "\u00a0x")])
    assert b"".join(dump_chunks(good, 1)) == slow(good)
    for name, value in [("Cmd", " \t"), ("Cmd", ""), ("Cmd", "a\nb"), ("Cmd", "a\0"), ("Bad Name", "1"),
                        ("Cmd", "\u00a0"), ("", "1")]:
        q = JobQueue()
        q.apply_quiet([(101, "1.0", "Job", "Machine"), (103, "1.0", "Ok", "1")])
        q._ads["1.0"][name] = value
        with pytest.raises(R.RecordFormatError) as want:
            slow(q)
        with pytest.raises(R.RecordFormatError) as got:
            b"".join(dump_chunks(q))
        assert str(got.value) == str(want.value), (name, value)
