"""The embedded startd/starter with real hook scripts and real job processes (issue 12).

Sources: htcondor.md §4.1–4.3 and §2.5; HTCondor's src/condor_startd.V6/StartdHookMgr.cpp
(handleHookFetchWork, hookReplyFetch), src/condor_startd.V6/Resource.cpp (tryFetchWork,
evalNextFetchWorkDelay, getHookKeyword), src/condor_starter.V6.1/StarterHookMgr.cpp
(HookPrepareJobClient::hookExited), src/condor_daemon_core.V6/HookClientMgr.cpp
(JobHookClientMgr::initialize). Time is a manual clock: the engine steps, processes are polled.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.execute_fixture import fetch_queue_hook, run_until, script
from engine.execute import hooks as hk
from engine.execute.startd import CLAIMED, OWNER, UNCLAIMED, Startd
from engine.lang.config import Config


def make(tmp_path: Path, extra: str, **kw) -> Startd:
    cfg = Config.from_text(extra)
    return Startd(cfg, tmp_path / "state", allow_hooks=True, host="node.test", **kw)


def test_fetched_job_really_runs_and_reports(tmp_path):
    """FETCH_WORK stdin is the slot ad; the fetched job runs in a sandbox; its output file reaches
    Iwd; JobStatus/ExitCode/RemoteWallClockTime follow the starter's reports (htcondor.md §4.2, §7)."""
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    (iwd / "in.txt").write_text("hello\n")
    job = (f'Cmd = "/bin/sh"\nArguments = "-c \'cat in.txt > out.txt; echo $GREETING; exit 3\'"\n'
           f'Environment = "GREETING=hi"\nIwd = "{iwd}"\nTransferInput = "in.txt"\nOut = "job.out"\n'
           f'ClusterId = 7\nProcId = 0\n')
    fetch = fetch_queue_hook(tmp_path, [job])
    sd = make(tmp_path, f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch}\nFetchWorkDelay = 60\n")
    sd.step(0)
    slot = sd.slots[0]
    assert slot.state == CLAIMED and "7.0" in sd.jobs
    stdin = (tmp_path / "fetch.stdin").read_text()
    assert 'State = "Unclaimed"' in stdin and 'Name = "slot1@node.test"' in stdin
    t = run_until(sd, 1, lambda: sd.jobs["7.0"].ad.get("JobStatus") == "4")
    rec = sd.jobs["7.0"].ad
    assert rec["ExitCode"] == "3" and rec["ExitBySignal"] == "false"
    assert float(rec["RemoteWallClockTime"]) == t
    assert (iwd / "out.txt").read_text() == "hello\n"
    assert (iwd / "job.out").read_text() == "hi\n"
    assert rec["HookKeyword"] == '"Q"'  # the startd inserts the slot's keyword


def test_fetch_work_delay_idiom_claimed_idle_fetches_at_once(tmp_path):
    """``ifThenElse(State == "Claimed" && Activity == "Idle", 0, 300)``: after a fetched job's starter
    exits the slot is Claimed/Idle and fetches at once; with no more work the claim is evicted
    and the next fetch waits 300 s (Resource.cpp evalNextFetchWorkDelay, tryFetchWork)."""
    job = 'Cmd = "/bin/true"\nClusterId = {c}\nProcId = 0\n'
    fetch = fetch_queue_hook(tmp_path, [job.format(c=1), job.format(c=2)])
    evict = script(tmp_path, "evict", f"cat > {tmp_path}/evict.stdin\n")
    sd = make(tmp_path, f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch}\nQ_HOOK_EVICT_CLAIM = {evict}\n"
                        'FetchWorkDelay = ifThenElse(State == "Claimed" && Activity == "Idle", 0, 300)\n')
    sd.step(0)
    t1 = run_until(sd, 1, lambda: "2.0" in sd.jobs)  # job 2 fetched right when job 1 exited
    assert sd.jobs["1.0"].ad["JobStatus"] == "4"
    run_until(sd, t1, lambda: sd.slots[0].claim is None)
    slot = sd.slots[0]
    assert slot.state in (OWNER, UNCLAIMED)
    ev = (tmp_path / "evict.stdin").read_text()
    assert "-----\n" in ev and ev.rstrip().endswith('"') and "ClaimId = \"<fetch#" in ev
    calls = (tmp_path / "fetch.stdin").read_text().count("=====")
    assert calls == 3
    last = slot.last_fetch_completed
    sd.step(last + 299)
    assert (tmp_path / "fetch.stdin").read_text().count("=====") == 3
    sd.step(last + 300)
    assert (tmp_path / "fetch.stdin").read_text().count("=====") == 4


