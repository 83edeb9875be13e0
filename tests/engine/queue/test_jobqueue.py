"""The in-memory job queue: chaining, tables kept apart, events, QMGMT-like transactions
(htcondor.md §3.1 "Keys", §3.2, §3.5 consumer)."""

import pytest
import random

from engine.classad import evaluate, is_true
from engine.queue.jobqueue import (
    AdChanged, JobAdded, JobChanged, JobQueue, JobRemoved, QueueReloaded, cluster_key, job_key, parse_key,
)
from engine.queue import records as R
from engine.queue.reader import load_bytes


def _queue(*lines: str) -> JobQueue:
    return load_bytes("".join(line + "\n" for line in lines).encode(), mode="follow").queue


def test_key_helpers():
    """htcondor.md §3.1: `c.p` jobs, `0c.-1` cluster ads with a leading zero."""
    assert job_key(1, 0) == "1.0" and cluster_key(21) == "021.-1" and parse_key("021.-1") == (21, -1)


def test_proc_attributes_win_over_cluster_and_names_are_case_insensitive():
    """htcondor.md §3.1 "Keys": a job's effective ad is the cluster attributes plus the proc
    attributes, the proc's own winning; ClassAd attribute names are case-insensitive."""
    q = _queue("101 01.-1 Job Machine", "103 01.-1 Cmd \"/bin/sleep\"", "103 01.-1 RequestCpus 1",
               "101 1.0 Job Machine", "103 1.0 cmd \"sleep\"", "103 1.0 JobStatus 2")
    job = q.get((1, 0))
    assert job.get("CMD") == '"sleep"' and job.get("requestcpus") == "1" and job.get("Nope") is None
    assert job.attrs == {"Cmd": '"sleep"', "RequestCpus": "1", "JobStatus": "2"}
    assert dict(job.proc_attrs) == {"Cmd": '"sleep"', "JobStatus": "2"}
    assert dict(job.cluster_attrs) == {"Cmd": '"/bin/sleep"', "RequestCpus": "1"}
    assert job.status == 2 and q.get("1.0") is job


def test_each_queue_keeps_the_spelling_it_saw_first():
    """htcondor.md §3.1: names are case-insensitive; a queue shows an unknown name as its own log
    first spelt it, whatever another log read earlier in the same process spelt (was: one
    process-wide table, so `queue --long` printed `FOO` for a log that says `Foo` when another
    test had read `FOO` first; CI, session 11)."""
    first = _queue("101 1.0 Job Machine", "103 1.0 SpellTestAttr 1", "103 1.0 JobStatus 1")
    second = _queue("101 1.0 Job Machine", "103 1.0 SPELLTESTATTR 2", "103 1.0 jobstatus 1")
    assert "SpellTestAttr" in first.get((1, 0)).attrs
    assert "SPELLTESTATTR" in second.get((1, 0)).attrs and second.get((1, 0)).get("spelltestattr") == "2"
    assert "JobStatus" in second.get((1, 0)).attrs  # HTCondor's own spelling for the names RouteDeck reads
    bulk = load_bytes(b"101 1.0 Job Machine\n103 1.0 sPELLtestattr 3\n", source="q.log").queue
    assert "sPELLtestattr" in bulk.get((1, 0)).attrs

def test_tables_kept_apart():
    """htcondor.md §3.5 consumer: user records, jobsets and other ads (header, ClusterPvt,
    projects) are kept apart from jobs."""
    q = _queue("101 0.0 Job Machine", "101 0.1 Owner (empty)", "103 0.1 User \"a@b\"", "101 0.2 Project (empty)",
               "101 01.-1 Job Machine", "101 1.-2 ClusterPvt (empty)", "101 1.0 Job Machine",
               "101 3.-100 JobSet (empty)")
    assert len(q) == 1 and q.ids() == [(1, 0)]
    assert list(q.users) == ["0.1"] and list(q.jobsets) == ["3.-100"]
    assert list(q.cluster_private) == ["1.-2"] and list(q.other_ads) == ["0.2"]


def test_classad_is_cached_and_rebuilt_after_a_change():
    # Source: RouteDeck cache invariant (no HTCondor behaviour)
    q = _queue("101 01.-1 Job Machine", "103 01.-1 RequestCpus 2", "101 1.0 Job Machine")
    job = q.get((1, 0))
    ad = job.classad()
    assert job.classad() is ad and is_true(evaluate("RequestCpus == 2", ad))
    q.apply(R.set_attr("01.-1", "RequestCpus", "4"))
    assert job.classad() is not ad and is_true(evaluate("RequestCpus == 4", job.classad()))


