"""The demo configuration in sample_configs/demo (issue 5 part 4): it loads, both routing-table
syntaxes describe the same table (htcondor.md §1.2 conversion, §1.4 match order), the sites
include a black hole, the workload has cron jobs and jobs that no route accepts."""

from pathlib import Path

import pytest

from engine.classad import make_ad
from engine.lang.config import Config
from engine.feeds.demo import DEFAULT_CONFIG_DIR, DemoError, load_sites, build_demo
from engine.router.loader import load_routing_table
from engine.schedd.workload import load_workload

D = Path(DEFAULT_CONFIG_DIR)


def _table(*files):
    return load_routing_table(Config.load([D / f for f in files], env={}))


def _choose(table, attrs):
    ad = make_ad(attrs)
    return next((r.name for r in table.routes if r.matches(ad, now=0)), None)


def test_both_syntaxes_give_the_same_table():
    new = _table("condor_config")
    old = _table("condor_config", "routes-classad.conf")
    assert not new.errors and not old.errors
    assert [r.syntax for r in old.routes] == ["classad"] * 5 and [r.syntax for r in new.routes] == ["transform"] * 5

    def key(r):
        return r.name, r.max_jobs, r.max_idle_jobs, r.grid_resource, r.failure_rate_threshold

    assert [key(r) for r in new.routes] == [key(r) for r in old.routes]
    jobs = [
        {"VO": '"cms"', "RequestMemory": "2000", "JobUniverse": "5"},
        {"VO": '"atlas"', "RequestMemory": "4000", "JobUniverse": "5"},
        {"VO": '"atlas"', "RequestMemory": "16000", "JobUniverse": "5"},
        {"VO": '"osg"', "RequestGPUs": "1", "RequestMemory": "12000", "JobUniverse": "5"},
        {"VO": '"osg"', "RequestMemory": "128000", "JobUniverse": "5"},
    ]
    picks = [_choose(new, j) for j in jobs]
    assert picks == [_choose(old, j) for j in jobs]
    assert picks == ["CMS_T2", "BlackHole", "Overflow", "GPU_Site", None]


def test_sites_and_workload():
    sites = {s.name: s for s in load_sites(D / "sites.toml")}
    assert any(s.black_hole for s in sites.values()) and any(s.local for s in sites.values())
    table = _table("condor_config")
    for r in table.routes:  # every route's GridResource has a site
        assert any(r.grid_resource in s.grid_resources for s in sites.values()), r.name
    w = load_workload(D / "workload.toml")
    assert len(w.cron) >= 3 and len({t.attrs.get("CronMinute") for t in w.cron}) >= 3
    assert all(t.site in sites for t in w.cron)
    assert any(t.attrs.get("RequestMemory") == "128000" for t in w.jobs)  # no route accepts these


def test_bad_sites_file_names_the_file(tmp_path):
    p = tmp_path / "sites.toml"
    p.write_text('[[site]]\nname = "x"\nslots = 2\nfailure_probability = 3\n')
    with pytest.raises(DemoError, match=r"sites\.toml: \[\[site\]\] #1 'x': .*failure_probability"):
        load_sites(p)
    p.write_text('[[site]]\nname = "x"\nslot = 2\n')
    with pytest.raises(DemoError, match="unknown key.*slot"):
        load_sites(p)


def test_classad_sample_has_no_warnings_and_no_duplicate_disabled_routes():
    """Issue 11 item 18: the shipped ClassAd sample blanks condor_config's JOB_ROUTER_ROUTE_<name>
    knobs so that its JOB_ROUTER_ENTRIES routes are not replaced (htcondor.md §1.2 "Parse order":
    entries first, then the knobs; §1.3: an empty knob is ignored). Each route is there once, and
    nothing is disabled. Also the demo's snapshot: no inactive rows named like active ones."""
    table = _table("condor_config", "routes-classad.conf")
    assert [d for d in table.diagnostics if d.level in ("warning", "error") and d is not _by_design(d)] == []
    assert table.disabled == []
    alone = _table("routes-classad.conf")  # what `routedeck check routes-classad.conf` loads
    assert [d.level for d in alone.diagnostics if d.level != "info" and d is not _by_design(d)] == []


def _by_design(d):
    """The demo's one warning, by design: ATLAS_CE (``VO == "atlas" && RequestMemory <= 8000``)
    gets jobs only while BlackHole (``RequestMemory <= 8000``, a clause of it) refuses them — the
    demo shows the failover when BlackHole's failures throttle it (issue 29's clause lint)."""
    return d if d.route == "ATLAS_CE" and "is shadowed: BlackHole" in d.message else None

    engine = build_demo(classad_routes=True)
    try:
        snap = engine.snapshot(1)
    finally:
        engine.close()
    assert [r.name for r in snap.routes] == ["CMS_T2", "GPU_Site", "BlackHole", "ATLAS_CE", "Overflow"]
    assert snap.inactive_routes == ()
