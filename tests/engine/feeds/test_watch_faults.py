"""A watched job_queue.log that is truncated, deleted, atomically replaced, rotated, or ends in a
torn transaction (issue 14 item 5): the follower says what it saw and its queue ends equal to a
fresh load of the file — nothing counted twice, nothing kept from a file that is gone.

HTCondor's rules (htcondor.md §3.5): each poll probes the file; a changed 107 sequence is
COMPRESSED, a probe record that no longer matches (or a file now smaller) is PROBE_ERROR, and
both mean a bulk reload from offset 0; a partial last record is not consumed and is read again.
"""

from __future__ import annotations

import os

from engine.queue import follower as F
from engine.queue.follower import Follower
from engine.queue.reader import load_log
from engine.queue.result import FOLLOW
from engine.queue.writer import open_queue

T0 = 1736935000


def _submit(q, n=3, now=T0, owner="alice"):
    with q.transaction(now=now) as t:
        c = t.new_cluster()
        t.set_attribute((c, -1), "Owner", f'"{owner}"')
        for _ in range(n):
            t.set_attribute(t.new_proc(c), "JobStatus", "1")
    return c


def _fresh(path):
    return load_log(path, mode=FOLLOW).queue.snapshot_state()


def _started(tmp_path, clusters=3):
    log = tmp_path / "job_queue.log"
    schedd, _ = open_queue(log, T0, durable=False)
    for i in range(clusters):
        _submit(schedd, now=T0 + i)
    f = Follower(log)
    assert f.poll().probe == F.INIT
    return log, schedd, f


def test_truncated_log_is_reloaded_not_appended(tmp_path):
    """A log cut shorter (same 107) no longer holds the probe record: PROBE_ERROR, bulk reload;
    the follower forgets the jobs that were cut off."""
    log, schedd, f = _started(tmp_path)
    data = log.read_bytes()
    cut = data.rfind(b"\n105 ") + 1  # the last transaction is gone
    log.write_bytes(data[:cut])
    r = f.poll()
    assert r.probe == F.PROBE_ERROR and r.reloaded
    assert "rewritten" in r.replaced and r.problems == []
    assert f.queue.snapshot_state() == _fresh(log) != schedd.snapshot_state()
    assert f.poll().probe == F.NO_CHANGE


def test_deleted_log_is_reported_and_a_new_one_reloaded(tmp_path):
    """A deleted log: MISSING with a problem naming the file, the queue kept as last read; a new
    log at the same path (a new 107) is COMPRESSED: bulk reload, no job of the old one kept."""
    log, schedd, f = _started(tmp_path)
    before = f.queue.snapshot_state()
    schedd.writer.close()
    os.unlink(log)
    r = f.poll()
    assert r.probe == F.MISSING and str(log) in str(r.problems[0]) and f.queue.snapshot_state() == before
    other, _ = open_queue(log, T0 + 100, durable=False)
    with other.transaction(now=T0 + 101) as t:  # a fresh log starts at sequence 1 again
        other_c = t.new_cluster()
        t.set_attribute((other_c, -1), "Owner", '"bob"')
        t.set_attribute(t.new_proc(other_c), "JobStatus", "1")
    r = f.poll()
    assert r.reloaded and r.probe in (F.COMPRESSED, F.PROBE_ERROR)
    assert f.queue.snapshot_state() == _fresh(log) == other.snapshot_state()


def test_atomically_replaced_log_is_reloaded(tmp_path):
    """A log replaced by rename (same 107 sequence, different and longer content): the probe
    record does not match, PROBE_ERROR, bulk reload — not an ADDITION read from the old offset."""
    log, schedd, f = _started(tmp_path)
    text = log.read_bytes().replace(b'"alice"', b'"carol"')
    text += b"105 \n103 1.0 JobStatus 2\n106 \n"
    tmp = log.with_name("replacement")
    tmp.write_bytes(text)
    os.replace(tmp, log)
    r = f.poll()
    assert r.probe == F.PROBE_ERROR and r.reloaded and r.replaced == "replaced"
    assert f.queue.snapshot_state() == _fresh(log)
    assert f.queue.get((1, 0)).get("Owner") == '"carol"' and f.queue.get((1, 0)).status == 2


def test_rotated_log_is_one_reload(tmp_path):
    """A rotation (TruncateClassAdLog: 107 sequence + 1, §3.4) is COMPRESSED: one bulk reload to
    the same jobs, no job counted twice."""
    log, schedd, f = _started(tmp_path)
    schedd.writer.compact(schedd)
    r = f.poll()
    assert r.probe == F.COMPRESSED and r.reloaded and r.replaced == "rotated (sequence 1 -> 2)"
    assert f.queue.snapshot_state() == schedd.snapshot_state() == _fresh(log)
    assert len(f.queue) == 9


def test_torn_transaction_at_the_end_is_read_once_when_completed(tmp_path):
    """A transaction whose last line is cut mid-record: the complete records are applied (the
    follower ignores transaction boundaries, §3.5), the partial line is not consumed; once the
    writer finishes it, it is read exactly once."""
    log, schedd, f = _started(tmp_path)
    whole = b"105 \n103 1.0 JobStatus 2\n103 1.1 JobStatus 5\n106 \n"
    cut = whole.index(b"1.1 JobStatus") + 5
    with open(log, "ab") as fh:
        fh.write(whole[:cut])
    r = f.poll()
    assert r.probe == F.ADDITION and r.records == 2  # 105 and the first 103
    assert f.queue.get((1, 0)).status == 2 and f.queue.get((1, 1)).status == 1
    with open(log, "ab") as fh:
        fh.write(whole[cut:])
    r = f.poll()
    assert r.probe == F.ADDITION and r.records == 2  # the completed 103 and the 106
    assert f.queue.snapshot_state() == _fresh(log)
    assert f.poll().probe == F.NO_CHANGE


def test_a_new_generation_is_said_and_its_problems_are_reported_again(tmp_path):
    """A file replaced under the same name with the same 107 sequence and the same bad last record
    at the same offset: PROBE_ERROR (htcondor.md §3.5), and the new file's problem is reported —
    problems were told once per (sequence, offset, message), so the new file's went unsaid.
    ``replaced`` says what happened to the log (it was an "info" problem of the new file)."""
    log, schedd, f = _started(tmp_path)
    schedd.writer.close()
    good = log.read_bytes()
    log.write_bytes(good + b"103 1.0 Foo\n")  # an empty value: a corrupt record (§3.1)
    r = f.poll()
    assert r.probe == F.ADDITION and r.replaced is None and len(r.problems) == 1
    tmp = log.with_name("replacement")
    tmp.write_bytes(good.replace(b'"alice"', b'"carol"') + b"103 1.0 Foo\n")
    os.replace(tmp, log)
    r = f.poll()
    assert r.probe == F.PROBE_ERROR and r.replaced == "replaced"
    assert [p.message for p in r.problems] == [p.message for p in load_log(log, mode=FOLLOW).problems]
    assert f.poll().problems == []  # still told once per generation
