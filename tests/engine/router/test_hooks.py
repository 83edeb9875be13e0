"""Job Router hook contracts (htcondor.md §1.8; JobRouterHookMgr.cpp, hook_utils.cpp).

Hooks are small real scripts written into tmp_path; the RouteDeck timeout and bounded retry are
product.md §4 "Hooks".
"""

from __future__ import annotations

import os

import pytest

from engine.router.hooks import (
    CLEANUP,
    FINALIZE,
    TRANSLATE,
    UPDATE,
    HookManager,
    HookOutputError,
    HookResult,
    cleanup_outcome,
    finalize_outcome,
    finalize_stdin,
    hook_keyword,
    parse_hook_output,
    route_description,
    translate_outcome,
    translate_stdin,
    update_outcome,
    validate_hook_path,
)


def script(dirpath, name, body, mode=0o755):
    path = dirpath / name
    path.write_text("#!/bin/sh\n" + body)
    os.chmod(path, mode)
    return str(path)


@pytest.fixture
def hookdir(tmp_path):
    d = tmp_path / "hooks"
    d.mkdir()
    os.chmod(d, 0o755)
    return d


def test_keyword_job_attribute_wins_over_knob():
    """§1.8: HookKeyword (if it evaluates to a string) takes precedence over JOB_ROUTER_HOOK_KEYWORD."""
    assert hook_keyword({"HookKeyword": '"JOBKW"'}, "DEFAULT") == "JOBKW"
    assert hook_keyword({"HookKeyword": 'strcat("A", "B")'}, "DEFAULT") == "AB"
    assert hook_keyword({"HookKeyword": "42"}, "DEFAULT") == "DEFAULT"  # not a string
    assert hook_keyword({"Owner": '"u"'}, "DEFAULT") == "DEFAULT"
    assert hook_keyword({"Owner": '"u"'}, None) is None  # no keyword: no hooks


def test_path_checks(hookdir, tmp_path):
    """§1.8 validateHookPath: exists, not world-writable, executable, directory not world-writable."""
    ok = script(hookdir, "ok.sh", "exit 0\n")
    assert validate_hook_path("K_HOOK_X", ok) is None
    missing = str(hookdir / "nope.sh")
    assert "stat() failed" in validate_hook_path("K_HOOK_X", missing)
    ww = script(hookdir, "ww.sh", "exit 0\n", mode=0o757)
    os.chmod(ww, 0o757)
    assert "world-writable! Refusing" in validate_hook_path("K_HOOK_X", ww)
    noexec = script(hookdir, "noexec.sh", "exit 0\n", mode=0o644)
    assert "is not executable" in validate_hook_path("K_HOOK_X", noexec)
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)
    in_open = script(open_dir, "h.sh", "exit 0\n")
    assert "world-writable directory" in validate_hook_path("K_HOOK_X", in_open)

    # a rejected path counts as "not defined", and the manager remembers why
    mgr = HookManager({"K_HOOK_TRANSLATE_JOB": noexec, "K_HOOK_JOB_CLEANUP": ok})
    assert mgr.path(TRANSLATE, "K") is None
    assert "not executable" in mgr.rejections["K_HOOK_TRANSLATE_JOB"]
    assert mgr.path(CLEANUP, "K") == ok
    assert mgr.path(CLEANUP, None) is None


def test_finalize_falls_back_to_job_exit(hookdir):
    """§1.8: the old name _HOOK_JOB_EXIT is used if JOB_FINALIZE is undefined."""
    old = script(hookdir, "exit.sh", "exit 0\n")
    mgr = HookManager({"K_HOOK_JOB_EXIT": old})
    assert mgr.path(FINALIZE, "K") == old


def test_route_description_and_stdin_layout():
    """§1.8 table: one-line new-syntax route ad, "\\n------\\n", then the sorted sPrintAd block."""
    info = route_description("Site1", 9, "batch slurm")
    assert info == '[ Name = "Site1"; TargetUniverse = 9; GridResource = "batch slurm" ]'
    assert route_description("Local", 12, None) == '[ Name = "Local"; TargetUniverse = 12 ]'
    src = {"Owner": '"u"', "ClusterId": "3", "ClaimId": '"secret"', "cmd": '"/bin/true"'}
    text = translate_stdin(info, src)
    assert text == info + "\n------\n" + 'ClusterId = 3\ncmd = "/bin/true"\nOwner = "u"\n'
    fin = finalize_stdin({"A": "1"}, {"B": "2"})
    assert fin == "A = 1\n\n------\nB = 2\n"  # empty line before the dashes


