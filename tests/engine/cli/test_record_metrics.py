"""``routedeck record --metrics HOST:PORT``: the recorder's own figures for Prometheus (issue 28),
the same figures ``routedeck record --status`` gives (engine.record.status), served on loopback
from an ephemeral port, every server stopped."""

from __future__ import annotations

import urllib.request

import pytest

from prometheus_client.parser import text_string_to_metric_families

from engine.cli.record import loop
from engine.clock import ManualClock
from engine.metrics.collector import Latest
from engine.metrics.collector import METRICS
from engine.metrics.record import record_families
from engine.metrics.server import MetricsServer
from engine.record.status import archive_status
from tests.helpers import promtool
from tests.helpers.compaction import ScheddLog
from tests.helpers.paths import REPO
from tui.cli import build_parser, main

DEMO = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"
NOW = 1_800_000_000.0  # after the recording's transactions (2026-11-21)


def args_of(*argv: str):
    return build_parser().parse_args(["record", *argv])


def served(latest: Latest) -> str:
    srv = MetricsServer(("127.0.0.1", 0), latest.get, "ce-rec", record_families)
    latest.listeners.append(srv.published)
    with srv:
        with urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/metrics", timeout=10) as r:
            return r.read().decode()


def values(text: str) -> dict[str, float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            assert s.labels.get("schedd") == "ce-rec", s
            out[s.name] = s.value
    return out


def test_the_recorders_figures_are_its_status(tmp_path):
    schedd = ScheddLog(tmp_path / "job_queue.log", DEMO.read_bytes())
    schedd.advance(300)
    arch = tmp_path / "archive"
    latest = Latest()
    assert loop(str(schedd.path), args_of(str(schedd.path), "--archive", str(arch), "--once"),
                clock=ManualClock(NOW), metrics=latest) == 0
    text = served(latest)
    got = values(text)
    st = archive_status(arch, NOW)
    assert got["routedeck_record_transactions_archived_total"] == st["transactions"] > 250
    assert got["routedeck_record_errors_total"] == 0 and got["routedeck_record_failing"] == 0
    assert got["routedeck_record_archive_segments"] == st["segments"] == 1
    assert got["routedeck_record_archive_size_bytes"] == st["size"]
    assert got["routedeck_record_last_transaction_timestamp_seconds"] == st["newest"]
    assert got["routedeck_record_lag_seconds"] == st["log"]["seconds"] == NOW - st["newest"]
    assert got["routedeck_record_behind_bytes"] == st["log"]["bytes"] == 0
    assert got["routedeck_record_following"] == 1
    assert got["routedeck_record_pending_bytes"] == 0  # --once writes everything it read
    assert {n for n in got if not n.endswith("_created")} <= {n for n in METRICS if n.startswith("routedeck_record_")}
    res = promtool.run("check", "metrics", stdin=text)
    assert res.returncode == 0 and not res.stdout.strip() and not res.stderr.strip(), res.stdout + res.stderr


def test_a_failing_archive_is_counted(tmp_path):
    log = tmp_path / "job_queue.log"
    ScheddLog(log, DEMO.read_bytes()).advance(10)
    arch = tmp_path / "archive"
    arch.write_text("not a directory")
    latest = Latest()
    assert loop(str(log), args_of(str(log), "--archive", str(arch), "--once"), clock=ManualClock(NOW),
                metrics=latest) == 1
    got = values(served(latest))
    assert got["routedeck_record_errors_total"] == 1 and got["routedeck_record_failing"] == 1
    assert "routedeck_record_archive_size_bytes" not in got  # not known: the archive is not open


def test_the_flags(tmp_path, capsys):
    log = tmp_path / "job_queue.log"
    ScheddLog(log, DEMO.read_bytes()).advance(10)
    rc = main(["record", str(log), "--archive", str(tmp_path / "a"), "--once", "--metrics", "127.0.0.1:0",
               "--name", "ce-rec"])
    err = capsys.readouterr().err
    assert rc == 0 and "metrics of schedd 'ce-rec' on http://127.0.0.1:" in err, err
    with pytest.raises(SystemExit) as exc:  # not HOST:PORT: a usage error before anything runs
        main(["record", str(log), "--archive", str(tmp_path / "a"), "--metrics", "nowhere"])
    assert exc.value.code == 2
