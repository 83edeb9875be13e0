"""RouteDeck's own command-line rules (issue 25 item 8, "Smaller ones"): README "Every command":
exit status 0 ok, 1 findings, 2 usage or unreadable input (one line on stderr, nothing on stdout);
``--json`` prints one JSON document per line; a queue log is ``LOG`` wherever one is read; job
status by name and code. These are RouteDeck decisions, not HTCondor behaviour, except where a
test names its HTCondor source.
"""

from __future__ import annotations

import json

import pytest

from tui.cli import main

LOG = "tests/data/replay/real_job_submission.log"
RECORDING = "sample_configs/recordings/demo-3h.job_queue.log"
CONFIG = "sample_configs/demo/condor_config"
JOBADS = 'ClusterId = 1\nProcId = 0\nVO = "cms"\nRequestMemory = 2000\nJobUniverse = 5\nJobStatus = 1\n'


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        rc = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def one_usage_line(rc: int, out: str, err: str, command: str) -> None:
    assert (rc, out) == (2, ""), (rc, out, err)
    assert err.count("\n") == 1 and err.startswith(f"routedeck {command}".rstrip() + ": "), err


# ------------------------------------------------------------------ e. --config does not swallow LOG


def test_config_then_log_takes_log_as_the_positional(capsys):
    """``--config CFG LOG``: LOG is the log (it was swallowed as a second config file)."""
    rc, out, err = run(capsys, ["watch", "--config", CONFIG, LOG, "--once", "--json"])
    assert rc == 0, err
    assert json.loads(out)["queue_log"] == LOG
    rc, out, err = run(capsys, ["replay", "--config", CONFIG, LOG, "--json"])
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["replay"]["log"] == LOG and doc["routes"] is not None


def test_route_config_then_jobads_positional(capsys, tmp_path):
    """``route --config CFG JOBADS`` (product.md §5's form): JOBADS is the job ads."""
    ads = tmp_path / "jobs.ads"
    ads.write_text(JOBADS)
    rc, out, err = run(capsys, ["route", "--config", CONFIG, str(ads), "--json"])
    assert rc == 0, err
    assert [r["job"] for r in json.loads(out)] == ["1.0"]


def test_config_is_repeatable_and_every_file_is_read(capsys, tmp_path):
    """``--config A --config B`` reads A then B (``hook run``'s form; nargs='+' kept only B)."""
    first = tmp_path / "first.conf"
    first.write_text(f"JOB_QUEUE_LOG = {LOG}\n")
    rc, out, err = run(capsys, ["watch", "--config", str(first), "--config", CONFIG, "--once", "--json"])
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["queue_log"] == LOG  # from the first file
    assert doc["routes"] and all(isinstance(r["max_jobs"], int) for r in doc["routes"])  # the second's table


# ------------------------------------------------------------------ f. numeric options


@pytest.mark.parametrize("argv, option", [
    (["demo", "--headless", "--speed", "-5", "--duration", "0"], "--speed"),
    (["demo", "--headless", "--speed", "0", "--duration", "0"], "--speed"),
    (["demo", "--headless", "--speed", "nan", "--duration", "0"], "--speed"),
    (["demo", "--headless", "--speed", "inf", "--duration", "0"], "--speed"),
    (["demo", "--speed", "-5"], "--speed"),  # the screen form too: refused before any screen opens
    (["demo", "--headless", "--duration", "-1"], "--duration"),
    (["demo", "--headless", "--duration", "nan"], "--duration"),
    (["demo", "--headless", "--duration", "0", "--interval", "0"], "--interval"),
    (["demo", "--headless", "--duration", "0", "--interval", "-inf"], "--interval"),
    (["demo", "--headless", "--duration", "0", "--start", "nan"], "--start"),
    (["replay", RECORDING, "--speed", "-5"], "--speed"),
    (["replay", RECORDING, "--speed", "nan", "--at", "end"], "--speed"),
    (["replay", RECORDING, "--transaction", "-3"], "--transaction"),
    (["watch", LOG, "--json", "--count", "1", "--duration", "-1"], "--duration"),
    (["watch", LOG, "--json", "--duration", "1", "--count", "0"], "--count"),
    (["watch", LOG, "--once", "--slow-poll", "-1"], "--slow-poll"),
    (["watch", LOG, "--once", "--slow-poll", "nan"], "--slow-poll"),
])
def test_non_positive_or_non_finite_numbers_are_usage_errors(capsys, argv, option):
    rc, out, err = run(capsys, argv)
    one_usage_line(rc, out, err, argv[0])
    assert option in err


# ------------------------------------------------------------------ g. no command


def test_bare_routedeck_is_a_usage_error(capsys):
    """README: usage → exit 2, one line on stderr, nothing on stdout (``routedeck --help`` lists
    the commands; bare ``routedeck`` printed that help on stdout and exited 0)."""
    rc, out, err = run(capsys, [])
    one_usage_line(rc, out, err, "")
    assert "--help" in err
    for group in ("cron", "hook"):  # a command group without its subcommand: the same rule
        rc, out, err = run(capsys, [group])
        one_usage_line(rc, out, err, group)


# ------------------------------------------------------------------ h. hook run without --allow-hooks


