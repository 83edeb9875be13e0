"""Hostile input through the CLI and the engine: every case gives a clear message naming the file,
the line (where there is one) and what is wrong, never a traceback; the engine keeps the last
good state (project rule, product.md "bad input").

HTCondor sources for the expected behaviour are named per test (htcondor.md sections). Cases
where HTCondor itself has no rule (a NUL byte in a config file, a hook flooding its stdout) are
RouteDeck decisions and say so.
"""

from __future__ import annotations

import os
import textwrap

import pytest

from engine.config import Config
from engine.router.table import load_routing_table
from tui.cli import main as cli_main

GOOD = """\
JOB_ROUTER_ROUTE_NAMES = A B
JOB_ROUTER_ROUTE_A @=jrt
  UNIVERSE 5
  REQUIREMENTS Owner == "alice"
@jrt
JOB_ROUTER_ROUTE_B @=jrt
  UNIVERSE 5
  REQUIREMENTS true
@jrt
"""


def write(tmp_path, name, data):
    p = tmp_path / name
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data)
    return str(p)


def run_cli(capsys, *argv):
    rc = cli_main([str(a) for a in argv])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.out + cap.err
    return rc, cap.out, cap.err


def routes(table):
    return [r.name for r in table.routes]


# ------------------------------------------------------------------------------ routing table


def test_bad_tables_in_a_row_keep_the_last_good_one(tmp_path):
    """product.md: a bad table keeps the last good one in force, also on the 2nd bad reload
    (a kept table carries the rejected table's errors, which must not make it "bad")."""
    good = load_routing_table(Config.from_text(GOOD, "g.conf"))
    assert routes(good) == ["A", "B"] and not good.errors
    bad_text = GOOD.replace('REQUIREMENTS Owner == "alice"', 'REQUIREMENTS Owner == ("alice"')
    bad1 = load_routing_table(Config.from_text(bad_text, "b.conf"), previous=good)
    assert bad1.kept_previous and routes(bad1) == ["A", "B"]
    assert any(d.file == "b.conf" and d.line == 4 and "REQUIREMENTS" in d.message for d in bad1.errors)
    bad2 = load_routing_table(Config.from_text(bad_text, "b.conf"), previous=bad1)
    assert bad2.kept_previous and routes(bad2) == ["A", "B"] and bad2.version == good.version
    fixed = load_routing_table(Config.from_text(GOOD.replace("alice", "bob"), "g.conf"), previous=bad2)
    assert not fixed.kept_previous and fixed.version == good.version + 1


def test_config_cut_inside_an_at_block_keeps_the_last_good_table(tmp_path):
    """A file cut in the middle of route B's @= block: the config reader's error (htcondor.md
    §1.3: B is then only "not found in the routing table", a warning) must still keep the good
    table; the kept table names the file and line of the cut block."""
    good = load_routing_table(Config.from_text(GOOD, "g.conf"))
    cut = GOOD.rsplit("@jrt", 1)[0]
    cfg = Config.from_text(cut, "cut.conf")
    new = load_routing_table(cfg, previous=good)
    assert new.kept_previous and routes(new) == ["A", "B"]
    err = [d for d in new.errors if "end of file while scanning" in d.message]
    assert err and err[0].file == "cut.conf" and err[0].line == 6
    # without a previous table it is used as HTCondor would (B missing)
    assert routes(load_routing_table(cfg)) == ["A"]


def test_router_keeps_routing_after_set_table_with_a_kept_table():
    """JobRouter.set_table with the kept table: same routes, routing goes on (htcondor.md §1.3
    SetRoutingTable keeps per-route state by name)."""
    from router_fixtures import T0, make_router, submit  # noqa: PLC0415

    good = load_routing_table(Config.from_text(GOOD.replace('Owner == "alice"', "true"), "g.conf"))
    r, src, _dst = make_router(good)
    (k1,) = submit(src)
    r.poll(T0 + 10)
    assert r.jobs[k1].route_name == "A"
    kept = load_routing_table(Config.from_text("JOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=x\n", "c.conf"),
                              previous=good)
    assert kept.kept_previous
    r.set_table(kept, T0 + 15)
    (k2,) = submit(src)
    r.poll(T0 + 20)
    assert r.jobs[k2].route_name == "A" and r.jobs[k1].route_name == "A"


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
    from router_fixtures import make_router, route, table  # noqa: PLC0415

    tbl = table([route("A")], f"RD_HOOK_TRANSLATE_JOB = {path}", hook_keyword="RD")
    return make_router(tbl, **kw)


@pytest.mark.parametrize("body, expect", [
    ("printf '\\377\\376\\001bin\\200ary'; head -c 100000 /dev/zero\n", "stdout:1"),  # binary
    ("echo 'A = 1'\necho 'B = [ x = '\n", "stdout:2: cannot parse the value of B"),  # half an ad
    ("printf 'A = 1\\nB = \"x\\000y\"\\n'\n", "stdout:2"),  # a NUL byte inside a value
])
def test_garbage_translate_hook_output_fails_only_that_job(tmp_path, body, expect):
    """htcondor.md §1.8: any line that fails to parse rejects the whole output; a translate
    failure abandons routing of that job (counted as a failure). The router records it as a
    hook-failed event naming the line, and the job without the hook keyword still routes."""
    from router_fixtures import T0, outcomes, submit  # noqa: PLC0415

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
    from router_fixtures import T0, outcomes, submit  # noqa: PLC0415
    from engine.router.hooks import HookManager, translate_outcome  # noqa: PLC0415

    path = _hook(tmp_path, "flood.sh", "yes 'A = 1'\n")
    res = HookManager({}, timeout=30, max_output=1 << 16)._execute("TRANSLATE_JOB", path, "")
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
    from router_fixtures import T0, outcomes, submit  # noqa: PLC0415

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
    from router_fixtures import T0, submit  # noqa: PLC0415

    ran = tmp_path / "ran"
    path = _hook(tmp_path, "t.sh", f"touch {ran}\necho 'X = 1'\n", mode=mode, dirmode=dirmode)
    r, src, _dst = _hook_router(path)
    keys = submit(src, 2)
    r.poll(T0 + 10)
    events = r.drain_events()
    rejected = [e for e in events if e.kind == "hook-failed"]
    assert len(rejected) == 1 and why in rejected[0].message and "RD_HOOK_TRANSLATE_JOB" in rejected[0].message
    assert all(r.jobs[k].dest_key is not None for k in keys) and not ran.exists()
