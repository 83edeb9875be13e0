"""``routedeck hook run`` / ``hook check``: one hook run as the startd/starter/router/cron would.

Sources: htcondor.md §4 and §1.8; HTCondor's src/condor_startd.V6/StartdHookMgr.cpp (FETCH_WORK
stdin and handleHookFetchWork), src/condor_starter.V6.1/StarterHookMgr.cpp
(HookPrepareJobClient::hookExited), src/condor_utils/hook_utils.cpp (validateHookPath),
src/condor_utils/cron_job_params.cpp (CronJobParams::Initialize),
src/condor_startd.V6/startd_named_classad.cpp (ShouldMergeInto). docs/execute.md lists them.
"""

from __future__ import annotations

import io
import json

from engine.cli import args as argcheck
from engine.cli import hook as cmd
from engine.cli import hook_work
from tests.helpers.execute_fixture import script


def run(*argv):
    parser = argcheck.Parser(prog="routedeck")
    cmd.register(parser.add_subparsers())
    args = parser.parse_args(["hook", *argv])
    out = io.StringIO()
    return args.func(args, out), out.getvalue()


def files(tmp_path, config: str, job: str = 'Cmd = "/bin/java"\nHookKeyword = "JAVA5"\nClusterId = 3\nProcId = 0\n'):
    (tmp_path / "condor_config").write_text(config)
    (tmp_path / "job.ad").write_text(job)
    return str(tmp_path / "condor_config"), str(tmp_path / "job.ad")


def test_without_allow_hooks_shows_stdin_and_exits_1(tmp_path):
    """Nothing runs without --allow-hooks (product.md §4); the stdin shown is the starter's: the job
    ad by sPrintAd (StarterHookMgr.cpp). Exit 1, a finding (issue 25 item 8h): 2 is for usage errors,
    which print nothing on stdout."""
    marker = tmp_path / "ran"
    prep = script(tmp_path, "prep", f"touch {marker}\n")
    cfg, job = files(tmp_path, f"JAVA5_HOOK_PREPARE_JOB = {prep}\n")
    rc, out = run("run", "JAVA5", "PREPARE_JOB", "--job", job, "--config", cfg)
    assert rc == 1 and not marker.exists()
    assert '  | Cmd = "/bin/java"' in out and "not run: needs --allow-hooks" in out


def test_prepare_job_rewrite_and_hold(tmp_path):
    """Exit 0 merges the output (the seed's JVM rewrite); exit 1–299 holds with code 19
    (HookPrepareJobClient::hookExited)."""
    prep = script(tmp_path, "prep", f"cat > {tmp_path}/stdin; echo 'Cmd = \"/usr/bin/java5\"'\n")
    cfg, job = files(tmp_path, f"JAVA5_HOOK_PREPARE_JOB = {prep}\n")
    rc, out = run("run", "JAVA5", "PREPARE_JOB", "--job", job, "--config", cfg, "--allow-hooks", "--json")
    rep = json.loads(out)
    assert rc == 0 and rep["action"] == "run" and rep["job_ad_after"]["Cmd"] == '"/usr/bin/java5"'
    assert (tmp_path / "stdin").read_text() == rep["stdin"] and "ClusterId = 3" in rep["stdin"]
    bad = script(tmp_path, "bad", "echo 'HookStatusMessage = \"no jvm\"'; exit 4\n")
    cfg, job = files(tmp_path, f"JAVA5_HOOK_PREPARE_JOB = {bad}\n")
    rc, out = run("run", "JAVA5", "PREPARE_JOB", "--job", job, "--config", cfg, "--allow-hooks")
    assert rc == 0 and "HTCondor would: hold — PREPARE_JOB (bad) failed (exited with status 4): no jvm" in out
    assert "'HoldReasonCode': 19, 'HoldReasonSubCode': 4" in out


def test_fetch_work_accept_reject_and_garbage(tmp_path):
    """FETCH_WORK gets the slot ad; the fetched job is accepted when START is true for it, else
    rejected; one bad line drops all (StartdHookMgr.cpp handleHookFetchWork, FetchClient::hookExited)."""
    fetch = script(tmp_path, "fetch", f"cat > {tmp_path}/slot.stdin; echo 'Cmd = \"/bin/true\"'; echo 'Big = 5'\n")
    cfg, _ = files(tmp_path, f"Q_HOOK_FETCH_WORK = {fetch}\nSTART = TARGET.Big < 3\n")
    rc, out = run("run", "Q", "FETCH_WORK", "--config", cfg, "--allow-hooks", "--json")
    rep = json.loads(out)
    assert rc == 0 and rep["action"] == "reject" and rep["parsed"]["Big"] == "5"
    assert 'State = "Unclaimed"' in (tmp_path / "slot.stdin").read_text()
    cfg, _ = files(tmp_path, f"Q_HOOK_FETCH_WORK = {fetch}\nSTART = TARGET.Big > 3\n")
    assert json.loads(run("run", "Q", "FETCH_WORK", "--config", cfg, "--allow-hooks", "--json")[1])["action"] == "accept"
    junk = script(tmp_path, "junk", "echo 'Cmd = \"/bin/true\"'; echo 'not an ad'\n")
    cfg, _ = files(tmp_path, f"Q_HOOK_FETCH_WORK = {junk}\n")
    rep = json.loads(run("run", "Q", "FETCH_WORK", "--config", cfg, "--allow-hooks", "--json")[1])
    assert rep["action"] == "no job" and "ignoring invalid hook output" in rep["why"] and ":2:" in rep["why"]


