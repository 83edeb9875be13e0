"""History file in HTCondor's format: full old-syntax ad then the banner
``*** Offset = N ClusterId = C ProcId = P Owner = "O" CompletionDate = D``
(the schedd's AppendHistory in src/condor_schedd.V6; condor_router_history splits on ``***``,
htcondor.md §1.9)."""

import pytest
import os

from engine.schedd.history import HistoryError, HistoryWriter, iter_history, read_history


def test_write_then_read_back(tmp_path):
    p = tmp_path / "history"
    w = HistoryWriter(p)
    a = {"ClusterId": "1", "ProcId": "0", "Owner": '"alice"', "CompletionDate": "1700000100", "JobStatus": "4"}
    b = {"ClusterId": "2", "ProcId": "3", "JobStatus": "3"}
    w.append(a)
    w.append(b)
    text = p.read_text()
    lines = text.splitlines()
    assert lines[5] == '*** Offset = 0 ClusterId = 1 ProcId = 0 Owner = "alice" CompletionDate = 1700000100'
    second = text.index("ClusterId = 2")
    # offset of the second ad, and HTCondor's "?" / -1 for missing values
    assert lines[-1] == f'*** Offset = {second} ClusterId = 2 ProcId = 3 Owner = "?" CompletionDate = -1'
    recs = read_history(p)
    assert [r.attrs for r in recs] == [a, b]
    # a writer reopened on the same file continues the offsets
    w2 = HistoryWriter(p)
    w2.append(a)
    assert p.read_text().splitlines()[-1].startswith(f"*** Offset = {len(text)} ")


def test_torn_last_record_is_ignored_and_bad_line_named(tmp_path):
    good = 'ClusterId = 1\nProcId = 0\n*** Offset = 0 ClusterId = 1 ProcId = 0 Owner = "?" CompletionDate = -1\n'
    assert len(list(iter_history(good + "ClusterId = 2\n"))) == 1
    with pytest.raises(HistoryError, match=r"h:5: .*ProcId"):
        list(iter_history(good + "ClusterId = 2\nProcId = (\n***\n", "h"))


def test_append_many_offsets(tmp_path):
    p = tmp_path / "history"
    HistoryWriter(p).append_many([{"ClusterId": "1", "ProcId": "0"}, {"ClusterId": "1", "ProcId": "1"}])
    text = p.read_text()
    banners = [line for line in text.splitlines() if line.startswith("***")]
    second = text.index("ClusterId = 1\nProcId = 1")
    assert banners[1].startswith(f"*** Offset = {second} ")


def test_append_is_written_and_flushed_not_synced(tmp_path, monkeypatch):
    """classadHistory.cpp ``AppendHistory``: the ad is written and ``fflush``ed, never fsynced
    (the schedd does not wait for the disk per finished job); a reader sees it at once."""
    def refuse(fd):
        raise AssertionError("the history file is not synced")

    monkeypatch.setattr(os, "fsync", refuse)
    monkeypatch.setattr(os, "fdatasync", refuse)
    p = tmp_path / "history"
    w = HistoryWriter(p)
    w.append({"ClusterId": "7", "ProcId": "0", "Owner": '"u"'})
    assert [r.attrs["ClusterId"] for r in read_history(p)] == ["7"]
