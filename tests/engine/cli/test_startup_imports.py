"""What ``routedeck``'s start-up imports (issue 27: ``replay DIR --at T --json`` in <= 1 s as a user runs
it, a new process). ``--help`` builds every command's parser (tui.cli.build_parser), so a module
an engine/cli command imports at its top is paid there by every other command; the engines of the other
commands are imported where they run. A run that names its command builds that command's parser
alone (engine.cli.COMMANDS): it imports no other command's module. A RouteDeck decision, not
HTCondor behaviour."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from engine.cli import COMMANDS
from engine.cli.args import Parser
from tests.helpers.paths import REPO
from tui.cli import build_parser
from tui.shell import launch

# each only for the commands that use it: watch's follower, the demo's files, the recorder and its
# status, the config reader and router loader (check, convert, route, hook), the metrics server
# (prometheus_client, http.server), fleet's HTTP client (urllib.request) and the hook workbench
# (hook run / check: the hooks, the daemon cron managers and the hook runner)
NOT_AT_START_UP = ("engine.feeds.watch.follow", "engine.feeds.watch.setup", "engine.feeds.demo_files",
                   "engine.record.recorder", "engine.record.status", "engine.lang.config", "engine.router.loader",
                   "engine.router.dryrun", "engine.metrics.server", "prometheus_client", "http.server",
                   "engine.fleet.promapi", "urllib.request", "engine.cli.hook_work", "engine.execute.hooks",
                   "engine.execute.daemon_cron", "engine.hookrun")


# the replay engine: imported where a replay runs (engine.cli.replay, why), not by every command's parser;
# nor the archive reader (zstandard, hashlib): record's parser needs only its ArchiveError
REPLAY_ENGINE = ("engine.feeds.replay.player", "engine.launch.replay", "engine.feeds.replay.index",
                 "engine.contract.commands", "engine.record.archive", "zstandard")
# what a moment of a recording does not need (issue 27): the demo's execute node and its hooks, the
# unrouted-jobs ledger, the periodic policy checker, the JobRouterLog parser (a log has none), and
# the ClassAd library while no value needs evaluating (engine.classad imports it on first use)
NOT_FOR_A_MOMENT = ("engine.views.execute", "engine.execute.startd", "engine.router.unrouted",
                    "engine.router.whynot", "engine.lang.user_policy", "engine.router.routerlog",
                    "classad2", "htcondor2")


def _loaded(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
                         cwd=REPO, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_building_every_commands_parser_imports_no_other_commands_engine():
    loaded = _loaded("from tui.cli import build_parser\nbuild_parser()")
    assert sorted(m for m in NOT_AT_START_UP + REPLAY_ENGINE if m in loaded) == []


@pytest.fixture(scope="module")
def replay_at_end_loaded() -> set[str]:
    """The modules a ``replay LOG --at end --json`` run loads (one child process for the two tests)."""
    return _loaded("import contextlib, io\nfrom tui.cli import main\n"
                   "with contextlib.redirect_stdout(io.StringIO()):\n"
                   "    assert main(['replay', 'tests/data/replay/real_job_submission.log', '--at', 'end',"
                   " '--tz', 'UTC', '--json']) == 0")


def test_replay_at_a_moment_imports_no_other_commands_engine(replay_at_end_loaded):
    loaded = replay_at_end_loaded
    assert "engine.feeds.replay.player" in loaded
    assert sorted(m for m in NOT_AT_START_UP + NOT_FOR_A_MOMENT if m in loaded) == []


def _parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def _shape(parser: argparse.ArgumentParser) -> list:
    """A parser as ``--help`` and parsing see it: its texts, and each argument with its sub-parsers'."""
    return [parser.prog, parser.description, [
        (a.option_strings, a.dest, a.nargs, a.default, a.type, a.choices if not isinstance(
            a, argparse._SubParsersAction) else {n: _shape(c) for n, c in a.choices.items()}, a.required, a.help,
         a.metavar) for a in parser._actions], parser._defaults]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_one_commands_parser_is_that_command_of_every_commands_parser(command):
    """``engine.cli.COMMANDS`` names what each module registers; a parser built for one command
    has it alone, the same as in the whole parser (the screen command where there is one)."""
    sub = Parser(prog="routedeck").add_subparsers()
    __import__(COMMANDS[command], fromlist=["register"]).register(sub)
    assert list(sub.choices) == [command]
    one, whole = _parsers(build_parser(command)), _parsers(build_parser())
    assert list(one) == [command]
    assert _shape(one[command]) == _shape(whole[command])
    if command in launch.COMMANDS:
        assert one[command].get_default("func").__module__ == launch.__name__


def test_every_command_is_in_the_table():
    assert sorted(_parsers(build_parser())) == sorted(COMMANDS)


def test_a_run_of_replay_imports_no_other_commands_module(replay_at_end_loaded):
    loaded = replay_at_end_loaded
    assert "engine.cli.replay" in loaded
    assert sorted(m for m in loaded if m in COMMANDS.values() and m != "engine.cli.replay") == []
    assert "engine.crondor.lints" not in loaded  # routedeck cron's lints


@pytest.mark.parametrize("first", ["explain", "Lint", "lint_runs"])
def test_crondors_explanation_and_lints_are_imported_on_first_use_as_the_functions(first):
    """engine.crondor imports them on first use (a moment computes deferrals only); each name is
    then what the eager import made it: ``explain`` the function, not its submodule."""
    loaded = _loaded("import sys\nimport engine.crondor as c\n"
                     "assert 'engine.crondor.explanation' not in sys.modules and 'engine.crondor.lints' not in sys.modules\n"
                     f"getattr(c, {first!r})\n"
                     "E, L = sys.modules['engine.crondor.explanation'], sys.modules['engine.crondor.lints']\n"
                     "assert (c.explain, c.describe, c.format_time) == (E.explain, E.describe, E.format_time)\n"
                     "assert (c.Lint, c.lint_deferral, c.lint_runs, c.lint_schedule) == "
                     "(L.Lint, L.lint_deferral, L.lint_runs, L.lint_schedule)\n"
                     "from engine.crondor import *\nassert explain is E.explain and lint_schedule is L.lint_schedule")
    assert "engine.crondor.lints" in loaded


@pytest.mark.parametrize("submodule_first", [True, False])
def test_crondors_explain_is_the_function_whatever_was_imported_first(submodule_first):
    """Importing a submodule of engine.crondor binds it on the package: none may have the name of a
    function the package's __getattr__ binds (review of s15-at, finding 3), whichever comes first."""
    first = "import engine.crondor.lints\n" if submodule_first else "from engine.crondor import Lint\n"
    _loaded(f"{first}from engine.crondor import explain\n"  # alone: a from-import of several looks each up first
            "import engine.crondor as c\n"
            "assert callable(explain) and explain is c.explain, explain\n"
            "from engine.crondor import describe, format_time\n"
            "assert callable(describe) and callable(format_time)")


def test_a_moment_of_the_demo_recording_evaluates_no_classad():
    """Its cron jobs' schedules are string literals (read as they are, engine.crondor.deferral) and
    its other values plain literals: the moment imports neither classad2 nor htcondor2."""
    loaded = _loaded("import contextlib, io\nfrom tui.cli import main\n"
                     "with contextlib.redirect_stdout(io.StringIO()):\n"
                     "    assert main(['replay', 'sample_configs/recordings/demo-3h.job_queue.log', '--at', '+1h',"
                     " '--tz', 'UTC', '--json']) == 0")
    assert "engine.schedd.cron" in loaded
    assert sorted(m for m in ("classad2", "htcondor2") if m in loaded) == []
