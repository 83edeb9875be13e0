"""The snapshot's incremental parts agree with a full rebuild (issue 14 item 2: a snapshot costs
what changed, not the queue).

- The jobs table (``engine.views.build.RowIndex``) is kept from the queue's change events, jobs
  that come or go placed by bisection; after the demo has run (routed copies submitted and
  removed, jobs finishing and leaving) it must equal a table built from scratch.
- Replay and watch keep the per-route counts, cron jobs and job count in a tally
  (``engine.views.recorded_tally``) from the same events; it must equal the full scan.
- The crondor rows come from the store's index of possible cron jobs (``QueueStore.cron_jobs``);
  they must equal the rows of a scan over every job (``needsCronTab``, htcondor.md §2.4), and the
  store's counts must equal the counts of its status map.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from tests.helpers.paths import REPO
from engine.clock import ManualClock
from engine.feeds.demo import build_demo
from engine.feeds.replay.player import Player
from engine.feeds.watch.follow import WatchEngine, queue_ads
from engine.feeds.watch.setup import WatchSetup
from engine.queue.records import job_order
from engine.schedd.cron import needs_cron
from engine.schedd.store import StatusQueries
from engine.schedd.cron import ATTRS as CRON_ATTRS
from engine.views.build import DemoJobs, RowIndex, cron_views, job_rows
from engine.views.recorded import iter_jobs, literal_int, route_counts

RECORDING = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"


def _demo(tmp_path):
    eng = build_demo(seed=3, state_dir=tmp_path, durable=False)
    parked = SimpleNamespace(name="parked", runtime=None, site=None,
                             attrs={"Owner": '"parked"', "VO": '"parked"', "JobUniverse": "5",
                                    "Cmd": '"/bin/sleep"', "RequestCpus": "1", "RequestMemory": "64000"})
    eng.schedd.submit(parked, 50, eng.now)
    return eng


def test_jobs_table_kept_from_events_equals_a_full_rebuild(tmp_path):
    eng = _demo(tmp_path)
    seen_versions = set()
    for _ in range(40):  # 40 steps of 30 virtual seconds: jobs come, change and go
        eng.step(eng.now + 30)
        kept = job_rows(eng)
        fresh = RowIndex(DemoJobs(eng)).table()
        assert kept == fresh
        assert [r.job for r in kept] == sorted((r.job for r in kept), key=job_order)
        seen_versions.add(eng.jobs_version)
    assert len(seen_versions) > 10  # the queue did change between the steps
    index = eng.row_index
    table = index.table()
    assert len(index.rows) == len(table) and all(index.rows[r.job] is r for r in table)


def test_cron_rows_and_counts_from_indexes_equal_a_scan(tmp_path):
    eng = _demo(tmp_path)
    for _ in range(20):
        eng.step(eng.now + 60)
        scan = sorted((job for job, st in eng.store.status.items()
                       if st in (1, 2, 5) and needs_cron(eng.store.attrs(job))), key=job_order)
        assert [c.job for c in cron_views(eng)] == scan
        assert eng.store.counts() == StatusQueries.counts(eng.store)
    assert scan, "the sample demo's workload has cron jobs"


# ------------------------------------------------------------------------------ recorded queues

def _scan(ads):
    """The full scan the tally replaces (engine.views.recorded: route_counts, the cron rule of
    cron_views, the proc count of iter_jobs)."""
    jobs = list(iter_jobs(ads))
    cron = sorted((k for k, a in jobs if any(n in a for n in CRON_ATTRS)
                   and (literal_int(a.get("JobStatus")) or 0) in (1, 2, 5)), key=job_order)
    counts = {n: (c.routed, c.running, c.held, c.completed, c.removed) for n, c in route_counts(ads, jobs).items()}
    return counts, cron, len(jobs)


def _tallied(rows, ads):
    t = rows.tally
    t.update(ads)
    counts = {n: (c.routed, c.running, c.held, c.completed, c.removed) for n, c in t.counts.items()}
    return counts, [k for k, _ in t.cron_jobs(ads)], len(t.procs)


def test_recorded_tally_equals_a_scan_through_replay_moves(shipped_index):
    """sample_configs/recordings/demo-3h.job_queue.log (a demo recording): forward steps, jumps
    back and forth (checkpoint restores) — the tally kept from the moves equals a scan; route
    counts are the router's view (htcondor.md §1.5, §1.6)."""
    player = Player(shipped_index(), ManualClock(0))  # build_index(RECORDING), shared
    rng = random.Random(7)
    nonempty = 0
    for _ in range(30):
        move = rng.random()
        if move < 0.5:
            player.step(rng.randint(1, 400))
        else:
            player.seek(step=rng.randint(0, player.index.steps))
        ads = player.state.table
        want = _scan(ads)
        assert _tallied(player.rows, ads) == want
        nonempty += bool(want[0]) and bool(want[1])
    assert nonempty > 5  # routes and cron jobs were there to count


@pytest.mark.slow
def test_recorded_tally_equals_a_scan_while_watching_a_live_log(tmp_path):
    """A demo writing its job_queue.log, followed by watch (the queue's change events, cluster
    ads included): after each poll the tally equals a scan of the followed queue."""
    engine = build_demo(state_dir=tmp_path, seed=5)
    clock = ManualClock(engine.now)
    watch = WatchEngine(WatchSetup(queue_log=str(tmp_path / "job_queue.log")), clock)
    try:
        watch.poll()
        for _ in range(40):
            engine.step(engine.now + 45)
            clock.set(engine.now)
            watch.poll()
            ads = queue_ads(watch.queue)
            assert _tallied(watch.rows, ads) == _scan(ads)
        assert _scan(ads)[0], "routed copies were counted"
    finally:
        engine.close()
