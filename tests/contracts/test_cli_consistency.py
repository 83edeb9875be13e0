"""One convention over every ``routedeck`` subcommand (issue 11 item 19, "Must show").

RouteDeck's own command line, not HTCondor behaviour. For every subcommand the parser knows
(so a new command is covered or this test names it): ``--help`` has a description without
reStructuredText markup; a missing input file exits 2 with one line on stderr and nothing on
stdout; ``--json`` output parses, and the snapshot forms of demo, watch and replay have the same
keys and value types (job status as name and code, null — never -1 — for unknown).
"""

from __future__ import annotations

import argparse
import json
import re

import pytest

from tests.helpers.fake_prometheus import FakePrometheus, two_ces
from tests.helpers.paths import TESTS
from tui.cli import build_parser, main
import tui.app
import shutil

MISSING = "/nonexistent/routedeck-test/missing"
LOG = "tests/data/replay/real_job_submission.log"
CONFIG = "sample_configs/demo/condor_config"
HISTORY = "sample_configs/recordings/demo-3h.history"
JOBADS = 'ClusterId = 1\nProcId = 0\nVO = "cms"\nRequestMemory = 2000\nJobUniverse = 5\nJobStatus = 1\n'


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every leaf subcommand ("cron next", …) and its parser."""
    out: dict[str, argparse.ArgumentParser] = {}

    def walk(prefix: str, parser: argparse.ArgumentParser) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out[prefix] = parser
        for action in subs:
            for name, child in action.choices.items():
                walk(f"{prefix} {name}".strip(), child)

    walk("", build_parser())
    return out


# the argv that names a missing input file, per subcommand; None: it reads no file
MISSING_INPUT: dict[str, list[list[str]] | None] = {
    "check": [[MISSING]],
    "convert": [[MISSING]],
    "route": [["--config", MISSING, "--jobads", LOG], ["--config", CONFIG, "--jobads", MISSING]],
    "queue": [[MISSING], ["--queue-log", MISSING]],
    "replay": [[MISSING], [MISSING, "--json"], ["--queue-log", MISSING, "--at", "01:00"],
               [MISSING, "--reroute", "--config", CONFIG]],
    "router-q": [[MISSING], ["--queue-log", MISSING, "-S"]],
    "router-history": [["--history", MISSING]],
    "why": [[MISSING, "--config", CONFIG], [LOG, "--config", MISSING]],
    "watch": [[MISSING, "--once"], ["--queue-log", MISSING, "--json", "--once"], ["--config", MISSING, "--once"]],
    "demo": [["--headless", "--config-dir", MISSING]],
    "fleet": None,  # reads no file (a URL: tests/engine/fleet/test_board.py checks a bad or unreachable one)
    "cron next": None,
    "cron explain": None,
    "hook run": [["MYHOOK", "PREPARE_JOB", "--job", MISSING, "--config", CONFIG]],
    "hook check": [[MISSING]],
    "record": [[MISSING, "--archive", MISSING + "-archive", "--once"], ["--status", MISSING],
               ["--config", MISSING, "--archive", MISSING + "-archive", "--once"]],
}


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own usage errors and --help
        rc = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return rc, out, err


def test_every_subcommand_is_in_the_tables():
    assert set(subcommands()) == set(MISSING_INPUT)


@pytest.mark.parametrize("name", sorted(MISSING_INPUT))
def test_help_has_a_description_without_markup(name, capsys):
    parser = subcommands()[name]
    assert parser.description and len(parser.description) > 20, f"{name} --help has no description"
    rc, out, _ = run(capsys, name.split() + ["--help"])
    assert rc == 0 and parser.description.split()[0] in out
    for markup in ("``", ":mod:`", ":func:`", ":class:`", ":meth:`"):
        assert markup not in out, f"{name} --help shows {markup!r}"


@pytest.mark.parametrize("name, argv", [(n, a) for n, argvs in sorted(MISSING_INPUT.items()) if argvs for a in argvs])
def test_missing_input_file_exits_2_with_one_line(name, argv, capsys):
    rc, out, err = run(capsys, name.split() + argv)
    assert rc == 2, (rc, err)
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"routedeck {name}: ") and MISSING.split("/")[1] in err


def test_usage_errors_are_one_line_too(capsys):
    for argv in (["queue"], ["queue", LOG, "--queue-log", CONFIG], ["cron", "next", "*/15 * *"],
                 ["replay", LOG, "--at", "yesterday"], ["replay", LOG, "--transaction", "99"]):
        rc, out, err = run(capsys, argv)
        assert (rc, out) == (2, "") and err.count("\n") == 1, (argv, err)


def _json_docs(text: str) -> list:
    text = text.strip()
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines()]  # JSON Lines


def test_every_json_option_prints_json(capsys, tmp_path, request):
    fake = FakePrometheus(*two_ces()).__enter__()  # fleet reads a Prometheus: a fake one on loopback
    request.addfinalizer(lambda: fake.__exit__(None, None, None))
    ads = tmp_path / "jobs.ads"
    ads.write_text(JOBADS)
    hook = tmp_path / "prepare.sh"  # a PREPARE_JOB hook (seed 004) that adds one attribute
    hook.write_text("#!/bin/sh\ncat >/dev/null\necho 'Prepared = true'\n")
    hook.chmod(0o755)
    hook_conf = tmp_path / "hook.conf"
    hook_conf.write_text(f"MYHOOK_HOOK_PREPARE_JOB = {hook}\n")
    runs = {
        "replay": [LOG, "--json", "--jobs"],
        "watch": [LOG, "--once", "--json", "--jobs"],
        "demo": ["--headless", "--max-speed", "--duration", "120", "--json"],
        "queue": [LOG, "--json"],
        "route": ["--config", CONFIG, "--jobads", str(ads), "--json"],
        "cron next": ["*/15 * * * *", "--json", "--after", "1795219200", "--tz", "UTC"],
        "cron explain": ["*/15 * * * *", "--json"],
        "hook check": [CONFIG, "--json"],
        "record": [LOG, "--archive", str(tmp_path / "archive"), "--once", "--json"],
        "why": [LOG, "--config", CONFIG, "--json"],
        "hook run": ["MYHOOK", "PREPARE_JOB", "--job", str(ads), "--config", str(hook_conf), "--json",
                     "--allow-hooks"],
        "fleet": ["--prometheus", fake.url, "--once", "--json"],
    }
    with_json = {n for n, p in subcommands().items() if any("--json" in a.option_strings for a in p._actions)}
    assert with_json == set(runs)
    docs = {}
    for name, argv in runs.items():
        rc, out, err = run(capsys, name.split() + argv)
        assert rc == 0, (name, err)
        docs[name] = _json_docs(out)
    rc, out, _ = run(capsys, ["queue", LOG, "--json", "--jobs"])
    docs["queue --jobs"] = _json_docs(out)
    snapshots = {m: docs[m][-1] for m in ("replay", "watch", "demo")}
    common = {"time", "mode", "routes", "queue", "cron_jobs", "events", "total_jobs", "slots", "hooks"}
    for mode, snap in snapshots.items():
        assert common <= set(snap), mode
        # the execute node's rows (engine/views/execute.py): empty lists where the feed has none
        assert isinstance(snap["slots"], list) and isinstance(snap["hooks"], list), mode
        assert mode == "demo" or snap["slots"] == snap["hooks"] == [], mode
        assert mode == "demo" or isinstance(snap["problems"], list), mode
        assert isinstance(snap["total_jobs"], int)
    route_keys = {frozenset(r) for s in snapshots.values() for r in s["routes"]} - {frozenset()}
    assert len({k - {"router_log"} for k in route_keys}) == 1  # one route form in every mode
    demo_routes = snapshots["demo"]["routes"]
    assert demo_routes and all(isinstance(r["max_jobs"], int) for r in demo_routes)
    # a job: the same keys everywhere, status by name and by code
    rows = docs["replay"][0]["jobs"] + docs["watch"][0]["jobs"] + docs["queue --jobs"][0]["jobs"]
    assert rows and {frozenset(r) for r in rows} == {frozenset(
        {"job", "status", "status_code", "owner", "kind", "route", "routed_to", "routed_from"})}
    assert {(r["status"], r["status_code"]) for r in rows} == {("Held", 5)}


@pytest.mark.slow
def test_no_minus_one_for_unknown_in_json(capsys):
    """A replay without --config does not know the routes' limits: null, not -1."""
    rc, out, _ = run(capsys, ["replay", "sample_configs/recordings/demo-3h.job_queue.log", "--at", "01:30",
                              "--tz", "UTC", "--json"])
    doc = json.loads(out)
    assert rc == 0 and doc["routes"]
    assert all(r["max_jobs"] is None and r["max_idle"] is None for r in doc["routes"])

    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                assert not (x == -1 and k not in ("line",)), k
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(doc)


