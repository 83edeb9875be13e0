"""Migration check, ``routedeck route --compare OLD NEW`` (engine/router/compare.py; issue 13 item 2).

Sources: htcondor.md §1.4 (routes are tried in ``JOB_ROUTER_ROUTE_NAMES`` order; the first
matching route wins), §1.2 (each ``JOB_ROUTER_ENTRIES`` route is the ``JOB_ROUTER_DEFAULTS`` ad
updated with the entry; ``set_*`` → ``SET``), §1.3 (transform syntax).
"""

from __future__ import annotations

import argparse
import io
import json

import pytest

from tests.helpers.paths import REPO
from engine.cli import route as cmd
from engine.lang.config import Config
from engine.router.convert import convert_classic_table

OLD = """\
JOB_ROUTER_DEFAULTS = [ set_Queue = "long"; MaxIdleJobs = 10; ]
JOB_ROUTER_ENTRIES = \\
  [ Name = "Small"; Requirements = TARGET.RequestCpus >= 1; GridResource = "batch slurm"; ] \\
  [ Name = "Big"; Requirements = TARGET.RequestCpus > 4; GridResource = "batch pbs"; set_Queue = "wide"; ]
JOB_ROUTER_ROUTE_NAMES = Big Small
"""

# A hand conversion with the two classic slips: the order of JOB_ROUTER_ROUTE_NAMES is lost and
# so is the default set_Queue of JOB_ROUTER_DEFAULTS.
BROKEN = """\
JOB_ROUTER_ROUTE_NAMES = Small Big
JOB_ROUTER_ROUTE_Small @=jrt
  REQUIREMENTS RequestCpus >= 1
  GridResource = "batch slurm"
  MaxIdleJobs = 10
@jrt
JOB_ROUTER_ROUTE_Big @=jrt
  REQUIREMENTS RequestCpus > 4
  GridResource = "batch pbs"
  MaxIdleJobs = 10
  SET Queue "wide"
@jrt
"""

JOBS = "\n\n".join(
    f'ClusterId = 7\nProcId = {p}\nJobStatus = 1\nOwner = "u"\nJobUniverse = 5\nRequestCpus = {cpus}'
    for p, cpus in enumerate([8, 1, 2, 16])) + "\n"


def run(*argv):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cmd.register(sub)
    args = parser.parse_args(["route", *argv])
    out = io.StringIO()
    return args.func(args, out), out.getvalue()


def files(tmp_path, **texts):
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    return {name: str(tmp_path / name) for name in texts}


def test_identical_tables_exit_0(tmp_path):
    f = files(tmp_path, old=OLD, same=OLD, jobs=JOBS)
    rc, text = run("--compare", f["old"], f["same"], "--jobads", f["jobs"], "--now", "0")
    assert rc == 0 and "no differences" in text and "[same]" not in text
    assert "4 job(s) routed the same are not listed (--all lists them)" in text
    rc, text = run("--compare", f["old"], f["same"], "--jobads", f["jobs"], "--now", "0", "--all")
    assert rc == 0 and "Job 7.0: old Big / new Big  [same]" in text and "not listed" not in text


def test_routedeck_convert_output_routes_the_same(tmp_path):
    """The converter's own output (17.12/17.13 fixes included) is a faithful migration."""
    converted = convert_classic_table(Config.from_text(OLD, "old.conf"))
    f = files(tmp_path, old=OLD, new=converted, jobs=JOBS)
    rc, text = run("--compare", f["old"], f["new"], "--jobads", f["jobs"], "--now", "0")
    assert rc == 0, text


def test_broken_conversion_names_the_jobs_that_change_route(tmp_path):
    f = files(tmp_path, old=OLD, new=BROKEN, jobs=JOBS)
    rc, text = run("--compare", f["old"], f["new"], "--jobads", f["jobs"], "--now", "0")
    assert rc == 1
    assert "route Big -> Small: 2 job(s): 7.0, 7.3" in text
    assert "Job 7.1: old Small / new Small  [DIFFERS]" in text
    assert '  Queue: "long"  ->  (absent)' in text
    assert "attributes that change value: Queue (4 jobs), GridResource (2 jobs), RouteName (2 jobs)" in text
    rc, js = run("--compare", f["old"], f["new"], "--jobads", f["jobs"], "--now", "0", "--json")
    data = json.loads(js)
    assert rc == 1 and data["summary"]["jobs_change_route"] == 2
    assert [m["jobs"] for m in data["summary"]["route_moves"]] == [["7.0", "7.3"]]
    assert data["summary"]["per_route"]["Small"] == {"old": 2, "new": 4, "ad_changed": 2}
    assert data["jobs"][1]["changed"] == {"Queue": {"old": '"long"', "new": None}}


