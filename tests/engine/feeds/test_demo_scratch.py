"""A demo killed by a signal leaves its config copy behind; the next demo removes it.

Not HTCondor behaviour: RouteDeck's own housekeeping of ``stage_config``'s scratch copy
(issue 11 item 7 copies the demo's config so edits never land in the checkout).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from engine.feeds import demo, demo_files


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_copies_of_dead_demos_are_removed_live_ones_kept(tmp_path):
    dead = tmp_path / f"{demo_files.SCRATCH_PREFIX}{_dead_pid()}-abc"
    mine = tmp_path / f"{demo_files.SCRATCH_PREFIX}{os.getpid()}-def"
    alive = tmp_path / f"{demo_files.SCRATCH_PREFIX}1-ghi"  # pid 1 is always running
    odd = tmp_path / f"{demo_files.SCRATCH_PREFIX}oldstyle"  # not named by pid: not ours to judge
    for d in (dead, mine, alive, odd):
        d.mkdir()
        (d / "condor_config").write_text("X = 1\n")
    removed = demo_files.remove_stale_scratch(tmp_path)
    assert removed == [dead]
    assert not dead.exists() and mine.exists() and alive.exists() and odd.exists()


def test_stage_config_names_its_copy_by_pid_and_cleans_up_first(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / f"{demo_files.SCRATCH_PREFIX}{_dead_pid()}-x"
    dead.mkdir()
    sim = demo.build_demo(durable=False)
    try:
        copies = list(tmp_path.glob(f"{demo_files.SCRATCH_PREFIX}{os.getpid()}-*"))
        assert len(copies) == 1 and (copies[0] / "condor_config").exists()
        assert not dead.exists()
    finally:
        sim.close()
