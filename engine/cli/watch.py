"""``routedeck watch``: follow a live schedd, headless (product.md §2 "watch", §5).

``--json`` prints one snapshot per line (JSON Lines) each time the queue or the router log
changes; ``--once`` prints the current state and exits. Waiting is the foundation's watcher
(:func:`engine.queue.filewatch.run_watch`: ``watchfiles`` on the log's directory with a slow-poll
fallback); this module never sleeps, and it reads time only through ``engine.clock``.

If the TUI registers a ``watch`` screen command first, :func:`register` leaves it alone and the
TUI calls :func:`add_arguments` / :func:`run_headless`. The log is ``LOG`` or ``--queue-log LOG``
(as in ``queue`` and ``router-q``), else the config's ``JOB_QUEUE_LOG`` / ``SPOOL``. Exit status
(the rule of every command, engine.cli.args "What the input decides"): 0 done; 1 the log has a
fatal problem (``--once``: where HTCondor's router would assert) or the config has errors (each
named on stderr; watch goes on with the rest of the table); 2 usage, a log, config or router log
that cannot be read or found, or (``--once``) a file that is not a job queue log at all (one
line on stderr, nothing on stdout). An existing but empty log (or one of blank lines) is a live
schedd's that has not written yet, an empty queue: watch waits for it (``--once``: 0 jobs, exit 0).
"""

from __future__ import annotations

import argparse
import sys
import threading
from typing import TYPE_CHECKING

from engine.clock import SystemClock
from engine.cli import args as argcheck
from engine.cli import metrics_opt
from engine.cli.jsonout import emit, snapshot_json
from engine.launch.options import WatchOptions

if TYPE_CHECKING:  # annotations only; the follower is imported when a watch runs (not by every parser)
    from engine.feeds.watch.follow import WatchEngine


def add_arguments(p: argparse.ArgumentParser) -> None:
    argcheck.add_log_argument(p, "the schedd's job_queue.log (default: from the config)", required=False)
    argcheck.add_config_argument(p, "HTCondor config file (default: $CONDOR_CONFIG): routing table, "
                                    "JOB_QUEUE_LOG / SPOOL", metavar="CONDOR_CONFIG")
    p.add_argument("--router-log", metavar="JobRouterLog", type=argcheck.path,
                   help="the router's log: its routing-table lines give the real throttle and recent figures")
    p.add_argument("--readonly", action="store_true", default=True,
                   help="never write anything (the default; edits go only to --edit-file)")
    p.add_argument("--edit-file", metavar="FILE", type=argcheck.path, help="the config file route edits may be written to")
    p.add_argument("--json", action="store_true", help="print a JSON snapshot (one line) each time something changes")
    p.add_argument("--jobs", action="store_true", help="with --json: include every job row")
    p.add_argument("--once", action="store_true", help="print the current state and exit")
    p.add_argument("--duration", type=argcheck.non_negative, metavar="S", help="stop after S seconds")
    p.add_argument("--count", type=argcheck.count, metavar="N", help="stop after N snapshots")
    p.add_argument("--slow-poll", type=argcheck.positive, default=1.0, metavar="S",
                   help="poll at least every S seconds (also the fallback without watchfiles)")
    p.add_argument("--tz", default="UTC", type=argcheck.zone, help="time zone shown with times (IANA name)")
    metrics_opt.add_arguments(p)


def register(subparsers) -> None:
    argcheck.register_headless(subparsers, "watch", "follow a live schedd's job_queue.log (headless: --json/--once)",
                               __doc__, add_arguments, run)


def run(args: argparse.Namespace) -> int:
    return run_headless(args)


def checked(args: argparse.Namespace) -> str | None:
    """Check the files named on the command line; sets ``args.queue_log`` (LOG or --queue-log).
    Returns a one-line usage problem, or None."""
    try:
        args.queue_log = argcheck.log_of(args, "watch")
    except argcheck.UsageError as exc:
        return str(exc)
    for given in ([args.queue_log] if args.queue_log else []) + (
            [args.router_log] if args.router_log else []):
        if why := argcheck.unreadable(given):
            return why
    for given in args.config or []:  # a config may be a directory (read as LOCAL_CONFIG_DIR is)
        if why := argcheck.unreadable(given, directory=True):
            return why
    return None


def options(args: argparse.Namespace) -> WatchOptions:
    """Watch's launch options from its parsed arguments, after :func:`checked` (which sets
    ``args.queue_log``); a caller's own Namespace may leave out the metrics options."""
    return WatchOptions(queue_log=args.queue_log, config=tuple(args.config or ()), router_log=args.router_log,
                        tz=args.tz, slow_poll=args.slow_poll, metrics=getattr(args, "metrics", None),
                        name=getattr(args, "name", None))