@pytest.mark.slow
def test_queue_log_source_jobs(tmp_path):
    """Every source job of a recording (engine/feeds/replay/reroute.py ``read_recording``)."""
    log = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"
    demo = REPO / "sample_configs" / "demo" / "condor_config"
    f = files(tmp_path, same=demo.read_text())
    rc, text = run("--config", str(demo), "--compare", str(demo), f["same"], "--queue-log", str(log), "--now", "0")
    assert rc == 0 and "no differences" in text
    assert int(text.split("Summary: ")[1].split(" ")[0]) > 10


# Route names HTCondor's converter changes: cleanStringForUseAsAttr removes the space (htcondor.md §8).
RENAMED = """\
JOB_ROUTER_DEFAULTS = [ MaxIdleJobs = 10; ]
JOB_ROUTER_ENTRIES = \\
  [ Name = "Small Jobs"; Requirements = TARGET.RequestCpus <= 4; GridResource = "batch slurm"; ] \\
  [ Name = "Big Jobs"; Requirements = TARGET.RequestCpus > 4; GridResource = "batch pbs"; ]
"""


def test_routes_the_conversion_renamed_are_paired_not_moves(tmp_path):
    """Issue 25 item 3 — ``routedeck convert`` (like ``condor_transform_ads -convert:file``,
    transform_ads.cpp + classad_helpers.cpp ``cleanStringForUseAsAttr``) turns ``Big Jobs`` into
    ``JOB_ROUTER_ROUTE_BigJobs``; a 25.x router names the route, and ``RouteName``, after the
    knob (htcondor.md §8). The check pairs the two names through the conversion's own name mapping:
    no job "changes route", the ``RouteName`` change is still listed for every job."""
    converted = convert_classic_table(Config.from_text(RENAMED, "old.conf"))
    assert "JOB_ROUTER_ROUTE_BigJobs @=jrt" in converted
    f = files(tmp_path, old=RENAMED, new=converted, jobs=JOBS)
    rc, js = run("--compare", f["old"], f["new"], "--jobads", f["jobs"], "--now", "0", "--json")
    data = json.loads(js)
    assert rc == 1  # RouteName does change on the routed jobs
    s = data["summary"]
    assert s["jobs_change_route"] == 0 and s["route_moves"] == [] and s["jobs_differ"] == 4
    assert sorted((r["old"], r["new"]) for r in s["renamed"]) == [("Big Jobs", "BigJobs"), ("Small Jobs", "SmallJobs")]
    assert s["attributes_changed"] == {"RouteName": 4}
    assert s["per_route"]["BigJobs"] == {"old": 2, "new": 2, "ad_changed": 2, "was": "Big Jobs"}
    job0 = data["jobs"][0]
    assert job0["route_changed"] is False and job0["route_renamed"] is True
    assert job0["changed"] == {"RouteName": {"old": '"Big Jobs"', "new": '"BigJobs"'}}
    rc, text = run("--compare", f["old"], f["new"], "--jobads", f["jobs"], "--now", "0")
    assert "Job 7.0: old Big Jobs / new BigJobs (renamed)  [DIFFERS]" in text
    assert '  RouteName: "Big Jobs"  ->  "BigJobs"' in text
    assert "Summary: 4 job(s); 0 change route; 4 keep their route but get a different routed ad" in text
    assert "routes renamed by the conversion: " in text and "Big Jobs -> BigJobs" in text
    assert "route BigJobs (was Big Jobs): old 2 job(s), new 2 job(s), 2 with a different routed ad" in text


def test_a_real_move_between_renamed_routes_still_counts(tmp_path):
    """Pairing is by name only: a job that the converted table sends to another route is a move."""
    converted = convert_classic_table(Config.from_text(RENAMED, "old.conf"))
    moved = converted.replace("REQUIREMENTS RequestCpus > 4", "REQUIREMENTS RequestCpus > 10") \
        .replace("REQUIREMENTS RequestCpus <= 4", "REQUIREMENTS RequestCpus <= 8")
    assert moved != converted
    f = files(tmp_path, old=RENAMED, new=moved, jobs=JOBS)
    rc, js = run("--compare", f["old"], f["new"], "--jobads", f["jobs"], "--now", "0", "--json")
    s = json.loads(js)["summary"]
    assert rc == 1 and s["jobs_change_route"] == 1
    assert s["route_moves"] == [{"old": "Big Jobs", "new": "SmallJobs", "jobs": ["7.0"]}]
