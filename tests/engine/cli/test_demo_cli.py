"""`routedeck demo --headless` on the sample configuration (issue 5 part 5): real-time pacing at
a speed factor gives the same snapshots as a maximum-speed run (snapshots are taken at exact
virtual times), and the state directory is announced and holds the recording."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers.paths import REPO
from engine.cli import demo
from engine.feeds.demo import build_demo

ROOT = REPO


def _demo(*args):
    return subprocess.run([sys.executable, "-m", "tui.cli", "demo", "--headless", "--json", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_paced_run_equals_max_speed_run(tmp_path):
    # 2 real seconds at x30 = 60 virtual seconds, a snapshot every 20: a speed this machine keeps up
    # with (a temporary state directory is not fsynced per commit)
    paced = _demo("--duration", "2", "--speed", "30", "--interval", "20")
    assert paced.returncode == 0, paced.stderr
    assert "keep up" not in paced.stderr
    lines = paced.stdout.splitlines()
    times = [json.loads(line)["time"] for line in lines]
    assert times == [times[0], times[0] + 20, times[0] + 40, times[0] + 60]
    fast = _demo("--max-speed", "--duration", "60", "--interval", "20", "--state-dir", str(tmp_path / "s"))
    assert fast.returncode == 0, fast.stderr
    assert "state directory " + str(tmp_path / "s") in fast.stderr
    assert (tmp_path / "s" / "job_queue.log").stat().st_size > 0  # --state-dir is kept: a recording
    assert fast.stdout.splitlines() == lines
    assert {"time", "mode", "routes", "queue", "cron_jobs", "events", "total_jobs"} <= set(json.loads(lines[-1]))


def test_temporary_state_directory_is_removed():
    """Issue 11 item 17: without --state-dir the run's directory is temporary and removed at the end."""
    out = _demo("--max-speed", "--duration", "60")
    assert out.returncode == 0, out.stderr
    m = re.search(r"state directory (\S+) \(temporary", out.stderr)
    assert m and not Path(m.group(1)).exists()


def test_a_run_that_cannot_keep_up_ends_on_time_and_says_its_speed():
    """Issue 11 item 17: --duration S is S real seconds even when the engine is slower than --speed
    (the stopwatch is a test clock that is past the end at once: no waiting, no timing race)."""
    class Stopwatch:  # 0 when the run starts, then past any deadline
        def __init__(self):
            self.calls = 0

        def now(self):
            self.calls += 1
            return 0.0 if self.calls == 1 else 1000.0

    engine = build_demo(durable=False)
    pace = demo.Pace(wanted_virtual=3600.0)
    try:
        snaps = list(demo.snapshots_paced(engine, engine.now + 3600, 600, 1.0, 5.0, pace, Stopwatch()))
    finally:
        engine.close()
    assert pace.lagged and pace.real == 1000.0 and pace.virtual < 3600
    assert snaps[-1].engine_state == "stopped" and snaps[-1].time < engine.now + 3600
    out = _demo("--duration", "1", "--speed", "100000000")
    assert out.returncode == 0 and "could not keep up with x1e+08" in out.stderr
    report = re.search(r"it covered (\d+) of (\d+) virtual seconds in ([0-9.]+) real seconds \(x(\d+)\)", out.stderr)
    assert report and int(report[1]) < int(report[2]) and float(report[3]) < 3
    assert json.loads(out.stdout.splitlines()[-1])["time"] > json.loads(out.stdout.splitlines()[0])["time"]


def test_bad_config_dir_is_a_clear_error(tmp_path):
    out = _demo("--config-dir", str(tmp_path / "nope"), "--max-speed", "--duration", "10")
    assert out.returncode == 2 and "nope" in out.stderr


def test_non_finite_numbers_are_usage_errors():
    out = _demo("--duration", "nan", "--max-speed")
    assert out.returncode == 2 and "finite" in out.stderr
