"""The source → routed copy → grid job chain (engine.views.chain; issue 29), on the demo's real
queue (its schedd plays the gridmanager: ``GridJobId``/``GridJobStatus`` on the routed copies,
``engine.schedd.schedd.grid_job_id``; infnbatchjob.cpp ``SetRemoteIds``, proc.cpp
``getJobStatusString``) and on hand-made orphans (htcondor.md §1.6: RoutedToJobId /
RoutedFromJobId, ``Managed``; §1.3: MAX_JOB_MIRROR_UPDATE_LAG 600)."""

from __future__ import annotations

from engine.views.chain import batch_id, chains

from tests.helpers.demo_fixture import demo_engine


def _ads(engine) -> dict[str, dict[str, str]]:
    return {job.key: dict(job.attrs) for job in engine.queue}


def test_every_routed_source_of_the_demo_has_its_copy_and_grid_job():
    engine = demo_engine()
    ads = _ads(engine)
    found = chains(ads, engine.now)
    assert found.totals["sources"] > 10
    submitted = [x for x in found.links if x.grid_job_id]
    assert submitted, "the demo's gridmanager writes GridJobId on routed copies"
    for link in found.links:
        if link.copy is None:
            continue
        copy = ads[link.copy]
        assert copy["RoutedFromJobId"] == f'"{link.source}"'
        if link.grid_job_id:
            assert link.grid_job_id.split()[0] == link.grid_resource.split()[0]  # the GridResource's type
            assert link.batch_id == link.grid_job_id.split()[-1].rsplit("/", 1)[-1]
            assert link.grid_status in ("IDLE", "RUNNING", "COMPLETED")
            if int(copy["JobStatus"]) == 2:
                assert link.grid_status == "RUNNING"
    # totals count each job once: one copy per source, one grid job per copy
    assert found.totals["copies"] == len({x.copy for x in found.links if x.copy})
    assert found.totals["grid_jobs"] == len({x.grid_job_id for x in found.links if x.grid_job_id})
    one = submitted[0]
    by_copy = chains(ads, engine.now, jobs=[one.copy])  # a copy stands for its source
    assert [x.source for x in by_copy.links] == [one.source]


def test_orphans_and_lags_are_named():
    now = 10_000
    ads = {
        "1.0": {"JobStatus": "2", "Managed": '"External"', "RoutedToJobId": '"5.0"'},
        "5.0": {"JobStatus": "1", "RoutedFromJobId": '"1.0"', "EnteredCurrentStatus": str(now - 700),
                "QDate": str(now - 900), "RouteName": '"Site1"'},  # never submitted: grid lag 900 s
        "2.0": {"JobStatus": "2", "Managed": '"External"', "RoutedToJobId": '"6.0"'},  # copy gone
        "7.0": {"JobStatus": "1", "RoutedFromJobId": '"3.0"', "QDate": str(now - 10)},  # source gone
        "4.0": {"JobStatus": "1"},  # not routed: no chain
    }
    found = chains(ads, now)
    assert found.orphan_sources == ("2.0",) and found.orphan_copies == ("7.0",)
    link = next(x for x in found.links if x.source == "1.0")
    assert link.copy == "5.0" and link.route == "Site1" and link.grid_job_id is None
    lags = {g.hop: (g.seconds, g.over) for g in link.lags}
    assert lags == {"mirror": (700, True), "grid": (900, True)}
    assert found.totals["lagging"] == 1 and "4.0" not in {x.source for x in found.links}


def test_batch_id_is_the_batch_systems_own():
    assert batch_id("batch slurm ce.example.org_9619#12.0#1700000000 slurm/20240101/4711") == "4711"
    assert batch_id("condor schedd.example.org pool.example.org 42.0") == "42.0"
    assert batch_id(None) is None and batch_id("batch") is None
