"""The demo's embedded execute node (issue 12, demo wiring): ``sample_configs/hooks`` run as a demo.

Sources: seed 004 (fetch-work hooks, Daemon ClassAd hooks); htcondor.md §4 (fetch-work), §7 (how
job ads flow: the starter's first update after STARTER_INITIAL_UPDATE_INTERVAL, the exit with the
final update), §1 (a route's Requirements see the job ad only); src/condor_utils/compat_classad_util.cpp
(IsAMatch: a symmetric match, the job's Requirements against the slot ad and the slot's against
the job; docs/users-manual/matchmaking-with-classads.rst); src/condor_schedd.V6/schedd_cron_job.cpp (ScheddCronJob::Publish),
src/condor_schedd.V6/schedd.cpp (Scheduler::adlist_publish). Time is the Simulation's virtual
clock; the only real waiting is test-side, to let real child processes run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from engine.feeds.demo import DemoError, build_demo
from engine.schedd.history import read_history
from engine.schedd.sites import SiteConfigError, SiteSet, SiteSpec

ROOT = REPO
SAMPLE = ROOT / "sample_configs" / "hooks"


def run_hour(sim, seconds: int = 3600) -> None:
    for i in range(seconds + 1):
        sim.step(sim.start + i)
        if sim.startd is not None and sim.startd.busy():
            time.sleep(0.002)  # test-side only: let the real job processes run; the engine never sleeps


def history(state: Path) -> list[dict[str, str]]:
    path = state / "history"
    return [r.attrs for r in read_history(path)] if path.exists() else []


def copy_sample(tmp_path: Path) -> Path:
    d = tmp_path / "sample"
    shutil.copytree(SAMPLE, d)
    return d


def test_hooks_sample_demo_runs_a_virtual_hour(tmp_path):
    """``build_demo(sample_configs/hooks)`` for a virtual hour: FETCH_WORK's directory jobs really
    ran (their output files hold the expected text), PREPARE_JOB's Cmd rewrite took effect,
    JOB_EXIT saw each exit code, the Startd Cron attribute reached the slot ads, the Local route's
    copies ran on the embedded startd (their sandbox output exists; Completed with ExitCode and
    RemoteWallClockTime in the schedd's history) while Remote's stayed simulated, and the Schedd
    Cron job's output is in the schedd ad. Sources: module docstring."""
    state = tmp_path / "state"
    before = sorted(p.name for p in (SAMPLE / "queue").iterdir())
    sim = build_demo(SAMPLE, state_dir=state)
    assert sim.startd is not None and sim.execute is not None and sim.execute.site == "this-node"
    run_hour(sim)
    sim.close()
    # the checkout's queue is untouched: FETCH_WORK worked on the staged copy
    assert sorted(p.name for p in (SAMPLE / "queue").iterdir()) == before
    staged = state / "config"
    for i in (1, 2, 3):
        assert (staged / "output" / f"result-{i}.txt").read_text() == f"hello from job {i}\n"
        rec = sim.startd.jobs[f"{i}.0"]
        assert rec.fetched and rec.ad["ExitCode"] == str(i) and rec.ad["Cmd"] == '"sample-shell"'
    prepared = [i for i in sim.startd.runner.invocations if i.hook == "PREPARE_JOB"]
    assert sorted(i.target for i in prepared) == ["1.0", "2.0", "3.0"]  # copies have no HookKeyword
    assert all(i.parsed.get("Cmd") == '"/bin/sh"' for i in prepared)
    log = (staged / "hooks.log").read_text().splitlines()
    assert {f"exit exit {i} {i}" for i in (1, 2, 3)} <= set(log)
    for slot in sim.startd.slots:
        assert sim.startd.slot_ad(slot)["Sample_Ready"] == "true"

    done = history(state)
    local = [a for a in done if a.get("RouteName") == '"Local"' and "RoutedFromJobId" in a]
    remote = [a for a in done if a.get("RouteName") == '"Remote"' and "RoutedFromJobId" in a]
    assert len(local) >= 4 and remote, (len(local), len(remote))
    pushed = {r.job_id for r in sim.startd.jobs.values() if not r.fetched}
    assert {f"{a['ClusterId']}.{a['ProcId']}" for a in local} <= pushed
    assert not pushed & {f"{a['ClusterId']}.{a['ProcId']}" for a in remote}  # Remote stays simulated
    for a in local:
        assert a["JobStatus"] == "4" and a["ExitCode"] == "0"
        assert "TARGET.Sample_Ready" in a["Requirements"]  # the route's SET Requirements, matched on the slot
        assert float(a["RemoteWallClockTime"]) >= 0 and int(a["CompletionDate"]) >= int(a["JobCurrentStartDate"])
    outs = sorted((state / "execute").glob("dir_*/local.out"))
    assert len(outs) == len(pushed) and all(p.read_text() == "hello from a routed copy\n" for p in outs)
    assert sim.sites.sites["remote"].started > 0

    ad = sim.schedd_ad()
    assert ad["Sample_FetchQueueLength"] == "0" and ad["Sample_ProbedBy"] == '"schedd_probe.sh"'
    assert "Sample_LastUpdate" in ad
    sim.advance()  # a snapshot only reads what the advance settled (issue 26)
    snap = sim.snapshot().to_json()
    assert snap["schedd_ad"]["Sample_ProbedBy"] == '"schedd_probe.sh"'


def test_copies_wait_until_the_slot_ad_satisfies_their_requirements(tmp_path):
    """The Local route's copies carry ``Requirements = TARGET.Sample_Ready =?= true`` (the route's
    own Requirements see only the job, htcondor.md §1): while the Startd Cron probe publishes
    ``Ready = false`` no slot matches and the copies wait at the site, Idle, though START (made
    true here) lets fetched work run; once the probe says true they run. Sources: compat_classad_util.cpp
    (IsAMatch, symmetric), startd_cron_job.cpp (the probe's output merged into the slot ad)."""
    d = copy_sample(tmp_path)
    probe = d / "hooks" / "probe.sh"
    flag = tmp_path / "ready"
    probe.write_text(f'#!/bin/sh\nif [ -e {flag} ]; then echo "Ready = true"; else echo "Ready = false"; fi\n')
    with (d / "condor_config").open("a") as f:
        f.write("START = true\nSTARTD_CRON_PROBE_PERIOD = 1m\n")
    state = tmp_path / "state"
    sim = build_demo(d, state_dir=state)
    for i in range(0, 601):
        sim.step(sim.start + i)
        if sim.startd.busy():
            time.sleep(0.002)
    assert all(sim.startd.slot_ad(s)["Sample_Ready"] == "false" for s in sim.startd.slots)
    assert {"1.0", "2.0", "3.0"} <= set(sim.startd.jobs)  # fetched work ran (START is true)
    assert not [r for r in sim.startd.jobs.values() if not r.fetched]
    waiting = list(sim.execute.waiting)
    assert waiting and all(sim.store.attrs(j)["JobStatus"] == "1" for j in waiting)
    flag.touch()
    for i in range(601, 1201):
        sim.step(sim.start + i)
        if sim.startd.busy():
            time.sleep(0.002)
    sim.close()
    ran = {r.job_id for r in sim.startd.jobs.values() if not r.fetched}
    assert set(waiting) <= ran


def test_running_is_reported_at_the_starters_first_update(tmp_path):
    """A copy on the embedded startd shows Running in the schedd's queue only with the starter's
    first update, ``STARTER_INITIAL_UPDATE_INTERVAL`` (8 s) after the spawn (htcondor.md §7, seed
    003), not at the spawn; removing it at the schedd kills the process. Sources: htcondor.md §7,
    job_info_communicator.cpp (startUpdateTimer)."""
    d = copy_sample(tmp_path)
    wl = (d / "workload.toml").read_text()
    wl = wl.replace("Arguments = \"-c 'echo hello from a routed copy'\"", 'Arguments = "-c \'exec sleep 120\'"')
    (d / "workload.toml").write_text(wl)
    sim = build_demo(d, state_dir=tmp_path / "state")
    spawned = None
    for i in range(0, 120):
        t = sim.start + i
        sim.step(t)
        runs = [r for r in sim.startd.jobs.values() if not r.fetched]
        if runs and spawned is None:
            spawned, job = t, runs[0].job_id
            assert sim.store.attrs(job)["JobStatus"] == "1"
        if spawned is not None and t < spawned + 8:
            assert sim.store.attrs(job)["JobStatus"] == "1", t - spawned
        if spawned is not None and t >= spawned + 8:
            break
    assert spawned is not None
    attrs = sim.store.attrs(job)
    assert attrs["JobStatus"] == "2" and attrs["JobCurrentStartDate"] == str(int(spawned))
    slot = next(s for s in sim.startd.slots if s.claim is not None and s.claim.job_id == job)
    proc = slot.claim.starter.proc
    assert proc.poll() is None
    assert sim.schedd.remove(job, t)
    assert proc.wait(timeout=10) is not None and slot.claim is None
    sim.close()


def test_a_starter_hold_holds_the_copy(tmp_path):
    """A copy whose program cannot be executed is held by the starter ("Failed to execute",
    HoldReasonCode 6) and the schedd's queue shows that hold. Source: htcondor.md §4.3;
    src/condor_starter.V6.1/os_proc.cpp (the exec failure)."""
    d = copy_sample(tmp_path)
    wl = (d / "workload.toml").read_text().replace('Cmd = "/bin/sh"', 'Cmd = "/nonexistent/program"', 1)
    (d / "workload.toml").write_text(wl)
    sim = build_demo(d, state_dir=tmp_path / "state")
    run_hour(sim, 120)
    sim.close()
    held = [a for j in sim.store.status if (a := sim.store.attrs(j)) and a.get("RouteName") == '"Local"'
            and a.get("JobStatus") == "5"]
    held += [a for a in history(tmp_path / "state") if a.get("RouteName") == '"Local"' and a.get("HoldReasonCode") == "6"]
    assert held and all("Failed to execute '/nonexistent/program'" in a["HoldReason"] for a in held)


def test_default_demo_has_no_execute_node():
    """Without STARTD in DAEMON_LIST the demo has no embedded startd and no schedd ad field."""
    sim = build_demo(None, state_dir=None)
    assert sim.startd is None and sim.execute is None and sim.schedd_ad() is None
    assert "schedd_ad" not in sim.snapshot().to_json()


def test_startd_site_needs_a_startd_in_daemon_list(tmp_path):
    """A ``startd = true`` site without STARTD in DAEMON_LIST is refused, naming both files."""
    d = copy_sample(tmp_path)
    text = (d / "condor_config").read_text().replace("DAEMON_LIST = MASTER, SCHEDD, STARTD", "DAEMON_LIST = MASTER, SCHEDD")
    (d / "condor_config").write_text(text)
    with pytest.raises(DemoError, match=r"sites\.toml: site 'this-node' has startd = true but DAEMON_LIST in .*condor_config"):
        build_demo(d, state_dir=tmp_path / "state")


def test_startd_site_spec_rules():
    """``startd = true`` is not combined with ``local``/``black_hole``; only such a site takes an
    executor."""
    with pytest.raises(SiteConfigError, match="startd = true cannot be combined"):
        SiteSpec("x", startd=True, local=True)
    sites = SiteSet([SiteSpec("sim")])
    with pytest.raises(SiteConfigError, match="not declared with startd = true"):
        sites.attach("sim", object())  # type: ignore[arg-type]


@pytest.mark.slow
def test_cli_headless_json_has_the_schedd_ad(tmp_path):
    """``routedeck demo --config-dir sample_configs/hooks --headless --max-speed --duration 3600
    --json`` runs the sample; its last snapshot carries the Schedd Cron attributes."""
    out = subprocess.run([sys.executable, "-c", "from tui.cli import main; main()", "demo", "--config-dir", str(SAMPLE),
                          "--headless", "--max-speed", "--duration", "3600", "--json",
                          "--state-dir", str(tmp_path / "state")],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    last = json.loads(out.stdout.strip().splitlines()[-1])
    assert last["schedd_ad"]["Sample_ProbedBy"] == '"schedd_probe.sh"'
    assert {r["name"] for r in last["routes"]} == {"Local", "Remote"}
    assert (tmp_path / "state" / "config" / "output" / "result-1.txt").read_text() == "hello from job 1\n"


def test_resumed_hooks_demo_keeps_its_staged_queue_and_sandboxes(tmp_path):
    """A second demo on the same state directory resumes (htcondor.md §3.3: the log's last
    committed transaction): the staged queue keeps what FETCH_WORK took (nothing is fetched
    twice) and new sandboxes are numbered after the old ones, so no job's output is overwritten."""
    state = tmp_path / "state"
    sim = build_demo(SAMPLE, state_dir=state)
    run_hour(sim, 300)
    sim.close()
    old_dirs = sorted(p.name for p in (state / "execute").iterdir())
    old_outputs = {p: p.read_bytes() for p in (state / "execute").glob("dir_*/*")}
    assert old_dirs and sorted(p.name for p in (state / "config" / "queue").iterdir()) == [
        "job1.job.taken", "job2.job.taken", "job3.job.taken"]
    again = build_demo(SAMPLE, state_dir=state)
    assert again.now > again.start - 1 and any(e.kind == "engine-resumed" for e in again.events)
    for i in range(300):
        again.step(again.now + 1)
        if again.startd.busy():
            time.sleep(0.002)
    again.close()
    assert not any(r.fetched for r in again.startd.jobs.values())  # the queue was emptied by the first run
    assert {p: p.read_bytes() for p in old_outputs} == old_outputs
    new_dirs = sorted(p.name for p in (state / "execute").iterdir() if p.name not in old_dirs)
    assert new_dirs, "copies ran after the resume"
    assert all(int(n[4:]) > max(int(o[4:]) for o in old_dirs) for n in new_dirs)
