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
