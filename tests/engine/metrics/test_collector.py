"""The exporter's series against the snapshot they come from (issue 28), for the demo and for a
watch of the shipped recording (sample_configs/recordings/demo-3h.job_queue.log, written by the
demo, see its README.md), and ``promtool check metrics`` on both expositions.

Sources of the rules checked: htcondor.md §1.5 (per-route figures: num_jobs, idle counts held
copies, the recent windows and AdjustFailureThrottles), §1.4 (the umbrella and ChooseRoute for the
idle-unrouted verdicts), §2.5 (hold code 20: a crondor job that missed its window).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from prometheus_client.parser import text_string_to_metric_families

from engine.clock import ManualClock
from engine.feeds.demo import build_demo
from engine.feeds.watch.feed import WatchFeed
from engine.feeds.watch.follow import WatchEngine
from engine.feeds.watch.setup import resolve
from engine.metrics.collector import METRICS, Latest
from engine.metrics.server import exposition
from engine.contract.snapshot import HELD_WITHIN
from engine.lang.config import Config
from engine.router.unrouted import REASONS
from tests.helpers import promtool
from tests.helpers.paths import REPO
from tests.helpers.real_configs import DATA, HEAD
from engine.metrics.collector import SnapshotCollector
from engine.launch.options import ReplayOptions
from engine.launch.replay import replay_runtime
from engine.contract.commands import Seek

LOG = str(REPO / "sample_configs/recordings/demo-3h.job_queue.log")
CONFIG = str(REPO / "sample_configs/demo/condor_config")
LAST = datetime(2026, 11, 21, 2, 59, 55, tzinfo=timezone.utc).timestamp()  # the recording's last commit


def samples(text: str) -> dict[tuple[str, frozenset], float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(got: dict, name: str, **labels: str) -> float | None:
    return got.get((name, frozenset(labels.items())))


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo (seed 1) run 3 virtual hours, snapshots every 600 s, idle-unrouted counted."""
    engine = build_demo(str(REPO / "sample_configs/demo"), seed=1, state_dir=str(tmp_path_factory.mktemp("rd-metrics")),
                        durable=False, stage=False)
    engine.count_unrouted = True
    snaps = []
    t = engine.now
    for k in range(18):
        t += 600
        engine.step(t)
        engine.advance()  # a snapshot only reads what the advance settled (issue 26)
        snaps.append(engine.snapshot(k + 1))
    yield engine, snaps
    engine.close()


def check_routes(got: dict, snap, schedd: str) -> None:
    assert snap.routes
    for r in snap.routes:
        lab = dict(schedd=schedd, route=r.name)
        assert value(got, "routedeck_route_jobs", state="idle", **lab) == r.idle - r.held
        assert value(got, "routedeck_route_jobs", state="running", **lab) == r.running
        assert value(got, "routedeck_route_jobs", state="held", **lab) == r.held
        assert value(got, "routedeck_route_max_jobs", **lab) == (r.max_jobs if r.max_jobs >= 0 else None)
        assert value(got, "routedeck_route_match_order", **lab) == (r.index or None)
        assert value(got, "routedeck_route_window_start_timestamp_seconds", **lab) == (r.window_start or None)
        assert value(got, "routedeck_route_max_idle_jobs", **lab) == (r.max_idle if r.max_idle >= 0 else None)
        assert value(got, "routedeck_route_accepting", **lab) == (r.state == "accepting")
        assert value(got, "routedeck_route_throttled", **lab) == (r.state == "throttled")
        assert value(got, "routedeck_route_full", **lab) == (r.state in ("full", "idle-limit"))
        assert value(got, "routedeck_route_failure_rate", **lab) == pytest.approx(r.failure_rate)
        assert value(got, "routedeck_route_throttle_jobs", **lab) == r.throttle
        assert value(got, "routedeck_route_jobs_started_total", **lab) == r.started_total
        assert value(got, "routedeck_route_jobs_succeeded_total", **lab) == r.succeeded_total
        assert value(got, "routedeck_route_jobs_failed_total", **lab) == r.failed_total


