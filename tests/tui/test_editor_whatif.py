"""The editor's what-if is the migration check's comparison (issue 13 item 2 / brief item 3):
``engine.views.queries.lint.what_if`` routes the idle, not yet routed jobs through the current and the
edited table with ``engine.router.compare.compare_tables`` — one polling cycle of a fresh router
per table, the first matching route that is accepting jobs wins and MaxIdleJobs fills up as jobs
are assigned (htcondor.md §1.4) — and the pane shows jobs per route, the jobs that change route,
and the attributes whose routed value changes.
"""

from __future__ import annotations

from engine.contract.feed import FeedBase
from engine.lang.config import Config
from engine.router.compare import compare_tables
from engine.router.loader import load_routing_table
from engine.views.queries.ads import row_ad
from engine.views.queries.lint import lint_config, what_if
from tui.screens.editor import what_if_text

from tests.helpers.tui_fixtures import snapshot_for_conf, write_routes_conf


def _full(row):
    return {**row_ad(row), "JobUniverse": "5"}  # a vanilla job, as the schedd's full ad says


class _Engine(FeedBase):
    """A feed that offers full job ads (the schedd's), nothing else."""

    def __init__(self, snap):
        self.ads = {r.job: _full(r) for r in snap.jobs}

    def job_ad(self, job):
        return self.ads.get(job, {})


class _Runtime:
    """A runtime whose engine answers full job ads (Runtime.query runs the function on it)."""

    def __init__(self, snap):
        self.feed = _Engine(snap)

    def query(self, fn, timeout=None):
        return fn(self.feed)


def _idle_ads(snap):
    return [_full(r) for r in snap.jobs if r.status == 1 and r.kind != "routed" and not r.routed_to]


def _table(text, tmp_path, name):
    path = tmp_path / name
    path.write_text(text)
    return load_routing_table(Config.load([str(path)]))


def test_what_if_is_compare_tables_over_the_idle_jobs(tmp_path):
    """§1.4: the first route whose REQUIREMENTS match and that accepts jobs wins; with MaxIdleJobs
    = 3 Site1 takes three of alice's jobs and the rest fall through to Site2. Swapping the route
    order sends every alice job to Site2_PBS: exactly the jobs Site1 took change route."""
    conf = tmp_path / "routes.conf"
    old_text = write_routes_conf(conf, max_idle=3)
    snap = snapshot_for_conf(conf, n_jobs=300)
    new_text = old_text.replace("ROUTE_NAMES = Site1_Slurm Site2_PBS", "ROUTE_NAMES = Site2_PBS Site1_Slurm")
    old, new = _table(old_text, tmp_path, "old.conf"), _table(new_text, tmp_path, "new.conf")
    w = what_if(old, new, snap, _Runtime(snap))
    assert not w.approximate
    ads = _idle_ads(snap)
    cmp = compare_tables(old, new, ads, now=snap.time)
    assert w.comparison is not None and [j.to_json() for j in w.comparison.jobs] == [j.to_json() for j in cmp.jobs]
    alice = sum(ad["Owner"] == '"alice"' for ad in ads)
    assert alice > 3
    assert w.before["Site1_Slurm"] == 3  # MaxIdleJobs filled within the one poll, the rest fall through
    assert "Site1_Slurm" not in w.after  # every job matches Site2_PBS (REQUIREMENTS true) first now
    assert w.moved == 3 and list(w.moves) == [("Site1_Slurm", "Site2_PBS")]
    assert w.considered == w.candidates == len(ads)


def test_what_if_names_attributes_that_change_value(tmp_path):
    """A route edit that keeps every job on its route but changes a SET shows up as jobs with a
    different routed ad and the attribute by name, in the pane too."""
    conf = tmp_path / "routes.conf"
    old_text = write_routes_conf(conf, max_idle=1000)
    snap = snapshot_for_conf(conf, n_jobs=120)
    new_text = old_text.replace('  GridResource = "batch pbs"\n', '  GridResource = "batch pbs"\n  SET Queue "long"\n')
    result = lint_config(new_text, str(conf), snap, runtime=_Runtime(snap), base_text=old_text)
    w = result.what_if
    on_site2 = w.before.get("Site2_PBS", 0)
    assert on_site2 > 0 and w.moved == 0
    assert w.ad_changed == on_site2 and w.attributes == {"Queue": on_site2}
    text = what_if_text(result, snap).plain
    assert f"{on_site2} job(s) keep their route with a different routed ad" in text
    assert f"attributes that change value: Queue ({on_site2})" in text
    assert "0 job(s) would change route" in text
