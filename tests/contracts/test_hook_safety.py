"""Opening someone's config or recording never runs their programs (issue 18 item 1).

Sources: htcondor.md §1.8 (router hooks: ``<KEYWORD>_HOOK_<TYPE>``, the keyword from the job's
``HookKeyword`` or ``JOB_ROUTER_HOOK_KEYWORD``, a translate hook with no output runs again on the
next poll); product.md §4 ("opening someone's config or a recording must never run a program").

Every router hook (TRANSLATE_JOB, UPDATE_JOB_INFO, JOB_FINALIZE, JOB_CLEANUP) is a tiny shell
script that appends a line to its own marker file. The hooks are selected either by
``JOB_ROUTER_HOOK_KEYWORD`` in the config or only by the recorded job's ``HookKeyword``. The
recording is written with the project's own queue log writer (engine.queue.writer).
"""

from __future__ import annotations

import argparse
import json
import os

import pytest

from engine.queue.writer import open_queue
from tui.cli import main
from engine.lang.config import Config
from engine.queue.reader import load_log
from engine.router.router import JobRouter
from engine.router.loader import load_routing_table
from engine.feeds.demo import build_demo
from tui.app import make_app
from tests.helpers.tui_fixtures import wait_until
from engine.contract.commands import WakeUp
from engine.launch.replay import replay_runtime
from engine.launch.watch import watch_runtime
from engine.launch.options import WatchOptions
from engine.cli.replay import options as replay_options

T0 = 1795300000.0
HOOKS = ("TRANSLATE_JOB", "UPDATE_JOB_INFO", "JOB_FINALIZE", "JOB_CLEANUP")


class Setup:
    """Hook scripts, a config naming them, a recording and a job-ads file, in ``tmp_path``."""

    def __init__(self, tmp_path, via: str, hooks: tuple[str, ...] = HOOKS) -> None:
        self.marks = tmp_path / "marks"
        self.marks.mkdir()
        bindir = tmp_path / "hooks"
        bindir.mkdir()
        os.chmod(bindir, 0o755)  # validateHookPath: not in a world-writable directory
        keyword = "SITEKW" if via == "config" else "JOBKW"
        self.scripts = {}
        for hook in hooks:
            p = bindir / f"{hook.lower()}.sh"
            body = f"#!/bin/sh\necho ran >> {self.marks / hook}\n"
            if hook == "TRANSLATE_JOB":  # hand back the source ad, so the job can be routed
                body += "sed '1,2d'\n"
            p.write_text(body)
            os.chmod(p, 0o755)  # executable, not world-writable
            self.scripts[hook] = str(p)
        lines = ["JOB_ROUTER_NAME = jobrouter", "JOB_ROUTER_POLLING_PERIOD = 10",
                 "JOB_ROUTER_ROUTE_NAMES = Any", "JOB_ROUTER_ROUTE_Any @=jrt", "  UNIVERSE grid",
                 "  GridResource = batch slurm any.example.org", "  REQUIREMENTS true", "@jrt"]
        if via == "config":
            lines.append(f"JOB_ROUTER_HOOK_KEYWORD = {keyword}")
        lines += [f"{keyword}_HOOK_{hook} = {path}" for hook, path in self.scripts.items()]
        self.config = tmp_path / "routes.conf"
        self.config.write_text("\n".join(lines) + "\n")
        self.log = tmp_path / "spool" / "job_queue.log"
        self.log.parent.mkdir()
        q, _ = open_queue(self.log, T0)
        for i in range(3):
            with q.transaction(now=T0 + 5 * i) as t:
                c = t.new_cluster()
                ck = f"0{c}.-1"
                t.set_attribute(ck, "ClusterId", str(c))
                t.set_attribute(ck, "Owner", '"alice"')
                t.set_attribute(ck, "JobUniverse", "5")
                t.set_attribute(ck, "Cmd", '"/bin/sleep"')
                t.set_attribute(ck, "QDate", str(int(T0 + 5 * i)))
                if via == "job":
                    t.set_attribute(ck, "HookKeyword", f'"{keyword}"')
                p = t.new_proc(c)
                t.set_attribute(p, "ProcId", "0")
                t.set_attribute(p, "JobStatus", "1")
        with q.transaction(now=T0 + 3600) as t:  # one virtual hour of recording
            t.set_attribute("0.0", "Heartbeat", str(int(T0 + 3600)))
        self.jobads = tmp_path / "jobs.ads"
        job = ['ClusterId = 1', 'ProcId = 0', 'Owner = "alice"', 'JobUniverse = 5', 'JobStatus = 1',
               'Cmd = "/bin/sleep"']
        if via == "job":
            job.append(f'HookKeyword = "{keyword}"')
        self.jobads.write_text("\n".join(job) + "\n")

    def ran(self) -> dict[str, int]:
        """Hook type -> how many times its script ran."""
        return {p.name: len(p.read_text().splitlines()) for p in self.marks.iterdir()}

    def rewrite(self, hook: str, tail: str) -> None:
        """The hook still marks each run, then does ``tail`` instead."""
        with open(self.scripts[hook], "w") as fh:
            fh.write(f"#!/bin/sh\necho ran >> {self.marks / hook}\n{tail}")


