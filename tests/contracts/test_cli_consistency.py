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

import pytest

from tui.cli import build_parser, main

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
    "watch": [[MISSING, "--once"], ["--queue-log", MISSING, "--json", "--once"], ["--config", MISSING, "--once"]],
    "demo": [["--headless", "--config-dir", MISSING]],
    "cron next": None,
    "cron explain": None,
    "hook run": [["MYHOOK", "PREPARE_JOB", "--job", MISSING, "--config", CONFIG]],
    "hook check": [[MISSING]],
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


def test_every_json_option_prints_json(capsys, tmp_path):
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
        "hook run": ["MYHOOK", "PREPARE_JOB", "--job", str(ads), "--config", str(hook_conf), "--json",
                     "--allow-hooks"],
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
