"""``routedeck convert CONFIG…``: print a routing table in the transform syntax.

ClassAd routes (``JOB_ROUTER_DEFAULTS`` + ``JOB_ROUTER_ENTRIES`` / ``_FILE`` / ``_CMD``, removed in
HTCondor 24.10) become ``JOB_ROUTER_ROUTE_<name> @=`` blocks, converted as HTCondor 8.9.7–24.9
converted them on load (htcondor.md §1.2, §6) and named as ``condor_transform_ads -convert:file``
names them: the route's name without the characters a knob name cannot hold (``Analysis Queue`` →
``JOB_ROUTER_ROUTE_AnalysisQueue``, which is then the route's name and its jobs' ``RouteName``;
htcondor.md §8); transform routes are copied; the ``JOB_ROUTER_ROUTE_NAMES`` line keeps the
effective match order. The output loads with
``routedeck check``. Diagnostics go to stderr; exit status 1 when the input had errors, 2 when
a CONFIG file cannot be read or ``--output`` cannot be written (one line on stderr, nothing on
stdout).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from engine.cli import args as argcheck


def register(subparsers) -> None:
    p = subparsers.add_parser("convert", help="ClassAd routing table -> transform syntax (JOB_ROUTER_ROUTE_*)",
                              description=argcheck.help_text(__doc__, 1))
    p.add_argument("configs", nargs="+", metavar="CONFIG", type=argcheck.path, help="HTCondor config files, read in this order")
    p.add_argument("-o", "--output", type=argcheck.path, help="write the converted table here instead of stdout")
    p.add_argument("--allow-cmd", action="store_true", help="run JOB_ROUTER_ENTRIES_CMD (off by default)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    for path in args.configs:
        if why := argcheck.unreadable(path, directory=True):
            return argcheck.usage_error("convert", why)
    out = out or sys.stdout
    err = err or sys.stderr
    from engine.router.convert import convert_classic_table  # noqa: PLC0415 - kept off every command's start-up
    from engine.router.loader import config_diagnostics, load_config_and_table  # noqa: PLC0415 - kept off every command's start-up

    loaded = load_config_and_table(args.configs, allow_cmd=args.allow_cmd)
    cfg, table = loaded.config, loaded.table
    diags = config_diagnostics(cfg) + table.diagnostics
    for d in diags:
        if d.level != "info":
            err.write(f"{d}\n")
    if not any(r.syntax == "classad" for r in table.routes):
        err.write("note: no enabled ClassAd-syntax routes; the table below is already in the transform syntax\n")
    text = convert_classic_table(cfg, table=table)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            err.write(f"routedeck convert: cannot write {args.output}: {exc.strerror}\n")
            return 2
    else:
        out.write(text)
    return 1 if any(d.level == "error" for d in diags) else 0