@pytest.fixture(params=["config", "job"])
def setup(request, tmp_path):
    return Setup(tmp_path, request.param)


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


# ------------------------------------------------------------------------------ replay --reroute


def test_reroute_runs_no_hook_without_the_flag(setup, capsys):
    """§1.8: the keyword (knob or the recorded HookKeyword) names a translate hook; without
    --allow-hooks the re-route runs none of the four hooks, and its report says which program
    would run and that the jobs it would translate were not routed."""
    rc, out, err = run(["replay", str(setup.log), "--reroute", "--config", str(setup.config), "--json"], capsys)
    assert rc == 0, err
    assert setup.ran() == {}
    doc = json.loads(out)
    hooks = {h["hook"]: h for h in doc["hooks"]}
    assert hooks["TRANSLATE_JOB"]["path"] == setup.scripts["TRANSLATE_JOB"]
    assert hooks["TRANSLATE_JOB"]["ran"] is False and hooks["TRANSLATE_JOB"]["jobs"] == 3
    assert doc["unrouted"]["rerouted"] == 3  # what the hook would make of them is unknown
    rc, out, err = run(["replay", str(setup.log), "--reroute", "--config", str(setup.config)], capsys)
    assert rc == 0, err
    assert setup.ran() == {}
    assert f"would run: {setup.scripts['TRANSLATE_JOB']}" in out
    assert "--allow-hooks" in out


@pytest.mark.slow
def test_reroute_runs_every_hook_with_the_flag(setup, capsys):
    """§1.8: with --allow-hooks the re-route is HTCondor's router with its hooks: the translate
    hook's output becomes the routed ad, the update hook runs while the copy is submitted, and
    the finalize and cleanup hooks run when it is done; the report says they ran."""
    rc, out, err = run(["replay", str(setup.log), "--reroute", "--config", str(setup.config), "--json",
                        "--allow-hooks"], capsys)
    assert rc == 0, err
    ran = setup.ran()
    assert set(ran) == set(HOOKS) and ran["TRANSLATE_JOB"] == 3
    doc = json.loads(out)
    assert doc["unrouted"]["rerouted"] == 0
    hooks = {h["hook"]: h for h in doc["hooks"]}
    assert hooks["TRANSLATE_JOB"]["ran"] is True and hooks["TRANSLATE_JOB"]["runs"] == 3
    rc, out, err = run(["replay", str(setup.log), "--reroute", "--config", str(setup.config),
                        "--allow-hooks"], capsys)
    assert rc == 0, err
    assert f"ran: {setup.scripts['TRANSLATE_JOB']}" in out


