"""What ``routedeck``'s start-up imports (issue 27: ``replay DIR --at T --json`` in <= 1 s as a user runs
it, a new process). Every command's parser is built at start-up (tui.cli.build_parser), so a module
an engine/cli command imports at its top is paid by every other command; the engines of the other
commands are imported where they run. A RouteDeck decision, not HTCondor behaviour."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.paths import REPO

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
# unrouted-jobs ledger, the periodic policy checker, and the JobRouterLog parser (a log has none)
NOT_FOR_A_MOMENT = ("engine.views.execute", "engine.execute.startd", "engine.router.unrouted",
                    "engine.router.whynot", "engine.lang.user_policy", "engine.router.routerlog")


def _loaded(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
                         cwd=REPO, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_building_every_commands_parser_imports_no_other_commands_engine():
    loaded = _loaded("from tui.cli import build_parser\nbuild_parser()")
    assert sorted(m for m in NOT_AT_START_UP + REPLAY_ENGINE if m in loaded) == []


def test_replay_at_a_moment_imports_no_other_commands_engine():
    loaded = _loaded("import contextlib, io\nfrom tui.cli import main\n"
                     "with contextlib.redirect_stdout(io.StringIO()):\n"
                     "    assert main(['replay', 'tests/data/replay/real_job_submission.log', '--at', 'end',"
                     " '--tz', 'UTC', '--json']) == 0")
    assert "engine.feeds.replay.player" in loaded
    assert sorted(m for m in NOT_AT_START_UP + NOT_FOR_A_MOMENT if m in loaded) == []
