"""``routedeck record``: keep a CE's job queue history in an archive, across the schedd's compactions.

``routedeck record [LOG | --config CONDOR_CONFIG] --archive DIR`` follows the live log (LOG, else
the config's ``JOB_QUEUE_LOG`` / ``SPOOL`` as ``watch`` finds it) and archives every committed
transaction once, across compactions (engine.record.recorder). ``--once`` catches up and exits
(for a timer); without it the command runs until stopped (a service). ``--retain 30d`` and
``--max-size 20GB`` delete whole old segments. ``routedeck record --status DIR`` prints what the
archive holds. ``routedeck replay DIR`` replays it.

Design decisions:

- This run loop is the only place of the recorder that reads the clock or waits. It polls the
  log when the log changes (``watchfiles`` on its directory, as ``watch`` does:
  ``engine.queue.filewatch.watch_path`` on a thread that only wakes this loop), at least every
  ``--interval`` seconds (the fallback when the directory cannot be watched), and when what was
  read is due to be written (``Recorder.flush_in``: ``--lag`` seconds after the last write, at
  once when that was longer ago; ``--flush`` seconds after it for the re-frame of a quiet log's
  small frames). So a transaction is archived within about ``--lag`` seconds of its commit (plus
  the write's fsyncs), not a poll interval later on top. The small frames those writes make are
  re-framed by the archive (``Archive.reframe``); at stop too (``flush(reframe=True)``).
- Durability: a write's frames and index lines are fsynced before ``recorder.json`` (written,
  fsynced, renamed) names them. The directory is fsynced after that rename only where losing it
  would lose something (a write that made a file, a re-frame's first step, retention): a kill
  -9 or a power loss leaves the archive as the last ``recorder.json`` on disk says, and the
  recorder reads the rest again from the log when it starts.
- A full disk (or any failed write) stops archiving with one line on stderr (and in ``--json``);
  the loop opens the archive again at the next poll, which resumes from the last checkpoint.
  ``--once`` exits 1 then. SIGTERM or Ctrl-C writes what is waiting and exits 0.
- One recorder per archive: ``DIR/.lock`` is held (flock) while it runs; a second one exits 1.
- ``--metrics HOST:PORT`` (and ``--name``) serve the recorder's own figures to Prometheus after
  each poll (engine.metrics.record: transactions archived, errors, size, segments, the newest
  transaction's time, the lag ``--status`` shows).
- Exit status: 0 done; 1 archiving failed (disk full, unreadable archive), another recorder holds
  the archive, the schedd would refuse the log (``--once``) or the config has errors; 2 usage.
- ``--once`` takes the schedd's verdict on the log from the recorder's own read (one read of the
  log): ``load_log`` reads it whole only when that read cannot decide (no 107 first, or a line
  the schedd finds corrupt among the lines read: ``_verdict``). So a run tells of a refused
  record in the part of the log it read, not again in a later run that reads on after it.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading
from typing import TYPE_CHECKING

from engine.cli import args as argcheck
from engine.cli import metrics_opt
from engine.clock import SystemClock
from engine.cli.jsonout import emit
from engine.record.files import ArchiveError  # not engine.record.archive (zstandard, hashlib): off every start-up

if TYPE_CHECKING:  # annotations only; the recorder is imported when one runs (not by every parser)
    from engine.record.recorder import Recorder
    from engine.record.report import Report

RETRY = 30.0  # seconds between attempts after a failed write (a full disk)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_SIZES = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
          "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}


def duration(text: str) -> float:
    """``30d``, ``12h``, ``90m``, ``3600`` (seconds)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text.lower())
    if not m or float(m[1]) <= 0:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 30d, 12h, 90m)")
    return float(m[1]) * _UNITS[m[2] or "s"]


