"""``routedeck replay LOG --reroute --config …`` (engine.feeds.replay.reroute).

Sources: htcondor.md §1.4 (the first route in match order whose REQUIREMENTS match and that
accepts jobs wins; MaxJobs reached = not accepting), §1.6/§1.9 (a routed copy carries
``RouteName`` and ``RoutedFromJobId``), §3.1 (record format of the recording below, written
for this test).
"""

from __future__ import annotations

import json

import pytest

from engine.feeds.replay.index import build_index
from engine.feeds.replay.reroute import RecordingScan, read_recording
from tests.helpers.paths import REPO
from tui.cli import main

T0 = 1795300000


def recording(n_cms: int, n_atlas: int) -> str:
    """Source jobs arriving one every 5 s; the first cms job was routed (route "OldSite") and
    its copy completed; the first atlas job's copy was removed."""
    lines = ["107 1 CreationTimestamp %d" % T0, "101 0.0 Job Machine"]
    c = 0
    vos = ["cms"] * n_cms + ["atlas"] * n_atlas
    for i, vo in enumerate(vos):
        c += 1
        t = T0 + 5 * i
        lines += ["105 ", "103 0.0 NextClusterNum %d" % (c + 1), "101 0%d.-1 Job Machine" % c,
                  "103 0%d.-1 ClusterId %d" % (c, c), '103 0%d.-1 Owner "alice"' % c,
                  "103 0%d.-1 JobUniverse 5" % c, '103 0%d.-1 VO "%s"' % (c, vo),
                  "103 0%d.-1 RequestMemory 1000" % c, "103 0%d.-1 QDate %d" % (c, t),
                  "101 %d.0 Job Machine" % c, "103 %d.0 ProcId 0" % c, "103 %d.0 JobStatus 1" % c,
                  "103 %d.0 EnteredCurrentStatus %d" % (c, t), "106 "]
    src_cms, src_atlas = 1, n_cms + 1
    for src, final in ((src_cms, "4"), (src_atlas, "3")):
        c += 1
        t = T0 + 5 * len(vos) + 10 * c
        lines += ["105 ", "101 0%d.-1 Job Machine" % c, '103 0%d.-1 Owner "alice"' % c,
                  "103 0%d.-1 JobUniverse 9" % c, '103 0%d.-1 RouteName "OldSite"' % c,
                  '103 0%d.-1 RoutedFromJobId "%d.0"' % (c, src), "101 %d.0 Job Machine" % c,
                  "103 %d.0 JobStatus 1" % c, "103 %d.0 EnteredCurrentStatus %d" % (c, t), "106 ",
                  "105 ", '103 %d.0 RoutedToJobId "%d.0"' % (src, c), "106 ",
                  "105 ", "103 %d.0 JobStatus %s" % (c, final), "103 %d.0 ExitCode 0" % c,
                  "103 %d.0 EnteredCurrentStatus %d" % (c, t + 100), "106 ",
                  "105 ", "102 %d.0" % c, "102 0%d.-1" % c, "106 "]
    lines += ["105 ", "103 0.0 Heartbeat %d" % (T0 + 2000), "103 0.0 EnteredCurrentStatus %d" % (T0 + 2000),
              "106 "]
    return "\n".join(lines) + "\n"


CONFIG = """\
JOB_ROUTER_NAME = jobrouter
JOB_ROUTER_POLLING_PERIOD = 10
JOB_ROUTER_ROUTE_NAMES = CMS Any
JOB_ROUTER_ROUTE_CMS @=jrt
  UNIVERSE grid
  GridResource = batch slurm cms.example.org
  MaxJobs = {cms_max}
  REQUIREMENTS VO == "cms"
@jrt
JOB_ROUTER_ROUTE_Any @=jrt
  UNIVERSE grid
  GridResource = batch slurm any.example.org
  MaxJobs = 1000
  MaxIdleJobs = 1000
  REQUIREMENTS true
@jrt
"""


@pytest.fixture
def log(tmp_path):
    p = tmp_path / "job_queue.log"
    p.write_text(recording(6, 4))
    return p


def test_recording_sources_and_recorded_routes(log):
    rec = read_recording(build_index(log))
    assert [j.key for j in rec.jobs] == ["%d.0" % c for c in range(1, 11)]
    assert rec.jobs[3].time == T0 + 15 and rec.jobs[3].attrs["VO"] == '"cms"'
    old = rec.routes["OldSite"]
    assert (old.routed, old.succeeded, old.failed, old.active) == (2, 1, 1, 0)
    assert rec.unrouted == 8


