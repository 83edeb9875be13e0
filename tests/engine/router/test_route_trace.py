"""Transform tracer on HTCondor-CE's default pipeline (engine/router/trace.py; issue 13 item 1).

Sources: htcondor.md §1.3 "The transform pipeline" (VanillaToGrid, then each pre-route
transform whose REQUIREMENTS match the ad at that moment, the route, each post-route transform
likewise; one macro set shared), §1.6 (the router's RoutedFromJobId / RoutedBy / RouteName); the
transforms are HTCondor-CE's shipped defaults, tests/data/config/ce-head (copied from
shared/data/real/htcondor__htcondor-ce/HEAD, see tests/data/PROVENANCE.md). The expected
per-statement diffs are what each statement of those transforms does (§1.3 statement list).
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from tests.helpers.paths import TESTS
from engine.cli import route as cmd
from engine.lang.config import Config
from engine.router.dryrun import route_jobs
from engine.router.loader import load_routing_table

CE = TESTS / "data" / "config" / "ce-head"
NOW = 1_700_000_000

PILOT = {
    "ClusterId": "42", "ProcId": "0", "JobUniverse": "5", "JobStatus": "1", "Owner": '"cmspilot"',
    "Requirements": "true", "RequestCpus": "1", "RequestMemory": "2048", "Environment": '"FOO=1"',
    "PeriodicRemove": "JobStatus == 5", "AuthTokenSubject": '"pilot@cms"', "xcount": "8", "maxMemory": "16000",
}


@pytest.fixture(scope="module")
def traced():
    table = load_routing_table(Config.load([CE], env={}))
    [result] = route_jobs(table, [PILOT], NOW, trace=True)
    return result


def stmt(block, prefix):
    return next(s for s in block.statements if s.text.startswith(prefix))


def changes(ev):
    return [(c.kind, c.attr, c.old, c.new_name or c.new) for c in ev.changes]


def test_blocks_follow_htcondors_order(traced):
    assert traced["route"] == "Condor_Pool"
    assert [(b.step, b.name, b.status.split(":")[0]) for b in traced["trace"]] == [
        ("VanillaToGrid", "Condor_Pool", "applied"),
        ("pre-route transform", "Base", "applied"),
        ("pre-route transform", "Cleanup", "applied"),
        ("pre-route transform", "OrigRequests", "applied"),
        ("route", "Condor_Pool", "applied"),
        ("post-route transform", "WholeNode", "applied"),
        ("post-route transform", "Cpus", "applied"),
        ("post-route transform", "Gpus", "not applied"),  # REQUIREMENTS RequestGpus isnt undefined
        ("post-route transform", "Memory", "applied"),
        ("post-route transform", "Queue", "applied"),
        ("post-route transform", "BatchRuntime", "applied"),
        ("post-route transform", "CERequirements", "applied"),
        ("post-route transform", "OnExitHold", "not applied"),  # REQUIREMENTS minWalltime isnt undefined
        ("router attributes", "Condor_Pool", "applied"),
    ]


def test_per_statement_diffs(traced):
    b = {blk.name if blk.step not in ("VanillaToGrid", "router attributes") else blk.step: blk
         for blk in traced["trace"]}
    assert all(c.attr != "JobUniverse" for c in b["VanillaToGrid"].changes)  # TargetUniverse 5: stays 5
    assert ("set", "Remote_JobUniverse", None, "5") in [(c.kind, c.attr, c.old, c.new) for c in b["VanillaToGrid"].changes]
    assert changes(stmt(b["Base"], "SET RoutedJob")) == [("set", "RoutedJob", None, "true")]
    ev = stmt(b["Base"], "EVALMACRO test_requirements_true")
    assert ev.macro == ("test_requirements_true", "true") and ev.changes == []
    assert stmt(b["Base"], "if $(test_requirements_true)").status == "branch taken"
    assert changes(stmt(b["Base"], "SET Requirements")) == [
        ("changed", "Requirements", "true", "(RequestGpus ?: 0) >= (TARGET.Gpus ?: 0)")]
    assert changes(stmt(b["Cleanup"], "DELETE PeriodicRemove")) == [("deleted", "PeriodicRemove", "JobStatus == 5", None)]
    assert changes(stmt(b["OrigRequests"], "RENAME /^AuthToken")) == [
        ("renamed", "AuthTokenSubject", '"pilot@cms"', "orig_AuthTokenSubject")]
    assert changes(stmt(b["OrigRequests"], "COPY environment")) == [("set", "orig_environment", None, '"FOO=1"')]
    assert stmt(b["OrigRequests"], "COPY WantWholeNode").status == "no change"
    assert stmt(b["Condor_Pool"], "TargetUniverse").macro == ("TargetUniverse", "5")
    ev = stmt(b["WholeNode"], "EVALMACRO test_want_whole_node")
    assert ev.expanded == "False && 5==5" and ev.macro == ("test_want_whole_node", "false")
    assert stmt(b["Cpus"], "if defined MY.xcount").status == "branch taken"
    assert changes(stmt(b["Cpus"], "EVALSET RequestCpus xcount")) == [("changed", "RequestCpus", "1", "8")]
    assert stmt(b["Cpus"], "EVALSET RequestCpus $(default_xcount:1)").status.startswith("skipped: in an if")
    assert changes(stmt(b["Memory"], "EVALSET RequestMemory")) == [("changed", "RequestMemory", "2048", "16000")]
    assert stmt(b["Memory"], "EVALSET RequestMemory").expanded == "maxMemory ?: (2000)"
    assert changes(stmt(b["BatchRuntime"], "EVALSET BatchRuntime 60*$(ROUTED_JOB_MAX_TIME")) == [
        ("set", "BatchRuntime", None, "259200")]
    assert changes(stmt(b["CERequirements"], 'SET CERequirements "CondorCE"')) == [
        ("set", "CERequirements", None, '"CondorCE"')]
    assert [(c.kind, c.attr, c.new) for c in b["router attributes"].changes] == [
        ("set", "RoutedFromJobId", '"42.0"'), ("set", "RoutedBy", '"htcondor-ce"'), ("set", "RouteName", '"Condor_Pool"')]


def test_diffs_replay_to_the_routed_ad(traced):
    """Invariant of the trace: the blocks' diffs, applied in order to the source ad, give the routed ad."""
    ad = {k.lower(): v for k, v in PILOT.items()}
    for blk in traced["trace"]:
        for c in blk.changes:
            if c.kind == "deleted":
                del ad[c.attr.lower()]
            elif c.kind == "renamed":
                del ad[c.attr.lower()]
                ad[c.new_name.lower()] = c.new
            else:
                ad[c.attr.lower()] = c.new
    assert ad == {k.lower(): v for k, v in traced["routed_ad"].items()}
    table = load_routing_table(Config.load([CE], env={}))
    [plain] = route_jobs(table, [PILOT], NOW)  # observing changes nothing
    assert plain["routed_ad"] == traced["routed_ad"]