def test_the_log_argument_is_spelled_the_same_everywhere(capsys):
    """``LOG`` positional in queue, router-q, watch and replay, ``--queue-log LOG`` its alias in each."""
    for cmd, extra in (("queue", ["--json"]), ("router-q", ["-S"]), ("watch", ["--once", "--json"]),
                       ("replay", ["--json"])):
        rc_a, out_a, _ = run(capsys, [cmd, LOG] + extra)
        rc_b, out_b, _ = run(capsys, [cmd, "--queue-log", LOG] + extra)
        assert rc_a == rc_b == 0, cmd
        if cmd == "watch":  # its snapshot carries the wall-clock time of the reading
            out_a, out_b = (json.dumps({k: v for k, v in json.loads(o).items() if k != "time"}) for o in (out_a, out_b))
        assert out_a == out_b, cmd


# ------------------------------------------------------------------ what the input decides
# One rule for every command (engine.cli.args "What the input decides", issue 25 item 5): a table
# of logs and configs, each run through every command that reads one; the exit status is the
# same in all of them.

def _log(*records: str) -> bytes:
    return "".join(r + "\n" for r in records).encode()


_SUBMIT = ("105 ", "101 01.-1 Job Machine", '103 01.-1 Owner "alice"', "101 1.0 Job Machine",
           "103 1.0 JobStatus 1", "106 ")