@pytest.mark.parametrize("delay_text, expected", [(None, 300), ("45", 45), ('"soon"', 300), ("2.9", 2)])
def test_fetch_work_delay_default_and_types(tmp_path, delay_text, expected):
    """FetchWorkDelay undefined or not an integer means 300 s (Resource.cpp evalNextFetchWorkDelay)."""
    cfg = "STARTD_JOB_HOOK_KEYWORD = Q\n" + (f"FetchWorkDelay = {delay_text}\n" if delay_text else "")
    sd = make(tmp_path, cfg)
    assert sd.fetch_delay(sd.slots[0], 0) == expected


def test_keyword_precedence(tmp_path):
    """SLOT<N>_JOB_HOOK_KEYWORD beats STARTD_JOB_HOOK_KEYWORD (Resource::getHookKeyword); the starter
    uses STARTER_JOB_HOOK_KEYWORD, else the job's HookKeyword (kept even when the config defines
    no hook for it), else STARTER_DEFAULT_JOB_HOOK_KEYWORD (HookClientMgr.cpp)."""
    cfg = Config.from_text("SLOT2_JOB_HOOK_KEYWORD = WEB\nSTARTD_JOB_HOOK_KEYWORD = DATABASE\n"
                           "STARTER_DEFAULT_JOB_HOOK_KEYWORD = DEF\n")
    assert hk.slot_keyword(cfg, "slot1") == "DATABASE"
    assert hk.slot_keyword(cfg, "slot2") == "WEB"
    assert hk.starter_keyword(cfg, {"HookKeyword": '"JAVA5"'}) == "JAVA5"
    assert hk.starter_keyword(cfg, {}) == "DEF"
    forced = Config.from_text("STARTER_JOB_HOOK_KEYWORD = F\n")
    assert hk.starter_keyword(forced, {"HookKeyword": '"JAVA5"'}) == "F"


def test_rank_preemption_of_fetched_work(tmp_path):
    """A claimed slot takes fetched work only with a strictly greater Rank; the running job is
    evicted (JOB_EXIT with ``evict``) and EVICT_CLAIM runs (StartdHookMgr::handleHookFetchWork)."""
    long_job = 'Cmd = "/bin/sleep"\nArguments = "30"\nClusterId = 1\nProcId = 0\nPrio = 1\n'
    same = 'Cmd = "/bin/true"\nClusterId = 2\nProcId = 0\nPrio = 1\n'
    better = 'Cmd = "/bin/true"\nClusterId = 3\nProcId = 0\nPrio = 5\n'
    fetch = fetch_queue_hook(tmp_path, [long_job, same, better])
    reply = script(tmp_path, "reply", f'echo "$1" >> {tmp_path}/replies\n')
    exit_hook = script(tmp_path, "exit", f'echo "$1" >> {tmp_path}/exits\n')
    sd = make(tmp_path, f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch}\nQ_HOOK_REPLY_FETCH = {reply}\n"
                        f"Q_HOOK_EVICT_CLAIM = {reply}\nQ_HOOK_JOB_EXIT = {exit_hook}\n"
                        "FetchWorkDelay = 10\nRANK = TARGET.Prio\n")
    sd.step(0)
    assert sd.slots[0].claim.job_id == "1.0"
    sd.step(10)  # same rank: refused
    assert sd.slots[0].claim.job_id == "1.0"
    sd.step(20)  # higher rank: preempts
    assert "3.0" in sd.jobs and sd.jobs["1.0"].ad["JobStatus"] == "1"
    replies = (tmp_path / "replies").read_text().split("\n")
    assert replies[:2] == ["accept", "reject"]
    assert "evict" in (tmp_path / "exits").read_text().split()
    inv = [i for i in sd.runner.invocations if i.hook == hk.FETCH_WORK]
    assert inv[1].decision.startswith("rejected: Rank 1")


