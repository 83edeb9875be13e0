"""The transform tracer in the TUI (issue 13 item 1): ``t`` from the jobs, job ad and why-not
screens and ``:trace JOB`` open the Trace screen, built from ``engine.views.queries.trace.trace_job`` —
the same ``engine.router.trace`` blocks ``routedeck route --trace`` prints.

Sources: htcondor.md §1.3 (the pipeline order: VanillaToGrid, pre-route transforms, the route,
post-route transforms), §1.6 (the router's own attributes RoutedFromJobId / RoutedBy / RouteName);
the demo's table is sample_configs/demo/condor_config (pre-route transform Base, route CMS_T2).
"""

from __future__ import annotations

import pytest
import argparse

from engine.contract.feed import FeedBase
from engine.lang.config import Config
from engine.router.dryrun import route_jobs
from engine.router.loader import load_routing_table
from engine.views.queries.trace import trace_job
from tui.app import make_app
from tui.screens.trace import render_trace

from tests.helpers.demo_fixture import ROOT, EngineRuntime
from tests.helpers.tui_fixtures import wait_until
from engine.contract.commands import WakeUp
from engine.queue.writer import open_queue
from engine.launch.replay import replay_runtime
from engine.launch.watch import watch_runtime
from engine.launch.options import WatchOptions
from engine.cli.replay import options as replay_options

DEMO_CONFIG = "sample_configs/demo/condor_config"


@pytest.fixture(autouse=True)
def _in_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # config locations read relative to the checkout


def _app():
    return make_app(EngineRuntime(), blink=False, watch_files=False)


async def _ready(pilot):
    await wait_until(pilot, lambda: pilot.app.snapshot is not None and bool(pilot.app.screen.query("#routes")))


def _traced(pilot):
    s = pilot.app.screen
    return type(s).__name__ == "TraceScreen" and (s.result is not None or s.error is not None)


def _steps(result):
    return [(b.step, b.name) for b in result.blocks]


PIPELINE = [("VanillaToGrid", "CMS_T2"), ("pre-route transform", "Base"), ("route", "CMS_T2"),
            ("router attributes", "CMS_T2")]


def test_routed_copy_is_traced_from_its_source_on_its_route():
    """A routed copy (79.0, RoutedFromJobId 13.0) is traced as its source job built for its route:
    the pipeline of §1.3 with Base's statements at their config lines, and the routed ad the
    trace builds carries the router's attributes (§1.6)."""
    rt = EngineRuntime()
    snap = rt.latest()
    res = trace_job(rt, "79.0", snap.time, snap.config_files)
    assert res.job == "13.0" and res.route == "CMS_T2"
    assert "79.0 is the routed copy of 13.0" in res.note
    assert _steps(res) == PIPELINE
    base = res.blocks[1]
    assert [(ev.where(short=True), ev.text) for ev in base.statements] == [
        ("condor_config:32", "SET Requirements true"), ("condor_config:34", 'SET RemoteVO "$(MY.VO)"')]
    assert base.statements[1].expanded == '"cms"'
    assert res.routed_ad["RouteName"] == '"CMS_T2"' and res.routed_ad["RoutedFromJobId"] == '"13.0"'
    # the source job itself (routed already) gives the same trace
    again = trace_job(rt, "13.0", snap.time, snap.config_files)
    assert again.routed_ad == res.routed_ad and again.note.startswith("13.0 is routed already (copy 79.0)")


class _NoTableEngine(FeedBase):
    """What replay and watch offer: job ads from the recording / the followed log, no router."""

    def __init__(self, ads):
        self.ads = ads

    def job_ad(self, job):
        return self.ads.get(job, {})


class _Runtime:
    def __init__(self, engine):
        self.feed = engine

    def query(self, fn, timeout=None):
        return fn(self.feed)


IDLE = {"ClusterId": "500", "ProcId": "0", "JobStatus": "1", "JobUniverse": "5", "VO": '"cms"',
        "RequestMemory": "2000", "Owner": '"alice"', "QDate": "1795219200", "Cmd": '"/bin/true"'}


def test_without_an_engine_table_the_snapshots_config_is_used_and_matches_the_cli():
    """Replay and watch have no router: the table comes from the snapshot's config files, and an
    idle job goes through the same dry run as ``routedeck route --trace`` (same blocks, same ad)."""
    rt = _Runtime(_NoTableEngine({"500.0": IDLE}))
    res = trace_job(rt, "500.0", 1_795_220_000.0, (DEMO_CONFIG,))
    assert res.route == "CMS_T2" and "condor_config" in res.table_from
    [cli] = route_jobs(load_routing_table(Config.load([DEMO_CONFIG])), [IDLE], 1_795_220_000.0, trace=True)
    assert [b.to_json() for b in res.blocks] == [b.to_json() for b in cli["trace"]]
    assert res.routed_ad == cli["routed_ad"]
    with pytest.raises(LookupError, match="no job 9.9"):
        trace_job(rt, "9.9", 0.0, (DEMO_CONFIG,))
    with pytest.raises(LookupError, match="no routing table"):
        trace_job(rt, "500.0", 0.0, ())


def test_render_marks_each_kind_of_change():
    rt = _Runtime(_NoTableEngine({"500.0": IDLE}))
    text = render_trace(trace_job(rt, "500.0", 1_795_220_000.0, (DEMO_CONFIG,))).plain
    assert "▸ pre-route transform Base" in text
    assert "JOB_ROUTER_TRANSFORM_Base · sample_configs/demo/condor_config:30" in text
    assert "condor_config:34 SET RemoteVO \"$(MY.VO)\"" in text
    assert "+ RemoteVO = \"cms\"" in text
    assert "~ JobUniverse: 5 → 9" in text
    assert "- ClusterId (was 500)" in text  # VanillaToGrid folded: its first changes, then a count
    assert "+ Remote_JobUniverse = 5" not in text and "more changes (x shows all)" in text
    full = render_trace(trace_job(rt, "500.0", 1_795_220_000.0, (DEMO_CONFIG,)), expand=True).plain
    assert "+ Remote_JobUniverse = 5" in full and "more changes" not in full