GARBAGE = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))

# name: (bytes, exit status, jobs shown). Sources: src/condor_utils/classad_log.cpp LoadClassAdLog
# (no record read, ``!count``: a fresh 107, an empty queue; log.cpp LogRecord::readword gives up
# at a newline with no word before it, so blank lines are no record); htcondor.md §3.3 (a torn
# last line or an unfinished last transaction is discarded and the schedd starts; a corrupt
# record inside a committed transaction makes it EXCEPT), §3.4 (a brand-new log is its 107),
# §3.5 (the follower asserts where a 106 follows a corrupt record).
LOGS: dict[str, tuple[bytes, int, int]] = {
    "empty": (b"", 0, 0),
    "blank lines": (b"\n\n  \n\t\n", 0, 0),
    "blank CRLF lines": (b"\r\n \r\n", 0, 0),
    "just its 107": (_log("107 1 CreationTimestamp 1736935000"), 0, 0),
    "one job": (_log("107 1 CreationTimestamp 1736935000", *_SUBMIT), 0, 1),
    "a torn last line": (_log("107 1 CreationTimestamp 1736935000", *_SUBMIT) + b"105 \n101 2.0 Jo", 0, 1),
    "corrupt inside a committed transaction": (
        _log("107 1 CreationTimestamp 1736935000", *_SUBMIT, "105 ", "101 2.0 Job Machine", "103 2.0 JobStatus",
             "106 "), 1, 1),
    "a 105 without its blank inside a committed transaction": (  # §3.1: "105 " then the newline
        _log("107 1 CreationTimestamp 1736935000", *_SUBMIT, "105", "101 2.0 Job Machine", "106 "), 1, 1),
    "not a log": (GARBAGE, 2, 0),
}


def _jobs_shown(cmd: str, out: str) -> int:
    """How many jobs the command's output shows."""
    if cmd.endswith("--json"):
        return json.loads(out.splitlines()[0] if cmd.startswith("watch") else out)["total_jobs"]
    pattern = {"queue": r": (\d+) jobs \(", "router-q": r"Total for query: (\d+) jobs", "replay --at end": r"jobs: (\d+) ",
               "watch --once": r": (\d+) jobs ", "route --compare --queue-log": r"Summary: (\d+) job\(s\)",
               "record --once": r"the queue holds (\d+) jobs", "why": r"(\d+) idle source jobs at "}[cmd]
    return int(re.search(pattern, out)[1])


# every command that reads a queue log (README "Commands"): its argv for a LOG; router-q counts
# routed copies only, so its LOGS give it a RouteName
LOG_COMMANDS: dict[str, object] = {
    "queue": lambda log: ["queue", log],
    "queue --json": lambda log: ["queue", log, "--json"],
    "router-q": lambda log: ["router-q", log],
    "replay --json": lambda log: ["replay", log, "--json"],
    "replay --at end": lambda log: ["replay", log, "--at", "end"],
    "watch --once": lambda log: ["watch", log, "--once"],
    "watch --once --json": lambda log: ["watch", log, "--once", "--json"],
    "route --compare --queue-log": lambda log: ["route", "--compare", CONFIG, CONFIG, "--queue-log", log],
    "record --once": lambda log: ["record", log, "--archive", log + ".archive", "--once"],
    "why": lambda log: ["why", log, "--config", CONFIG],
}


