"""sample_configs/hooks end to end: the embedded startd runs the sample's hooks for a virtual hour.

Sources: seed 004 (fetch-work hooks, the JVM PREPARE_JOB example, Daemon ClassAd hooks);
htcondor.md §4; src/condor_startd.V6/Resource.cpp (tryFetchWork), StartdHookMgr.cpp,
src/condor_starter.V6.1/StarterHookMgr.cpp, src/condor_startd.V6/startd_cron_job.cpp.
"""

from __future__ import annotations

import shutil
import time

import pytest

from tests.helpers.paths import REPO
from engine.execute.startd import Startd
from engine.lang.config import Config

SAMPLE = REPO / "sample_configs" / "hooks"


@pytest.mark.slow
def test_sample_runs_for_a_virtual_hour(tmp_path):
    """Jobs are fetched from the directory and really run (output files with the expected text),
    PREPARE_JOB's Cmd rewrite took effect, JOB_EXIT saw each exit code, and the Startd Cron
    attribute reached the slot ads (START of the sample requires it, so every fetch depended on it;
    the gating itself is tested in test_execute_cron)."""
    root = tmp_path / "hooks"
    shutil.copytree(SAMPLE, root)
    out = tmp_path / "out"
    out.mkdir()
    for job in (root / "queue").glob("*.job"):
        job.write_text(job.read_text().replace('"OUTDIR"', f'"{out}"'))
    override = tmp_path / "local.conf"
    override.write_text(f"HOOK_DIR = {root / 'hooks'}\n")
    cfg = Config.load([root / "condor_config", override])
    assert not cfg.errors
    sd = Startd(cfg, tmp_path / "state", allow_hooks=True, host="sample.test")
    for now in range(0, 3601):
        sd.step(now)
        if sd.busy():
            time.sleep(0.002)  # test-side only: let the real job processes run; the engine never sleeps
    assert sorted(sd.jobs) == ["1.0", "2.0", "3.0"]
    prepared = [i for i in sd.runner.invocations if i.hook == "PREPARE_JOB"]
    assert len(prepared) == 3 and all(i.decision == "run" and i.parsed["Cmd"] == '"/bin/sh"' for i in prepared)
    for i in (1, 2, 3):
        # "sample-shell" does not exist: the job ran (exit code i) only because PREPARE_JOB rewrote Cmd
        ad = sd.jobs[f"{i}.0"].ad
        assert ad["JobStatus"] == "4" and ad["ExitCode"] == str(i) and ad["Cmd"] == '"sample-shell"'
        assert (out / f"result-{i}.txt").read_text() == f"hello from job {i}\n"
    log = (root / "hooks.log").read_text().splitlines()
    assert {f"exit exit {i} {i}" for i in (1, 2, 3)} <= set(log)
    assert "reply accept" in log and "reply evict" in log
    for slot in sd.slots:
        ad = sd.slot_ad(slot)
        assert ad["Sample_Ready"] == "true" and ad["Sample_QueueLength"] == "0"
        assert "Sample_LastUpdate" in ad
    probes = [i.started for i in sd.runner.invocations if i.hook == "PROBE"]
    assert probes[:3] == [0, 300, 600] and len(probes) == 13
