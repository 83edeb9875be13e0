"""Daemon ClassAd hooks (Startd Cron / Schedd Cron) with real scripts and a manual clock.

Sources: seed 004 (Daemon ClassAd hooks); HTCondor's src/condor_utils/cron_job_params.cpp
(CronJobParams::Initialize, InitPeriod), cron_job.cpp (StartJobProcess, Schedule, Reaper),
cron_job_io.cpp (CronJobOut::Output), classad_cron_job.cpp (ProcessOutput, Initialize),
src/condor_startd.V6/startd_cron_job.cpp (StartdCronJob::Publish),
startd_named_classad.cpp (ShouldMergeInto, dont_merge_these), startd_cron_job_params.cpp (SLOTS),
src/condor_schedd.V6/schedd_cron_job.cpp (ScheddCronJob::Publish). docs/execute.md lists them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.execute import daemon_cron
from engine.execute import hooks as hk
from engine.execute.startd import Startd
from engine.lang.config import Config
from tests.helpers.execute_fixture import fetch_queue_hook, run_until, script


def startd(tmp_path: Path, text: str, slots: int = 1, allow: bool = True) -> Startd:
    return Startd(Config.from_text(text), tmp_path / "state", num_slots=slots, allow_hooks=allow, host="node.test")


def test_manual_multi_ad_example_targets_slots(tmp_path):
    """The manual's example (seed 004): ``Value=1 SlotId=1 -s1 Value=2 SlotId=2 -s2 Value=10
    - update:true`` gives slot1 1, slot2 2, every other slot 10; SlotId is not merged
    (StartdCronJob::Publish tags, StartdNamedClassAd::ShouldMergeInto, dont_merge_these; the job's
    own ad is registered first, StartdCronJob::StartdCronJob)."""
    exe = script(tmp_path, "val", "echo Value=1; echo SlotId=1; echo '-s1'; echo Value=2; echo SlotId=2; echo '-s2'\n"
                                  "echo Value=10; echo '- update:true'\n")
    sd = startd(tmp_path, f"STARTD_CRON_JOBLIST = V\nSTARTD_CRON_V_EXECUTABLE = {exe}\nSTARTD_CRON_V_PERIOD = 60\n", 3)
    sd.step(0)
    values = [sd.slot_ad(s)["Value"] for s in sd.slots]
    assert values == ["1", "2", "10"]
    assert sd.slot_ad(sd.slots[0])["SlotID"] == "1" and sd.slot_ad(sd.slots[1])["SlotID"] == "2"
    assert list(sd.cron.ads) == ["V", "V.s1", "V.s2"]
    assert sd.cron.updates_requested == 1
    assert "V.s2: not merged (SlotId does not match)" in sd.slots[0].cron_why


def test_seed_wording_tag_alone_does_not_target(tmp_path):
    """``- slot1`` only names the ad ``<job>.slot1``; without a SlotId/Name line it merges into every
    slot, and the later ad wins (startd_cron_job.cpp Publish; ShouldMergeInto returns true)."""
    exe = script(tmp_path, "v", "echo Value=1; echo '- slot1'; echo Value=2; echo '- slot2'\n")
    sd = startd(tmp_path, f"STARTD_CRON_JOBLIST = V\nSTARTD_CRON_V_EXECUTABLE = {exe}\nSTARTD_CRON_V_PERIOD = 60\n", 2)
    sd.step(0)
    assert [sd.slot_ad(s)["Value"] for s in sd.slots] == ["2", "2"]


@pytest.mark.parametrize("line, merged", [
    ('SlotMergeConstraint = TARGET.SlotID == 2', [False, True, False]),
    ('SlotName = "slot1"', [True, False, False]),
    ('Name = "slot3@"', [False, False, True]),
    ("SlotTypeId = 0", [True, True, True]),
    ("SlotTypeId = 7\nSlotId = 1", [False, False, False]),
])
def test_should_merge_into_order(tmp_path, line, merged):
    """SlotMergeConstraint, then SlotName/Name as a prefix of the slot's Name, then SlotTypeId,
    then SlotId (StartdNamedClassAd::ShouldMergeInto, startd_named_classad.cpp)."""
    body = "".join(f"echo '{x}'\n" for x in line.split("\n"))
    exe = script(tmp_path, "m", body + "echo 'Dyn = 5'\n")
    sd = startd(tmp_path, f"STARTD_CRON_JOBLIST = M\nSTARTD_CRON_M_EXECUTABLE = {exe}\nSTARTD_CRON_M_PERIOD = 1m\n", 3)
    sd.step(0)
    assert ["Dyn" in sd.slot_ad(s) for s in sd.slots] == merged


def test_slots_knob_limits_slots(tmp_path):
    """``STARTD_CRON_<job>_SLOTS`` lists slot numbers; a non-number drops the list
    (StartdCronJobParams::Initialize, InSlotList)."""
    exe = script(tmp_path, "d", "echo 'Dyn = 1'\n")
    sd = startd(tmp_path, f"STARTD_CRON_JOBLIST = D\nSTARTD_CRON_D_EXECUTABLE = {exe}\nSTARTD_CRON_D_PERIOD = 60\n"
                          "STARTD_CRON_D_SLOTS = 2\n", 2)
    sd.step(0)
    assert ["Dyn" in sd.slot_ad(s) for s in sd.slots] == [False, True]
    jobs, problems = daemon_cron.load_jobs(Config.from_text(f"STARTD_CRON_JOBLIST = D\nSTARTD_CRON_D_EXECUTABLE = {exe}\n"
                                                     "STARTD_CRON_D_PERIOD = 60\nSTARTD_CRON_D_SLOTS = 1, two\n"),
                                    daemon_cron.STARTD_CRON)
    assert jobs[0].slots == () and not problems[0].fatal and "SLOTS" in problems[0].knob


def test_prefix_lastupdate_argv0_args_env(tmp_path):
    """Every line gets PREFIX (so a prefixed ``SlotId`` no longer targets); ``<Prefix>LastUpdate`` is
    the publication time; argv[0] is the job name then ARGS; ENV, STARTD_INTERFACE_VERSION=1 and
    STARTD_CRON_NAME are in the environment (CronJobOut::Output, ClassAdCronJob::ProcessOutput,
    CronJob::StartJobProcess, ClassAdCronJob::Initialize)."""
    exe = script(tmp_path, "p", 'echo "Arg1 = \\"$1\\""; echo "Color = \\"$COLOR\\""\n'
                                'echo "Iv = $STARTD_INTERFACE_VERSION"; echo "Cn = \\"$STARTD_CRON_NAME\\""; echo SlotId=2\n')
    sd = startd(tmp_path, f"STARTD_CRON_JOBLIST = pj\nSTARTD_CRON_pj_EXECUTABLE = {exe}\nSTARTD_CRON_pj_PERIOD = 60\n"
                          "STARTD_CRON_pj_PREFIX = hw_\nSTARTD_CRON_pj_ARGS = one two\nSTARTD_CRON_pj_ENV = COLOR=blue\n", 1)
    sd.step(42)
    ad = sd.slot_ad(sd.slots[0])
    assert ad["hw_Arg1"] == '"one"' and ad["hw_Color"] == '"blue"'
    assert ad["hw_Iv"] == "1" and ad["hw_Cn"] == '"STARTD"'
    assert ad["hw_LastUpdate"] == "42" and ad["hw_SlotId"] == "2"  # prefixed: merged into slot1
    # argv[0] (a shebang script sees its own path as $0, so ask a shell directly; V2 quoted ARGS)
    sd = startd(tmp_path, "STARTD_CRON_JOBLIST = zero\nSTARTD_CRON_zero_EXECUTABLE = /bin/sh\n"
                          "STARTD_CRON_zero_PERIOD = 60\nSTARTD_CRON_zero_ARGS = \"-c 'echo A0=$0'\"\n")
    sd.step(0)
    assert sd.slot_ad(sd.slots[0])["A0"] == "zero"


def test_bad_lines_skipped_others_kept(tmp_path):
    """A line that does not parse is skipped and the rest kept (ClassAdCronJob::ProcessOutput
    "Can't insert"); unlike FETCH_WORK, which drops all."""
    exe = script(tmp_path, "b", "echo 'Good = 1'; echo 'this is garbage'; echo 'Also = 2'\n")
    sd = startd(tmp_path, f"STARTD_CRON_JOBLIST = B\nSTARTD_CRON_B_EXECUTABLE = {exe}\nSTARTD_CRON_B_PERIOD = 60\n")
    sd.step(0)
    ad = sd.slot_ad(sd.slots[0])
    assert ad["Good"] == "1" and ad["Also"] == "2"
    inv = sd.runner.invocations[-1]
    assert inv.family == "cron" and ":2:" in inv.error and "garbage" in inv.error


def test_nonzero_exit_still_publishes_hang_and_flood_publish_nothing(tmp_path):
    """Output is processed whatever the exit status (CronJob::Reaper → ProcessOutputQueue); a job
    killed at RouteDeck's timeout or output cap publishes nothing (docs/execute.md departures)."""
    exe = script(tmp_path, "n", "echo 'X = 1'; exit 3\n")
    hang = script(tmp_path, "h", "echo 'Y = 1'; sleep 30\n")
    sd = startd(tmp_path, f"STARTD_CRON_JOBLIST = N H\nSTARTD_CRON_N_EXECUTABLE = {exe}\nSTARTD_CRON_N_PERIOD = 60\n"
                          f"STARTD_CRON_H_EXECUTABLE = {hang}\nSTARTD_CRON_H_PERIOD = 60\n")
    sd.runner.timeout = 1
    sd.step(0)
    ad = sd.slot_ad(sd.slots[0])
    assert ad["X"] == "1" and "Y" not in ad
    assert sd.cron.state["H"].last_error.endswith("timed out and was killed")
    flood = script(tmp_path, "f", "yes 'Z = 1'\n")
    sd2 = startd(tmp_path, f"STARTD_CRON_JOBLIST = F\nSTARTD_CRON_F_EXECUTABLE = {flood}\nSTARTD_CRON_F_PERIOD = 60\n")
    sd2.runner.max_output = 1 << 16
    sd2.step(0)
    assert "Z" not in sd2.slot_ad(sd2.slots[0]) and sd2.runner.invocations[-1].result.overflow == "stdout"