def test_cli_trace_text_and_json(tmp_path):
    jobs = tmp_path / "pilot.ads"
    jobs.write_text("\n".join(f"{k} = {v}" for k, v in PILOT.items()) + "\n")
    parser = argparse.ArgumentParser()
    cmd.register(parser.add_subparsers())

    def run(*extra):
        args = parser.parse_args(["route", "--config", str(CE), "--jobads", str(jobs), "--now", str(NOW),
                                  "--trace", *extra])
        out = io.StringIO()
        return args.func(args, out), out.getvalue()

    rc, text = run()
    assert rc == 0
    lines = text.splitlines()
    assert lines[0] == "Job 42.0: would be routed to Condor_Pool"
    conf = CE / "01-ce-router-defaults.conf"
    i = lines.index(f"  pre-route transform Cleanup  (JOB_ROUTER_TRANSFORM_Cleanup, {conf}:123)")
    assert lines[i + 1: i + 3] == ["    01-ce-router-defaults.conf:126: DELETE PeriodicRemove",
                                   "      deleted PeriodicRemove (was JobStatus == 5)"]
    assert ("  post-route transform Gpus  [not applied: its REQUIREMENTS RequestGpus isnt undefined are not true]"
            f"  (JOB_ROUTER_TRANSFORM_Gpus, {conf}:192)") in lines
    rc, js = run("--json")
    [job] = json.loads(js)
    assert rc == 0 and job["route"] == "Condor_Pool" and job["trace"][1]["name"] == "Base"
    assert job["trace"][1]["statements"][0]["changes"] == [{"kind": "set", "attr": "RoutedJob", "new": "true"}]
    base = job["trace"][1]
    assert (base["knob"], base["file"], base["file_line"]) == ("JOB_ROUTER_TRANSFORM_Base", str(conf), 110)
    first = base["statements"][0]
    assert (first["line"], first["file"], first["file_line"]) == (1, str(conf), 112)


def test_statement_lines_are_config_file_lines(traced):
    """Every traced statement of a transform-syntax step names the config file and line its text
    is on (the mapping check's lints use, engine/router/lints.py); the text there is the statement."""
    seen = 0
    for b in traced["trace"]:
        for ev in b.statements:
            if b.step in ("pre-route transform", "route", "post-route transform"):
                assert ev.file and ev.file_line, (b.name, ev.text)
                source_line = Path(ev.file).read_text().splitlines()[ev.file_line - 1]
                assert ev.text.split()[0] in source_line, (ev.where(), ev.text, source_line)
                seen += 1
    assert seen > 20
