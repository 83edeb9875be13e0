"""A job_queue.log with HTCondor 25.x record kinds loads in ``queue``, ``replay`` and ``watch``:
user and project records (``0.<n>``), cluster-private ads (``<c>.-2``), jobset ads
(``<c>.-100``) and an unknown future kind are kept, never counted as jobs nor reported as
corruption, and each command says which kinds it saw.

Sources: htcondor.md §3.1 (keys and MyTypes; HTCONDOR-3362), the job router's
``NewClassAdJobLogConsumer::key_to_table`` (src/condor_job_router/NewClassAdJobLogConsumer.h:
cluster > 0 with proc ≥ 0 or -1 → the job table; -2 → generic; -100 → jobset; ``0.<n>`` → user
records; anything else generic). The log is hand-made (tests/data/PROVENANCE.md) and also writes
attribute names in odd case (``jobstatus``, ``ROUTENAME``): HTCondor's names are case-insensitive.
"""

from __future__ import annotations

import json

from tests.helpers.paths import TESTS
from tui.cli import main

LOG = str(TESTS / "data" / "queuelog" / "htcondor25_records.log")
KINDS = {"user": 1, "project": 1, "jobset": 1, "cluster_private": 2, "other": 1}


def _json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    out = capsys.readouterr().out
    return json.loads(out.strip().splitlines()[-1] if argv[0] == "watch" else out)


def test_queue_loads_the_25x_kinds_without_counting_them(capsys):
    doc = _json(capsys, "queue", LOG, "--json")
    assert doc["total_jobs"] == 2 and doc["by_status"] == [{"status": "Idle", "status_code": 1, "jobs": 2}] and doc["problems"] == []
    assert doc["records"] == KINDS


def test_replay_loads_the_25x_kinds_and_reads_names_in_any_case(capsys):
    doc = _json(capsys, "replay", LOG, "--at", "end", "--json")
    assert doc["total_jobs"] == 2 and doc["queue"]["idle"] == 2 and doc["problems"] == []
    assert doc["records"] == KINDS
    assert [(r["name"], r["routed"], r["recent_started"]) for r in doc["routes"]] == [("Site1", 1, 1)]


def test_watch_loads_the_25x_kinds_and_reads_names_in_any_case(capsys):
    doc = _json(capsys, "watch", "--queue-log", LOG, "--once", "--json")
    assert doc["total_jobs"] == 2 and doc["queue"]["idle"] == 2 and doc["problems"] == []  # always listed
    assert doc["records"] == KINDS
    assert [(r["name"], r["routed"], r["recent_started"]) for r in doc["routes"]] == [("Site1", 1, 1)]