def test_schedule_periodic_waitforexit_oneshot_ondemand(tmp_path):
    """Periodic/WaitForExit/OneShot start at initialisation; Periodic every PERIOD, WaitForExit PERIOD
    after exit, OneShot once, OnDemand never by itself (CronJob::Schedule, CronJob::Reaper); PERIOD
    takes s/m/h (CronJobParams::InitPeriod)."""
    exe = script(tmp_path, "c", "echo 'A = 1'\n")
    text = "STARTD_CRON_JOBLIST = P W O D\n" + "".join(
        f"STARTD_CRON_{n}_EXECUTABLE = {exe}\nSTARTD_CRON_{n}_MODE = {m}\n" for n, m in
        (("P", "periodic"), ("W", "WaitForExit"), ("O", "OneShot"), ("D", "OnDemand")))
    text += "STARTD_CRON_P_PERIOD = 1m\nSTARTD_CRON_W_PERIOD = 90s\n"
    sd = startd(tmp_path, text)
    for t in range(0, 301):
        sd.step(t)
    runs: dict[str, list[float]] = {}
    for inv in sd.runner.invocations:
        runs.setdefault(inv.hook, []).append(inv.started)
    assert runs["P"] == [0, 60, 120, 180, 240, 300]
    assert runs["W"] == [0, 90, 180, 270]
    assert runs["O"] == [0] and "D" not in runs
    sd.cron.run("D", 301)
    assert sd.runner.invocations[-1].hook == "D"