def size(text: str) -> int:
    """``20GB``, ``500MB``, ``1GiB``, bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", text.lower())
    if not m or m[2] not in _SIZES or float(m[1]) <= 0:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 20GB, 500MB)")
    return int(float(m[1]) * _SIZES[m[2]])


def register(subparsers) -> None:
    p = subparsers.add_parser("record", help="archive a live job_queue.log across compactions (replay DIR replays it)",
                              description=argcheck.help_text(__doc__))
    argcheck.add_log_argument(p, "the schedd's job_queue.log (default: from the config)", required=False)
    argcheck.add_config_argument(p, "HTCondor config file (default: $CONDOR_CONFIG): JOB_QUEUE_LOG / SPOOL",
                                 metavar="CONDOR_CONFIG")
    p.add_argument("--archive", metavar="DIR", type=argcheck.path, help="the archive directory (created if needed)")
    p.add_argument("--status", metavar="DIR", type=argcheck.path, help="print what the archive DIR holds and exit")
    p.add_argument("--once", action="store_true", help="catch up and exit (for a timer instead of a service)")
    p.add_argument("--json", action="store_true", help="one JSON document per report")
    p.add_argument("--interval", type=argcheck.positive, default=0.1,
                   help="seconds between polls of a log that does not change (a change is read at once; a poll "
                        "that finds nothing new reads two short pieces of it)")
    p.add_argument("--flush", type=argcheck.positive, default=60.0,
                   help="seconds small writes (--lag) stay small frames before they are rewritten as one: after the "
                        "first of them, or after the last write of a quiet log; what waits to be written is "
                        "read again from the log after a crash")
    p.add_argument("--lag", type=argcheck.positive, default=0.05,
                   help="write what was read this many seconds after the last write (at once when that was "
                        "longer ago): a transaction is archived about this long after its commit, fsynced (a "
                        "kill -9 or a power loss keeps what DIR/recorder.json names; the rest is read again from "
                        "the log); such small "
                        "writes are rewritten as one frame when they add up to one, --flush after the first, at "
                        "stop, and when the recorder starts again after a kill")
    p.add_argument("--retain", type=duration, metavar="AGE", help="delete whole segments older than AGE (e.g. 30d)")
    p.add_argument("--max-size", type=size, metavar="SIZE", help="delete the oldest segments beyond SIZE (e.g. 20GB)")
    p.add_argument("--tz", type=argcheck.zone, help="time zone of the log's 106 # time stamps (IANA name)")
    p.add_argument("--router-log", metavar="JobRouterLog", type=argcheck.path,
                   help="also archive this JobRouterLog's lines beside the transactions (replay --json shows "
                        "the real router's routing table at the moment, router_log)")
    metrics_opt.add_arguments(p)  # the recorder's own figures (engine.metrics.record)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.status:
        return show_status(args)
    if not args.archive:
        return argcheck.usage_error("record", "give --archive DIR (or --status DIR)")
    status = 0
    name = None  # the schedd label of --metrics: --name, the config's SCHEDD_NAME, the host's name
    try:
        log = argcheck.log_of(args, "record")
        if log is None or args.config:
            from engine.feeds.watch.setup import WatchError, resolve  # noqa: PLC0415

            try:
                setup = resolve(log, args.config)
            except (WatchError, OSError) as exc:
                raise argcheck.UsageError(str(exc)) from None
            log = setup.queue_log
            name = setup.schedd_name
            for d in setup.diagnostics:  # the config's errors are findings (1), as in every command
                print(d, file=sys.stderr)
            status = argcheck.config_status(setup.diagnostics)
        if why := argcheck.unreadable(log):  # a service restarts on exit 2 (contrib/), a timer runs again
            raise argcheck.UsageError(why)
        if args.once:  # the schedd's verdict on the log decides the exit status, as everywhere
            from engine.record.state import read_head  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

            if read_head(log) is None:  # no 107 first (empty, blank, not a log): the recorder reads nothing
                status = argcheck.worst(status, _verdict(log))
    except argcheck.UsageError as exc:
        return argcheck.usage_error("record", exc)
    try:
        lock = _lock(args.archive)
    except OSError as exc:
        return argcheck.usage_error("record", f"{args.archive}: {exc.strerror or exc}")
    if lock is None:
        print(f"routedeck record: {args.archive}: another recorder is writing this archive", file=sys.stderr)
        return 1
    with lock:
        latest = srv = None
        if getattr(args, "metrics", None):
            import socket  # noqa: PLC0415

            from engine.metrics.collector import Latest  # noqa: PLC0415
            from engine.metrics.record import record_families  # noqa: PLC0415
            from engine.launch import metrics as launch_metrics  # noqa: PLC0415 - kept off every command's start-up

            latest = Latest()  # the figures after each poll
            srv = launch_metrics.server(args.metrics, getattr(args, "name", None), latest.get, name or socket.getfqdn(),
                                        latest.listeners,
                                        record_families)
            if why := launch_metrics.started(srv):
                return argcheck.usage_error("record", why)
        try:
            return argcheck.worst(status, loop(log, args, metrics=latest))
        finally:
            if srv is not None:
                srv.stop()


def _verdict(log: str) -> int:
    """The exit status the schedd's reading of ``log`` decides (``load_log``'s verdict, a read of
    the whole log), saying why on stderr; raises :class:`argcheck.UsageError` for a file that is
    not a job queue log. ``--once`` asks only when the recorder's own read cannot tell: the log
    has no 107 first (the recorder reads nothing of it), or a line the recorder read is one the
    schedd finds corrupt (``Report.corrupt``; a log without one decides 0)."""
    from engine.queue.reader import load_log  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    res = load_log(log, validate=False)  # the verdict and its message
    verdict, why = argcheck.load_verdict(res)
    if verdict == argcheck.USAGE:
        raise argcheck.UsageError(why)
    return argcheck.refused_log_status(res, "record")


def _lock(archive: str):
    """An exclusive lock on ``DIR/.lock`` for as long as the file stays open (None: held by
    another process): two recorders on one archive would interleave their writes."""
    import fcntl  # noqa: PLC0415
    import os  # noqa: PLC0415

    os.makedirs(archive, exist_ok=True)
    fh = open(os.path.join(archive, ".lock"), "a")
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    return fh


def show_status(args: argparse.Namespace) -> int:
    from engine.record.status import archive_status  # noqa: PLC0415 - kept off every command's start-up

    try:
        st = archive_status(args.status, SystemClock().now(), argcheck.log_of(args, "record"))
    except (ArchiveError, OSError, argcheck.UsageError) as exc:
        return argcheck.usage_error("record", exc)
    if args.json:
        emit(st)
        return 0
    from engine.feeds.replay.moment import format_moment  # noqa: PLC0415

    def when(t):
        return "-" if t is None else format_moment(t, args.tz)

    ratio = "-" if st["ratio"] is None else f"{st['ratio']:.3f}"
    print(f"{st['archive']}: {st['transactions']:,} transactions from {when(st['oldest'])} to {when(st['newest'])}")
    print(f"size {st['size']:,} bytes in {st['segments']} segments; {st['uncompressed']:,} bytes of log kept "
          f"(ratio {ratio})")
    print(f"generations seen: {len(st['generations'])}; gaps: {len(st['gaps'])}")
    for g in st["gaps"]:
        print(f"  gap before transaction {g['txn']:,}: {when(g['t0'])} .. {when(g['t1'])}: {g['why']}")
    lag = st["log"]
    if lag is not None:
        behind = f", {lag['bytes']:,} bytes behind" if "bytes" in lag else ""
        print(f"log {lag['file']}: {lag['state']}{behind}")
    return 0


def _say(args: argparse.Namespace, log: str, rep: Report, rec: Recorder) -> None:
    if args.json:
        emit({"log": log, "archived": rep.archived, "generations": rep.generations, "gaps": rep.gaps,
              "problems": rep.problems, "missing": rep.missing, "next_transaction": rec.archive.meta.next_txn})
        return
    for p in rep.problems:
        print(p, file=sys.stderr)
    for g in rep.gaps:
        print(f"routedeck record: GAP: {g['why']}", file=sys.stderr)
    if rep.missing:
        print(f"routedeck record: {rep.missing}", file=sys.stderr)


WATCH_DEBOUNCE = 0.01  # seconds watchfiles groups a burst of writes to the log before it wakes the loop


def _watch(log: str, stop: threading.Event, woken: threading.Event, interval: float) -> None:
    """Start a daemon thread that sets ``woken`` when the log changes and at least every
    ``interval`` seconds (``filewatch.watch_path``), and once more when ``stop`` is set and it ends."""
    from pathlib import Path  # noqa: PLC0415

    from engine.queue.filewatch import watch_path  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    def watch() -> None:
        try:
            watch_path(Path(log), stop, woken.set, slow_poll=interval, debounce=WATCH_DEBOUNCE)
        finally:
            woken.set()

    threading.Thread(target=watch, name="routedeck-record-watch", daemon=True).start()


def loop(log: str, args: argparse.Namespace, clock=None, metrics=None, stop: threading.Event | None = None) -> int:
    """The run loop (the only place that reads the clock and waits). ``metrics`` (a
    :class:`engine.metrics.collector.Latest`) gets the recorder's figures after each poll;
    ``stop`` ends the loop when set (as SIGTERM does)."""
    from engine.record.recorder import Recorder  # noqa: PLC0415 - kept off every command's start-up
    from engine.record.status import recorder_figures  # noqa: PLC0415 - kept off every command's start-up

    clock = clock or SystemClock()
    stop = stop or threading.Event()
    if not args.once and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    rec: Recorder | None = None
    status = 0
    total = jobs = errors = 0
    failed = ""  # the last failure told (a full disk), "" while archiving
    woken = threading.Event()  # the log changed (or the watcher's slow poll), or stop was set
    watching = not args.once
    if watching:
        _watch(log, stop, woken, args.interval)
    try:
        while True:
            now = clock.now()
            try:
                if rec is None:
                    rec = Recorder(log, args.archive, tz=args.tz, flush_every=args.flush,
                                   router_log=args.router_log, write_after=None if args.once else args.lag)
                resumed = rec.pos  # where an earlier run left the log (None: not read yet)
                rep = rec.poll(now, flush=True if args.once else None)
                total += rep.archived
                if args.retain or args.max_size:
                    rec.archive.retain(now, args.retain, args.max_size)
                _say(args, log, rep, rec)
                if args.once:
                    jobs = len(rec.state)
                    # what the schedd decides of the log: this run's read is the verdict when it read
                    # the followed generation from its start and found nothing corrupt; a run that
                    # resumed inside it (a timer's every run after the first) did not see the start,
                    # where an earlier run may have met a refused line, so the log is read again
                    partial = resumed is not None and rec.pos is not None and resumed.seq == rec.pos.seq
                    if rec.log in rep.corrupt or partial:
                        try:
                            status = argcheck.worst(status, _verdict(log))
                        except argcheck.UsageError as exc:  # the log was replaced meanwhile
                            status = argcheck.worst(status, argcheck.usage_error("record", exc))
            except (ArchiveError, OSError) as exc:
                rec = None  # opened again at the next poll: resumes from the last checkpoint
                if str(exc) != failed:  # told once, not every retry
                    print(f"routedeck record: {exc}", file=sys.stderr)
                    if args.json:
                        emit({"log": log, "error": str(exc)})
                failed = str(exc)
                status = 1
                errors += 1
            if metrics is not None:
                metrics.put(recorder_figures(rec, now, total, errors, bool(failed), log))
            if args.once:
                break
            if failed:  # (--once ended above: the loop below is always watching)
                if stop.wait(max(args.interval, RETRY)):
                    break
            else:
                due = rec.flush_in(now) if rec is not None else None
                woken.wait(RETRY if due is None else due)
                woken.clear()
                if stop.is_set():
                    break
            if rec is not None and failed:
                print("routedeck record: archiving again", file=sys.stderr)
                failed = ""
            status = 0
    except KeyboardInterrupt:
        pass
    finally:
        if watching:
            stop.set()  # ends the watcher thread
        # (after a poll that Ctrl-C or an error left partway, a kill -9, this writes nothing: the
        # next run resumes from recorder.json, Recorder.flush and engine.record.recorder's docstring)
        if rec is not None:
            try:
                rec.flush(clock.now(), reframe=True)
            except (ArchiveError, OSError) as exc:
                print(f"routedeck record: {exc}", file=sys.stderr)
                status = 1
    if args.once and not args.json:
        print(f"{log}: {total:,} transactions archived into {args.archive}; the queue holds {jobs:,} jobs")
    return status