def test_hook_run_without_allow_hooks_is_a_finding_with_its_report(capsys, tmp_path):
    """What would run is the report (stdout), exit 1 (findings: the hook was not run), one line on
    stderr saying why; exit 2 stays for usage errors (nothing on stdout)."""
    marker = tmp_path / "ran"
    hook = tmp_path / "prepare.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    conf = tmp_path / "hook.conf"
    conf.write_text(f"MYHOOK_HOOK_PREPARE_JOB = {hook}\n")
    ads = tmp_path / "job.ad"
    ads.write_text(JOBADS)
    for extra in ([], ["--json"]):
        rc, out, err = run(capsys, ["hook", "run", "MYHOOK", "PREPARE_JOB", "--job", str(ads), "--config", str(conf)]
                           + extra)
        assert rc == 1 and not marker.exists()
        assert str(hook) in out
        assert err.count("\n") == 1 and "--allow-hooks" in err
    assert json.loads(out)["withheld"] is True


# ------------------------------------------------------------------ i. one JSON document per line


def test_every_json_output_is_one_document_per_line(capsys, tmp_path):
    ads = tmp_path / "jobs.ads"
    ads.write_text(JOBADS)
    runs = [
        ["replay", LOG, "--json", "--jobs"],
        ["replay", RECORDING, "--reroute", "--config", CONFIG, "--at", "+600", "--json"],
        ["watch", LOG, "--once", "--json"],
        ["demo", "--headless", "--max-speed", "--duration", "1200", "--json"],
        ["queue", LOG, "--json"],
        ["queue", LOG, "--json", "--jobs"],
        ["queue", LOG, "--json", "--long", "1.0"],
        ["route", "--config", CONFIG, "--jobads", str(ads), "--json"],
        ["route", "--config", CONFIG, "--jobads", str(ads), "--json", "--trace"],
        ["route", "--config", CONFIG, "--jobads", str(ads), "--json", "--compare", CONFIG, CONFIG],
        ["cron", "next", "*/15 * * * *", "--json", "--after", "1795219200", "--tz", "UTC"],
        ["cron", "explain", "*/15 * * * *", "--json"],
        ["hook", "check", CONFIG, "--json"],
    ]
    for argv in runs:
        rc, out, err = run(capsys, argv)
        assert rc in (0, 1), (argv, err)
        lines = out.splitlines()
        assert lines and out.endswith("\n"), argv
        for line in lines:
            json.loads(line)  # every line is a whole document
        if argv[0] == "demo":
            assert len(lines) > 1


# ------------------------------------------------------------------ j. queue --json: status by name and code


def test_queue_json_counts_give_status_by_name_and_code(capsys):
    """README: job status by name and code. Source of the figures: tests/data/replay/
    real_job_submission.log (tests/data/PROVENANCE.md) holds one Held job (5) of bbockelm."""
    rc, out, _ = run(capsys, ["queue", LOG, "--json"])
    doc = json.loads(out)
    assert rc == 0
    assert doc["by_status"] == [{"status": "Held", "status_code": 5, "jobs": 1}]
    assert doc["by_owner"] == [{"owner": "bbockelm", "jobs": 1,
                                "by_status": [{"status": "Held", "status_code": 5, "jobs": 1}]}]


# ------------------------------------------------------------------ d. a job ad without JobStatus


NO_STATUS_LOG = """\
107 1 CreationTimestamp 1736935000
101 0.0 Job Machine
103 0.0 NextClusterNum 1
105 
103 0.0 NextClusterNum 2
101 01.-1 Job Machine
103 01.-1 Owner "alice"
101 1.0 Job Machine
101 1.1 Job Machine
103 1.1 InitialJobStatus 5
101 1.2 Job Machine
103 1.2 JobStatus 2
106 # 2025-01-15T09:56:40.000000
"""


def test_a_job_without_jobstatus_has_the_schedds_status_everywhere(capsys, tmp_path):
    """qmgmt.cpp (HTCondor 7491a145f6, the commit htcondor.md describes), ``InitJobQueue``: a job ad
    whose JobStatus is not an integer gets ``InitialJobStatus``, else IDLE ("job %d.%d has no
    status attribute, setting it to %s"); new proc ads get the same at commit. So 1.0 is Idle and
    1.1 Held in every view — watch showed status 0 and ``queue --follower-rules`` "undefined"."""
    log = tmp_path / "job_queue.log"
    log.write_text(NO_STATUS_LOG)
    want = {"1.0": ("Idle", 1), "1.1": ("Held", 5), "1.2": ("Running", 2)}
    views = {
        "watch": ["watch", str(log), "--once", "--json", "--jobs"],
        "replay": ["replay", str(log), "--json", "--jobs"],
        "queue": ["queue", str(log), "--json", "--jobs"],
        "queue --follower-rules": ["queue", str(log), "--json", "--jobs", "--follower-rules"],
    }
    for name, argv in views.items():
        rc, out, err = run(capsys, argv)
        assert rc == 0, (name, err)
        doc = json.loads(out)
        assert {j["job"]: (j["status"], j["status_code"]) for j in doc["jobs"]} == want, name
        if "queue" in doc:  # the snapshot's counts (watch, replay)
            assert {k: v for k, v in doc["queue"].items() if v} == {"idle": 1, "held": 1, "running": 1}, name
    for rules in ([], ["--follower-rules"]):
        rc, out, _ = run(capsys, ["queue", str(log), "--json"] + rules)
        assert [(c["status_code"], c["jobs"]) for c in json.loads(out)["by_status"]] == [(1, 1), (2, 1), (5, 1)]
