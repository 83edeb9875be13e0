"""``routedeck replay LOG``: the recorded queue at a moment, headless (product.md §5).

``--at TIME --json`` prints the snapshot at that moment; ``--reroute --config CONFIG`` (repeatable) feeds
the recorded source jobs through the engine's router and prints, per route, the recording
against the new table (see :mod:`engine.feeds.replay.reroute`). Router hook programs run only with
``--allow-hooks`` (and only with ``--reroute``: a plain replay routes nothing).

Design decisions:

- This module owns the headless behaviour. If the TUI registers a ``replay`` screen command
  first (``tui.shell.launch``), :func:`register` leaves it alone; the TUI's parser can call
  :func:`add_arguments` for the shared options and :func:`run_headless` when ``--json``/``--at``/
  ``--reroute`` ask for no screen.
- ``TIME`` is any form of :mod:`engine.feeds.replay.moment` (the parser ``:seek`` uses too):
  ``start``, ``end``, ``#N``, ``+S`` / ``-S`` (seconds or a duration such as ``1h30m``),
  ``HH:MM[:SS]`` on the log's day, an ISO date or date-time, epoch seconds; naive times are in ``--tz`` (default this machine's zone).
  ``--transaction N`` is the same as ``--at '#N'``: transactions count from 1, 0 is before the
  first, in the text, in ``--json`` and on the dashboard. ``--reroute --at`` compares the
  recording and the re-routed run up to that moment.
- A file that is not a job queue log at all (bytes other than blanks and no valid record; the
  rule of :meth:`engine.queue.result.LoadResult.not_a_log`) is refused before anything is shown
  (also before the screen opens).
- A log without a committed transaction — an empty file, one of blank lines, a brand-new log
  of just its 107 — is an empty queue, as the schedd reads it (engine.queue.result), and there is
  nothing to play: the headless forms show that empty queue (transaction 0 of 0; its time is
  the 107's CreationTimestamp, null in ``--json`` when the file has none) and say on stderr that
  there is nothing to replay, exit 0; the screen is not opened for it (the same line, exit 0).
  The only moments of such a log are its start and end (``start``, ``end``, ``#0``).
- Replay reads a log further than the schedd would (a corrupt record is skipped, engine.feeds.
  replay.index): the exit status still follows the schedd's verdict on the log, the rule of
  every command that reads one (engine.cli.args "What the input decides"): 1 when the schedd
  would refuse it (a corrupt record inside a committed transaction), named on stderr.
- An archive directory (``routedeck record``) is read whole for the screen and ``--reroute``;
  the headless moment (``--at``/``--transaction``/``--json``/the text) of an archive larger
  than ``WHOLE_BELOW`` opens only the window around it (``engine.feeds.replay.archive.open_window``: one state checkpoint and the segments
  from it to the moment), and every number shown — transaction, transactions, start, end, the
  gaps' places — is the whole archive's. ``line`` is null for an archive (its text is made up).
- Exit status: 0 done; 1 the log has a fatal problem, or ``--config`` has errors (each named on
  stderr; the replay is shown all the same); 2 usage, an unreadable log, a file that is not a
  job queue log or a moment outside the log (one line on stderr, nothing on stdout).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import sys

from engine.cli import args as argcheck
from engine.gcpause import gc_paused
from engine.feeds.replay.moment import FORMS, MomentError, format_moment, transaction_number
from engine.launch.options import ReplayOptions

MAX_PROBLEMS_SHOWN = 20


def add_arguments(p: argparse.ArgumentParser) -> None:
    argcheck.add_log_argument(p, "a recorded job_queue.log")
    p.add_argument("--at", metavar="TIME", help=f"moment to show: {FORMS}")
    p.add_argument("--transaction", type=argcheck.index, metavar="N",
                   help="show the state after transaction N (1 = the first; 0 = before the first)")
    p.add_argument("--json", action="store_true", help="print the snapshot as JSON")
    p.add_argument("--jobs", action="store_true", help="with --json: include every job row")
    p.add_argument("--speed", type=argcheck.positive, default=1.0, help="playing speed (screen mode)")
    argcheck.add_config_argument(p, "HTCondor config file with the routing table (limits; --reroute's table)")
    p.add_argument("--reroute", action="store_true",
                   help="feed the recorded source jobs through the router with --config's table")
    p.add_argument("--tz", type=argcheck.zone, help="time zone of the log's 106 # time stamps and of ISO --at (IANA name)")
    p.add_argument("--seed", type=int, default=1, help="--reroute: seed of the simulated sites")
    p.add_argument("--sites", metavar="SITES_TOML", type=argcheck.path,
                   help="--reroute: simulated sites (default: sites.toml beside the first --config file)")
    p.add_argument("--allow-hooks", action="store_true",
                   help="--reroute: run router hook programs named by the config or by a job's HookKeyword "
                        "(off by default: a recording or config from someone else could run any program; "
                        "without it such hooks are listed as 'would run: PATH' and the jobs they would "
                        "translate are not routed). Replaying without --reroute never runs a program.")


def register(subparsers) -> None:
    argcheck.register_headless(subparsers, "replay", "replay a recorded job_queue.log (headless: --at/--json/--reroute)",
                               __doc__, add_arguments, run)


def options(args: argparse.Namespace) -> ReplayOptions:
    """Replay's launch options from its parsed arguments; ``args.log`` is the log already taken
    from LOG or ``--queue-log`` (engine.cli.args.log_of)."""
    return ReplayOptions(log=args.log, config=tuple(args.config or ()), speed=args.speed, tz=args.tz, at=args.at,
                         transaction=args.transaction)


def run(args: argparse.Namespace) -> int:
    return run_headless(args)


def archive_summary(path: str, tz: str | None):
    """The whole archive's numbers (engine.feeds.replay.archive.summarize) when ``path`` is an
    archive read by windows: one holding more than ``WHOLE_BELOW`` bytes of transactions; None
    otherwise (a log, or an archive read whole)."""
    from engine.feeds.replay import archive as A  # noqa: PLC0415

    if not A.is_archive(path):
        return None
    summary = A.summarize(path, tz)
    return summary if summary.steps and summary.raw > A.WHOLE_BELOW else None


def archive_json(archive, position: int) -> dict:
    """Where the archive starts and the gaps (each with its transaction number as replay counts
    them, and whether the shown moment is after it)."""
    return {
        "start_transaction": archive.first_txn,
        "gaps": [{"transaction": transaction_number(g["step"]),
                  "step": g["step"], "from": g["t0"], "to": g["t1"], "before_shown": g["step"] <= position,
                  "why": g["why"]} for g in archive.gaps],
        "generations": [{"seq": g["seq"], "step": g["step"]} for g in archive.generations],
        # read from a window (engine.feeds.replay.archive.open_window): where it starts, and
        # whether the throttles carried into it are the recorder's ("recorded") or estimated
        # from the window alone ("estimated": an archive without the recorder's counts)
        "window": None if archive.summary is None else {
            "from_transaction": transaction_number(archive.base), "from": archive.window_time,
            "throttle": archive.throttle},
    }


def archive_lines(archive, position: int, tz: str | None) -> list[str]:
    out = []
    if archive.summary is not None and archive.window_time is not None:
        carried = ("throttles carried in from the recorder's window counts" if archive.throttle == "recorded" else
                   "throttles are reconstructed from there (estimated: the archive has no window counts that fit)")
        out.append(f"read from {format_moment(archive.window_time, tz)} (transaction "
                   f"{transaction_number(archive.base):,}) on: {carried}")
    for g in archive.gaps:
        where = "before" if g["step"] <= position else "after"
        out.append(f"gap {where} this moment: {format_moment(g['t0'], tz)} .. {format_moment(g['t1'], tz)}: {g['why']}")
    return out


def run_headless(args: argparse.Namespace) -> int:
    # A moment is one bulk pass (engine.gcpause): the state, the index and the history it builds
    # stay alive to the snapshot and make no cycles, so the collector's passes over them (a full
    # one over the window's queue, ~45 ms of a 30-day moment) would only cost time. --reroute runs
    # the router, whose passes pause it themselves.
    with contextlib.nullcontext() if args.reroute else gc_paused():
        return _run_headless(args)


def _run_headless(args: argparse.Namespace) -> int:
    # the replay engine, imported here: every command's parser is built at start-up (tui.cli)
    from engine.cli.jsonout import emit, row_json, snapshot_json  # noqa: PLC0415 - kept off every command's start-up
    from engine.contract.commands import Seek  # noqa: PLC0415 - kept off every command's start-up
    from engine.feeds.replay.player import ReplayError  # noqa: PLC0415 - kept off every command's start-up
    from engine.launch.replay import (  # noqa: PLC0415 - kept off every command's start-up
        NotARecording, check_recording, index_of, make_player, moment)
    from engine.queue.timeline import SOURCE_NAMES  # noqa: PLC0415 - kept off every command's start-up

    try:
        args.log = argcheck.log_of(args, "replay")
    except argcheck.UsageError as exc:
        return argcheck.usage_error("replay", exc)
    window = None  # the whole archive's numbers when only a window around the moment is read
    scanned = None  # --reroute: the recording read in the index's pass (engine.feeds.replay.reroute)
    try:
        if not args.reroute:
            window = archive_summary(args.log, args.tz)
        elif args.at is None and args.transaction is None:
            # the whole recording is re-routed: read in the index's pass (a cut at an earlier step
            # reads the log again up to it, engine.feeds.replay.reroute.read_recording, so the
            # index's pass is not asked to apply the whole log then)
            from engine.feeds.replay.reroute import RecordingScan  # noqa: PLC0415

            scanned = RecordingScan()
        if window is None:
            index, archive = index_of(args.log, args.tz, follow=scanned)
    except OSError as exc:
        print(f"routedeck replay: cannot read {args.log}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # engine.record.archive.ArchiveError
        print(f"routedeck replay: {exc}", file=sys.stderr)
        return 2
    try:
        if window is not None:
            empty, start, end, steps = None, window.start, window.end, window.steps
        else:
            empty = check_recording(index, args.log)
            steps = index.steps
            if empty is None:
                start, end = index.times[0], index.times[-1]
            else:  # an empty queue: its one moment is the 107's CreationTimestamp (or none at all)
                start = end = index.creation_timestamp or 0.0
        target = moment(options(args), start, end, steps)
        if empty is not None and target is not None and not (
                target.transaction in (None, -1) and target.time in (None, start)):
            raise MomentError(f"{args.log} holds no committed transaction: give start, end or #0")
        if window is not None:
            from engine.feeds.replay.archive import open_window  # noqa: PLC0415

            target = target or Seek(time=end)
            archive = open_window(args.log, args.tz, step=target.transaction, time=target.time, summary=window)
            index = archive.index
            if target.transaction is not None:  # the window's own step
                target = Seek(transaction=max(-1, target.transaction - archive.base) if target.transaction >= 0 else -1)
    except (NotARecording, MomentError) as exc:
        print(f"routedeck replay: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # engine.record.archive.ArchiveError
        print(f"routedeck replay: {exc}", file=sys.stderr)
        return 2
    problems = index.problems
    if empty is not None:
        print(f"routedeck replay: {empty}", file=sys.stderr)
        if not index.records:  # an empty or blank file: that line says it all
            problems = []
    for problem in problems[:MAX_PROBLEMS_SHOWN]:
        print(problem.where(args.log), file=sys.stderr)
    if len(problems) > MAX_PROBLEMS_SHOWN:
        print(f"{args.log}: … {len(problems) - MAX_PROBLEMS_SHOWN} more problems", file=sys.stderr)
    status = 0 if archive is not None else log_status(args.log, index=index)
    if args.reroute:
        from engine.feeds.replay.reroute import run_reroute  # noqa: PLC0415

        return argcheck.worst(status, run_reroute(index, args, until=target, emit=emit, scanned=scanned))
    try:
        # the jobs table only for --jobs; no router events (only the dashboard shows them)
        player, errors = make_player(index, options(args), jobs=args.jobs, collect_events=False)
        if window is not None:  # the archive's poll grid: the windows close where they do in the whole
            from engine.feeds.replay.archive import throttle_seeds  # noqa: PLC0415
            from engine.feeds.replay.stats import RouteHistory  # noqa: PLC0415

            h = player.history
            # the closes up to the window's last step (the history closes no window after it), from
            # a period before its first (it looks up none before its last close at or before that step)
            seeds = throttle_seeds(window, h.rules, h.period, until=index.times[-1] if index.steps else None,
                                   since=index.times[0] - h.period if index.steps else None)
            archive.throttle = "estimated" if seeds is None else "recorded"
            player.history = RouteHistory(index, h.rules, h.period, h.tz, grid_start=window.start, seeds=seeds,
                                          collect_events=h.collect_events)
        target = target or Seek(time=end)
        player.seek(step=target.transaction, time=target.time)
    except (ReplayError, ValueError) as exc:
        print(f"routedeck replay: {exc}", file=sys.stderr)
        return 2
    for e in errors:
        print(e, file=sys.stderr)
    status = argcheck.worst(status, argcheck.config_status(errors))
    snap = player.snapshot(with_jobs=args.jobs)
    pos = snap.replay
    position = player.position if archive is None else archive.global_step(player.position)
    if window is not None:  # the whole archive's numbers, not the window's
        pos = dataclasses.replace(pos, transaction=position, transactions=window.steps, start=window.start,
                                  end=window.end)
        snap = dataclasses.replace(snap, replay=pos)
    number = transaction_number(pos.transaction)
    source = SOURCE_NAMES[player.step_time_source()] if player.position >= 0 else "start"
    timeless = empty is not None and index.creation_timestamp is None  # no record says when
    if args.json:
        out = snapshot_json(snap)
        out["replay"] = {
            "log": args.log, "transaction": number, "transactions": pos.transactions,
            "time": pos.time, "start": pos.start, "end": pos.end, "times_inferred": pos.times_inferred,
            "time_source": source,
            "line": index.lines[player.position] if player.position >= 0 and archive is None else None,
        }
        if timeless:
            out["time"] = None
            out["replay"].update(time=None, start=None, end=None, time_source=None)
        if args.jobs:
            out["jobs"] = [row_json(j) for j in snap.jobs]
        if archive is not None:
            from engine.feeds.replay.archive import router_log_at  # noqa: PLC0415

            out["replay"]["archive"] = archive_json(archive, position)
            # the real router's JobRouterLog at that moment (recorded with --router-log; else null)
            out["router_log"] = router_log_at(args.log, pos.time, args.tz,
                                              lines=window.lines if window is not None else None)
        out["records"] = player.state.record_kinds()  # non-job records by kind (25.x: users, jobsets, …)
        out["problems"] = [{"line": p.line, "message": p.message} for p in problems]
        emit(out)
        return status
    if empty is not None:
        when = "(no record gives a time)" if timeless else f"at {format_moment(pos.time, args.tz)} (the log's CreationTimestamp)"
        print(f"{args.log}: no committed transaction, an empty queue {when}")
    else:
        where = "before the first transaction" if number == 0 else f"transaction {number:,} of {pos.transactions:,}"
        print(f"{args.log}: {where} at {format_moment(pos.time, args.tz)}"
              f" (time {source}{', log has no 106 # time stamps' if pos.times_inferred else ''})")
    if archive is not None:
        for line in archive_lines(archive, position, args.tz):
            print(line)
    print(f"jobs: {snap.total_jobs}  " + "  ".join(f"{k} {v}" for k, v in sorted(snap.queue_counts.items())))
    print(f"{'Route':24} {'Routed':>7} {'Idle':>7} {'Running':>7} {'Held':>7} {'Max':>7} {'MaxIdle':>7}"
          f" {'Throttle':>9} {'Started':>7} {'Succ':>5} {'Failed':>6}")
    for r in snap.routes:
        thr = "none" if r.throttle is None else f"{r.throttle:.4g}"
        print(f"{r.name:24} {r.routed:7d} {r.idle:7d} {r.running:7d} {r.held:7d} {_limit(r.max_jobs):>7}"
              f" {_limit(r.max_idle):>7} {thr:>9} {r.recent_started:7d} {r.recent_succeeded:5d} {r.recent_failed:6d}")
    return status


def log_status(path: str, command: str = "replay", index=None) -> int:
    """The schedd's verdict on the log (engine.cli.args.refused_log_status), said on stderr when it
    is not 0. The verdict is the schedd's reading's: the index reads some lines more leniently
    without a word (an empty line, a 105 without its blank), so its problems cannot tell. Values
    are not parsed (``validate=False``): one that does not parse is never fatal.

    ``index``: the ``LogIndex`` the command built of ``path`` (``build_index``). Its bytes are the
    file's whole lines (up to a NUL byte, ``LogIndex.nul``), and the verdict is 0 when every one
    of them is a line the schedd's reader takes (``engine.queue.steps.first_corrupt``, the check
    ``record`` makes of what it read): only a corrupt record can be fatal (htcondor.md §3.3), and
    a file with a record is a log. Then the log is not read again (issue 30: the second read and
    parse cost ~3 % of ``replay --reroute``). Anything else — a line the schedd's reader refuses,
    a NUL byte, no whole line, not a regular file — is decided by reading the log again with the
    schedd's rules (``load_log``), the verdict and its message as without ``index``."""
    # (not a regular file, or one that cannot be looked at: load_log says why)
    if index is not None and index.nul < 0 and index.data and os.path.isfile(path):
        from engine.queue.steps import first_corrupt  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

        if first_corrupt(index.data, 0, len(index.data)) is None:
            return argcheck.OK
    from engine.queue.reader import load_log  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    return argcheck.refused_log_status(load_log(path, validate=False), command)


def _limit(n: int) -> str:
    return "?" if n < 0 else str(n)