@pytest.mark.parametrize("tail", ["exit 1\n", "exit 0\n"])
def test_reroute_bounds_translate_attempts_per_job(tmp_path, capsys, tail):
    """JobRouterHookMgr.cpp TranslateClient::hookExited / JobRouter.cpp SubmitJob, CleanupJob,
    CleanupRetiredJob (htcondor.md §1.8): HTCondor runs a translate hook that fails or returns no
    data again on every poll or claim, without limit (it ran 269 resp. 453 times for these 3
    jobs in one virtual hour). RouteDeck's bounded retry (product.md §4): at most 3 attempts per
    source job, over all its claims; then the job is left alone."""
    setup = Setup(tmp_path, "config", hooks=("TRANSLATE_JOB",))
    setup.rewrite("TRANSLATE_JOB", tail)
    rc, out, err = run(["replay", str(setup.log), "--reroute", "--config", str(setup.config), "--json",
                        "--allow-hooks"], capsys)
    assert rc == 0, err
    assert setup.ran() == {"TRANSLATE_JOB": 9}
    doc = json.loads(out)
    assert doc["hooks"][0]["runs"] == 9 and doc["unrouted"]["rerouted"] == 3


def test_reroute_without_translate_hook_routes_and_withholds_the_others(tmp_path, capsys):
    """§1.8: the update, finalize and cleanup hooks only change what happens to a routed copy;
    without --allow-hooks they do not run, the router goes on as if they were not defined (the
    jobs are routed), and the report names each program that would have run."""
    setup = Setup(tmp_path, "job", hooks=("UPDATE_JOB_INFO", "JOB_FINALIZE", "JOB_CLEANUP"))
    rc, out, err = run(["replay", str(setup.log), "--reroute", "--config", str(setup.config), "--json"], capsys)
    assert rc == 0, err
    assert setup.ran() == {}
    doc = json.loads(out)
    assert doc["unrouted"]["rerouted"] == 0
    assert {h["hook"]: (h["path"], h["ran"]) for h in doc["hooks"]} == {
        h: (setup.scripts[h], False) for h in ("UPDATE_JOB_INFO", "JOB_FINALIZE", "JOB_CLEANUP")}


# ------------------------------------------------------------------------------ route


def test_route_runs_the_translate_hook_only_with_the_flag(setup, capsys):
    """§1.8 TRANSLATE_JOB (route = one poll of a fresh router): without --allow-hooks nothing
    runs, the job is not routed and the step says which program would run; with it the hook's
    output is the base of the routed ad."""
    argv = ["route", "--config", str(setup.config), "--jobads", str(setup.jobads), "--now", str(int(T0))]
    rc, out, err = run(argv + ["--json"], capsys)
    assert rc == 0, err
    assert setup.ran() == {}
    (res,) = json.loads(out)
    assert res["route"] is None and res["routed_ad"] is None
    assert any(f"would run: {setup.scripts['TRANSLATE_JOB']}" in s["detail"] for s in res["steps"])
    assert res["hooks"] == [{"hook": "TRANSLATE_JOB", "path": setup.scripts["TRANSLATE_JOB"], "ran": False,
                             "jobs": 1, "runs": 0}]
    rc, out, err = run(argv, capsys)
    assert rc == 0 and setup.ran() == {}
    assert f"would run: {setup.scripts['TRANSLATE_JOB']}" in out and "--allow-hooks" in out
    rc, out, err = run(argv + ["--json", "--allow-hooks"], capsys)
    assert rc == 0, err
    assert setup.ran() == {"TRANSLATE_JOB": 1}
    (res,) = json.loads(out)
    assert res["route"] == "Any" and res["routed_ad"]["Cmd"] == '"/bin/sleep"'
    assert res["hooks"][0]["ran"] is True


# ------------------------------------------------------------------------------ commands that never route


