"""``routedeck check CONFIG…``: load HTCondor config files and lint the routing table.

Prints every config problem and routing-table diagnostic as ``file:line: level: message``
(the config reader's errors and warnings first, then the table's), then a summary of the
table: enabled routes in match order with their limits, disabled routes with the reason,
pre/post-route transforms. Exit status 1 when there is any error, else 0 (warnings and infos
do not fail the check); 2 when a CONFIG file cannot be read (one line on stderr, nothing on
stdout). The schedd's ``SYSTEM_PERIODIC_HOLD``/``_RELEASE``/``_REMOVE`` (and their ``_NAMES``
lists) are checked too: one that does not parse is an error, since the schedd never fires it.
``JOB_ROUTER_ENTRIES_CMD`` runs only with ``--allow-cmd``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from engine.cli import args as argcheck

if TYPE_CHECKING:  # annotations only; the config reader is imported when a command reads one (not by every parser)
    from engine.lang.config import Config
    from engine.router.table import Diagnostic, RoutingTable

LEVEL_ORDER = {"error": 0, "warning": 1, "info": 2}


def register(subparsers) -> None:
    p = subparsers.add_parser("check", help="load and lint a Job Router routing table (both syntaxes)",
                              description=argcheck.help_text(__doc__, 0) + " " + argcheck.help_text(__doc__, 1))
    p.add_argument("configs", nargs="+", metavar="CONFIG", type=argcheck.path, help="HTCondor config files, read in this order")
    p.add_argument("--allow-cmd", action="store_true", help="run JOB_ROUTER_ENTRIES_CMD (off by default)")
    p.add_argument("-q", "--quiet", action="store_true", help="do not print info-level diagnostics")
    p.set_defaults(func=run)


def describe(table: RoutingTable, out: TextIO) -> None:
    state = "enabled" if table.routing_enabled else "DISABLED"
    out.write(f"routing {state}; router name {table.knobs.name}")
    if table.knobs.source_job_constraint:
        out.write(f"; source constraint: {table.knobs.source_job_constraint}")
    out.write("\n")
    if table.pre_transforms:
        out.write("pre-route transforms: " + ", ".join(t.name for t in table.pre_transforms) + "\n")
    if table.post_transforms:
        out.write("post-route transforms: " + ", ".join(t.name for t in table.post_transforms) + "\n")
    out.write(f"{len(table.routes)} route(s) in match order:\n")
    for i, r in enumerate(table.routes, 1):
        grid = f" GridResource={r.grid_resource}" if r.grid_resource else ""
        out.write(f"  {i}. {r.name} [{r.syntax}, {r.source_label}] universe {r.target_universe}{grid}; "
                  f"MaxJobs {r.max_jobs}, MaxIdleJobs {r.max_idle_jobs}; "
                  f"REQUIREMENTS {r.requirements or '(none)'}\n")
    for d in table.disabled:
        out.write(f"  -  {d.name} [{d.source_label}] disabled: {d.reason}\n")


def policy_diagnostics(cfg: Config) -> list[Diagnostic]:
    """The schedd's periodic policies that do not parse (htcondor.md §8): each an error at the
    knob's file and line, saying what the schedd does with it (never fires it, or ignores it)."""
    from engine.lang.user_policy import policy_checks  # noqa: PLC0415 - kept off every command's start-up
    from engine.router.table import Diagnostic  # noqa: PLC0415 - kept off every command's start-up

    out = []
    for c in policy_checks(cfg.get):
        if not c.parses:
            where = cfg.location(c.knob)
            out.append(Diagnostic("error", f"{c.knob} {c.note}", where.file if where else None,
                                  where.line if where else None))
    return out


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    for path in args.configs:
        if why := argcheck.unreadable(path, directory=True):
            return argcheck.usage_error("check", why)
    out = out or sys.stdout
    from engine.router.loader import config_diagnostics, load_config_and_table  # noqa: PLC0415 - kept off every command's start-up

    loaded = load_config_and_table(args.configs, allow_cmd=args.allow_cmd)
    cfg, table = loaded.config, loaded.table
    diags = config_diagnostics(cfg) + policy_diagnostics(cfg) + table.diagnostics
    shown = [d for d in diags if not (args.quiet and d.level == "info")]
    for d in shown:
        out.write(f"{d}\n")
    describe(table, out)
    errors = sum(d.level == "error" for d in diags)
    warnings = sum(d.level == "warning" for d in diags)
    out.write(f"{errors} error(s), {warnings} warning(s)\n")
    return 1 if errors else 0
