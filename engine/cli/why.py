"""``routedeck why LOG --config CFG [--at TIME] [--job ID] [--json]``: why each idle source job waits
(engine.router.ledger) at a moment of a recorded queue, and when the schedd's periodic policy holds it.

The log, the moment and the table are read as ``routedeck replay`` reads them (engine.launch.replay's
index_of / moment / make_player). Exit status (README "Every command"): 0 done; 1 the schedd would refuse the log, the config has errors or a system policy
does not parse (each named on stderr); 2 usage, an unreadable log or a moment outside it.
"""

from __future__ import annotations

import argparse
import sys

from engine.cli import args as argcheck
from engine.cli.jsonout import emit
from engine.clock import duration
from engine.cli.replay import log_status, options
from engine.feeds.replay.moment import FORMS, MomentError, format_moment


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "why", help="why each idle source job waits, and when it is held",
        description="Why each idle source job of a recorded queue waits at a moment (matched, no_match, "
                    "route_full, throttled or not_candidate, with every route's verdict) and when the "
                    "schedd's periodic policy holds it; reports system policies that do not parse.")
    argcheck.add_log_argument(p, "a recorded job_queue.log")
    p.add_argument("--at", metavar="TIME", help=f"moment: {FORMS}")
    p.add_argument("--job", metavar="ID", help="only this job, with every route's detail")
    p.add_argument("--json", action="store_true", help="one JSON line")
    p.add_argument("--tz", type=argcheck.zone, help="time zone of naive --at times")
    argcheck.add_config_argument(p, "HTCondor config file with the routing table and the periodic policy")
    p.set_defaults(func=run, transaction=None, speed=1.0)


def run(args: argparse.Namespace) -> int:
    from engine.lang.user_policy import policy_checks  # noqa: PLC0415
    from engine.feeds.replay.why import replay_ledger  # noqa: PLC0415
    from engine.contract.commands import Seek  # noqa: PLC0415 - kept off every command's start-up
    from engine.feeds.replay.player import ReplayError  # noqa: PLC0415 - kept off every command's start-up
    from engine.launch.replay import (  # noqa: PLC0415 - kept off every command's start-up
        NotARecording, check_recording, index_of, load_routing, make_player, moment)

    try:
        args.log = argcheck.log_of(args, "why", readable=True)
    except argcheck.UsageError as exc:
        return argcheck.usage_error("why", exc)
    if not args.config:
        return argcheck.usage_error("why", "give --config (the routing table and the periodic policy)")
    for c in args.config:
        bad = argcheck.unreadable(c)
        if bad:
            return argcheck.usage_error("why", bad)
    try:
        index, archive = index_of(args.log, args.tz)
        empty = check_recording(index, args.log)
        start, end = (index.times[0], index.times[-1]) if empty is None else (index.creation_timestamp or 0.0,) * 2
        target = moment(options(args), start, end, index.steps)
        loaded = load_routing(args.config)
        player, errors = make_player(index, options(args), loaded=loaded)
        if empty is None:
            target = target or Seek(time=end)
            player.move(step=target.transaction, time=target.time)  # the queue only: no snapshot to settle
    except OSError as exc:
        print(f"routedeck why: cannot read {args.log}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except (NotARecording, MomentError, ReplayError, ValueError) as exc:
        print(f"routedeck why: {exc}", file=sys.stderr)
        return 2
    if empty is not None and index.records:
        print(f"routedeck why: {empty}", file=sys.stderr)
    status_of_log = 0 if archive is not None else log_status(args.log, "why", index=index)
    cfg, table = loaded.config, loaded.table
    now = player.time()
    entries = replay_ledger(player, table, cfg.get, [args.job] if args.job else None)
    checks = policy_checks(cfg.get)
    for e in errors:
        print(e, file=sys.stderr)
    for c in checks:
        if not c.parses:
            print(f"{c.knob}: {c.note}", file=sys.stderr)
    status = argcheck.worst(status_of_log, argcheck.config_status(errors), 1 if any(not c.parses for c in checks) else 0)
    if args.json:
        emit({"time": now, "jobs": [e.to_json() for e in entries],
              "policies": [{"knob": c.knob, "parses": c.parses, "note": c.note} for c in checks]})
        return status
    print(f"{len(entries)} idle source jobs at {format_moment(now, args.tz)}")
    print(f"{'JOB':<10} {'VERDICT':<14} {'HOLD IN':>9}  DETAIL")
    for e in entries:
        hold = duration(e.hold["in"]) if e.hold else "-"
        print(f"{e.job:<10} {e.verdict:<14} {hold:>9}  {e.detail}")
        if args.job:
            for r in e.routes:
                print(f"    {r['route']:<24} {r['verdict']:<12} {r['detail']}")
            if e.hold:
                print(f"    {e.hold.get('action', 'hold')} at {format_moment(e.hold['at'], args.tz)} "
                      f"by {e.hold['policy']}: {e.hold['reason']}")
    return status