def test_demo_series_equal_the_snapshot(demo):
    engine, snaps = demo
    snap = snaps[-1]
    got = samples(exposition(lambda: snap, "ce1"))
    check_routes(got, snap, "ce1")
    # the three states add up to the route's copies (htcondor.md §1.5: idle = num_jobs - num_running)
    for r in snap.routes:
        assert sum(value(got, "routedeck_route_jobs", schedd="ce1", route=r.name, state=s)
                   for s in ("idle", "running", "held")) == r.routed
    assert value(got, "routedeck_route_throttled", schedd="ce1", route="BlackHole") == 1  # README of the recording
    assert value(got, "routedeck_engine_state", schedd="ce1", state="running") == 1
    assert value(got, "routedeck_snapshot_timestamp_seconds", schedd="ce1") == snap.time
    for status, n in snap.queue_counts.items():
        assert value(got, "routedeck_queue_jobs", schedd="ce1", status=status) == n
    assert snap.cron_jobs
    for c in snap.cron_jobs:
        nxt = value(got, "routedeck_cron_next_run_timestamp_seconds", schedd="ce1", job=c.job)
        assert nxt == (c.next_runs[0] if c.next_runs else None)
        assert value(got, "routedeck_cron_missed_run", schedd="ce1", job=c.job) == (c.hold_code == 20)
    for reason in REASONS:
        assert value(got, "routedeck_idle_unrouted_jobs", schedd="ce1", reason=reason) == snap.unrouted[reason]
    for w in HELD_WITHIN:
        assert value(got, "routedeck_jobs_held_soon", schedd="ce1", within=str(w)) == snap.held_soon[w]
    assert value(got, "routedeck_log_lag_seconds", schedd="ce1") is None  # the demo follows no log
    # no per-job label but the crondor jobs'
    jobs = {c.job for c in snap.cron_jobs}
    for name, labels in got:
        d = dict(labels)
        # knob: a config knob, few; within: the held-soon windows (HELD_WITHIN)
        assert set(d) <= {"schedd", "route", "state", "status", "reason", "job", "knob", "within"}
        assert "job" not in d or (name.startswith("routedeck_cron_") and d["job"] in jobs)


def test_counters_are_the_windows_summed_and_never_go_back(demo):
    """``*_total`` = every closed 600 s window's recent figure + the open window's (§1.5
    AdjustFailureThrottles resets recent_* at each window; the counters must not)."""
    engine, snaps = demo
    stats = {s.name: s for s in engine.router.book}
    last = snaps[-1]
    for r in last.routes:
        s = stats[r.name]
        assert len(s.history) < s.history.maxlen  # every window of the run is still kept: the sum is complete
        assert r.started_total == sum(w.routed for w in s.history) + r.recent_started
        assert r.succeeded_total == sum(w.succeeded for w in s.history) + r.recent_succeeded
        assert r.failed_total == sum(w.failed for w in s.history) + r.recent_failed
    assert sum(r.failed_total for r in last.routes) > 0 and sum(r.started_total for r in last.routes) > 0
    went_down = False
    for before, after in zip(snaps, snaps[1:]):
        a = {r.name: r for r in after.routes}
        for r in before.routes:
            assert a[r.name].started_total >= r.started_total
            assert a[r.name].failed_total >= r.failed_total
            assert a[r.name].succeeded_total >= r.succeeded_total
            went_down |= a[r.name].recent_started < r.recent_started  # a window closed
    assert went_down  # the recent figures did go back: the counters are not them


def test_idle_unrouted_verdicts_agree_with_the_router(demo):
    """Every idle, untracked source job is counted once, and its verdict agrees with the router's
    own decision pieces (htcondor.md §1.4): no route's REQUIREMENTS match a ``no_match`` job, the
    why-not explanation of a ``not_candidate`` job says it is not a candidate."""
    engine, snaps = demo
    router = engine.router
    snap = snaps[-1]
    # typed fields: the verdicts alone in ``unrouted``, the held-soon windows (seconds) in ``held_soon``
    assert set(snap.unrouted) == set(REASONS)
    assert set(snap.held_soon) == set(HELD_WITHIN)
    idle = [j for j in router.src_q if (j.get("JobStatus") or "").strip() == "1" and j.key not in router.jobs
            and (j.get("RoutedBy") or "").strip() != f'"{router.name}"']
    assert sum(snap.unrouted[r] for r in REASONS) == len(idle) > 0
    # the router's why-not says "not a candidate" both for a job a fixed clause or the source
    # constraint rejects (the failing checks named) and, once those pass, for one no accepting
    # route's requirements match in the umbrella; the ledger's words split the second case by the
    # routes' REQUIREMENTS (issue 29: no_match / route_full / throttled)
    umbrella_routes = "not a candidate: no accepting route's requirements are true in the umbrella"
    no_match = not_candidate = 0
    for job in idle:
        ad = job.classad()
        verdict = router.why_not(job.key, engine.now).verdict
        if verdict.startswith("not a candidate") and verdict != umbrella_routes:
            not_candidate += 1
        elif not any(r.matches(ad, engine.now) for r in router.table.routes):
            no_match += 1
    assert no_match > 0
    assert snap.unrouted["no_match"] == no_match
    assert snap.unrouted["not_candidate"] == not_candidate