def test_fetch_garbage_output_drops_the_job(tmp_path):
    """One bad FETCH_WORK line drops the whole output and the fetch completes with no job
    (FetchClient::hookExited: "ignoring invalid hook output")."""
    fetch = script(tmp_path, "fetch", 'echo \'Cmd = "/bin/true"\'; echo "this is not classad"\n')
    sd = make(tmp_path, f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch}\n")
    sd.step(0)
    assert sd.slots[0].claim is None and not sd.jobs
    inv = sd.runner.invocations[-1]
    assert "ignoring invalid hook output" in inv.error and ":2:" in inv.error
    assert sd.slots[0].next_fetch_at == 300


def test_fetch_hang_is_killed_and_counts_as_no_work(tmp_path):
    """A FETCH_WORK that hangs is killed at its timeout (RouteDeck's bound; htcondor.md §4.2 has none)."""
    fetch = script(tmp_path, "fetch", "sleep 30\n")
    sd = make(tmp_path, f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch}\nQ_HOOK_FETCH_WORK_TIMEOUT = 1\n")
    sd.step(0)
    inv = sd.runner.invocations[-1]
    assert inv.result.timed_out and sd.slots[0].claim is None


def test_fetch_huge_output_is_killed(tmp_path):
    """Output past the cap kills the hook (engine.hookrun bound)."""
    fetch = script(tmp_path, "fetch", "yes 'A = 1'\n")
    sd = make(tmp_path, f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch}\n")
    sd.runner.max_output = 1 << 16
    sd.step(0)
    assert sd.runner.invocations[-1].result.overflow == "stdout" and not sd.jobs


@pytest.mark.parametrize("body, status, hold_code, action", [
    ('echo \'Cmd = "/bin/echo"\'\n', "4", None, "run"),
    ("echo 'HookStatusMessage = \"no license\"'; exit 7\n", "5", 19, "hold"),
    ("echo 'HookStatusCode = 300'\n", "1", None, "requeue"),
])
def test_prepare_job_outcomes(tmp_path, body, status, hold_code, action):
    """PREPARE_JOB: exit 0 merges its output (the seed's Cmd rewrite); 1–299 holds with code 19 and
    the status as subcode; ≥300 is a shadow exception (HookPrepareJobClient::hookExited)."""
    prep = script(tmp_path, "prep", f"cat > {tmp_path}/prep.stdin\n" + body)
    job = f'Cmd = "/bin/false"\nArguments = "x"\nHookKeyword = "JAVA5"\nIwd = "{tmp_path}"\nOut = "o.txt"\nClusterId = 1\nProcId = 0\n'
    fetch = fetch_queue_hook(tmp_path, [job])
    sd = make(tmp_path, f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch}\nJAVA5_HOOK_PREPARE_JOB = {prep}\n")
    sd.step(0)
    run_until(sd, 1, lambda: sd.jobs["1.0"].ad.get("JobStatus") in ("4", "5", "1"))
    ad = sd.jobs["1.0"].ad
    assert ad["JobStatus"] == status
    assert 'Cmd = "/bin/false"' in (tmp_path / "prep.stdin").read_text()
    if action == "run":
        assert (tmp_path / "o.txt").read_text() == "x\n" and ad["ExitCode"] == "0"
    if hold_code:
        assert ad["HoldReasonCode"] == "19" and ad["HoldReasonSubCode"] == "7"
        assert ad["HoldReason"] == '"PREPARE_JOB (prep) failed (exited with status 7): no license"'


def test_prepare_output_stops_at_first_bad_line():
    """initAdFromString keeps the lines before the first bad one (compat_classad.cpp)."""
    attrs, problem = hk.init_ad_from_string('A = 1\nnot an ad\nB = 2\n')
    assert attrs == {"A": "1"} and ":2:" in problem