@pytest.mark.parametrize("knobs, fragment", [
    ("STARTD_CRON_X_PERIOD = 60\n", "no path found"),
    ("STARTD_CRON_X_EXECUTABLE = {exe}\n", "no job period"),
    ("STARTD_CRON_X_EXECUTABLE = {exe}\nSTARTD_CRON_X_PERIOD = 0\n", "non-zero period"),
    ("STARTD_CRON_X_EXECUTABLE = {exe}\nSTARTD_CRON_X_PERIOD = 5 m\n", "invalid job period"),
    ("STARTD_CRON_X_EXECUTABLE = {exe}\nSTARTD_CRON_X_PERIOD = 5\nSTARTD_CRON_X_MODE = Sometimes\n", "unknown job mode"),
    ("STARTD_CRON_X_EXECUTABLE = /nonexistent/x\nSTARTD_CRON_X_PERIOD = 5\n", "stat() failed"),
])
def test_job_skipped_with_reason_and_place(tmp_path, knobs, fragment):
    """A job HTCondor skips ("Failed to initialize job ...; skipping", CronJobParams::Initialize)
    is named with its knob, file and line."""
    exe = script(tmp_path, "x", "true\n")
    cfg = Config.from_text("STARTD_CRON_JOBLIST = X\n" + knobs.format(exe=exe), name="node.conf")
    jobs, problems = daemon_cron.load_jobs(cfg, daemon_cron.STARTD_CRON)
    assert not jobs and problems[0].fatal and fragment in problems[0].message
    assert str(problems[0]).startswith("node.conf:")