@pytest.mark.parametrize("name", sorted(LOGS))
@pytest.mark.parametrize("cmd", sorted(LOG_COMMANDS))
def test_a_queue_log_decides_the_same_exit_status_in_every_command(tmp_path, capsys, cmd, name):
    """0 for an empty queue (an empty file, blank lines, a lone 107: 0 jobs, not "not a log"),
    problems HTCondor gets over reported and still 0; 1 for a log the schedd would refuse (the
    output is printed all the same, stderr names the record); 2, one line and nothing on stdout,
    for a file that is not a job queue log."""
    data, status, jobs = LOGS[name]
    if cmd == "router-q":
        data = data.replace(b"103 1.0 JobStatus 1\n", b'103 1.0 JobStatus 1\n103 1.0 RouteName "A"\n')
    log = tmp_path / "job_queue.log"
    log.write_bytes(data)
    rc, out, err = run(capsys, LOG_COMMANDS[cmd](str(log)))
    assert rc == status, (rc, err)
    if status == 2:
        assert out == "" and err.count("\n") == 1 and "not a job queue log" in err and str(log) in err
        return
    assert "Traceback" not in err
    if status == 0 and (cmd != "route --compare --queue-log" or jobs):  # route: source jobs, none in an empty log
        assert _jobs_shown(cmd, out) == jobs, out
    if status == 1:  # the state kept is printed (replay and watch read on past the record, and say so)
        assert _jobs_shown(cmd, out) >= jobs, out
        where = r'"record": ?\d+,[^}]*"severity": ?"fatal"' if cmd == "queue --json" else r"record \d+ \(byte offset \d+\)"
        assert re.search(where, err + out) and "fatal" in err + out, err


@pytest.mark.parametrize("name", sorted(k for k, v in LOGS.items() if v[1] == 0 and v[2] == 0))
def test_replay_of_an_empty_queue_says_there_is_nothing_to_replay(tmp_path, capsys, monkeypatch, name):
    """An operator replaying a log without a committed transaction gets its empty queue in the
    headless forms (transaction 0 of 0; no time when no record gives one: null, never 1970) and
    one line saying there is nothing to replay; the screen is not opened; exit 0."""
    monkeypatch.setattr(tui.app, "make_app", lambda *a, **k: pytest.fail("the screen was opened"))
    log = tmp_path / "job_queue.log"
    log.write_bytes(LOGS[name][0])
    rc, out, err = run(capsys, ["replay", str(log), "--json"])
    doc = json.loads(out)
    assert rc == 0 and (doc["replay"]["transaction"], doc["replay"]["transactions"]) == (0, 0)
    assert doc["time"] == (1736935000 if name == "just its 107" else None)
    assert err.count("\n") == 1 and "nothing to replay" in err and str(log) in err
    rc, out, err = run(capsys, ["replay", str(log)])
    assert (rc, out) == (0, "") and "nothing to replay" in err
    rc, out, err = run(capsys, ["replay", str(log), "--at", "#1"])  # no transaction 1
    assert (rc, out) == (2, "") and err.count("\n") == 1


# a value router-q shows, of the wrong type (condor_router_q's columns, htcondor.md §1.9; types
# as condor_q reads them: JobStatus, QDate, JobPrio integers, ImageSize a number, the rest strings)
BAD_VALUES = [
    ("JobStatus", '"running"', "an integer", False),
    ("RouteName", '{"a", "b"}', "a string", False),
    ("QDate", "soon", "an integer", True),
    ("GridResource", "42", "a string", False),
    ("ImageSize", "lots", "a number", True),
    ("JobPrio", "1.0 +", "an integer", True),
    ("Owner", "alice", "a string", True),
    ("Cmd", "[ a = 1 ]", "a string", True),
]


