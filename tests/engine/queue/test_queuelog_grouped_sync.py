"""Grouped fdatasync faster than real time (issue 30's decision; htcondor.md §3.2 and §8
"Durability of schedd commits"): at real time each durable commit is synced as the schedd's
``Transaction::Commit`` does; faster, the syncs are grouped (at most one per 50 ms of wall time)
and a ``barrier()`` syncs what is pending before a commit's effect leaves the log."""

import pytest

import engine.queue.writer as W
from engine.queue import records as R
from engine.queue.reader import load_log
from engine.queue.writer import open_queue
from engine.schedd.history import HistoryWriter
from engine.router.hooks import HookManager
from engine.execute.hooks import HookRunner
import engine.execute.hooks as EH
from engine.cli.demo import snapshots_fast
from engine.feeds.demo import GROUP_SYNC, build_demo

T0 = 1795219200


class ManualMono:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def synced(monkeypatch):
    calls: list[str] = []
    real = W._datasync
    monkeypatch.setattr(W, "_datasync", lambda fd: (calls.append("sync"), real(fd)))
    return calls


def _queue(tmp_path, mono):
    q, _ = open_queue(tmp_path / "job_queue.log", T0)
    q.writer.monotonic = mono
    with q.transaction(now=T0) as t:
        c = t.new_cluster()
        t.new_proc(c)
    return q, R.job_key(c, 0)


def _commit(q, key, i, durable=True):
    with q.transaction(now=T0 + i, durable=durable) as t:
        t.set_attribute(key, "N", str(i))


def test_grouped_mode_syncs_at_most_once_per_50_ms_of_wall_time(tmp_path, synced):
    mono = ManualMono()
    q, key = _queue(tmp_path, mono)
    q.writer.set_grouping(0.05)
    synced.clear()
    # 1000 durable commits, 1 ms of (manual) wall time apart: 1 s -> at most 20 syncs (+1 for the first)
    for i in range(1000):
        _commit(q, key, i)
        mono.t += 0.001
    assert 15 <= len(synced) <= 21
    assert not q.writer.pending or len(synced) <= 20
    # every commit is written and flushed at once (kill -9 loses nothing): a reader sees them all
    assert load_log(q.writer.path).queue.ad(key)["N"] == "999"


def test_barrier_syncs_pending_and_nothing_when_nothing_is_pending(tmp_path, synced):
    mono = ManualMono()
    q, key = _queue(tmp_path, mono)
    q.writer.set_grouping(0.05)
    mono.t += 1
    _commit(q, key, 1)  # synced: the interval had passed
    n = len(synced)
    _commit(q, key, 2)  # same instant: pending
    assert len(synced) == n and q.writer.pending
    q.writer.barrier()
    assert len(synced) == n + 1 and not q.writer.pending
    q.writer.barrier()
    assert len(synced) == n + 1


def test_speed_one_syncs_each_durable_commit_and_switching_syncs_pending(tmp_path, synced):
    mono = ManualMono()
    q, key = _queue(tmp_path, mono)
    q.writer.set_grouping(0.05)
    mono.t += 1
    _commit(q, key, 1)
    _commit(q, key, 2)
    n = len(synced)
    assert q.writer.pending
    q.writer.set_grouping(None)  # SetSpeed 1
    assert len(synced) == n + 1 and not q.writer.pending
    for i in range(3, 8):
        _commit(q, key, i)
    assert len(synced) == n + 1 + 5


@pytest.mark.parametrize("grouping", [None, 0.05])
def test_non_durable_commits_never_sync_on_their_own(tmp_path, synced, grouping):
    """log_transaction.cpp ``Transaction::Commit(..., nondurable)``: no fdatasync."""
    mono = ManualMono()
    q, key = _queue(tmp_path, mono)
    q.writer.set_grouping(grouping)
    synced.clear()
    for i in range(50):
        mono.t += 1
        _commit(q, key, i, durable=False)
    assert synced == [] and not q.writer.pending
    q.writer.barrier()
    assert synced == []


def test_barrier_runs_before_a_history_line_and_a_hook(tmp_path, synced, monkeypatch):
    mono = ManualMono()
    q, key = _queue(tmp_path, mono)
    q.writer.set_grouping(0.05)
    _commit(q, key, 1)
    assert q.writer.pending
    order = synced

    def barrier():
        order.append("barrier")
        q.writer.barrier()

    hist = HistoryWriter(tmp_path / "history")
    hist.barrier = barrier
    hist.append({"ClusterId": "1", "ProcId": "0", "Owner": '"u"', "CompletionDate": "1",
                 "JobStatus": "4"})
    assert order[-2:] == ["barrier", "sync"] and hist.path.exists()
    order.append("history-written")

    _commit(q, key, 2)
    runner = HookRunner({}, allow_run=False)
    runner.barrier = barrier
    spawned = []
    monkeypatch.setattr(EH, "run_hook", lambda *a, **k: spawned.append(list(order)))
    runner.allow_run = True
    runner._spawn("PREPARE_JOB", "/bin/true", "", [], None, None, 1.0)
    assert spawned and spawned[0][-2:] == ["barrier", "sync"]


def test_router_hook_manager_calls_barrier_before_a_hook_runs(tmp_path, monkeypatch):
    order = []
    mgr = HookManager({}, "X", allow_run=True)
    mgr.barrier = lambda: order.append("barrier")
    monkeypatch.setattr(mgr, "_execute", lambda *a: order.append("hook"))
    mgr.background = False
    mgr.run("1.0", "translate", "/bin/true", "")
    assert order == ["barrier", "hook"]


def test_headless_max_speed_groups_the_syncs_as_the_runtime_does(tmp_path, synced, monkeypatch):
    """``routedeck demo --headless --max-speed`` (engine.cli.demo.snapshots_fast) is faster than
    real time: its syncs are grouped as the runtime's (issue 30), not one per durable commit (it
    synced each one: x125 instead of x800 for a virtual hour with a state directory), and what
    is pending is synced before each snapshot."""
    engine = build_demo(seed=1, state_dir=tmp_path / "state")  # durable, as with --state-dir
    durable = []
    real = W.QueueLogWriter.write_transaction

    def counted(self, *a, **k):  # Transaction._commit passes durable= by name
        durable.append(k.get("durable", True))
        return real(self, *a, **k)

    monkeypatch.setattr(W.QueueLogWriter, "write_transaction", counted)
    wall = ManualMono()  # frozen: only the barriers (history lines, snapshots) sync
    synced.clear()
    for _snap in snapshots_fast(engine, engine.now + 1800, 600, wall=wall):
        assert engine.writer.group_interval == GROUP_SYNC
        assert not engine.writer.pending  # synced before the snapshot
    engine.close()
    assert sum(durable) > 100
    assert len(synced) < sum(durable) / 4