def test_recording_read_in_the_index_pass_is_the_one_read_again(log):
    """``replay --reroute`` reads the recording in the index's pass (``build_index(follow=…)``):
    the same jobs, times, ads and tallies as a second scan of the log; a cut at an earlier step
    reads the log again up to it."""
    scan = RecordingScan()
    index = build_index(log, follow=scan)
    assert scan.steps == index.steps
    assert read_recording(index, scanned=scan) == read_recording(build_index(log))
    cut = read_recording(index, 5, scanned=RecordingScan())
    assert cut == read_recording(build_index(log), 5) and len(cut.jobs) < 10


def _reroute(tmp_path, capsys, log, cms_max):
    cfg = tmp_path / f"routes-{cms_max}.conf"
    cfg.write_text(CONFIG.format(cms_max=cms_max))
    rc = main(["replay", str(log), "--reroute", "--config", str(cfg), "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return {r["route"]: r for r in json.loads(out)["routes"]}, json.loads(out)


def test_changed_table_shows_per_route_differences(tmp_path, capsys, log):
    """§1.4: with CMS accepting, the 6 cms jobs take CMS (first match) and the 4 atlas jobs
    Any; with CMS at MaxJobs 0 (not accepting: num_jobs >= MaxJobs) everything falls to Any."""
    rows, doc = _reroute(tmp_path, capsys, log, 100)
    assert rows["CMS"]["rerouted"]["routed"] == 6 and rows["Any"]["rerouted"]["routed"] == 4
    assert rows["OldSite"]["recorded"]["routed"] == 2 and not rows["OldSite"]["in_table"]
    assert rows["OldSite"]["difference"]["routed"] == -2 and rows["CMS"]["difference"]["routed"] == 6
    assert doc["source_jobs"] == 10 and doc["unrouted"] == {"recorded": 8, "rerouted": 0}
    rows0, _ = _reroute(tmp_path, capsys, log, 0)
    assert rows0["CMS"]["rerouted"]["routed"] == 0 and rows0["Any"]["rerouted"]["routed"] == 10


def test_the_simulation_files_no_snapshot_events(tmp_path, capsys, log, monkeypatch):
    """Nothing shows the re-route's events (its output is the tallies): its simulation drops them
    instead of filing them for snapshots, and its figures are those of one that files them."""
    import engine.feeds.replay.reroute as rr  # noqa: PLC0415 - the module whose Simulation is wrapped

    real, built = rr.Simulation, []

    def spy(*args, **kwargs):
        built.append(real(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(rr, "Simulation", spy)
    rows, _ = _reroute(tmp_path, capsys, log, 100)
    assert built[0].router is not None and len(built[0].ring) == 0
    monkeypatch.setattr(rr, "Simulation", lambda *a, **k: spy(*a, **{**k, "collect_events": True}))
    assert _reroute(tmp_path, capsys, log, 100)[0] == rows
    assert len(built[1].ring) > 0


def test_reroute_needs_a_config(capsys, log):
    assert main(["replay", str(log), "--reroute"]) == 2
    assert "--reroute needs --config" in capsys.readouterr().err


SHIPPED = "sample_configs/recordings/demo-3h.job_queue.log"
SHIPPED_CONFIG = "sample_configs/demo/condor_config"
# route: (routed, succeeded, nonzero_exit, failed, active), recorded then rerouted (--seed 1)
SHIPPED_COUNTS = {
    "CMS_T2": ((642, 499, 9, 0, 134), (642, 499, 9, 0, 134)),
    "GPU_Site": ((17, 10, 0, 0, 7), (17, 10, 0, 0, 7)),
    "BlackHole": ((358, 0, 358, 0, 0), (358, 0, 358, 0, 0)),
    "ATLAS_CE": ((184, 139, 4, 0, 41), (192, 139, 8, 0, 45)),
    "Overflow": ((923, 796, 14, 0, 113), (915, 772, 6, 0, 137)),
}


@pytest.mark.slow
def test_shipped_recording_reroute_counts(capsys):
    """The re-route of the shipped 3-hour recording with its own config (bench/lifecycle.py's
    command) gives these counts: pinned so that speeding up the routed job's life cycle, the
    routing cycle or the simulation cannot change what the report says (issue 30)."""
    log, config = str(REPO / SHIPPED), str(REPO / SHIPPED_CONFIG)
    assert main(["replay", log, "--config", config, "--reroute", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    cols = ("routed", "succeeded", "nonzero_exit", "failed", "active")
    got = {r["route"]: (tuple(r["recorded"][c] for c in cols), tuple(r["rerouted"][c] for c in cols))
           for r in doc["routes"]}
    assert got == SHIPPED_COUNTS
    assert all(r["in_table"] for r in doc["routes"])
    assert (doc["start"], doc["end"], doc["transaction"], doc["transactions"]) == (
        1795219200.0, 1795229995.0, 19455, 19455)
    assert doc["source_jobs"] == 2141 and doc["unrouted"] == {"recorded": 17, "rerouted": 17}
    assert doc["hooks"] == []
