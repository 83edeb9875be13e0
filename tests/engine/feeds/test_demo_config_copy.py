"""The demo edits a copy of its configuration in its state directory (issue 11 item 7): editing a
route in ``routedeck demo`` used to write into the checkout's ``sample_configs/demo/condor_config``
(and leave ``.routedeck-backups/`` there), and the next demo silently started from the edit."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from engine.feeds.demo import DemoError, DemoFiles, build_demo, stage_config
from tui.cli import main

ROOT = REPO
DEMO = ROOT / "sample_configs" / "demo"


def test_demo_config_is_copied_into_the_state_dir_and_used_from_there(tmp_path):
    conf = tmp_path / "demo"
    shutil.copytree(DEMO, conf)
    state = tmp_path / "state"
    engine = build_demo(config_dir=conf, state_dir=state)
    copy = state / "config" / "condor_config"
    assert engine.config_files == (str(copy),)
    assert copy.read_text() == (conf / "condor_config").read_text()
    engine.close()


def test_an_edited_copy_is_kept_on_restart_and_the_source_is_untouched(tmp_path):
    conf = tmp_path / "demo"
    shutil.copytree(DEMO, conf)
    state = tmp_path / "state"
    build_demo(config_dir=conf, state_dir=state).close()
    copy = state / "config" / "condor_config"
    edited = copy.read_text().replace("MaxIdleJobs = 20", "MaxIdleJobs = 40", 1)
    assert edited != copy.read_text()
    copy.write_text(edited)
    engine = build_demo(config_dir=conf, state_dir=state)
    assert Path(engine.config_files[0]).read_text() == edited  # this state's table, edit included
    assert "MaxIdleJobs = 40" not in (conf / "condor_config").read_text()
    engine.close()


def test_classad_routes_file_is_copied_too(tmp_path):
    files, scratch = stage_config(DemoFiles.in_dir(DEMO, classad=True), tmp_path / "state")
    assert scratch is None
    assert files.condor_config == tmp_path / "state" / "config" / "condor_config"
    assert files.classad_routes == tmp_path / "state" / "config" / "routes-classad.conf"
    assert files.workload == DEMO / "workload.toml"  # only read: not copied


def test_without_a_state_dir_the_copy_is_temporary_and_removed_with_the_engine():
    engine = build_demo(config_dir=DEMO, state_dir=None)
    copy = Path(engine.config_files[0])
    assert copy.parent != DEMO and copy.exists()
    engine.close()
    del engine
    gc.collect()
    assert not copy.parent.exists()


def test_a_missing_config_names_the_file(tmp_path):
    (tmp_path / "demo").mkdir()
    with pytest.raises(DemoError, match="condor_config"):
        stage_config(DemoFiles.in_dir(tmp_path / "demo"), tmp_path / "state")


# ---------------------------------------------------------------- messages name the user's files (issue 25 item 8a)


def _demo_with(tmp_path, old: str, new: str) -> Path:
    conf = tmp_path / "mine"
    shutil.copytree(DEMO, conf)
    text = (conf / "condor_config").read_text()
    assert old in text
    (conf / "condor_config").write_text(text.replace(old, new, 1))
    return conf


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


@pytest.mark.parametrize("state", ["temporary", "kept"])
def test_diagnostics_of_the_copy_name_the_users_file_and_line(tmp_path, state):
    """A route that does not parse: the config-diagnostic event and the snapshot's diagnostics
    name DIR/condor_config and its line, not the copy (the temporary one is gone after the run)."""
    conf = _demo_with(tmp_path, 'REQUIREMENTS (VO == "cms")', 'REQUIREMENTS (VO == "cms" && (')
    line = _line_of(conf / "condor_config", 'REQUIREMENTS (VO == "cms" && (')
    engine = build_demo(config_dir=conf, state_dir=None if state == "temporary" else tmp_path / "state")
    copy = engine.config_files[0]
    assert copy != str(conf / "condor_config")
    snap = engine.snapshot(1)
    said = [e.message for e in snap.events if e.kind == "config-diagnostic"]
    assert said and all(copy not in m for m in said)
    assert any(m.startswith(f"{conf / 'condor_config'}:{line}: error: ") for m in said)
    bad = [d for d in snap.diagnostics if d.level == "error"]
    assert bad and {(d.file, d.line) for d in bad} == {(str(conf / "condor_config"), line)}
    engine.close()


def test_a_config_error_at_start_names_the_users_file(tmp_path, capsys):
    """The headless demo's refusal names DIR/condor_config:LINE; a config that reads but has errors
    is a finding, exit 1, as in check, route, watch and replay (README, "Every command")."""
    conf = _demo_with(tmp_path, "JOB_ROUTER_ROUTE_NAMES", "this line is not a statement\nJOB_ROUTER_ROUTE_NAMES")
    line = _line_of(conf / "condor_config", "this line is not a statement")
    rc = main(["demo", "--headless", "--duration", "0", "--config-dir", str(conf)])
    out, err = capsys.readouterr()
    assert rc == 1 and out == ""
    assert f"{conf / 'condor_config'}:{line}:" in err and "routedeck-demo" not in err


def test_hook_path_problems_name_the_users_hook(tmp_path):
    """The execute sample's hooks are staged with the config: a refused hook path (world-writable,
    HTCondor's validateHookPath) names the user's program, not the staged copy."""
    conf = tmp_path / "hooks-sample"
    shutil.copytree(ROOT / "sample_configs" / "hooks", conf)
    probe = conf / "hooks" / "probe.sh"
    probe.chmod(0o777)
    engine = build_demo(config_dir=conf, state_dir=None)
    said = [e.message for e in engine.snapshot(1).events if e.kind == "config-diagnostic"]
    assert any(str(probe) in m and "world-writable" in m for m in said), said
    assert not any("routedeck-demo-config-" in m for m in said), said
    engine.close()


def test_an_edited_copy_is_named_as_itself(tmp_path):
    """Once the copy differs from the user's file (a route edited in the demo), its lines are the
    copy's: diagnostics name the copy, where the edit is."""
    conf = tmp_path / "demo"
    shutil.copytree(DEMO, conf)
    state = tmp_path / "state"
    build_demo(config_dir=conf, state_dir=state).close()
    copy = state / "config" / "condor_config"
    copy.write_text("# edited in the demo\n" + copy.read_text().replace(
        'REQUIREMENTS (VO == "cms")', 'REQUIREMENTS (VO == "cms" && (', 1))
    engine = build_demo(config_dir=conf, state_dir=state)
    said = [e.message for e in engine.snapshot(1).events if e.kind == "config-diagnostic"]
    assert any(m.startswith(f"{copy}:") for m in said) and not any(str(conf) in m for m in said)
    engine.close()