@pytest.fixture(scope="module")
def watched():
    """A watch of the shipped recording, read whole, on a wall clock 100 s after its last commit."""
    wall = ManualClock(LAST + 100)
    engine = WatchEngine(resolve(LOG, [CONFIG], None), wall, tz="UTC")
    engine.count_unrouted = True  # as --metrics sets it
    feed = WatchFeed(engine)
    feed.step(wall.now())
    return engine, feed.snapshot(1, clock="real")


def test_watch_series_equal_the_snapshot(watched, demo):
    engine, snap = watched
    got = samples(exposition(lambda: snap, "ce2"))
    check_routes(got, snap, "ce2")
    # the log's health: the newest transaction is the last commit, read 100 s later
    assert value(got, "routedeck_log_lag_seconds", schedd="ce2") == pytest.approx(100.0)
    assert snap.log_lag == pytest.approx(100.0)
    assert value(got, "routedeck_log_problems", schedd="ce2") == len(engine.problems)
    assert value(got, "routedeck_log_generation", schedd="ce2") == engine.generation == 1  # the first read
    # the recording's README: BlackHole throttled by the failure-rate rule (every copy it takes fails)
    assert value(got, "routedeck_route_throttle_jobs", schedd="ce2", route="BlackHole") > 0
    started = value(got, "routedeck_route_jobs_started_total", schedd="ce2", route="BlackHole")
    assert started > 0 and value(got, "routedeck_route_jobs_failed_total", schedd="ce2", route="BlackHole") == started
    # the idle-unrouted verdicts of the followed log equal the embedded router's at the same moment:
    # the recording is this demo's (seed 1, 3 hours; its README), judged here from the log alone
    for reason in REASONS:
        assert value(got, "routedeck_idle_unrouted_jobs", schedd="ce2", reason=reason) == snap.unrouted[reason]
    assert dict(snap.unrouted) == dict(demo[1][-1].unrouted)
    assert snap.unrouted["no_match"] > 0 and snap.unrouted["not_candidate"] > 0


def test_no_snapshot_yet_gives_no_series():
    latest = Latest()
    assert not [k for k in samples(exposition(latest.get, "x")) if k[0].startswith("routedeck_")]


def test_every_exposed_name_is_a_defined_one(demo, watched):
    names = set(METRICS)
    for snap, schedd in ((demo[1][-1], "a"), (watched[1], "b")):
        for fam in text_string_to_metric_families(exposition(lambda s=snap: s, schedd)):
            for s in fam.samples:
                assert s.name in names or s.name.removesuffix("_created") + "_total" in names, s.name


@pytest.mark.parametrize("which", ["demo", "watch"])
def test_promtool_check_metrics(which, demo, watched):
    snap = demo[1][-1] if which == "demo" else watched[1]
    text = exposition(lambda: snap, "ce.example.org")
    res = promtool.run("check", "metrics", stdin=text)
    assert res.returncode == 0 and not res.stdout.strip() and not res.stderr.strip(), res.stdout + res.stderr


def test_families_built_once_per_snapshot(demo):
    snaps = demo[1]
    latest = Latest()
    c = SnapshotCollector(latest.get, "ce1")
    latest.put(snaps[-1])
    first = list(c.collect())
    assert [id(f) for f in c.collect()] == [id(f) for f in first]  # the same snapshot: kept
    latest.put(snaps[-2])
    again = list(c.collect())
    assert not {id(f) for f in again} & {id(f) for f in first}  # a new snapshot: built anew
    got = {s.name: s.value for f in again for s in f.samples if s.name == "routedeck_snapshot_timestamp_seconds"}
    assert got["routedeck_snapshot_timestamp_seconds"] == snaps[-2].time


def test_replay_counters_at_the_end_equal_watchs(watched):
    """The same recording through replay's one-pass statistics (engine.feeds.replay.stats) and
    watch's live ones (engine.views.figures.LiveFigures): the cumulative started / succeeded /
    failed of every route agree at the log's end (the counters the exporter serves)."""

    args = ReplayOptions(log=LOG, config=(CONFIG,), tz="UTC", speed=1.0, at="end")
    feed = replay_runtime(args).feed
    feed.handle(Seek(time=LAST))
    replay = {r.name: (r.started_total, r.succeeded_total, r.failed_total) for r in feed.snapshot(1).routes}
    watch = {r.name: (r.started_total, r.succeeded_total, r.failed_total) for r in watched[1].routes}
    assert replay == watch and sum(t[0] for t in watch.values()) > 0


