"""Replay's checkpoints are the shared queue model (issue 10 item 2): the state at a step is an
``engine.queue.jobqueue.JobQueue`` filled through the queue's record parser, so replay and
``routedeck queue`` read a log the same way.

Sources: htcondor.md §3.1 (keys; a proc ad chains to its cluster ad ``0<c>.-1``; user records
``0.<n>`` MyType Owner and ClusterPvt ``<c>.-2`` are not jobs), §3.3 (the owner's reading rules:
records apply at their 106) and ClassAd attribute names being case-insensitive (htcondor.md §1
"Names are case-insensitive"; ``classad::ClassAd`` looks names up with ``CaseIgnLTStr``).
"""

from __future__ import annotations

import json

from engine.feeds.replay.index import build_index
from engine.queue.jobqueue import JobQueue
from engine.queue.reader import load_bytes
from engine.queue.records import parse_line
from tui.cli import main

# A hand-written log (format of htcondor.md §3.1): the cluster ad holds Owner/RouteName/JobStatus
# as defaults, spelled in other capitalisations than HTCondor's; proc 1.1 overrides JobStatus;
# the second transaction holds 1.2 and renames the route through a 104 spelled differently again.
LOG = "\n".join([
    "107 1 CreationTimestamp 1795100000",
    "105 ",
    "101 0.0 Job Machine",
    "103 0.0 NextClusterNum 2",
    "101 0.2 Owner (empty)",
    '103 0.2 user "alice@x"',
    "101 01.-1 Job Machine",
    "101 1.-2 ClusterPvt (empty)",
    '103 01.-1 OWNER "alice"',
    '103 01.-1 routename "Site1"',
    '103 01.-1 routedfromjobid "7.0"',
    "103 01.-1 jobstatus 1",
    "101 1.0 Job Machine",
    "103 1.0 ProcId 0",
    "101 1.1 Job Machine",
    "103 1.1 ProcId 1",
    "103 1.1 JOBSTATUS 2",
    "101 1.2 Job Machine",
    "103 1.2 ProcId 2",
    "106 # 2026-11-20T10:00:00.000000",
    "105 ",
    "103 1.2 JobStatus 5",
    '103 1.2 holdreason "held by test"',
    "104 01.-1 ROUTENAME",
    '103 01.-1 RouteName "Site2"',
    "106 # 2026-11-20T10:05:00.000000",
]) + "\n"


def _cli(capsys, *argv):
    rc = main(list(argv))
    out, _ = capsys.readouterr()
    assert rc == 0
    return json.loads(out)


def test_checkpoint_state_is_a_jobqueue_with_case_insensitive_names_and_chaining(tmp_path):
    log = tmp_path / "job_queue.log"
    log.write_text(LOG)
    ix = build_index(log, every=1, tz="UTC")
    assert ix.problems == [] and ix.steps == 2
    first, last = ix.state_at(0), ix.state_at(1)
    assert isinstance(first, JobQueue) and isinstance(last, JobQueue)
    # cluster defaults seen through each proc, whatever the spelling asked for
    assert [first.get(j).status for j in ("1.0", "1.1", "1.2")] == [1, 2, 1]
    assert first.get("1.0").get("ROUTENAME") == '"Site1"' == first.get("1.2").get("RouteName")
    assert [last.get(j).status for j in ("1.0", "1.1", "1.2")] == [1, 2, 5]
    assert last.get("1.2").get("HoldReason") == '"held by test"'
    assert last.get("1.0").get("routename") == '"Site2"'
    # one spelling per name (HTCondor's own), not one entry per spelling
    assert sorted(last.ad("01.-1")) == ["JobStatus", "Owner", "RouteName", "RoutedFromJobId"]
    # not jobs: the header, the user record and the cluster-private ad
    assert len(last) == 3 and last.record_kinds() == {"user": 1, "cluster_private": 1}
    # the same queue the shared loader builds from the whole file
    assert last.snapshot_state() == load_bytes(LOG.encode(), mode="owner").queue.snapshot_state()


def test_replay_at_matches_the_queue_command(tmp_path, capsys):
    log = tmp_path / "job_queue.log"
    log.write_text(LOG)
    queue = _cli(capsys, "queue", str(log), "--json", "--jobs")
    replay = _cli(capsys, "replay", str(log), "--at", "end", "--json", "--jobs", "--tz", "UTC")
    assert queue["problems"] == []
    assert replay["jobs"] == queue["jobs"] and replay["total_jobs"] == queue["total_jobs"] == 3
    assert [(j["job"], j["status"], j["owner"], j["route"]) for j in replay["jobs"]] == [
        ("1.0", "Idle", "alice", "Site2"), ("1.1", "Running", "alice", "Site2"), ("1.2", "Held", "alice", "Site2")]
    assert replay["queue"] == {"idle": 1, "running": 1, "held": 1, "removed": 0, "completed": 0}
    # at the first transaction: the cluster default JobStatus 1 and the lower-case route name
    early = _cli(capsys, "replay", str(log), "--transaction", "1", "--json", "--jobs", "--tz", "UTC")
    assert [(j["job"], j["status"], j["route"]) for j in early["jobs"]] == [
        ("1.0", "Idle", "Site1"), ("1.1", "Running", "Site1"), ("1.2", "Idle", "Site1")]
    assert {r["name"]: r["routed"] for r in early["routes"]} == {"Site1": 3}


def test_fork_is_copy_on_write_both_ways():
    """Replay's checkpoints: a fork and its origin never see each other's later writes."""
    base = load_bytes(LOG.encode()).queue
    cp = base.fork()
    before = cp.snapshot_state()
    base.apply_quiet([(103, "1.0", "jobstatus", "4"), (102, "1.1", "", ""), (101, "2.0", "Job", "Machine")])
    assert cp.snapshot_state() == before
    other = cp.fork()
    cp.apply_all([parse_line('103 01.-1 Owner "bob"'), parse_line("104 1.2 HOLDREASON")])
    assert other.snapshot_state() == before
    assert base.get("1.0").status == 4 and base.get("1.1") is None and base.get("2.0") is not None
    assert cp.get("1.0").get("owner") == '"bob"' and cp.get("1.2").get("HoldReason") is None
    assert other.get("1.2").get("HoldReason") == '"held by test"'