@pytest.mark.parametrize("flag", [[], ["--allow-hooks"]])
def test_plain_replay_never_runs_a_hook(setup, capsys, flag):
    """A replay without --reroute shows the recording; it routes nothing, so no hook runs even
    with --allow-hooks (§1.8 hooks belong to the router)."""
    for extra in (["--json", "--jobs"], ["--at", "end"]):
        rc, _out, err = run(["replay", str(setup.log), "--config", str(setup.config)] + extra + flag, capsys)
        assert rc == 0, err
    assert setup.ran() == {}


def test_watch_queue_check_convert_never_run_a_hook(setup, capsys):
    """watch follows a real schedd (the real router runs its hooks, htcondor.md §3.5); queue
    reads the log; check and convert read the config: none of them runs a program."""
    for argv in (["watch", "--once", "--json", "--queue-log", str(setup.log), "--config", str(setup.config)],
                 ["watch", "--once", "--queue-log", str(setup.log), "--config", str(setup.config)],
                 ["queue", str(setup.log)], ["queue", str(setup.log), "--json"],
                 ["check", str(setup.config)], ["convert", str(setup.config)]):
        rc, _out, err = run(argv, capsys)
        assert rc in (0, 1), (argv, err)
    assert setup.ran() == {}


# ------------------------------------------------------------------------------ the router itself


def test_router_withholds_translate_and_why_not_says_so(setup):
    """§1.8 keyword rules (knob or the job's HookKeyword): a router built without allow_hooks
    never spawns the translate hook; the job is left alone (never claimed), one hook-withheld
    event names the program, and why-not says it would run."""
    q = load_log(setup.log).queue
    table = load_routing_table(Config.load([str(setup.config)]))
    router = JobRouter(table, q, now=T0 + 100)
    for i in range(5):
        router.poll(T0 + 100 + 10 * i)
    assert setup.ran() == {} and router.jobs == {}
    withheld = [e for e in router.drain_events() if e.kind == "hook-withheld"]
    assert len(withheld) == 1 and setup.scripts["TRANSLATE_JOB"] in withheld[0].message
    expl = router.why_not((1, 0), T0 + 200)
    assert expl.route is None and f"would run: {setup.scripts['TRANSLATE_JOB']}" in expl.verdict
    assert q.get((1, 0)).get("Managed") is None  # never claimed
    allowed = JobRouter(table, load_log(setup.log).queue, now=T0 + 100, allow_hooks=True)
    allowed.poll(T0 + 100)
    assert setup.ran()["TRANSLATE_JOB"] == 3 and len(allowed.jobs) == 3


def test_the_demo_is_allowed_to_run_hooks():
    """product.md §4: programs named by a config run only in demo mode or with the user's flag."""
    engine = build_demo(seed=1, durable=False)
    assert engine.router.hooks.allow_run is True


# ------------------------------------------------------------------------------ the TUI screens


@pytest.mark.anyio
async def test_tui_replay_screen_runs_no_hook(setup):
    """The replay screen plays the recording (no router): no hook runs, even with the flag."""
    args = argparse.Namespace(log=str(setup.log), at=None, transaction=None, json=False, jobs=False, speed=1.0,
                              config=[str(setup.config)], reroute=False, tz="UTC", seed=1, sites=None,
                              allow_hooks=True)
    runtime = replay_runtime(replay_options(args))
    app = make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.replay is not None)
        start = app.snapshot.replay.transaction
        for _ in range(4):
            await pilot.press("full_stop")
        await wait_until(pilot, lambda: app.snapshot.replay.transaction == start + 4)
    assert setup.ran() == {}


@pytest.mark.anyio
async def test_tui_watch_screen_runs_no_hook(setup):
    """The watch screen follows the queue log with the config's routing table: no hook runs."""
    args = WatchOptions(queue_log=str(setup.log), config=(str(setup.config),), router_log=None, tz="UTC",
                        slow_poll=60.0)
    runtime = watch_runtime(args)
    app = make_app(runtime, mode="watch", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(120, 40)) as pilot:
        runtime.send(WakeUp())
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.total_jobs == 3)
    assert setup.ran() == {}
