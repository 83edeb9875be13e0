"""`routedeck demo --headless` on the sample configuration (issue 5 part 5): real-time pacing at
a speed factor gives the same snapshots as a maximum-speed run (snapshots are taken at exact
virtual times), and the state directory is announced and holds the recording."""

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _demo(*args):
    return subprocess.run([sys.executable, "-m", "tui.cli", "demo", "--headless", "--json", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_paced_run_equals_max_speed_run(tmp_path):
    paced = _demo("--duration", "2", "--speed", "600")  # 2 real seconds = 1200 virtual seconds
    assert paced.returncode == 0, paced.stderr
    m = re.search(r"state directory (\S+)", paced.stderr)
    assert m and (Path(m.group(1)) / "job_queue.log").stat().st_size > 0
    lines = paced.stdout.splitlines()
    times = [json.loads(line)["time"] for line in lines]
    assert times == [times[0], times[0] + 600, times[0] + 1200]
    fast = _demo("--max-speed", "--duration", "1200", "--interval", "600", "--state-dir", str(tmp_path / "s"))
    assert fast.returncode == 0, fast.stderr
    assert fast.stdout.splitlines() == lines
    assert {"time", "mode", "routes", "queue", "cron_jobs", "events"} <= set(json.loads(lines[-1]))


def test_bad_config_dir_is_a_clear_error(tmp_path):
    out = _demo("--config-dir", str(tmp_path / "nope"), "--max-speed", "--duration", "10")
    assert out.returncode == 2 and "nope" in out.stderr


def test_non_finite_numbers_are_usage_errors():
    out = _demo("--duration", "nan", "--max-speed")
    assert out.returncode == 2 and "finite" in out.stderr