def test_cron_job_run_shows_slot_targeting(tmp_path):
    """A Startd Cron job run from the workbench: the named ads and what each slot merges
    (StartdCronJob::Publish, StartdNamedClassAd::ShouldMergeInto)."""
    exe = script(tmp_path, "v", "echo Value=1; echo SlotId=1; echo '-s1'; echo Value=10; echo '-'\n")
    cfg, _ = files(tmp_path, f"NUM_SLOTS = 2\nSTARTD_CRON_JOBLIST = V\nSTARTD_CRON_V_EXECUTABLE = {exe}\n"
                             "STARTD_CRON_V_PERIOD = 60\n")
    rc, out = run("run", "STARTD_CRON", "V", "--config", cfg, "--allow-hooks", "--json")
    rep = json.loads(out)
    assert rc == 0 and rep["slots"]["slot1"]["merged"]["Value"] == "1" and rep["slots"]["slot2"]["merged"]["Value"] == "10"
    assert set(rep["ads"]) == {"V", "V.s1"}


def test_missing_hook_and_bad_job_file(tmp_path):
    """An unset or refused hook exits 1 with HTCondor's reason (validateHookPath); an unreadable job
    ad exits 2 naming file and line."""
    cfg, job = files(tmp_path, "")
    rc, _ = run("run", "JAVA5", "PREPARE_JOB", "--job", job, "--config", cfg, "--allow-hooks")
    assert rc == 1
    prep = script(tmp_path, "prep", "true\n")
    (tmp_path / "hooks").chmod(0o777)
    cfg, job = files(tmp_path, f"JAVA5_HOOK_PREPARE_JOB = {prep}\n", job="Cmd = \nX = [\n")
    rc, _ = run("run", "JAVA5", "PREPARE_JOB", "--job", job, "--config", cfg, "--allow-hooks")
    assert rc == 1  # the world-writable directory is refused before the job is read
    (tmp_path / "hooks").chmod(0o755)
    rc, _ = run("run", "JAVA5", "PREPARE_JOB", "--job", job, "--config", cfg, "--allow-hooks")
    assert rc == 2


def test_check_lists_three_families_and_fails_on_problems(tmp_path):
    """hook check: router, fetch-work/starter and cron hooks with validateHookPath (hook_utils.cpp)
    and CronJobParams::Initialize's skip reasons, each with file:line; exit 1 on an error."""
    ok = script(tmp_path, "ok", "true\n")
    cfg, _ = files(tmp_path, f"JOB_ROUTER_HOOK_KEYWORD = R\nR_HOOK_TRANSLATE_JOB = {ok}\nSTARTD_JOB_HOOK_KEYWORD = Q\n"
                             f"Q_HOOK_FETCH_WORK = {ok}\nJAVA5_HOOK_PREPARE_JOB = {ok}\nSTARTD_CRON_JOBLIST = C\n"
                             f"STARTD_CRON_C_EXECUTABLE = {ok}\nSTARTD_CRON_C_PERIOD = 5m\n")
    rc, out = run("check", cfg)
    assert rc == 0, out
    assert "[router] R_HOOK_TRANSLATE_JOB" in out and "[startd] Q_HOOK_FETCH_WORK" in out
    assert "[starter] JAVA5_HOOK_PREPARE_JOB" in out and "STARTD_CRON job C (Periodic every 300 s)" in out
    (tmp_path / "condor_config").write_text(f"Q_HOOK_FETCH_WORK = /nonexistent/fetch\nSTARTD_CRON_JOBLIST = C D\n"
                                            f"STARTD_CRON_C_EXECUTABLE = {ok}\n")
    rc, out = run("check", cfg)
    assert rc == 1
    assert f"{cfg}:1: error: [startd] Q_HOOK_FETCH_WORK: ERROR: invalid path" in out
    assert "no job period found for job 'C'" in out and "no path found for job 'D'" in out


def test_a_shipped_sample_runs_on_a_copy(tmp_path, monkeypatch, capsys):
    """Issue 29's handling list: ``hook run SAMPLE FETCH_WORK --config sample_configs/hooks/
    condor_config --allow-hooks`` renamed the checkout's tracked ``queue/job1.job`` (the sample's
    FETCH_WORK moves the job it hands out). A shipped sample's hooks run on a copy, as the demo
    stages it; the sample here is a copy of the shipped one under a stand-in ``sample_configs``."""
    import shutil  # noqa: PLC0415 - this test only

    from tests.helpers.paths import REPO  # noqa: PLC0415 - this test only

    samples = tmp_path / "sample_configs"
    shutil.copytree(REPO / "sample_configs" / "hooks", samples / "hooks")
    monkeypatch.setattr(hook_work, "SAMPLES", samples)
    queue = sorted(p.name for p in (samples / "hooks" / "queue").iterdir())
    rc, out = run("run", "SAMPLE", "FETCH_WORK", "--config", str(samples / "hooks" / "condor_config"),
                  "--allow-hooks")
    assert rc == 0 and "ClusterId = 1" in out
    assert sorted(p.name for p in (samples / "hooks" / "queue").iterdir()) == queue  # nothing moved
    assert "run on a copy" in capsys.readouterr().err
    # an admin's own config runs where it is: not a shipped sample
    assert hook_work.shipped_sample([str(tmp_path / "condor_config")]) is None