def test_policy_parses_says_which_periodic_policy_never_fires(watched, tmp_path):
    """routedeck_policy_parses{knob} (the "policy never fires" alert): the demo config's policies
    parse (1); HTCondor-CE's shipped SYSTEM_PERIODIC_HOLD does not, so the schedd never fires it
    (htcondor.md §8, user_job_policy.cpp) and the series is 0 (tests/data/config/ce-head)."""
    _, snap = watched
    got = samples(exposition(lambda: snap, "ce2"))
    assert value(got, "routedeck_policy_parses", schedd="ce2", knob="SYSTEM_PERIODIC_REMOVE") == 1.0
    assert value(got, "routedeck_policy_parses", schedd="ce2", knob="SYSTEM_PERIODIC_RELEASE") == 1.0
    ce = [str(p) for p in HEAD] + [CONFIG]  # the CE's defaults, then the demo's routes (its knobs win)
    cfg = tmp_path / "ce_then_demo.conf"
    cfg.write_text("".join(f"include : {p}\n" for p in ce))
    wall = ManualClock(LAST + 100)
    engine = WatchEngine(resolve(LOG, [str(cfg)], None), wall, tz="UTC")
    feed = WatchFeed(engine)
    feed.step(wall.now())
    ce_snap = feed.snapshot(1, clock="real")
    got = samples(exposition(lambda: ce_snap, "ce"))
    assert value(got, "routedeck_policy_parses", schedd="ce", knob="SYSTEM_PERIODIC_HOLD") == 0.0
    assert [p.knob for p in ce_snap.policies if not p.parses] == ["SYSTEM_PERIODIC_HOLD"]


def _why_json(capsys, *configs: str) -> dict:
    from tui.cli import main  # noqa: PLC0415 - the CLI entry point, only for this test

    assert main(["why", LOG, *(a for c in configs for a in ("--config", c)), "--at", "end", "--json"]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def _managed(doc: dict) -> set[str]:
    """Jobs ``why`` calls not_candidate because the real router manages them (Managed = "External"):
    watch leaves them out of the idle-unrouted count (they are routed)."""
    return {j["job"] for j in doc["jobs"] if j["detail"].startswith('umbrella: Managed isnt "External"')}


@pytest.mark.slow
@pytest.mark.parametrize("corrected_ce_hold", [False, True])
def test_metric_counts_are_the_tally_of_why_verdicts(capsys, tmp_path, corrected_ce_hold):
    """One pipeline (engine.router.unrouted): ``routedeck_idle_unrouted_jobs{reason}`` and
    ``routedeck_jobs_held_soon{within}`` of a watch equal the tally of ``routedeck why --json`` on
    the same log and config at the same moment (the log's last commit). With HTCondor-CE's shipped
    hold (htcondor.md §8: 30 minutes idle, after the policy is corrected so that it parses) added
    to the demo config, the held-soon counts are the hold countdowns ``why`` prints."""
    configs = [CONFIG]
    if corrected_ce_hold:
        text = (DATA / "ce-head" / "01-ce-router-defaults.conf").read_text()
        assert "$(JobStatus != 3)" in text  # as shipped it does not parse and never fires
        extra = tmp_path / "ce-hold.conf"
        extra.write_text(text.replace("$(JobStatus != 3)", "(JobStatus != 3)"))
        policy = Config.load([CONFIG, str(extra)])
        kept = tmp_path / "hold-only.conf"  # the CE's hold, not its routes: the demo's routing table stays
        kept.write_text("".join(f"{k} = {policy.get(k)}\n" for k in ("SYSTEM_PERIODIC_HOLD", "SYSTEM_PERIODIC_HOLD_REASON")
                                if policy.get(k)))
        configs.append(str(kept))
    wall = ManualClock(LAST)
    engine = WatchEngine(resolve(LOG, configs, None), wall, tz="UTC")
    engine.count_unrouted = True
    feed = WatchFeed(engine)
    feed.step(wall.now())
    snap = feed.snapshot(1, clock="real")
    got = samples(exposition(lambda: snap, "ce2"))
    doc = _why_json(capsys, *configs)
    assert doc["time"] == snap.time == LAST
    managed = _managed(doc)
    verdicts = [j for j in doc["jobs"] if j["job"] not in managed]
    tally = {reason: sum(j["verdict"] == reason for j in verdicts) for reason in REASONS}
    assert {r: value(got, "routedeck_idle_unrouted_jobs", schedd="ce2", reason=r) for r in REASONS} == tally
    assert sum(tally.values()) > 0 and tally["no_match"] > 0
    holds = [j["hold"] for j in verdicts if j["hold"] is not None and j["hold"]["action"] == "hold"]
    for w in HELD_WITHIN:
        n = sum(h["at"] - doc["time"] <= w for h in holds)
        assert value(got, "routedeck_jobs_held_soon", schedd="ce2", within=str(w)) == n == snap.held_soon[w]
    if corrected_ce_hold:
        assert holds, "the corrected CE hold predicts holds of the waiting jobs"
