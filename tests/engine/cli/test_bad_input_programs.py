"""Hostile programs and their output (split from test_bad_input.py): router hooks that print
garbage, flood, hang, leave children or sit on unsafe paths, and a JOB_ROUTER_ENTRIES_CMD that
floods or hangs. Every case is an error naming what went wrong, never a hang or a crash; programs
run here only because each test opts in (``allow_hooks``/``allow_run``/``allow_cmd``).

HTCondor sources for the expected behaviour are named per test (htcondor.md sections); cases where
HTCondor has no rule are RouteDeck decisions and say so.
"""

from __future__ import annotations

import os

import pytest

from engine.lang.config import Config
from engine.router import loader
from engine.router.hooks import HookManager, translate_outcome
from engine.router.loader import load_routing_table
from tests.helpers.router_fixtures import T0, make_router, outcomes, route, submit, table


# ------------------------------------------------------------------------------ hooks


def _hook(tmp_path, name, body, mode=0o755, dirmode=0o755):
    d = tmp_path / "hooks"
    d.mkdir(exist_ok=True)
    os.chmod(d, dirmode)
    p = d / name
    p.write_text("#!/bin/sh\n" + body)
    os.chmod(p, mode)
    return str(p)


def _hook_router(path, **kw):
    tbl = table([route("A")], f"RD_HOOK_TRANSLATE_JOB = {path}", hook_keyword="RD")
    return make_router(tbl, allow_hooks=True, **kw)  # opted in: these tests run the hooks


@pytest.mark.parametrize("body, expect", [
    ("printf '\\377\\376\\001bin\\200ary'; head -c 100000 /dev/zero\n", "stdout:1"),  # binary
    ("echo 'A = 1'\necho 'B = [ x = '\n", "stdout:2: cannot parse the value of B"),  # half an ad
    ("printf 'A = 1\\nB = \"x\\000y\"\\n'\n", "stdout:2"),  # a NUL byte inside a value
])
def test_garbage_translate_hook_output_fails_only_that_job(tmp_path, body, expect):
    """htcondor.md §1.8: any line that fails to parse rejects the whole output; a translate
    failure abandons routing of that job (counted as a failure). The router records it as a
    hook-failed event naming the line, and the job without the hook keyword still routes."""
    r, src, _dst = _hook_router(_hook(tmp_path, "t.sh", body))
    (bad,) = submit(src)
    (plain,) = submit(src, HookKeyword='"NONE"')
    r.poll(T0 + 10)
    events = r.drain_events()
    failed = [e for e in events if e.kind == "hook-failed"]
    assert len(failed) == 1 and failed[0].job == bad and expect in failed[0].message
    assert len(failed[0].message) < 400  # a quote of the bad line, not the whole output
    assert outcomes(events) == {bad: "failure"}
    assert r.jobs[plain].dest_key is not None


def test_flooding_hook_is_killed_without_exhausting_memory(tmp_path):
    """RouteDeck decision (HTCondor reads hook output without a limit): a hook writing more than
    ``max_output`` bytes is killed and fails like a timeout, with an event."""
    path = _hook(tmp_path, "flood.sh", "yes 'A = 1'\n")
    res = HookManager({}, timeout=30, max_output=1 << 16, allow_run=True)._execute("TRANSLATE_JOB", path, "")
    assert res.overflow == "stdout" and len(res.stdout) <= 1 << 16 and not res.timed_out
    assert translate_outcome(res).action == "failed" and "output limit" in res.describe()
    r, src, _dst = _hook_router(path)
    r.hooks.max_output = 1 << 16
    (key,) = submit(src)
    r.poll(T0 + 10)
    events = r.drain_events()
    assert outcomes(events) == {key: "failure"}
    assert any(e.kind == "hook-failed" and "output limit" in e.message for e in events)


def test_hung_hook_times_out_with_its_children(tmp_path):
    """product.md §4 hook timeout (HTCondor has none, htcondor.md §1.8): a shell hook whose child
    never exits is killed with its whole process group; the pipe does not keep the router
    waiting, and the router records the timeout as an event."""
    marker = tmp_path / "child.pid"
    path = _hook(tmp_path, "hang.sh", f"sleep 60 &\necho $! > {marker}\nwait\n")
    r, src, _dst = _hook_router(path, hook_timeout=0.5)
    (key,) = submit(src)
    r.poll(T0 + 10)
    events = r.drain_events()
    assert outcomes(events) == {key: "failure"}
    assert any(e.kind == "hook-failed" and "timed out" in e.message for e in events)
    child = int(marker.read_text())
    try:
        os.waitpid(child, os.WNOHANG)
    except ChildProcessError:
        pass
    assert not os.path.exists(f"/proc/{child}") or "Z" in open(f"/proc/{child}/stat").read().split()[2]


@pytest.mark.parametrize("mode, dirmode, why", [
    (0o757, 0o755, "is world-writable! Refusing to use."),
    (0o755, 0o757, "is a world-writable directory"),
    (0o644, 0o755, "is not executable."),
])
def test_unsafe_hook_path_is_not_defined_and_reported(tmp_path, mode, dirmode, why):
    """htcondor.md §1.8 validateHookPath: a world-writable hook, one in a world-writable
    directory, or a non-executable one is treated as not defined (the job routes without it);
    the router reports the rejection once, as an event."""
    ran = tmp_path / "ran"
    path = _hook(tmp_path, "t.sh", f"touch {ran}\necho 'X = 1'\n", mode=mode, dirmode=dirmode)
    r, src, _dst = _hook_router(path)
    keys = submit(src, 2)
    r.poll(T0 + 10)
    events = r.drain_events()
    rejected = [e for e in events if e.kind == "hook-failed"]
    assert len(rejected) == 1 and why in rejected[0].message and "RD_HOOK_TRANSLATE_JOB" in rejected[0].message
    assert all(r.jobs[k].dest_key is not None for k in keys) and not ran.exists()


def test_hook_leaving_a_child_on_its_stdout_does_not_stall_the_router(tmp_path):
    """RouteDeck decision: a hook that exits but leaves a child holding its stdout gets its
    output as written so far; the child is killed after a short grace (HTCondor would wait)."""
    path = _hook(tmp_path, "daemon.sh", "echo 'A = 1'\nsleep 60 &\nexit 0\n")
    res = HookManager({}, timeout=30, allow_run=True)._execute("TRANSLATE_JOB", path, "")
    assert res.returncode == 0 and not res.timed_out
    assert translate_outcome(res).attrs == {"A": "1"}


def test_entries_cmd_that_floods_or_hangs_is_an_error_not_a_hang(tmp_path, monkeypatch):
    """htcondor.md §1.2: JOB_ROUTER_ENTRIES_CMD failing makes HTCondor EXCEPT (routing off here).
    RouteDeck bounds the command like a hook (timeout, output limit): `yes` filled memory before."""
    monkeypatch.setattr(loader, "CMD_TIMEOUT", 0.5)
    for cmd, why in (("yes [", "output passed the limit"), ("sleep 30", "timed out")):
        cfg = Config.from_text(f"JOB_ROUTER_DEFAULTS = [ requirements = true ]\nJOB_ROUTER_ENTRIES_CMD = {cmd}\n",
                               "c.conf", env={})
        table = load_routing_table(cfg, allow_cmd=True)
        errs = [d for d in table.errors if "JOB_ROUTER_ENTRIES_CMD" in d.message]
        assert errs and why in errs[0].message and (errs[0].file, errs[0].line) == ("c.conf", 2)
        assert not table.routing_enabled