def test_output_parsing_rejects_whole_output_on_one_bad_line():
    """§1.8: every line parsed alone; any line that fails rejects the whole output."""
    assert parse_hook_output('A = 1\n\nB = "x"\n') == {"A": "1", "B": '"x"'}
    with pytest.raises(HookOutputError, match=":2:"):
        parse_hook_output("A = 1\nthis is not an ad line\nB = 2\n")
    with pytest.raises(HookOutputError):
        parse_hook_output("A = (1 +\n")


def R(code, out="", timed_out=False):
    return HookResult("X", "/h", code, out, "", timed_out=timed_out)


def test_outcomes_per_hook_type():
    """§1.8 table, stdout/exit-code column, plus the RouteDeck timeout (product.md §4)."""
    # translate
    assert translate_outcome(R(0, "A = 1\n")).action == "replace"
    assert translate_outcome(R(0, "")).action == "no-data"  # HTCondor: runs again next poll
    assert translate_outcome(R(3, "A = 1\n")).action == "failed"
    assert translate_outcome(R(0, "garbage line\n")).action == "failed"
    assert translate_outcome(R(None, "", timed_out=True)).action == "failed"
    # update
    out = update_outcome(R(0, 'MyType = "Job"\nTargetType = "Machine"\nX = 5\n'))
    assert out.action == "merge" and dict(out.attrs) == {"X": "5"}
    assert update_outcome(R(0, "")).action == "no-data"
    assert update_outcome(R(1, "X = 5\n")).action == "skip"  # status check skipped this poll
    assert update_outcome(R(0, "bad\n")).action == "remove"
    # finalize
    assert finalize_outcome(R(0, "Done = true\n")).attrs == {"Done": "true"}
    assert finalize_outcome(R(0, "")).action == "finalize"
    assert finalize_outcome(R(2, "Done = true\n")).action == "reroute"
    assert finalize_outcome(R(0, "bad\n")).action == "reroute"
    # cleanup: exit 0 or killed by a signal finishes; non-zero retries
    assert cleanup_outcome(R(0)).action == "done"
    assert cleanup_outcome(R(-9)).action == "done"
    assert cleanup_outcome(R(1)).action == "retry"
    # WEXITSTATUS of a signal death is 0 (translate/update/finalize only look at it)
    assert R(-15).exit_status == 0


def test_runner_runs_real_scripts_with_stdin(hookdir, tmp_path):
    """Hooks run with no arguments and get the stdin block (§1.8)."""
    dump = tmp_path / "stdin.txt"
    echo = script(hookdir, "t.sh", f'cat > {dump}\necho "ArgCount = $#"\necho \'Foo = "bar"\'\n')
    mgr = HookManager({"K_HOOK_TRANSLATE_JOB": echo}, allow_run=True)
    stdin = translate_stdin(route_description("R", 9, None), {"A": "1"})
    res = mgr.run("1.0", TRANSLATE, mgr.path(TRANSLATE, "K"), stdin)
    assert res.returncode == 0
    assert dump.read_text() == stdin
    assert translate_outcome(res).attrs == {"ArgCount": "0", "Foo": '"bar"'}


def test_runner_timeout_kills_the_hook(hookdir):
    """RouteDeck improvement (product.md §4): a configurable timeout; HTCondor has none."""
    slow = script(hookdir, "slow.sh", "exec sleep 30\n")
    mgr = HookManager({}, timeout=0.3, allow_run=True)
    res = mgr.run("1.0", CLEANUP, slow, "")
    assert res.timed_out and cleanup_outcome(res).action == "retry"
    assert "timed out" in res.describe()


def test_background_runner_does_not_start_twice(hookdir, tmp_path):
    """§1.8: while a hook runs for a job, it is not started again; the result comes later."""
    counter = tmp_path / "count"
    h = script(hookdir, "u.sh", f"echo x >> {counter}\necho 'X = 1'\n")
    mgr = HookManager({}, background=True, allow_run=True)
    try:
        assert mgr.run("1.0", UPDATE, h, "") is None
        res = None
        fut = mgr._running[("1.0", UPDATE)]
        fut.result(timeout=10)  # wait for the worker, not a sleep
        res = mgr.run("1.0", UPDATE, h, "")
        assert res is not None and update_outcome(res).attrs == {"X": "1"}
        assert counter.read_text().count("x") == 1
    finally:
        mgr.close()