@pytest.mark.slow
@pytest.mark.anyio
async def test_t_from_jobs_and_why_not_and_the_trace_command():
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _ready(pilot)
        await pilot.press("j")
        await wait_until(pilot, lambda: bool(pilot.app.screen.query("#jobs")) and len(pilot.app.screen.table.model) > 0)
        job = app.screen.table.selected.job  # the first job: a completed one no route takes
        await pilot.press("t")
        await wait_until(pilot, lambda: _traced(pilot))
        assert app.screen.job == job and app.screen.error is None
        assert app.screen.result.route is None and app.screen.result.blocks == []
        assert "no routed ad is built" in render_trace(app.screen.result).plain
        await pilot.press("escape")
        await pilot.press("enter")  # the job's ad, then t
        await wait_until(pilot, lambda: getattr(app.screen, "lines", None) is not None)
        await pilot.press("t")
        await wait_until(pilot, lambda: _traced(pilot))
        assert app.screen.job == job
        await pilot.press("escape")
        await pilot.press("w")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "WhyNotScreen")
        await pilot.press("t")
        await wait_until(pilot, lambda: _traced(pilot))
        assert app.screen.job == job
        await pilot.press("escape")
        await pilot.press("colon", *"trace 79.0", "enter")
        await wait_until(pilot, lambda: _traced(pilot))
        res = app.screen.result
        assert res is not None and res.route == "CMS_T2" and _steps(res) == PIPELINE
        box = app.screen.query_one("#trace-box")
        assert box.max_scroll_y > 0  # longer than 80x24: it scrolls
        await pilot.press("end")
        await pilot.pause()
        assert box.scroll_y > 0
        folded = box.max_scroll_y
        await pilot.press("x")  # unfold VanillaToGrid: longer
        await pilot.pause()
        assert app.screen.expand and box.max_scroll_y > folded


@pytest.mark.parametrize("size", [(80, 24), (132, 40)], ids=["80x24", "132x40"])
def test_trace_screen_looks(snap_compare, size):
    """The Trace screen of routed copy 79.0 (source 13.0 on CMS_T2) at 80×24 and 132×40."""
    async def run_before(pilot):
        await _ready(pilot)
        await pilot.press("colon", *"trace 79.0", "enter")
        await wait_until(pilot, lambda: _traced(pilot))
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=size, run_before=run_before)


def _replay_args(**kw):
    base = dict(log="sample_configs/recordings/demo-3h.job_queue.log", at="end", transaction=None, json=False,
                jobs=False, speed=1.0, config=[DEMO_CONFIG], reroute=False, tz="UTC", seed=1, sites=None)
    base.update(kw)
    return argparse.Namespace(**base)


@pytest.mark.slow
@pytest.mark.anyio
async def test_trace_in_replay_uses_the_recorded_job_and_the_config():
    """Replay has no router: ``:trace`` of a recorded routed copy traces its recorded source job
    through the table of ``--config`` (the snapshot's config files), on the copy's route."""
    runtime = replay_runtime(replay_options(_replay_args()))
    app = make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and any(r.kind == "routed" for r in app.snapshot.jobs),
                         timeout=20)
        copy = next(r for r in app.snapshot.jobs if r.kind == "routed" and r.routed_from)
        await pilot.press("colon", *f"trace {copy.job}", "enter")
        await wait_until(pilot, lambda: _traced(pilot), timeout=20)
        res = app.screen.result
        assert app.screen.error is None and res is not None
        assert res.job == copy.routed_from and res.route == copy.route
        assert "condor_config" in res.table_from
        assert [b.step for b in res.blocks] == ["VanillaToGrid", "pre-route transform", "route", "router attributes"]
        assert res.routed_ad["RoutedFromJobId"] == f'"{copy.routed_from}"'


@pytest.mark.slow
@pytest.mark.anyio
async def test_trace_in_watch_follows_the_live_log(tmp_path):
    """Watch has no router either: a job the schedd wrote to the followed log is traced through
    the table of the watched config; one idle CMS job takes CMS_T2 (the demo table's first route
    whose REQUIREMENTS match, htcondor.md §1.4)."""
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, 1_795_300_000.0)
    with q.transaction(now=1_795_300_001.0) as t:
        c = t.new_cluster()
        p = t.new_proc(c)
        for k, v in {"Owner": '"alice"', "JobUniverse": "5", "VO": '"cms"', "RequestMemory": "2000",
                     "JobStatus": "1", "ProcId": "0", "Cmd": '"/bin/true"'}.items():
            t.set_attribute(p, k, v)
    job = f"{c}.0"
    args = WatchOptions(queue_log=str(log), config=(str(ROOT / DEMO_CONFIG),), router_log=None, tz="UTC",
                        slow_poll=60.0)
    runtime = watch_runtime(args)
    app = make_app(runtime, mode="watch", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(80, 24)) as pilot:
        runtime.send(WakeUp())
        await wait_until(pilot, lambda: app.snapshot is not None and any(r.job == job for r in app.snapshot.jobs))
        await pilot.press("colon", *f"trace {job}", "enter")
        await wait_until(pilot, lambda: _traced(pilot), timeout=20)
        res = app.screen.result
        assert app.screen.error is None and res.job == job and res.route == "CMS_T2"
        assert _steps(res) == PIPELINE
