"""The demo end to end (issue 5 "Must show"): a seeded run over three virtual hours.

Sources of the expectations: htcondor.md §1.5 (throttle formula), §1.4 (fall-through to later
routes), §1.9 (router tools), §2.4/§2.5 (DeferralTime, hold 20, hold 25, requeue), §3.3 (owner
load of job_queue.log). Expected times come from engine.crondor, never from the schedd.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.paths import REPO
from tests.helpers.demo_fixture import make_config_dir
from engine.crondor.fields import parse_schedule
from engine.crondor.schedd import schedd_next_run
from engine.feeds.demo import build_demo
from engine.queue.reader import load_log
from engine.schedd.history import read_history
from engine.cli.demo import snapshots_fast
from engine.cli.jsonout import dumps, snapshot_json
from engine.views.build import DemoJobs, _row

ROOT = REPO
HOURS = 3
INTERVAL = 450  # not a multiple of the 600 s throttle window: snapshots see open windows
SEED = 3


def run_snapshots(engine, hours=HOURS, interval=INTERVAL):
    return list(snapshots_fast(engine, engine.now + hours * 3600, interval))


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("demo")
    cfg = make_config_dir(tmp)
    engine = build_demo(config_dir=cfg, seed=SEED, state_dir=tmp / "state")
    reports = []
    advance = engine.schedd.sites.advance

    def recording(now):
        out = advance(now)
        reports.extend(out)
        return out

    engine.schedd.sites.advance = recording
    seen_events = []
    snaps = []
    first_adjust = first_routes = None

    for snap in snapshots_fast(engine, engine.start + HOURS * 3600, INTERVAL):  # a generator: stepwise
        snaps.append(snap)
        last = seen_events[-1].seq if seen_events else 0
        seen_events.extend(e for e in snap.events if e.seq > last)
        if first_adjust is None and snap.time >= engine.start + 600:
            # the first throttle re-evaluation happened at t0 + 600
            first_adjust = dict(engine.router.last_adjustment)
            first_routes = {r.name: r for r in engine.router.route_views(engine.now)}
    return dict(engine=engine, cfg=cfg, tmp=tmp, snaps=snaps, reports=reports,
                first_adjust=first_adjust, first_routes=first_routes, events=seen_events)


@pytest.mark.slow
def test_golden_same_snapshots_every_time(demo, tmp_path):
    """The same seed gives the same JSON snapshots (Snapshot.to_json), line for line: the CLI in
    another process (another hash seed) against the first hour of the fixture's run."""
    here = [dumps(snapshot_json(s)) for s in demo["snaps"] if s.time <= demo["engine"].start + 3600]
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", "demo", "--headless", "--max-speed", "--json", "--duration", "3600",
         "--interval", str(INTERVAL), "--seed", str(SEED), "--config-dir", str(demo["cfg"]),
         "--state-dir", str(tmp_path / "b")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == here
    assert len(here) == 3600 // INTERVAL + 1
    other = build_demo(config_dir=demo["cfg"], seed=SEED + 1, state_dir=tmp_path / "c")
    theirs = [dumps(snapshot_json(s)) for s in run_snapshots(other, hours=0.5, interval=INTERVAL)]
    assert theirs != here[:len(theirs)]


def test_queue_log_loads_to_the_engines_final_state(demo):
    engine = demo["engine"]
    res = load_log(demo["tmp"] / "state" / "job_queue.log")
    assert not res.fatal and not res.needs_rotation  # every transaction was committed whole
    assert res.queue.snapshot_state() == engine.queue.snapshot_state()


START_ATTRS = {"JobStatus", "EnteredCurrentStatus", "JobCurrentStartDate", "JobStartDate", "NumJobStarts",
               "JobRunCount"}


def test_schedd_commits_durably_except_where_htcondor_does_not(demo):
    """htcondor.md §3.2: commits are fdatasync'ed unless non-durable. The schedd commits a local
    job's start (schedd.cpp ``spawnLocalStarter`` → ``mark_serial_job_running``) and
    ``DestroyProc`` (qmgmt.cpp) with ``CommitNonDurableTransactionOrDieTrying``; the router's
    commits (submit_job.cpp, ``DisconnectQ(qmgr, commit)``), the gridmanager's and the rest
    are durable. Read from the demo's own log: the 106 says ``NONDURABLE``."""
    text = (demo["tmp"] / "state" / "job_queue.log").read_text()
    blocks = text.split("\n105 \n")[1:]
    kinds = {"start": 0, "destroy": 0}
    for block in blocks:
        lines = block.split("\n")
        end = next(line for line in lines if line.startswith("106"))
        body = lines[:lines.index(end)]
        names = {line.split(" ")[2] for line in body if line.startswith("103 ")}
        destroys = any(line.startswith("102 ") for line in body)
        if end.endswith("NONDURABLE"):
            if destroys:
                assert all(line.startswith("102 ") for line in body), block
                kinds["destroy"] += 1
            else:
                assert names <= START_ATTRS and "NumJobStarts" in names, block
                assert all(line.split(" ")[2] != "JobStatus" or line.split(" ")[3] == "2" for line in body), block
                kinds["start"] += 1
        else:
            assert not destroys, block
    assert kinds["start"] > 0 and kinds["destroy"] > 0, kinds