def test_apply_events_and_unknown_keys():
    """htcondor.md §3.5 consumer: SetAttribute on an unknown key is ignored (reported)."""
    q = JobQueue()
    seen = []
    unsubscribe = q.subscribe(seen.append)
    assert q.apply(R.new_ad("01.-1")) is None
    q.apply(R.new_ad("1.0"))
    q.apply(R.set_attr("1.0", "JobStatus", "1"))
    q.apply(R.set_attr("01.-1", "Owner", '"a"'))
    assert "unknown ad" in q.apply(R.set_attr("7.0", "JobStatus", "1"))
    assert "existing ad" in q.apply(R.new_ad("1.0"))
    q.apply(R.new_ad("0.0"))
    q.apply(R.destroy_ad("1.0"))
    unsubscribe()
    q.clear()
    assert seen == [JobAdded((1, 0)), JobChanged((1, 0), frozenset({"JobStatus"})),
                    JobChanged((1, 0), frozenset({"Owner"})), AdChanged("0.0"), JobRemoved((1, 0))]
    assert len(q) == 0


def test_subscribe_batch_gets_each_batch_events_in_one_call():
    """A batch subscriber is told once per batch (a committed transaction, an apply) with the events a
    per-event subscriber gets one by one, in the same order; a batch with no events tells nobody."""
    q = JobQueue()
    one, batches, order = [], [], []
    q.subscribe(lambda ev: (one.append(ev), order.append("event")))
    unsubscribe = q.subscribe_batch(lambda evs: (batches.append(list(evs)), order.append("batch")))
    with q.transaction(now=1.0) as t:
        c = t.new_cluster()
        t.new_proc(c)
        t.new_proc(c)
        t.set_attribute((c, 0), "JobStatus", "1")
    q.apply(R.set_attr("0.0", "NextClusterNum", "5"))
    q.apply(R.new_ad("9.9"))  # a proc without its cluster ad: still a job added
    q.apply(R.set_attr("7.0", "JobStatus", "1"))  # unknown ad: ignored, no event
    with q.transaction(now=2.0) as t:
        t.set_attribute((c, 1), "JobStatus", "2")
        t.destroy((c, 0))
    assert [ev for b in batches for ev in b] == one
    assert batches[1:] == [[AdChanged("0.0")], [JobAdded((9, 9))],
                           [JobRemoved((1, 0)), JobChanged((1, 1), frozenset({"JobStatus"}))]]
    assert batches[0][-2:] == [JobAdded((1, 0)), JobAdded((1, 1))] and len(batches[0]) == 5
    assert order == ["event"] * 5 + ["batch"] + ["event", "batch"] * 2 + ["event"] * 2 + ["batch"]
    unsubscribe()
    q.apply(R.destroy_ad("9.9"))
    assert len(batches) == 4 and len(one) == 10


def test_transaction_block_commits_once_aborts_and_refuses_a_second():
    """The ``with queue.transaction()`` block: a second one inside raises and leaves the first open;
    an exception aborts (nothing applied) and frees the queue; a commit that raises frees it too."""
    q = JobQueue()
    with q.transaction(now=1.0) as t:
        c = t.new_cluster()
        with pytest.raises(RuntimeError, match="already open"):
            with q.transaction(now=1.0):
                pass
        t.new_proc(c)
    assert q.ids() == [(c, 0)]
    with pytest.raises(KeyError):
        with q.transaction(now=2.0) as t:
            t.set_attribute((c, 0), "JobStatus", "1")
            t.set_attribute((c, 7), "JobStatus", "1")
    assert q.get((c, 0)).get("JobStatus") is None

    def refuse(recs):
        raise OSError("disk full")

    q.apply_all = refuse
    with pytest.raises(OSError), q.transaction(now=3.0) as t:
        t.set_attribute((c, 0), "JobStatus", "1")
    del q.apply_all
    with q.transaction(now=4.0) as t:
        t.set_attribute((c, 0), "JobStatus", "2")
    assert q.get((c, 0)).get("JobStatus") == "2"


def test_reload_sends_only_queue_reloaded():
    # Source: RouteDeck event contract; a bulk reload is htcondor.md §3.5 (COMPRESSED / PROBE_ERROR)
    q = JobQueue()
    seen = []
    q.subscribe(seen.append)
    load_bytes(b"101 1.0 Job Machine\n", q)
    assert seen == [QueueReloaded()] and q.ids() == [(1, 0)]


def test_transaction_writes_next_cluster_num_and_cascades_destroy():
    """htcondor.md §3.6: NewCluster maintains NextClusterNum in the header and creates the
    cluster and ClusterPvt ads; destroying the last proc destroys the cluster and ClusterPvt."""
    q = JobQueue()
    with q.transaction() as t:
        c = t.new_cluster()
        a, b = t.new_proc(c), t.new_proc(c)
        t.set_attribute(a, "JobStatus", "1")
        t.set_attribute(b, "JobStatus", "2")
        assert len(q) == 0  # nothing applied before the commit
    assert (c, a, b) == (1, (1, 0), (1, 1)) and q.header["NextClusterNum"] == "2"
    assert q.counts_by_status() == {1: 1, 2: 1}
    with q.transaction() as t:
        assert t.new_cluster() == 2
        t.destroy((1, 0))
    assert q.ad("01.-1") is not None and q.header["NextClusterNum"] == "3"
    with q.transaction() as t:
        t.destroy((1, 1))
        assert [r.key for r in t.records if r.op == R.DESTROY_AD] == ["1.1", "01.-1", "1.-2"]
    assert q.ad("01.-1") is None and q.ad("1.-2") is None and q.next_cluster_num() == 3