def test_dynamic_attribute_drives_start_and_fetch_delay(tmp_path):
    """Start and FetchWorkDelay see the merged dynamic attributes (seed 004: "Policy expressions can
    then reference dynamic attributes"; Resource::tryFetchWork evaluates on the slot ad)."""
    flag = tmp_path / "open"
    exe = script(tmp_path, "gate", f'if [ -e {flag} ]; then echo "Gate = true"; else echo "Gate = false"; fi\n'
                                   'echo "Pause = 7"\n')
    job = 'Cmd = "/bin/true"\nClusterId = 1\nProcId = 0\n'
    fetch = fetch_queue_hook(tmp_path, [job])
    sd = startd(tmp_path, f"STARTD_CRON_JOBLIST = G\nSTARTD_CRON_G_EXECUTABLE = {exe}\nSTARTD_CRON_G_PERIOD = 10\n"
                          f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch}\nSTART = MY.Gate =?= true\n"
                          "FetchWorkDelay = Pause\n")
    sd.step(0)
    assert sd.slots[0].why_next == "START is locally false" and not sd.jobs
    assert sd.slots[0].next_fetch_delay == 7
    flag.write_text("")
    run_until(sd, 1, lambda: "1.0" in sd.jobs)
    assert [i.started for i in sd.runner.invocations if i.hook == "G"][:2] == [0, 10]


def test_schedd_cron_ignores_tags_and_merges_all(tmp_path):
    """Schedd Cron ignores the separator arguments: each block replaces the job's one ad
    (ScheddCronJob::Publish → adlist_replace); SCHEDD_INTERFACE_VERSION is set."""
    exe = script(tmp_path, "s", 'echo "A = 1"; echo "- tag update:true"; echo "B = $SCHEDD_INTERFACE_VERSION"\n')
    cfg = Config.from_text(f"SCHEDD_CRON_JOBLIST = S\nSCHEDD_CRON_S_EXECUTABLE = {exe}\nSCHEDD_CRON_S_PERIOD = 60\n")
    mgr = daemon_cron.CronManager(cfg, daemon_cron.SCHEDD_CRON, hk.HookRunner(cfg, allow_run=True))
    mgr.step(5)
    attrs = mgr.schedd_attrs()
    assert attrs["B"] == "1" and "A" not in attrs and attrs["LastUpdate"] == "5"
    assert list(mgr.ads) == ["S"] and mgr.updates_requested == 0


def test_cron_withheld_without_allow(tmp_path):
    """Without allow_run no cron program is spawned; the run is recorded as withheld (product.md §4)."""
    marker = tmp_path / "ran"
    exe = script(tmp_path, "w", f"touch {marker}; echo 'A = 1'\n")
    sd = startd(tmp_path, f"STARTD_CRON_JOBLIST = W\nSTARTD_CRON_W_EXECUTABLE = {exe}\nSTARTD_CRON_W_PERIOD = 60\n",
                allow=False)
    sd.step(0)
    assert not marker.exists() and sd.runner.invocations[-1].withheld and "A" not in sd.slot_ad(sd.slots[0])
