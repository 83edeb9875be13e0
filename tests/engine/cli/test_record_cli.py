"""``routedeck record`` and ``routedeck replay DIR`` (issue 27).

The log: the first steps of sample_configs/recordings/demo-3h.job_queue.log, compacted as the schedd
does (htcondor.md §3.4, tests/helpers/compaction.py).
"""

from __future__ import annotations

import errno
import json

import pytest

import engine.queue.reader as reader
from engine.cli.record import duration, size
from tests.helpers.compaction import ScheddLog
from tests.helpers.paths import REPO
from tui.cli import main
from engine.cli.record import _lock
from engine.record.archive import Archive, Files
from engine.record.recorder import Recorder

DEMO = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"


def run(capsys, argv):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.slow
def test_record_once_then_replay_the_archive_as_the_log(tmp_path, capsys):
    log = tmp_path / "job_queue.log"
    log.write_bytes(DEMO.read_bytes())
    arch = tmp_path / "archive"
    rc, out, err = run(capsys, ["record", str(log), "--archive", str(arch), "--once"])
    assert rc == 0 and "19,454 transactions archived" in out, err
    for at in ("#5000", "01:30"):
        rc, a, _ = run(capsys, ["replay", str(arch), "--at", at, "--tz", "UTC", "--json"])
        rc2, b, _ = run(capsys, ["replay", str(log), "--at", at, "--tz", "UTC", "--json"])
        da, db = json.loads(a), json.loads(b)
        assert rc == rc2 == 0
        assert da["replay"]["archive"] == {"start_transaction": 0, "gaps": [], "generations": [{"seq": 1, "step": 1}],
                                          "window": None}  # read whole: under WHOLE_BELOW
        for key in ("queue", "routes", "total_jobs", "time"):
            assert da[key] == db[key], (at, key)
        assert da["replay"]["transaction"] == db["replay"]["transaction"]
    rc, out, _ = run(capsys, ["record", "--status", str(arch), "--json"])
    st = json.loads(out)
    assert rc == 0 and st["transactions"] == 19454 and st["gaps"] == [] and st["ratio"] < 0.15
    assert st["log"]["state"] == "following" and st["log"]["bytes"] == 0
    rc, out, _ = run(capsys, ["record", "--status", str(arch), "--tz", "UTC"])
    assert rc == 0 and "19,454 transactions from 2026-11-21 00:00:00 UTC" in out



