"""``routedeck route``: route choice for job ads from a file (htcondor.md §1.4, §1.9 job_router_info).

The config is HTCondor's job_router_xform test config (tests/data/router, PROVENANCE.md); the
expected routes are htcondor.md §6 "Job router: facts".
"""

from __future__ import annotations

import argparse
import io
import json

from tests.helpers.paths import TESTS
from engine.cli import route as cmd

DATA = TESTS / "data" / "router"
CONFIG = DATA / "job_router_xform.run.config"


def run(*argv):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cmd.register(sub)
    args = parser.parse_args(["route", *argv])
    out = io.StringIO()
    rc = args.func(args, out)
    return rc, out.getvalue()


def old_ads(tmp_path, procs):
    text = "\n\n".join(
        f"ClusterId = 5\nProcId = {p}\nJobStatus = 1\nOwner = \"alice\"\nJobUniverse = 5\nRouteMe = {1 if p >= 8 else 0}"
        for p in procs)
    path = tmp_path / "jobs.ads"
    path.write_text(text + "\n")
    return str(path)


def test_json_routes_and_routed_ads(tmp_path):
    # Source: htcondor.md §5 / §6 Job router facts (job_router_xform: which job takes which route)
    ads = old_ads(tmp_path, [7, 8, 9])
    rc, out = run("--config", str(CONFIG), "--jobads", ads, "--json", "--now", "1700000000")
    assert rc == 0
    res = json.loads(out)
    assert [(r["job"], r["route"]) for r in res] == [("5.7", None), ("5.8", "Analysis3"), ("5.9", "Production1")]
    assert res[0]["routed_ad"] is None
    ad = res[2]["routed_ad"]
    assert ad["ProductionRun"] == "1" and ad["CollHost"] == '"jira902"' and "RouteMe" not in ad
    assert ad["RoutedFromJobId"] == '"5.9"' and ad["RouteName"] == '"Production1"'
    assert any(s["check"].startswith("REQUIREMENTS") for s in res[1]["steps"])


def test_new_syntax_ads_and_index_ids(tmp_path):
    # Source: htcondor.md §1.4 (only idle jobs are candidates); ids by position are RouteDeck's
    path = tmp_path / "jobs.new"
    path.write_text('/* two jobs */ [ JobStatus = 1; Owner = "bob"; JobUniverse = 5; RouteMe = 1; ProcId = 3 ]\n'
                    '[ JobStatus = 2; Owner = "bob"; JobUniverse = 5; RouteMe = 1; ProcId = 3 ]\n')
    rc, out = run("--config", str(CONFIG), "--jobads", str(path), "--json", "--now", "1700000000")
    res = json.loads(out)
    assert [(r["job"], r["route"]) for r in res] == [(0, "Production1"), (1, None)]
    # job_router_info's -ignore-prior-routing sets JobStatus = 1 first
    rc, out = run("--config", str(CONFIG), "--jobads", str(path), "--json", "--ignore-prior-routing", "--now", "1")
    assert [r["route"] for r in json.loads(out)] == ["Production1", "Production1"]


def test_explain_prints_steps_and_capacity(tmp_path):
    # Source: htcondor.md §1.4 (first match in route order), §1.3 MaxJobs; within one poll a route fills up (§1.5)
    cfg = tmp_path / "small.conf"
    cfg.write_text("JOB_ROUTER_ROUTE_NAMES = One Two\n"
                   "JOB_ROUTER_ROUTE_One @=rt\n  REQUIREMENTS true\n  MaxJobs = 1\n@rt\n"
                   "JOB_ROUTER_ROUTE_Two @=rt\n  UNIVERSE vanilla\n  REQUIREMENTS Memory > 1000\n@rt\n")
    ads = tmp_path / "jobs.ads"
    ads.write_text("ClusterId = 1\nProcId = 0\nJobStatus = 1\nOwner = \"u\"\nJobUniverse = 5\nMemory = 2000\n\n"
                   "ClusterId = 1\nProcId = 1\nJobStatus = 1\nOwner = \"u\"\nJobUniverse = 5\nMemory = 500\n")
    rc, out = run("--config", str(cfg), "--jobads", str(ads), "--explain", "--now", "1700000000")
    assert rc == 0
    assert "Job 1.0: would be routed to One" in out
    # the second job: One is full after the first (one cycle), Two's requirement fails
    assert "FAIL [One] accepting jobs: full: 1 ≥ MaxJobs 1" in out
    assert "FAIL [Two] REQUIREMENTS (job as MY): Memory > 1000: false (Memory = 500)" in out
    assert "Routed job ad:" in out and 'RouteName = "One"' in out


def test_bad_job_ads_name_the_line(tmp_path, capsys):
    # Source: RouteDeck decision (project rule: bad input names file and line; exit 2)
    path = tmp_path / "bad.ads"
    path.write_text("JobStatus = 1\nOwner = \"u\"\nthis is not an ad line\n")
    rc, _ = run("--config", str(CONFIG), "--jobads", str(path))
    assert rc == 2
    assert f"{path}:3:" in capsys.readouterr().err
    rc, _ = run("--config", str(CONFIG), "--jobads", str(tmp_path / "missing.ads"))
    assert rc == 2
