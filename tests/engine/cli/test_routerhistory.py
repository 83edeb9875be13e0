"""routedeck router-history: condor_router_history's selection and table (htcondor.md §1.9;
src/condor_job_router/condor_router_history)."""

import subprocess
import sys

from tests.helpers.paths import REPO
from engine.schedd.history import HistoryWriter

ROOT = REPO
NOW = 1_795_300_000  # 2026-11-21 22:26:40 UTC


def _history(path):
    w = HistoryWriter(path)
    def job(c, route, status, wall, done, key="RouteName"):
        a = {"ClusterId": str(c), "ProcId": "0", "JobStatus": str(status), "RemoteWallClockTime": f"{wall}.0",
             "CompletionDate": str(done), "Owner": '"u"'}
        if route:
            a[key] = f'"{route}"'
        w.append(a)
    job(1, "Site_A", 4, 7200, NOW - 100)
    job(2, "Site_A", 4, 3600, NOW - 200)
    job(3, "Site_B", 4, 18000, NOW - 300)
    job(4, "Site_B", 3, 600, NOW - 400)       # removed: counted as "Aborted"
    job(5, "Site_C", 3, 60, NOW - 500)        # no completed jobs at all
    job(6, None, 4, 9999, NOW - 100)          # not routed: ignored
    job(7, "Site_A", 4, 3600, NOW - 3 * 86400)  # before the default 1-day period
    job(8, "Legacy", 4, 1800, NOW - 50, key="RoutedFromRoute")


def _run(path, *args):
    return subprocess.run([sys.executable, "-m", "tui.cli", "router-history", "--history", str(path),
                           "--now", str(NOW), "--tz", "UTC", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


def test_summary_table(tmp_path):
    _history(tmp_path / "history")
    out = _run(tmp_path / "history")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "Routed job history from 2026-11-20 22:26 to 2026-11-21 22:26",
        "",
        "Site            Hours    Jobs    Runs",
        "                      Completed Aborted",
        "-" * 55,
        "Site_B              5       1     1",
        "Site_A              3       2     0",
        "Legacy              0       1     0",   # round(0.5) == 0 in Python 3
        "Site_C              0       0     1",
        "-" * 55,
        "TOTAL               8       4     2",
    ]


def test_show_records_replaces_the_summary_and_days(tmp_path):
    _history(tmp_path / "history")
    out = _run(tmp_path / "history", "--show-records", "--days", "4")
    lines = out.stdout.splitlines()
    assert lines[2] == "JobID Status Site Runtime "
    assert "7.0 C Site_A 3600 " in lines and "4.0 X Site_B 600 " in lines
    assert not any(line.startswith("TOTAL") for line in lines)


def test_start_option_and_directory(tmp_path):
    _history(tmp_path / "history.20261121")
    out = _run(tmp_path, "--start", "2026-11-21 22:20")
    assert out.stdout.splitlines()[0] == "Routed job history from 2026-11-21 22:20 to 2026-11-21 22:26"
    # 22:20 .. 22:26:40: jobs 1, 2, 3, 8 completed (8.5 h -> 8), job 4 removed; job 5 is older
    assert out.stdout.splitlines()[-1] == "TOTAL               8       4     1"
    bad = _run(tmp_path, "--start", "yesterday")
    assert bad.returncode == 1 and "YYYY-MM-DD HH:MM" in bad.stderr


def test_non_finite_numbers_are_usage_errors(tmp_path):
    _history(tmp_path / "history")
    out = _run(tmp_path / "history", "--days", "nan")
    assert out.returncode == 2 and "finite" in out.stderr