def test_a_torn_index_is_a_one_line_error_not_a_traceback(tmp_path, capsys):
    """README exit statuses: unreadable input is 2 with one line on stderr. An index line cut in
    the middle (a reader racing a re-frame, or a damaged archive) is ArchiveError, which replay
    reports as it reports any unreadable recording (was: a traceback, since s12-reframe turned
    the JSON error into ArchiveError)."""
    data = DEMO.read_bytes()
    end = data.index(b"\n", data.index(b"\n106 ", 100_000) + 1) + 1
    log = tmp_path / "job_queue.log"
    log.write_bytes(data[:end])
    arch = tmp_path / "archive"
    assert run(capsys, ["record", str(log), "--archive", str(arch), "--once"])[0] == 0
    [index] = arch.glob("index-*.jsonl")
    text = index.read_bytes()
    index.write_bytes(text[: len(text) // 2] + b"\n" + text[len(text) // 2:])
    rc, out, err = run(capsys, ["replay", str(arch), "--at", "end", "--json"])
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert f"{index}: unreadable index" in err

def test_a_gap_is_reported_where_it_happens(tmp_path, capsys):
    schedd = ScheddLog(tmp_path / "job_queue.log", DEMO.read_bytes(), max_rotations=0)
    arch = tmp_path / "archive"
    schedd.advance(200)
    assert run(capsys, ["record", str(schedd.path), "--archive", str(arch), "--once", "--json"])[0] == 0
    schedd.advance(100)
    schedd.compact()  # no rotated copy: the 100 transactions are lost to the archive
    schedd.advance(50)
    rc, out, err = run(capsys, ["record", str(schedd.path), "--archive", str(arch), "--once", "--json"])
    doc = json.loads(out)
    assert rc == 0 and len(doc["gaps"]) == 1 and doc["archived"] == 50
    rc, out, _ = run(capsys, ["replay", str(arch), "--at", "end", "--json", "--tz", "UTC"])
    gap = json.loads(out)["replay"]["archive"]["gaps"]
    assert len(gap) == 1 and gap[0]["transaction"] == 201 and gap[0]["before_shown"]
    rc, out, _ = run(capsys, ["replay", str(arch), "--at", "#100", "--json", "--tz", "UTC"])
    assert not json.loads(out)["replay"]["archive"]["gaps"][0]["before_shown"]
    rc, out, _ = run(capsys, ["replay", str(arch), "--at", "end", "--tz", "UTC"])
    assert "gap before this moment" in out


def test_ctrl_c_inside_a_catch_up_writes_nothing_more_and_the_next_run_resumes(tmp_path, capsys, monkeypatch):
    """Ctrl-C landing while a poll reads the log is a kill -9 there (engine.record.recorder's
    docstring): the stop writes nothing of what was read, the next run archives it once."""
    from tests.engine.record.test_recorder import assert_replays_as  # noqa: PLC0415 - the record tests' oracle

    schedd = ScheddLog(tmp_path / "job_queue.log", DEMO.read_bytes())
    schedd.advance(1000)
    arch = tmp_path / "archive"
    steps = Recorder._chunk_steps

    def interrupted(self, *a, **kw):
        for i, x in enumerate(steps(self, *a, **kw)):
            if i == 600:
                raise KeyboardInterrupt
            yield x

    monkeypatch.setattr(Recorder, "_chunk_steps", interrupted)
    run(capsys, ["record", str(schedd.path), "--archive", str(arch), "--once"])
    monkeypatch.undo()
    assert run(capsys, ["record", str(schedd.path), "--archive", str(arch), "--once"])[0] == 0
    assert_replays_as(arch, schedd.done, every=50)  # no duplicate, no gap


def test_usage(tmp_path, capsys):
    rc, out, err = run(capsys, ["record", str(DEMO)])
    assert (rc, out) == (2, "") and "--archive" in err
    rc, out, err = run(capsys, ["record", "--status", str(tmp_path)])
    assert (rc, out) == (2, "") and "not a RouteDeck archive" in err
    assert duration("30d") == 30 * 86400 and duration("90m") == 5400 and size("20GB") == 20 * 10**9
    with pytest.raises(Exception):
        duration("soon")


def test_one_recorder_per_archive_and_readers_cut_nothing(tmp_path, capsys):

    log = tmp_path / "job_queue.log"
    ScheddLog(log, DEMO.read_bytes()).advance(50)
    arch = tmp_path / "archive"
    assert run(capsys, ["record", str(log), "--archive", str(arch), "--once"])[0] == 0
    held = _lock(str(arch))
    try:
        rc, out, err = run(capsys, ["record", str(log), "--archive", str(arch), "--once"])
        assert rc == 1 and "another recorder is writing" in err
    finally:
        held.close()
    # a recorder between its frame write and its recorder.json: replay and --status leave the bytes
    a = Archive.open(arch)
    seg = a.seg_path(a.meta.segment)
    with open(seg, "ab") as fh:
        fh.write(b"RDF1 in flight")
    size = seg.stat().st_size
    assert run(capsys, ["replay", str(arch), "--at", "end", "--json"])[0] == 0
    assert run(capsys, ["record", "--status", str(arch), "--json"])[0] == 0
    assert seg.stat().st_size == size


def test_a_full_disk_is_said_on_stderr_and_in_json_and_archiving_resumes(tmp_path, capsys, monkeypatch):
    """Issue 27: "A full disk stops archiving with a clear message (on stderr, in --json), loses
    nothing already archived, and resumes when space returns" — through ``routedeck record``,
    each run a ``--once`` (the timer's way; no clock, no sleep). The disk is full when every write
    of the archive fails with ENOSPC (engine.record.archive.Files)."""
    schedd = ScheddLog(tmp_path / "job_queue.log", DEMO.read_bytes())
    arch = tmp_path / "archive"
    schedd.advance(60)
    argv = ["record", str(schedd.path), "--archive", str(arch), "--once", "--json"]
    assert run(capsys, argv)[0] == 0
    full = {"on": True}
    append, replace = Files.append, Files.replace

    def no_space(write):
        def failing(self, path, data, **kw):
            if full["on"]:
                raise OSError(errno.ENOSPC, "No space left on device")
            write(self, path, data, **kw)
        return failing

    monkeypatch.setattr(Files, "append", no_space(append))
    monkeypatch.setattr(Files, "replace", no_space(replace))
    schedd.advance(40)
    rc, out, err = run(capsys, argv)
    assert rc == 1
    assert "routedeck record:" in err and "disk full" in err and "everything archived before is kept" in err
    errors = [json.loads(line)["error"] for line in out.splitlines() if line.startswith("{") and "error" in line]
    assert errors and "disk full" in errors[0]
    rc, out, _ = run(capsys, ["replay", str(arch), "--at", "end", "--json", "--tz", "UTC"])
    assert rc == 0 and json.loads(out)["replay"]["transactions"] == 60  # what was archived is intact
    full["on"] = False  # space is back
    rc, out, err = run(capsys, argv)
    assert rc == 0 and json.loads(out)["archived"] == 40 and json.loads(out)["gaps"] == [], err
    rc, a, _ = run(capsys, ["replay", str(arch), "--at", "end", "--json", "--tz", "UTC"])
    rc2, b, _ = run(capsys, ["replay", str(schedd.path), "--at", "end", "--json", "--tz", "UTC"])
    da, db = json.loads(a), json.loads(b)
    assert da["replay"]["transactions"] == db["replay"]["transactions"] == 100
    assert (da["queue"], da["total_jobs"]) == (db["queue"], db["total_jobs"])


def test_after_retention_replay_says_where_the_archive_starts(tmp_path, capsys):
    """Issue 27: retention "deletes whole old segments only; the oldest kept moment moves forward
    and replay says where the archive starts" — in ``replay DIR --json`` (``start``,
    ``archive.start_transaction``) and ``record --status``."""
    schedd = ScheddLog(tmp_path / "job_queue.log", DEMO.read_bytes())
    arch = tmp_path / "archive"
    rec = Recorder(schedd.path, arch, tz="UTC", segment_bytes=100_000)  # small segments: several
    for i in range(6):
        schedd.advance(300)
        rec.poll(i, flush=True)
    a = Archive.open(arch)
    segs = a.segments()
    starts = {x["seg"]: x for x in a.index_lines() if x["kind"] == "segment"}
    first_t = {x["seg"]: x["t0"] for x in a.index_lines() if x["kind"] == "frame"}
    rc, out, _ = run(capsys, ["replay", str(arch), "--at", "start", "--json", "--tz", "UTC"])
    assert json.loads(out)["replay"]["archive"]["start_transaction"] == 0
    kept = segs[2]
    assert a.retain(now=first_t[kept] + 3600, max_age=3600) == segs[:2]
    rc, out, _ = run(capsys, ["replay", str(arch), "--at", "start", "--json", "--tz", "UTC"])
    doc = json.loads(out)
    assert rc == 0 and doc["replay"]["archive"]["start_transaction"] == starts[kept]["first"] > 0
    assert doc["replay"]["start"] >= first_t[segs[1]]  # the oldest kept moment moved forward
    rc, out, _ = run(capsys, ["record", "--status", str(arch), "--json"])
    st = json.loads(out)
    # --status reads the first kept frame's t0 from the index, replay the time of its step 0 (the
    # kept checkpoint): the same second, not always the same float
    assert rc == 0 and st["first_transaction"] == starts[kept]["first"] and abs(st["oldest"] - doc["replay"]["start"]) < 1


def test_following_a_log_wakes_on_its_change_not_on_the_interval(tmp_path):
    # Source: RouteDeck recorder (no HTCondor behaviour): issue 27's lag limit
    """``routedeck record`` without ``--once`` polls the log when it changes (watchfiles on its
    directory, as ``watch`` does), not only every ``--interval`` seconds: with a 30 s interval, a
    transaction appended after the first poll is archived long before 30 s. Time is a manual
    clock (moved past ``--flush`` so the poll writes); the test waits on the loop's figures with
    a timeout, it never sleeps."""
    import queue  # noqa: PLC0415 - this test only
    import threading  # noqa: PLC0415 - this test only

    from engine.cli.record import loop  # noqa: PLC0415 - this test only
    from engine.clock import ManualClock  # noqa: PLC0415 - this test only
    from engine.metrics.collector import Latest  # noqa: PLC0415 - this test only
    from tui.cli import build_parser  # noqa: PLC0415 - this test only

    schedd = ScheddLog(tmp_path / "job_queue.log", DEMO.read_bytes())
    schedd.advance(30)
    arch = tmp_path / "archive"
    args = build_parser().parse_args(["record", str(schedd.path), "--archive", str(arch), "--interval", "30",
                                      "--flush", "60"])
    clock = ManualClock(1_800_000_000.0)
    figures: queue.SimpleQueue = queue.SimpleQueue()
    latest = Latest()
    latest.listeners.append(figures.put)
    stop = threading.Event()
    worker = threading.Thread(target=loop, args=(str(schedd.path), args), daemon=True,
                              kwargs=dict(clock=clock, metrics=latest, stop=stop))
    worker.start()
    try:
        first = figures.get(timeout=30)
        assert first.archived > 0
        written = Archive.open(arch, readonly=True).meta.next_txn
        clock.advance(61)  # past --flush: the next poll writes what it reads
        schedd.advance(5)
        while True:  # each poll's figures, until the 5 more are read and written
            got = figures.get(timeout=10)  # far less than --interval: woken by the change
            if got.archived == first.archived + 5 and got.pending_bytes == 0:
                break
        assert Archive.open(arch, readonly=True).meta.next_txn == written + 5
    finally:
        stop.set()
        worker.join(10)
    assert not worker.is_alive()


def test_once_takes_the_verdict_from_its_own_read(tmp_path, capsys, monkeypatch):
    """``record --once`` read the whole log a second time (``load_log``) for its exit status: a
    run that reads the log's generation from its start takes the schedd's verdict from that read,
    and asks ``load_log`` only when it met a line the schedd finds corrupt (htcondor.md §3.3:
    refused inside a committed transaction, exit 1; dropped at the tail, exit 0); a run that
    resumes inside the generation did not see its start, so it asks ``load_log``, and a refused
    log stays refused in every later run (args.py: one rule for every command)."""
    calls = []
    real = reader.load_log
    monkeypatch.setattr(reader, "load_log", lambda *a, **k: calls.append(a) or real(*a, **k))
    log = tmp_path / "job_queue.log"
    schedd = ScheddLog(log, DEMO.read_bytes())
    schedd.advance(50)
    arch = str(tmp_path / "archive")
    assert run(capsys, ["record", str(log), "--archive", arch, "--once"])[0] == 0
    assert calls == []
    with open(log, "ab") as fh:  # a corrupt record at the tail, no 106 after it: the schedd drops it
        fh.write(b"105 \n103 1.0 JobStatus\n")
    rc, out, err = run(capsys, ["record", str(log), "--archive", arch, "--once"])
    assert rc == 0 and len(calls) == 1 and "fatal" not in err, err
    with open(log, "ab") as fh:  # then committed: the schedd would refuse to start on this log
        fh.write(b"106 \n")
    rc, out, err = run(capsys, ["record", str(log), "--archive", arch, "--once"])
    assert rc == 1 and len(calls) == 2 and "the queue holds" in out, err
    line = log.read_bytes().count(b"\n") - 1  # the record named is the corrupt one, numbered in the whole log
    assert f"record {line} (byte offset " in err and "fatal: the schedd would refuse to start on this log" in err
    # the next run has nothing new to read, and the schedd would still refuse the log
    rc, out, err = run(capsys, ["record", str(log), "--archive", arch, "--once"])
    assert rc == 1 and len(calls) == 3 and "fatal: the schedd would refuse to start on this log" in err, err