@pytest.mark.parametrize("attr, text, kind, table_only", BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_router_q_names_a_value_not_of_its_type(tmp_path, capsys, attr, text, kind, table_only):
    """router-q printed ``?`` (or the raw text) and exited 0, or died on ``float('lots')``: each
    bad value is named on stderr (file, job id, attribute, text) and the exit status is 1; the
    table and the summary are printed all the same."""
    extra = [f"103 1.0 {attr} {text}"] if attr != "RouteName" else []
    route = f"103 1.0 RouteName {text}" if attr == "RouteName" else '103 1.0 RouteName "A"'
    log = tmp_path / "job_queue.log"
    log.write_bytes(_log("107 1 CreationTimestamp 1736935000", *_SUBMIT[:-1], route, *extra, "106 "))
    for argv in (["router-q", str(log)], ["router-q", str(log), "-S"]):
        rc, out, err = run(capsys, argv)
        assert "Total for query: 1 jobs" in out or "JOBS ST Route" in out
        if table_only and "-S" in argv:  # the summary does not show it
            assert (rc, err) == (0, ""), err
            continue
        assert rc == 1 and f"{log}: job 1.0: {attr} = {text} is not {kind}" in err, err
        assert "?" in out.splitlines()[1]


def test_queue_names_a_job_status_not_of_its_type(tmp_path, capsys):
    """queue counts by JobStatus and Owner: a value not of its type is counted as "undefined"
    and named on stderr, exit 1 (the rule router-q follows)."""
    log = tmp_path / "job_queue.log"
    log.write_bytes(_log("107 1 CreationTimestamp 1736935000", *_SUBMIT[:-1], '103 1.0 JobStatus "running"', "106 "))
    for extra in ([], ["--json"], ["--jobs"]):
        rc, out, err = run(capsys, ["queue", str(log), *extra])
        assert rc == 1 and f'{log}: job 1.0: JobStatus = "running" is not an integer' in err and out


# broken configs. Sources: htcondor.md §1.3 (a route whose REQUIREMENTS does not parse is left
# out and logged; an @= block cut by the end of the file); config.cpp's "missing '=' or ':'"
# (htcondor.md §8). A readable config with errors is a finding (1) everywhere; an unreadable one
# is 2 (test_missing_input_file_exits_2_with_one_line).
ROUTE_OK = 'JOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=jrt\n  UNIVERSE 5\n  REQUIREMENTS Owner == "alice"\n@jrt\n'
CONFIGS: dict[str, tuple[str, int]] = {
    "good": (ROUTE_OK, 0),
    "a route that does not parse": (ROUTE_OK.replace('Owner == "alice"', 'Owner == ("alice"'), 1),
    "a syntax error": ("this line has no equals sign\n" + ROUTE_OK, 1),
    "an @= block cut by the end": (ROUTE_OK.rsplit("@jrt", 1)[0], 1),
}

CONFIG_COMMANDS: dict[str, object] = {
    "check": lambda cfg, d, ads: ["check", cfg],
    "convert": lambda cfg, d, ads: ["convert", cfg],
    "route": lambda cfg, d, ads: ["route", "--config", cfg, "--jobads", ads],
    "watch --once": lambda cfg, d, ads: ["watch", LOG, "--once", "--config", cfg],
    "replay --json": lambda cfg, d, ads: ["replay", LOG, "--json", "--config", cfg],
    "replay --reroute": lambda cfg, d, ads: ["replay", LOG, "--reroute", "--config", cfg],
    "record --once": lambda cfg, d, ads: ["record", LOG, "--once", "--config", cfg, "--archive", d + "/archive"],
    "why": lambda cfg, d, ads: ["why", LOG, "--config", cfg],
    "demo --headless": lambda cfg, d, ads: ["demo", "--headless", "--max-speed", "--duration", "600",
                                            "--config-dir", d],
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("cmd", sorted(CONFIG_COMMANDS))
def test_a_broken_config_decides_the_same_exit_status_in_every_command(tmp_path, capsys, cmd, name):
    """watch exited 0, demo 2, check and route 1 on the same broken config: 1 in all of them,
    each error named with its file and line on stderr (the demo's table from --config-dir)."""
    text, status = CONFIGS[name]
    d = tmp_path / "conf"
    d.mkdir()
    cfg = d / "condor_config"
    cfg.write_text(text)
    for f in ("sites.toml", "workload.toml"):
        shutil.copy(TESTS / "data" / "demo_small" / f, d / f)
    ads = tmp_path / "jobs.ads"
    ads.write_text(JOBADS)
    rc, out, err = run(capsys, CONFIG_COMMANDS[cmd](str(cfg), str(d), str(ads)))
    assert rc == status, (rc, err)
    assert "Traceback" not in err
    if status:
        assert re.search(r"condor_config:\d+: ", out + err), err


def test_every_log_and_config_command_is_in_the_tables():
    """A new command that reads a queue log or a config joins the tables above."""
    reads_log = {n for n, p in subcommands().items() if any(a.dest in ("log", "queue_log") for a in p._actions)}
    assert reads_log <= {c.split()[0] for c in LOG_COMMANDS}
    reads_config = {n for n, p in subcommands().items()
                    if any(a.dest in ("config", "configs", "config_dir") for a in p._actions)}
    # the hook commands check hook paths, not the routing table (tests/test_hook_cli.py)
    assert reads_config - {"hook run", "hook check"} <= {c.split()[0] for c in CONFIG_COMMANDS}
