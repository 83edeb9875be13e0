"""``routedeck cron next`` / ``cron explain`` (the issue's JSON contract), checked with
htcondor.md §2.6 vectors; and the engine's no-clock rule for engine/crondor."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.helpers.paths import REPO
from engine.cli import cron as cron_cmd
from engine.cli.args import Parser

ROOT = REPO


def run_cli(capsys, *argv):
    parser = Parser(prog="routedeck")  # routedeck's parser: one-line usage errors, exit 2
    cron_cmd.register(parser.add_subparsers(dest="command"))
    try:
        args = parser.parse_args(["cron", *argv])
        code = args.func(args)
    except SystemExit as exc:  # a bad option (e.g. --tz) is refused by argparse
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(capsys, *argv):
    code, out, _err = run_cli(capsys, "next", *argv, "--json")
    return code, json.loads(out)


def test_json_contract_and_weekday_defect(capsys):
    """htcondor.md §2.6 #8: Mondays; the schedd picks Jan 31 (day 0), then now + 120."""
    code, data = run_json(capsys, "--minute", "0", "--hour", "0", "--dow", "1",
                          "--after", "2025-01-15T10:00:00+00:00", "--tz", "UTC", "-n", "4")
    assert code == 0
    assert set(data) == {"runs", "schedd_runs", "schedd_fallback", "lints", "error"}
    assert data["runs"] == [1737331200, 1737936000, 1738540800, 1739145600]  # Jan 20, 27, Feb 3, Feb 10
    assert data["schedd_runs"] == [1737331200, 1737936000, 1738281600, 1738281720]  # ..., Jan 31, +120
    assert data["schedd_fallback"] is True and data["error"] is None
    assert all(set(lint) == {"level", "message"} and lint["level"] in ("warning", "error") for lint in data["lints"])
    assert any("2025-01-31 00:00 UTC (Fri)" in lint["message"] for lint in data["lints"])


def test_naive_iso_after_is_in_the_given_zone(capsys):
    """htcondor.md §2.6 #34: America/Chicago, 02:30 on the spring-forward day runs at 03:30 CDT."""
    code, data = run_json(capsys, "--minute", "30", "--hour", "2", "--after", "2025-03-08T12:00",
                          "--tz", "America/Chicago", "-n", "3")
    assert code == 0
    assert data["runs"] == [1741509000, 1741591800, 1741678200] == data["schedd_runs"]
    assert data["schedd_fallback"] is False


def test_epoch_after_and_absent_options(capsys):
    """htcondor.md §2.6 #1/#2: no attribute means every minute; starts round up to the next minute."""
    code, data = run_json(capsys, "--after", "1736937030", "--tz", "UTC", "-n", "2")  # 10:30:30
    assert code == 0 and data["runs"] == [1736937060, 1736937120]


@pytest.mark.parametrize(
    "opts, error",
    [(["--minute", "10-5"], "Invalid cron attribute: 10-5"), (["--minute", "*/0"], ""),
     (["--dow", "MON"], "Invalid parameter value 'MON' for CronDayOfWeek")],
)
def test_invalid_schedule_exits_1_with_htcondors_text(capsys, opts, error):
    """htcondor.md §2.6 "Invalid cases"; '*/0' has an empty text, which is not null."""
    code, data = run_json(capsys, *opts, "--after", "0", "--tz", "UTC")
    assert code == 1 and data["error"] == error and data["runs"] == [] == data["schedd_runs"]


def test_never_firing_schedule_exits_1(capsys):
    code, data = run_json(capsys, "--dom", "30", "--month", "2", "--after", "0", "--tz", "UTC")
    assert code == 1 and data["error"] is None and data["runs"] == []
    assert [lint["level"] for lint in data["lints"]] == ["error"]


@pytest.mark.parametrize("opts", [["--tz", "Nowhere/Else"], ["--after", "yesterday"], ["-n", "0"]])
def test_bad_options_exit_2(capsys, opts):
    argv = ["next", *opts] + ([] if "--after" in opts else ["--after", "0"])
    code, _out, err = run_cli(capsys, *argv)
    assert code == 2 and err.startswith("routedeck cron:")


def test_text_output(capsys):
    code, out, _err = run_cli(capsys, "next", "--minute", "0", "--hour", "9", "--dow", "1-5",
                              "--after", "2025-01-31T10:00:00", "--tz", "UTC", "-n", "2")
    assert code == 0
    assert "Zone: UTC" in out and "2025-02-03 09:00 UTC (Mon)" in out
    assert "2025-01-31 10:02 UTC (Fri) [1738317720] now+120" in out  # §2.6 #11
    assert "warning:" in out


def test_default_after_comes_from_the_system_clock(capsys, monkeypatch):
    class FakeClock:
        def now(self):
            return 1736935200.0

    monkeypatch.setattr(cron_cmd, "SystemClock", FakeClock)
    code, data = run_json(capsys, "--minute", "0", "--tz", "UTC", "-n", "1")
    assert code == 0 and data["runs"] == [1736935200 + 3600]


def test_explain(capsys):
    code, out, _err = run_cli(capsys, "explain", "--minute", "0", "--hour", "0", "--dom", "13", "--dow", "5",
                              "--tz", "UTC", "--after", "0")
    assert code == 0 and "on day 13 of the month or on Friday" in out and "warning:" in out
    code, out, _err = run_cli(capsys, "explain", "--minute", "5/15", "--json", "--after", "0")
    data = json.loads(out)
    assert code == 1 and data["error"] == "Invalid cron attribute: 5/15" and "code 25" in data["text"]


def test_entry_point_wiring():
    proc = subprocess.run([sys.executable, "-m", "tui.cli", "cron", "next", "--after", "0", "--tz", "UTC",
                           "-n", "1", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["runs"] == [60]


def test_crondor_engine_never_reads_the_clock():
    """preamble: nothing in engine/ reads the wall clock; crondor takes now/after as arguments."""
    forbidden = re.compile(r"time\.time\(|datetime\.now\(|date\.today\(|time\.localtime\(|time\.sleep\(|"
                           r"^import time|utcnow\(")
    for path in sorted((ROOT / "engine" / "crondor").glob("*.py")):
        for line in path.read_text().splitlines():
            assert not forbidden.search(line.strip()), f"{path.name}: {line}"
