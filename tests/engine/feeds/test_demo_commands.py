"""Commands into the demo engine (issue 5 part 3): hold / release / remove / qedit of jobs, and
applying a new routing table in flight (route state kept by name, htcondor.md §1.5 CopyState;
a table with errors is refused and the old one stays)."""

import shutil
from pathlib import Path

import pytest

from engine.contract import commands as C
from engine.feeds.demo import build_demo
from tests.helpers.demo_fixture import ROOT, make_config_dir


@pytest.fixture
def engine(tmp_path):
    cfg = make_config_dir(tmp_path)
    e = build_demo(config_dir=cfg, seed=11, state_dir=tmp_path / "state")
    e.step(e.start + 900)
    yield e
    e.close()


def _job(e, template):
    return next(j for j in e.queue.jobs() if j.get("WorkloadTemplate") == f'"{template}"')


def test_hold_release_remove(engine):
    j = _job(engine, "bigmem").key
    assert engine.handle(C.HoldJob(j, "looking at it")) is None
    assert engine.queue.get(j).status == 5 and engine.queue.get(j).get("HoldReason") == '"looking at it"'
    assert engine.handle(C.HoldJob(j)) is not None  # already held: refused with a reason
    assert engine.handle(C.ReleaseJob(j)) is None and engine.queue.get(j).status == 1
    assert engine.handle(C.RemoveJob(j, "not needed")) is None
    engine.step(engine.now + 10)
    assert engine.queue.get(j) is None  # left the queue through the history file
    assert any(e.kind == "job-removed" and e.job == j for e in engine.events)


def test_qedit_makes_a_job_routable(engine):
    j = _job(engine, "bigmem").key
    assert engine.handle(C.EditJob(j, "RequestMemory", "(")) is not None
    assert engine.handle(C.EditJob(j, "RequestMemory", "2000")) is None
    engine.step(engine.now + 20)  # the next router poll picks it up
    assert engine.queue.get(j) is None or engine.queue.get(j).get("Managed") is not None


def test_apply_routes_in_flight_keeps_route_state(engine, tmp_path):
    before = {r.name: r for r in engine.router.route_views(engine.now)}
    version = engine.table.version
    classad = ROOT / "sample_configs/demo/routes-classad.conf"
    files = (engine.config_files[0], str(classad))
    assert engine.handle(C.ApplyRoutes(files, "switched to ClassAd syntax")) is None
    assert engine.table.version == version + 1 and {r.syntax for r in engine.table.routes} == {"classad"}
    after = {r.name: r for r in engine.router.route_views(engine.now)}
    assert after["BlackHole"].throttle == before["BlackHole"].throttle  # CopyState by route name
    assert any(e.kind == "config-reloaded" for e in engine.events)
    engine.step(engine.now + 600)
    assert any(e.kind == "job-routed" and e.time > engine.now - 600 for e in engine.events)


def test_apply_routes_with_errors_is_refused(engine, tmp_path):
    bad = tmp_path / "bad.conf"
    shutil.copy(engine.config_files[0], bad)
    with open(bad, "a") as f:
        f.write("JOB_ROUTER_ROUTE_NAMES = CMS_T2 Broken\nJOB_ROUTER_ROUTE_Broken @=jrt\n  REQUIREMENTS (\n@jrt\n")
    table = engine.table
    err = engine.handle(C.ApplyRoutes((str(bad),)))
    assert err and engine.table is table


def test_apply_routes_refuses_config_reader_errors_with_file_and_line(engine, tmp_path):
    """A line that is neither a macro definition nor a keyword (`foo bar`) is a syntax error of the
    config language (htcondor.md §1.3: the reader, not the router, rejects it); the table stays
    and the message names file:line."""
    bad = tmp_path / "typo.conf"
    text = Path(engine.config_files[0]).read_text()
    bad.write_text(text + "\nfoo bar\n")
    line = len((text + "\nfoo bar\n").splitlines())
    table, version = engine.table, engine.table.version
    err = engine.handle(C.ApplyRoutes((str(bad),)))
    assert err and f"{bad}:{line}" in err and "foo bar" in err
    assert engine.table is table and engine.table.version == version
    assert engine.config_files != (str(bad),)
