"""``routedeck queue`` (engine/cli/queue.py).

Sources: htcondor.md §3.3 (the schedd's reading rules), §3.5 (``--follower-rules``); the real log
is tests/data/queuelog/real_job_submission.log (tests/data/PROVENANCE.md).
"""

import argparse
import json

from tests.helpers.paths import TESTS
from engine.cli import queue as cmd

DATA = TESTS / "data" / "queuelog"
REAL = str(DATA / "real_job_submission.log")


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="routedeck")
    cmd.register(parser.add_subparsers())
    args = parser.parse_args(["queue", *argv])
    return args.func(args)


def test_counts_by_status_and_owner(capsys):
    """htcondor.md §6: the real log's only job is Held (5), owned by bbockelm (cluster ad)."""
    assert _run(REAL) == 0
    out = capsys.readouterr().out
    assert "1 jobs" in out and "5 Held" in out
    assert [line.split() for line in out.splitlines() if line.startswith("bbockelm")] == [["bbockelm", "1", "1"]]


def test_json_counts(capsys):
    # Source: tests/data/queuelog/real_job_submission.log (tests/data/PROVENANCE.md): one held job of bbockelm
    assert _run(REAL, "--json") == 0
    out = json.loads(capsys.readouterr().out)
    # the real log also holds a user record (0.2, MyType Owner) and a cluster-private ad (1.-2):
    # loaded, not counted as jobs (htcondor.md §3.1)
    held = [{"status": "Held", "status_code": 5, "jobs": 1}]
    assert out == {"total_jobs": 1, "by_status": held, "by_owner": [{"owner": "bbockelm", "jobs": 1, "by_status": held}],
                   "records": {"user": 1, "cluster_private": 1}, "problems": []}


def test_long_prints_the_effective_ad_in_old_syntax(capsys):
    """condor_q -l style: sorted `Name = value` lines of the chained ad (cluster Owner included,
    the later Cmd wins — htcondor.md §6)."""
    assert _run(REAL, "--long", "1.0") == 0
    lines = capsys.readouterr().out.splitlines()
    assert 'Cmd = "sleep"' in lines and 'Owner = "bbockelm"' in lines and "JobStatus = 5" in lines
    assert lines == sorted(lines, key=str.lower)
    assert _run(REAL, "--long", "1.0", "--json") == 0
    ad = json.loads(capsys.readouterr().out)["ad"]
    assert ad["Cmd"] == '"sleep"' and ad["TotalSubmitProcs"] == "1"
    assert _run(REAL, "--long", "7.0") == 1


def test_constraint_filters(capsys):
    # Source: tests/data/queuelog/real_job_submission.log (tests/data/PROVENANCE.md)
    assert _run(REAL, "--json", "--constraint", 'JobStatus == 5 && Owner == "bbockelm"') == 0
    assert json.loads(capsys.readouterr().out)["total_jobs"] == 1
    assert _run(REAL, "--json", "--constraint", "JobStatus == 1") == 0
    assert json.loads(capsys.readouterr().out)["total_jobs"] == 0
    assert _run(REAL, "--constraint", "JobStatus ==") == 2


def test_problems_reported_and_exit_status(tmp_path, capsys):
    """htcondor.md §3.3: an unfinished transaction is reported; a corrupt record inside a
    committed transaction is fatal (exit 1); an unreadable log exits 2."""
    log = tmp_path / "job_queue.log"
    log.write_bytes((DATA / "example_3_6.log").read_bytes() + b"105 \n103 1.1 JobStatus 2\n")
    assert _run(str(log), "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["by_status"] == [{"status": "Idle", "status_code": 1, "jobs": 1}] and out["problems"][0]["record"] == 108
    log.write_bytes(b"107 1 CreationTimestamp 1\n105 \nZMG\n106 \n")
    assert _run(str(log)) == 1
    assert "fatal" in capsys.readouterr().err
    assert _run(str(tmp_path / "missing.log")) == 2