def test_black_hole_is_throttled_by_the_failure_formula(demo):
    # htcondor.md §1.5: throttle = 600 * threshold / (failed / (failed + num_jobs + succeeded))
    adj = demo["first_adjust"]["blackhole"]
    f, n, s, thr = adj.recent_failed, adj.num_jobs, adj.recent_succeeded, adj.threshold
    assert f / adj.delta > thr  # the black hole failed faster than the threshold
    expected = 600 * thr / (f / (f + n + s))
    assert demo["first_routes"]["BlackHole"].throttle == pytest.approx(expected)
    assert any(e.kind == "route-throttled" and e.route == "BlackHole" for e in demo["events"])
    # every later window routes at most `throttle` jobs to it
    assert all(r.recent_started <= (r.throttle or 1e9) for snap in demo["snaps"] for r in snap.routes
               if r.name == "BlackHole")


def _routed_copies(demo):
    engine = demo["engine"]
    copies = [j.attrs for j in engine.queue.jobs() if j.get("RouteName")]
    copies += [r.attrs for r in read_history(demo["tmp"] / "state" / "history") if "RouteName" in r.attrs]
    return copies


def test_other_routes_take_the_load_while_the_black_hole_is_throttled(demo):
    t0 = demo["engine"].start
    atlas_after = [c for c in _routed_copies(demo)
                   if c.get("VO") == '"atlas"' and int(c["QDate"]) > t0 + 600]
    by_route = {}
    for c in atlas_after:
        by_route[c["RouteName"]] = by_route.get(c["RouteName"], 0) + 1
    assert by_route.get('"ATLAS_CE"', 0) > 0 and by_route.get('"BlackHole"', 0) > 0
    # the black hole got no more than its throttle per 600 s window (htcondor.md §1.5)
    throttle = demo["first_routes"]["BlackHole"].throttle
    windows = HOURS * 6
    assert by_route['"BlackHole"'] <= throttle * windows
    assert any(r.name == "ATLAS_CE" and r.recent_started > 0 for s in demo["snaps"] for r in s.routes)


def test_jobs_no_route_accepts_stay_idle_with_a_reason(demo):
    engine = demo["engine"]
    big = [j for j in engine.queue.jobs() if j.get("WorkloadTemplate") == '"bigmem"']
    assert big and all(j.status == 1 and j.get("RoutedToJobId") is None for j in big)
    why = engine.router.why_not(big[0].key, engine.now)
    assert why.route is None and "requirements" in why.verdict
    assert any(not st.ok and "RequestMemory" in st.check for st in why.steps)
    novo = [j for j in engine.queue.jobs() if j.get("WorkloadTemplate") == '"local-user"']
    assert novo and all(j.status == 1 for j in novo)
    assert "VO isnt undefined" in engine.router.why_not(novo[0].key, engine.now).text()


def test_cron_jobs_start_at_their_deferral_times_and_requeue(demo):
    engine = demo["engine"]
    probe = next(j for j in engine.queue.jobs() if j.get("WorkloadTemplate") == '"quarter-hour-probe"')
    runs = [r for r in demo["reports"] if r.job == probe.key and r.kind == "exited"]
    assert len(runs) >= HOURS * 4 - 1  # requeued after each run (OnExitRemove = false)
    sched = parse_schedule("*/15")
    previous_end = engine.start
    for r in runs:
        payload_start = r.ended - 20  # the template's fixed 20 s run time
        assert payload_start == schedd_next_run(sched, previous_end, "UTC").time
        previous_end = r.ended
    assert int(probe.get("NumJobStarts")) == len(runs) + (1 if probe.status == 2 else 0)


def test_missed_window_hold_20_then_system_release(demo):
    holds = [e for e in demo["events"] if e.kind == "job-held" and "(code 20)" in e.message]
    assert holds
    tape = holds[0].job
    assert any(e.kind == "job-released" and e.job == tape for e in demo["events"])
    snap_states = [c.state for s in demo["snaps"] for c in s.cron_jobs if c.job == tape]
    assert "held" in snap_states


def test_invalid_schedule_held_25(demo):
    engine = demo["engine"]
    broken = next(j for j in engine.queue.jobs() if j.get("WorkloadTemplate") == '"broken-schedule"')
    assert broken.status == 5 and broken.get("HoldReasonCode") == "25"
    assert broken.get("HoldReason") == '"Invalid cron schedule parameters: "'  # `*/0`: empty text


def test_router_tools_on_the_demo_recording(demo):
    log = demo["tmp"] / "state" / "job_queue.log"
    out = subprocess.run([sys.executable, "-m", "tui.cli", "router-q", "-S", "--queue-log", str(log)],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "   JOBS ST Route                GridResource"
    engine = demo["engine"]
    routed = [j for j in engine.queue.jobs() if j.get("RouteName")]
    assert sum(int(line.split()[0]) for line in lines[1:]) == len(routed)
    hist = demo["tmp"] / "state" / "history"
    out = subprocess.run([sys.executable, "-m", "tui.cli", "router-history", "--history", str(hist),
                          "--now", str(engine.now), "--tz", "UTC"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    text = out.stdout.splitlines()
    assert text[0].startswith("Routed job history from ") and text[-1].startswith("TOTAL")


def test_jobs_table_follows_the_queue(demo):
    """The incrementally maintained jobs table equals one built from scratch, in id order."""
    engine = demo["engine"]
    rows = engine.snapshot().jobs
    fresh = [_row(DemoJobs(engine), j.key) for j in engine.queue.jobs()]
    assert list(rows) == fresh and len(rows) == len(engine.queue)
    assert engine.snapshot().jobs is rows  # unchanged queue: the same tuple is shared