def _emit(engine: WatchEngine, seq: int, args: argparse.Namespace) -> None:
    snap = engine.snapshot(seq, with_jobs=args.jobs)
    out = snapshot_json(snap, jobs=args.jobs)
    out["queue_log"] = engine.setup.queue_log
    out["records"] = engine.queue.record_kinds()  # non-job records by kind (25.x: users, jobsets, …)
    out["problems"] = list(engine.problems[-10:])  # always there, as in replay and queue
    if args.json:
        emit(out)
    else:
        print(f"{engine.setup.queue_log}: {snap.total_jobs} jobs  " +
              "  ".join(f"{k} {v}" for k, v in sorted(snap.queue_counts.items())))
        for r in snap.routes:
            real = ""
            if r.reported is not None:
                thr = "none" if r.reported.throttle is None else f"{r.reported.throttle:.2f}/600s"
                real = (f"   router: {r.reported.submitted}/{r.reported.max_jobs} idle {r.reported.idle}"
                        f" throttle {thr} recent {r.reported.recent_started}/{r.reported.recent_succeeded}"
                        f"/{r.reported.recent_failed}")
            print(f"  {r.name:24} routed {r.routed:6d} idle {r.idle:6d} running {r.running:6d}{real}")
    sys.stdout.flush()


def _written_verdict(path: str) -> tuple[int, str | None]:
    """The verdict on a log the follower read no record of (engine.cli.args.log_verdict), on its
    complete lines only: a last line without its newline is still being written (htcondor.md §3.5:
    the follower reads it again at the next poll), so a file that has none yet is waited for."""
    from engine.queue.reader import load_bytes  # noqa: PLC0415

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return argcheck.USAGE, f"cannot read {path}: {exc.strerror or exc}"
    return argcheck.load_verdict(load_bytes(data[: data.rfind(b"\n") + 1], source=path))


def run_headless(args: argparse.Namespace) -> int:
    if problem := checked(args):
        return argcheck.usage_error("watch", problem)
    from engine.feeds.watch.follow import WAITING, WatchEngine  # noqa: PLC0415 - kept off every command's start-up
    from engine.feeds.watch.setup import WatchError, resolve  # noqa: PLC0415 - kept off every command's start-up
    from engine.launch import metrics as launch_metrics  # noqa: PLC0415 - kept off every command's start-up
    from engine.launch.watch import schedd_name  # noqa: PLC0415 - kept off every command's start-up

    try:
        setup = resolve(args.queue_log, args.config, args.router_log)
    except WatchError as exc:
        return argcheck.usage_error("watch", exc)
    for d in setup.diagnostics:
        print(d, file=sys.stderr)
    clock = SystemClock()
    engine = WatchEngine(setup, clock, tz=args.tz, collect_events=False)  # no feed drains them here
    found = argcheck.config_status(setup.diagnostics)
    if args.once:
        result = engine.follower.poll()
        engine.after_poll(result)
        status, why = argcheck.log_verdict(getattr(result, "problems", None) or ())
        if engine.waiting:  # no record yet: an empty queue, unless the file is not a job queue log at all
            status, why = _written_verdict(setup.queue_log)
            if status == argcheck.USAGE:
                return argcheck.usage_error("watch", why)
            print(f"routedeck watch: {setup.queue_log}: {WAITING}", file=sys.stderr)
        if why and not args.json:  # --json carries it in "problems"
            print(f"routedeck watch: {why}", file=sys.stderr)
        _emit(engine, 1, args)
        return argcheck.worst(status, found)
    from engine.queue.filewatch import run_watch  # noqa: PLC0415

    from engine.metrics.collector import Latest  # noqa: PLC0415

    latest = Latest()  # what --metrics serves: a snapshot (without job rows) after every poll
    srv = launch_metrics.server(getattr(args, "metrics", None), getattr(args, "name", None), latest.get,
                                schedd_name(setup), latest.listeners)
    if srv is not None:
        engine.count_unrouted = True  # routedeck_idle_unrouted_jobs
        if why := launch_metrics.started(srv):
            return argcheck.usage_error("watch", why)
    stop = threading.Event()
    deadline = clock.now() + args.duration if args.duration is not None else None
    seq = [0]

    told_waiting = [False]

    def on_poll(result) -> None:
        changed = engine.after_poll(result)
        if srv is not None:
            latest.put(engine.snapshot(seq[0], with_jobs=False))
        if engine.waiting and not told_waiting[0]:
            print(f"routedeck watch: {setup.queue_log}: {WAITING}", file=sys.stderr)
        told_waiting[0] = engine.waiting
        if changed:
            seq[0] += 1
            _emit(engine, seq[0], args)
        if (args.count is not None and seq[0] >= args.count) or (deadline is not None and clock.now() >= deadline):
            stop.set()

    try:
        run_watch(engine.follower, stop, on_poll, slow_poll=min(args.slow_poll, args.duration or args.slow_poll))
    except KeyboardInterrupt:
        pass
    finally:
        if srv is not None:
            srv.stop()
    return found