def test_transaction_checks_against_the_pending_view():
    q = JobQueue()
    with pytest.raises(KeyError):
        with q.transaction() as t:
            t.set_attribute((5, 0), "JobStatus", "1")
    with pytest.raises(ValueError):
        with q.transaction() as t:
            c = t.new_cluster()
            t.set_attribute((c, -1), "JobStatus", "1")  # proc-only attribute (htcondor.md §3.1)
    with pytest.raises(RuntimeError):
        with q.transaction():
            with q.transaction():
                pass
    assert q.snapshot_state() == {}


def test_status_reads_like_evaluate_attr_int():
    # Source: EvaluateAttrInt semantics checked with classad2 via engine.classad.as_int (not in htcondor.md)
    """JobStatus written as a real or an expression still counts (engine.classad.as_int: reals
    truncate); a non-number is None."""
    q = _queue("101 1.0 Job Machine", "103 1.0 JobStatus 2.0", "101 1.1 Job Machine", "103 1.1 JobStatus 1 + 3",
               "101 1.2 Job Machine", "103 1.2 JobStatus \"x\"")
    assert [j.status for j in q.jobs()] == [2, 4, None]
    assert q.counts_by_status() == {2: 1, 4: 1, None: 1}


def test_apply_all_matches_apply():
    """apply_all's inline path for a proc ad's 103 gives what ``_apply`` record by record gives
    (the slower path is the oracle): the same ads, warnings, events and versions, for random
    transactions mixing new, set, delete and destroy on job, cluster and other keys, known or
    not (htcondor.md §3.5 consumer: a 103 on an unknown key is ignored and reported)."""
    _apply_all_matches_apply(run=1)


def test_apply_all_matches_apply_on_runs_of_one_key():
    """The same with records in runs on one key, as transactions write them (apply_all looks a
    run's ad and jobs up once): a new proc, a destroy or an unknown key inside or between runs."""
    _apply_all_matches_apply(run=6)


def _apply_all_matches_apply(run: int) -> None:
    keys = ["1.0", "1.1", "01.-1", "2.0", "02.-1", "0.0", "1.-2", "9.9"]
    names = ["JobStatus", "jobstatus", "Owner", "RequestCpus", "Managed", "x"]
    rnd = random.Random(14 + run)
    for _round in range(40):
        recs = []
        key = rnd.choice(keys)
        for _ in range(rnd.randint(1, 40)):
            op = rnd.choice([103] * 6 + [101, 102, 104])
            if rnd.randint(1, run) == 1:
                key = rnd.choice(keys)
            if op == 101:
                recs.append(R.new_ad(key))
            elif op == 102:
                recs.append(R.destroy_ad(key))
            elif op == 104:
                recs.append(R.delete_attr(key, rnd.choice(names)))
            else:
                recs.append(R.set_attr(key, rnd.choice(names), str(rnd.randint(0, 3))))
        fast, slow = JobQueue(), JobQueue()
        for q in (fast, slow):  # the same starting state
            q.apply_all([R.new_ad("01.-1"), R.new_ad("1.0"), R.set_attr("1.0", "JobStatus", "1")])
        seen_fast, seen_slow = [], []
        fast.subscribe(seen_fast.append)
        slow.subscribe(seen_slow.append)
        warned_fast = fast.apply_all(recs)
        with slow.batch():
            warned_slow = [w for w in (slow._apply(r) for r in recs) if w]
        assert warned_fast == warned_slow
        assert fast.snapshot_state() == slow.snapshot_state()
        assert seen_fast == seen_slow
        assert fast._ver == slow._ver


def test_a_copy_leaves_its_source_writing_its_ads_in_place():
    """``JobQueue.copy`` (replay's route history keeps references to the ads it read and copies its
    queue midway for a player's first move, engine.feeds.replay.stats): the copy shares no ad, and
    the source keeps changing its ads in place — a reference to an ad sees its next values."""
    q = JobQueue()
    q.apply_quiet([(101, "1.0", "Job", "Machine"), (103, "1.0", "JobStatus", "1")])
    held = q.table["1.0"]
    copy = q.copy()
    q.apply_quiet([(103, "1.0", "JobStatus", "2")])
    assert held["JobStatus"] == "2" and q.table["1.0"] is held
    assert copy.table["1.0"]["JobStatus"] == "1"
