"""Simulated sites (issue 5 part 2): deterministic per seed, slots respected, black hole fails
fast, status reported with HTCondor's update delays (htcondor.md §7)."""

import pytest

from engine.schedd.sites import (STARTER_INITIAL_UPDATE_INTERVAL, RunTime, SiteConfigError, SiteSet,
                          SiteSpec)
from engine.schedd.sites import GRIDMANAGER_CONTACT_SCHEDD_DELAY


def _run(seed, n=30, until=20000.0, **spec):
    sites = SiteSet([SiteSpec("S", **spec)], seed=seed)
    site = sites.site_named("S")
    for i in range(n):
        sites.submit(site, f"1.{i}", 0.0)
    reports = []
    t = 0.0
    while sites.next_time() is not None and t < until:
        t = sites.next_time()
        reports.extend(sites.advance(t))
    return reports, site


def test_same_seed_same_reports_other_seed_differs():
    a, _ = _run(7, slots=4, runtime=RunTime("exponential", 300), failure_probability=0.3)
    b, _ = _run(7, slots=4, runtime=RunTime("exponential", 300), failure_probability=0.3)
    c, _ = _run(8, slots=4, runtime=RunTime("exponential", 300), failure_probability=0.3)
    assert a == b
    assert a != c


def test_slots_limit_concurrency():
    reports, site = _run(1, n=10, slots=2, start_latency=(0, 0), runtime=RunTime("fixed", 100))
    exits = [r for r in reports if r.kind == "exited"]
    assert len(exits) == 10
    # two at a time, 100 s each: the last one ends at 500 s
    assert max(r.ended for r in exits) == pytest.approx(500.0)
    starts = sorted(r.started for r in exits)
    assert starts[:2] == [0.0, 0.0] and starts[2:4] == [100.0, 100.0]


def test_running_is_reported_after_the_starter_initial_update():
    # htcondor.md §7: first update after STARTER_INITIAL_UPDATE_INTERVAL (8 s)
    reports, _ = _run(1, n=1, slots=1, start_latency=(10, 10), runtime=RunTime("fixed", 100))
    running = [r for r in reports if r.kind == "running"][0]
    assert running.started == 10.0
    assert running.time == 10.0 + STARTER_INITIAL_UPDATE_INTERVAL == 18.0
    exited = [r for r in reports if r.kind == "exited"][0]
    assert exited.time == 110.0 and exited.exit_code == 0


def test_black_hole_fails_every_job_fast():
    reports, site = _run(3, n=20, slots=20, black_hole=True, black_hole_after=(2, 5), start_latency=(1, 2))
    exits = [r for r in reports if r.kind == "exited"]
    assert len(exits) == 20 and all(r.exit_code != 0 for r in exits)
    assert all(r.ended - r.started <= 5 for r in exits)
    assert site.failed == 20


def test_failure_probability_zero_and_one():
    ok, _ = _run(2, n=15, slots=5, failure_probability=0.0, runtime=RunTime("uniform", 10, 20))
    bad, _ = _run(2, n=15, slots=5, failure_probability=1.0, runtime=RunTime("uniform", 10, 20))
    assert all(r.exit_code == 0 for r in ok if r.kind == "exited")
    assert all(r.exit_code == 1 for r in bad if r.kind == "exited")


def test_cancel_frees_the_slot_and_reports_nothing():
    sites = SiteSet([SiteSpec("S", slots=1, start_latency=(0, 0), runtime=RunTime("fixed", 100))], seed=0)
    s = sites.site_named("S")
    sites.submit(s, "1.0", 0.0)
    sites.submit(s, "1.1", 0.0)
    sites.advance(0.0)
    sites.cancel("1.0", 0.0)
    reports = []
    while sites.next_time() is not None:
        reports.extend(sites.advance(sites.next_time()))
    assert {r.job for r in reports} == {"1.1"}


def test_site_lookup_by_grid_resource_then_route_and_local():
    sites = SiteSet([SiteSpec("A", routes=("Route1",)), SiteSpec("B", grid_resources=("batch slurm",)),
                     SiteSpec("L", local=True)])
    assert sites.site_for("route1", None, 9).spec.name == "A"
    assert sites.site_for("Route1", "batch slurm", 9).spec.name == "B"
    assert sites.site_for(None, None, 12).spec.name == "L"
    assert sites.site_for("nope", None, 9) is None


def test_bad_specs_are_clear_errors():
    with pytest.raises(SiteConfigError, match="failure_probability"):
        SiteSpec("X", failure_probability=1.5)
    with pytest.raises(SiteConfigError, match="unknown run-time distribution 'gamma'"):
        RunTime.parse("gamma 3")
    with pytest.raises(SiteConfigError, match="takes 2"):
        RunTime.parse("uniform 3")
    with pytest.raises(SiteConfigError, match="defined twice"):
        SiteSet([SiteSpec("A"), SiteSpec("A")])


def test_non_finite_numbers_are_refused():
    with pytest.raises(SiteConfigError, match="finite"):
        RunTime("fixed", float("nan"))
    with pytest.raises(SiteConfigError, match="finite"):
        SiteSpec("X", start_latency=(0.0, float("inf")))


def test_grid_reports_reach_the_schedd_at_the_gridmanagers_contacts():
    """gridmanager.cpp ``RequestContactSchedd``: a contact happens at once when the last one is
    GRIDMANAGER_CONTACT_SCHEDD_DELAY (5 s) or more ago, else at the last one plus the delay, and
    ``doContactSchedd`` writes every pending job's updates together. Each report keeps the time
    it happened; a local-universe site (the schedd's own starter) reports at once."""
    assert GRIDMANAGER_CONTACT_SCHEDD_DELAY == 5
    sites = SiteSet([SiteSpec("G", slots=10, start_latency=(0, 0), runtime=RunTime("fixed", 100)),
                     SiteSpec("L", slots=10, start_latency=(0, 0), runtime=RunTime("fixed", 100), local=True)])
    grid, local = sites.site_named("G"), sites.site_named("L")
    for i, at in enumerate((0.0, 2.0, 3.0, 20.0)):
        sites.submit(grid, f"1.{i}", at)
    sites.submit(local, "2.0", 1.0)
    delivered = []  # (delivery time, job, kind, report time)
    while sites.next_time() is not None:
        t = sites.next_time()
        delivered += [(t, r.job, r.kind, r.time) for r in sites.advance(t)]
    running = [(t, job, when) for t, job, kind, when in delivered if kind == "running"]
    # starts reported by the starter at 8, 10, 11 and 28 s: the first at once (contact at 8), the
    # next two together at 8 + 5 = 13, the last at once (more than 5 s since the contact at 13)
    assert [(t, job) for t, job, _ in running if job.startswith("1.")] == [
        (8.0, "1.0"), (13.0, "1.1"), (13.0, "1.2"), (28.0, "1.3")]
    assert [when for _, job, when in running if job.startswith("1.")] == [8.0, 10.0, 11.0, 28.0]
    assert [(t, when) for t, job, when in running if job == "2.0"] == [(9.0, 9.0)]  # local: at once
    exits = [(t, job) for t, job, kind, _ in delivered if kind == "exited" and job.startswith("1.")]
    assert exits == [(100.0, "1.0"), (105.0, "1.1"), (105.0, "1.2"), (120.0, "1.3")]
