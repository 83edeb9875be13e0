"""``routedeck hook run`` / ``hook check``: the hook workbench (issue 12 item 5).

``hook run KEYWORD HOOK --job FILE [--slot FILE] [--config CONFIG…] --allow-hooks`` runs one hook
as the startd, starter, Job Router or cron manager would: the same path check
(``validateHookPath``), stdin, arguments, environment, timeout and output cap, through the same
code (:mod:`engine.execute.hooks`, :mod:`engine.execute.daemon_cron`, :mod:`engine.router.hooks`), and
prints what HTCondor would do with the result. Without ``--allow-hooks`` it prints what would
run (path, arguments, stdin: the report an operator checks before allowing it) and exits 1, with
one line on stderr saying the hook was not run. KEYWORD ``STARTD_CRON``/``SCHEDD_CRON`` runs a
daemon ClassAd hook job named HOOK. Exit status: 0 the hook ran; 1 it did not (not configured,
its path refused, or withheld without ``--allow-hooks``); 2 usage or an unreadable file (one line
on stderr, nothing on stdout, the rule of every command).

``hook check CONFIG…`` lists the configured hooks of the three families (Job Router, fetch-work
and starter, daemon cron) with the path checks and what is wrong, exit 1 on any error.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from engine.cli import args as argcheck


def register(subparsers) -> None:
    p = subparsers.add_parser("hook", help="run one hook as HTCondor would, or check the configured hooks",
                              description=argcheck.help_text(__doc__, 1))
    sub = p.add_subparsers(dest="hook_command", required=True, metavar="{run,check}")
    r = sub.add_parser("run", help="run one hook exactly as the startd/starter/router/cron would",
                       description=argcheck.help_text(__doc__, 1))
    r.add_argument("keyword", metavar="KEYWORD", help="hook keyword (or STARTD_CRON / SCHEDD_CRON)")
    r.add_argument("hook", metavar="HOOK", help="hook type (FETCH_WORK, PREPARE_JOB, …) or cron job name")
    r.add_argument("--job", metavar="FILE", type=argcheck.path, help="the job ad (old ClassAd syntax)")
    r.add_argument("--slot", metavar="FILE", type=argcheck.path, help="the slot ad (default: the embedded startd's slot1)")
    r.add_argument("--dest", metavar="FILE", type=argcheck.path, help="router hooks: the routed copy's ad")
    r.add_argument("--config", dest="configs", metavar="CONFIG", action="append", type=argcheck.path, default=[],
                   help="HTCondor config file (repeatable)")
    r.add_argument("--router", action="store_true", help="UPDATE_JOB_INFO / JOB_EXIT as the Job Router's hook")
    r.add_argument("--reason", choices=("exit", "hold", "remove", "evict"), default="exit",
                   help="JOB_EXIT's argument (default exit)")
    r.add_argument("--reject", action="store_true", help="REPLY_FETCH: the startd refused the job")
    r.add_argument("--allow-hooks", action="store_true", help="really run the hook program (off by default)")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=run_hook_cmd)
    c = sub.add_parser("check", help="list the configured hooks of all three families with the path checks",
                       description="List the configured hooks of all three families (Job Router, fetch-work and "
                                   "starter, Startd/Schedd Cron) with HTCondor's path checks; exit 1 on problems.")
    c.add_argument("configs", nargs="+", metavar="CONFIG", type=argcheck.path, help="HTCondor config files")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.set_defaults(func=run_check)


def run_hook_cmd(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from engine.cli.hook_work import run_hook_cmd as run  # noqa: PLC0415 - the workbench, off every command's start-up

    return run(args, out)


def run_check(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from engine.cli.hook_work import run_check as run  # noqa: PLC0415 - the workbench, off every command's start-up

    return run(args, out)
