"""The snapshot's incremental parts agree with a full rebuild (issue 14 item 2: a snapshot costs
what changed, not the queue).

- The jobs table (``engine.views.build.RowIndex``) is kept from the queue's change events, jobs
  that come or go placed by bisection; after the demo has run (routed copies submitted and
  removed, jobs finishing and leaving) it must equal a table built from scratch.
- The crondor rows come from the store's index of possible cron jobs (``QueueStore.cron_jobs``);
  they must equal the rows of a scan over every job (``needsCronTab``, htcondor.md §2.4), and the
  store's counts must equal the counts of its status map.
"""

from __future__ import annotations

from types import SimpleNamespace

from engine.feeds.demo import build_demo
from engine.queue.records import job_order
from engine.schedd.cron import needs_cron
from engine.schedd.store import StatusQueries
from engine.views.build import RowIndex, cron_views, job_rows


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
        fresh = RowIndex(eng).table()
        assert kept == fresh
        assert [r.job for r in kept] == sorted((r.job for r in kept), key=job_order)
        seen_versions.add(eng.jobs_version)
    assert len(seen_versions) > 10  # the queue did change between the steps
    index = eng.row_index
    assert len(index.order) == len(index.rows) == len(index.sort_keys) == len(index.row_list)


def test_cron_rows_and_counts_from_indexes_equal_a_scan(tmp_path):
    eng = _demo(tmp_path)
    for _ in range(20):
        eng.step(eng.now + 60)
        scan = sorted((job for job, st in eng.store.status.items()
                       if st in (1, 2, 5) and needs_cron(eng.store.attrs(job))), key=job_order)
        assert [c.job for c in cron_views(eng)] == scan
        assert eng.store.counts() == StatusQueries.counts(eng.store)
    assert scan, "the sample demo's workload has cron jobs"