def test_update_job_info_timing_and_job_exit_stdin(tmp_path):
    """UPDATE_JOB_INFO after STARTER_INITIAL_UPDATE_INTERVAL then every STARTER_UPDATE_INTERVAL
    (JobInfoCommunicator::startUpdateTimer); JOB_EXIT gets the exit attributes and ``exit``."""
    upd = script(tmp_path, "upd", f"grep JobState > /dev/null && date +%s >> {tmp_path}/upd.calls\n")
    ex = script(tmp_path, "ex", f'cat > {tmp_path}/exit.stdin; echo "$1" > {tmp_path}/exit.arg\n')
    stop = tmp_path / "stop"
    job = f'Cmd = "/bin/sh"\nArguments = "-c \'while [ ! -e {stop} ]; do sleep 0.01; done; exit 4\'"\nClusterId = 1\nProcId = 0\n'
    fetch = fetch_queue_hook(tmp_path, [job])
    sd = make(tmp_path, f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch}\nQ_HOOK_UPDATE_JOB_INFO = {upd}\n"
                        f"Q_HOOK_JOB_EXIT = {ex}\nSTARTER_INITIAL_UPDATE_INTERVAL = 8\nSTARTER_UPDATE_INTERVAL = 20\n")
    for t in range(0, 50):
        sd.step(t)
    ups = [i.started for i in sd.runner.invocations if i.hook == hk.UPDATE_JOB_INFO]
    assert ups == [8, 28, 48]
    stop.write_text("")
    run_until(sd, 50, lambda: sd.jobs["1.0"].ad.get("JobStatus") == "4")
    stdin = (tmp_path / "exit.stdin").read_text()
    assert "ExitCode = 4" in stdin and "ExitBySignal = false" in stdin and 'JobState = "Exited"' in stdin
    assert (tmp_path / "exit.arg").read_text().strip() == "exit"


def test_deferral_time_waits_then_runs_or_holds(tmp_path):
    """DeferralTime in the future: the job shows Running and starts at that time; missed beyond
    DeferralWindow: held with code 20 (htcondor.md §2.5, Starter::jobWaitUntilExecuteTime)."""
    ok = 'Cmd = "/bin/true"\nDeferralTime = 100\nDeferralWindow = 0\nClusterId = 1\nProcId = 0\n'
    late = 'Cmd = "/bin/true"\nDeferralTime = 5\nDeferralWindow = 10\nClusterId = 2\nProcId = 0\n'
    fetch = fetch_queue_hook(tmp_path, [ok, late])
    sd = make(tmp_path, f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch}\nNUM_SLOTS = 2\n"
                        "FetchWorkDelay = 0\n")
    sd.step(50)
    assert sd.jobs["1.0"].ad["JobStatus"] == "2" and "JobStartDate" not in sd.jobs["1.0"].ad
    assert sd.jobs["2.0"].ad["JobStatus"] == "5" and sd.jobs["2.0"].ad["HoldReasonCode"] == "20"
    sd.step(99)
    assert "JobStartDate" not in sd.jobs["1.0"].ad
    run_until(sd, 100, lambda: sd.jobs["1.0"].ad.get("JobStatus") == "4")
    assert sd.jobs["1.0"].ad["JobStartDate"] == "100"


def test_withheld_hooks_never_spawn(tmp_path):
    """Without allow_run nothing is spawned; the hook is recorded as withheld (product.md §4)."""
    marker = tmp_path / "ran"
    fetch = script(tmp_path, "fetch", f"touch {marker}\n")
    sd = Startd(Config.from_text(f"STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = {fetch}\n"),
                tmp_path / "state", host="n")
    sd.step(0)
    assert not marker.exists() and sd.runner.invocations[-1].withheld


def test_pushed_job_program_never_runs_without_allow(tmp_path):
    """The job's Cmd comes from a job ad: outside the demo it runs only with the allow flag
    (product.md §4 "opening someone's config or a recording must never run a program"). Without
    it the starter records a withheld run and the job goes back to idle; with it the job runs."""
    marker = tmp_path / "ran"
    prog = script(tmp_path, "job", f"touch {marker}\n")
    job = {"Cmd": f'"{prog}"', "JobUniverse": "5", "RequestCpus": "1"}
    sd = Startd(Config.from_text(""), tmp_path / "state", host="n")
    assert sd.push("1.0", job, 0)
    for now in range(0, 5):
        sd.step(now)
    assert not marker.exists()
    assert any(i.hook == "JOB" and i.path == prog and i.withheld for i in sd.runner.invocations)
    allowed = make(tmp_path / "b", "")
    assert allowed.push("1.0", job, 0)
    run_until(allowed, 0, marker.exists)
