"""``routedeck demo --headless``: run the embedded demo without a screen and print snapshots.

The ``demo`` subcommand itself is registered by the TUI (``tui.shell.launch``), which forwards
``--headless`` here through :func:`add_headless_arguments` and :func:`run_headless`; when the TUI
is not installed, :func:`register` adds a headless-only ``demo`` command.

Decisions:

- ``--duration S`` is real (wall-clock) seconds: the run covers ``S × speed`` virtual seconds
  (``--duration 60 --speed 600`` shows ten virtual hours in a minute). With ``--max-speed`` there
  is no real-time pacing and ``--duration`` counts virtual seconds.
- Snapshots are taken at exact virtual times, every ``--interval`` virtual seconds (default: one
  real second's worth, i.e. ``speed``; 600 at maximum speed), so the output of a seeded run is
  the same every time, whatever the machine's speed.
- A paced run ends after ``--duration`` real seconds, measured on a stopwatch clock
  (``engine.clock.VirtualClock`` at speed 1). If the engine has not reached ``S × speed`` virtual
  seconds by then (this machine cannot keep up), the run stops there, prints a final snapshot and
  says on stderr how far it got and the speed it achieved; the exit status stays 0.
- The state directory (``job_queue.log`` + ``history``) is ``--state-dir`` (kept: a recording
  replay can open, written durably as the schedd does) or else a fresh temporary directory,
  removed at the end (not fsynced per commit: nothing is kept to protect). Its path is on stderr.
- A write of the state directory that fails (a full disk, a read-only or unwritable directory)
  stalls the engine (engine.feeds.demo: its log keeps the last committed transaction, the
  JSON says ``engine_state: "stalled"``, and it retries at every step). A headless run reports
  it on stderr: the state directory and the file, the error, and when — virtual time (and how
  far into the run) and wall time — whether it was still stalled at the end (how many of the
  virtual seconds asked it covered) or resumed (when). The run exits 1 either way: it did not
  run as asked.
- The demo's configuration (engine.cli.args "What the input decides"): a file of
  ``--config-dir`` that cannot be read, or a state directory the demo cannot write when it
  starts, is 2 (one line); a configuration file with errors is 1: a config the config reader
  reports errors in, or a sites.toml / workload.toml that does not load, stops the demo before
  it starts (as an HTCondor daemon does not start on a config it cannot read); a routing table
  with errors (a route that does not parse is left out, htcondor.md §1.3) runs, with each error
  on stderr, and exits 1.
- Exit status: 0 done; 1 the engine crashed, a write of the state directory failed (stalled),
  or the configuration has errors; 2 usage, an unreadable demo configuration or a state
  directory that cannot be written at the start.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import math
import shutil
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

from engine.cli import args as argcheck
from engine.cli import metrics_opt
from engine.cli.jsonout import emit, snapshot_json
from engine.launch.options import DemoOptions

if TYPE_CHECKING:  # annotations only; the demo's modules are imported when a demo runs (not by every parser)
    from engine.contract.feed import FeedBase


def add_headless_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--duration", type=argcheck.non_negative, default=60.0,
                   help="--headless: real seconds to run (S x speed virtual seconds); "
                        "with --max-speed, virtual seconds (default 60)")
    p.add_argument("--interval", type=argcheck.positive, default=None,
                   help="--headless: virtual seconds between snapshots (default: speed, i.e. one per real second)")
    p.add_argument("--max-speed", action="store_true",
                   help="--headless: as fast as possible (jump from one engine action to the next)")
    p.add_argument("--json", action="store_true", help="--headless: one JSON snapshot per line (Snapshot.to_json)")
    p.add_argument("--start", type=argcheck.epoch, default=None, help="virtual start time, epoch seconds (default 2026-11-21 00:00 UTC)")
    metrics_opt.add_arguments(p)


def register(subparsers) -> None:
    if "demo" in getattr(subparsers, "choices", {}):
        return  # the TUI's demo command forwards --headless here
    p = subparsers.add_parser("demo", help="the embedded demo, headless (no TUI installed)")
    p.add_argument("--config-dir", type=argcheck.path)
    p.add_argument("--state-dir", type=argcheck.path,
                   help="keep job_queue.log + history here. At --speed 1 every durable commit is "
                        "fdatasync'ed as the schedd does; faster, the syncs are grouped (at most one "
                        "per 50 ms, always before a hook, a job, a history line or a snapshot sees a "
                        "commit): kill -9 loses nothing, a power loss at most the last 50 ms")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--speed", type=argcheck.positive, default=60.0)
    p.add_argument("--classad-routes", action="store_true")
    p.add_argument("--headless", action="store_true", default=True)
    add_headless_arguments(p)
    p.set_defaults(func=run_headless)


def summary_line(snap: Any) -> str:
    q = snap.queue_counts
    routes = " ".join(f"{r.name}:{r.state}:{r.routed}/{r.max_jobs}" for r in snap.routes)
    from datetime import datetime, timezone  # noqa: PLC0415

    when = datetime.fromtimestamp(snap.time, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return (f"{when}Z idle={q.get('idle', 0)} running={q.get('running', 0)} held={q.get('held', 0)} "
            f"jobs={snap.total_jobs} | {routes}")


def snapshots_fast(engine: FeedBase, until: float, interval: float,
                   wall: Callable[[], float] | None = None) -> Iterator[Any]:
    """Snapshots at ``start + k*interval`` up to ``until``, no threads (maximum speed).

    Before each snapshot the feed's queue log is synced as the runtime does before it publishes
    one (``Runtime._publish``): faster than real time the fdatasyncs are grouped, at most one per
    ``GROUP_SYNC`` of ``wall`` time (issue 30), and what is pending is synced so no snapshot shows
    a commit that is not on disk. ``wall``: the wall clock those intervals are measured on
    (default ``SystemClock().now``)."""
    from engine.runtime import MAX_SPEED  # noqa: PLC0415 - kept off every command's start-up

    if wall is None:
        from engine.clock import SystemClock  # noqa: PLC0415  (the wall clock: only for the syncs' spacing)

        wall = SystemClock().now
    seq = 0
    t = engine.now
    seq += 1
    engine.sync_log(MAX_SPEED, wall)  # from here on, the log's syncs are grouped
    engine.advance()  # a snapshot only reads what the advance settled (issue 26)
    yield engine.snapshot(seq, speed=0.0, engine_state="running")
    while t < until:
        t = min(t + interval, until)
        engine.step(t)
        engine.sync_log(MAX_SPEED, wall)
        engine.advance()
        seq += 1
        snap = engine.snapshot(seq, speed=0.0, engine_state="stopped" if t >= until else "running")
        stalled = engine.write_error  # engine.contract.feed.FeedBase: None unless a write failed
        if stalled:  # a failed write (full disk, read-only state directory): said in the JSON
            snap = dataclasses.replace(snap, engine_state="stalled", error=stalled)
        yield snap


GRACE = 0.2  # real seconds the engine may take past --duration for its last step before it counts as behind


@dataclass
class Pace:
    """What a paced run achieved: virtual seconds covered in real seconds (for the lag report)."""

    wanted_virtual: float
    real: float = 0.0
    virtual: float = 0.0
    lagged: bool = False

    @property
    def speed(self) -> float:
        return self.virtual / self.real if self.real > 0 else 0.0


def snapshots_paced(engine: Any, until: float, interval: float, speed: float, real_seconds: float,
                    pace: Pace, stopwatch: Any = None) -> Iterator[Any]:
    """Snapshots of a run at ``speed`` that ends at virtual ``until`` or when ``stopwatch`` (a
    clock counting real seconds from 0 at the command's start) reaches ``real_seconds``,
    whichever comes first; ``pace`` is filled in at the end. The virtual clock counts from the
    stopwatch's 0, so the set-up time is caught up and the whole run takes ``real_seconds``."""
    import queue as _queue  # noqa: PLC0415 - kept off every command's start-up

    from engine.clock import VirtualClock  # noqa: PLC0415
    from engine.runtime import Runtime  # noqa: PLC0415

    watch = stopwatch or VirtualClock(0.0, 1.0)
    t0, v0 = 0.0, engine.now
    out: _queue.SimpleQueue = _queue.SimpleQueue()  # unbounded: the engine never waits for us
    rt = Runtime(engine, VirtualClock(engine.now + watch.now() * speed, speed), out.put, speed=speed,
                 every_virtual=interval, until=until)
    rt.start()
    last = None
    try:
        while True:
            left = real_seconds + GRACE - (watch.now() - t0)
            if left <= 0 and not rt.done.is_set():
                break  # the time is up and the engine is behind: stop it below
            try:
                snap = out.get(timeout=max(0.01, min(0.5, left)))
            except _queue.Empty:
                if rt.done.is_set() and out.empty():
                    return
                continue
            last = snap
            yield snap
            if snap.engine_state in ("stopped", "crashed"):
                return
    finally:
        rt.stop()
        pace.real = watch.now() - t0
        pace.virtual = engine.now - v0
    pace.lagged = True
    if not rt.done.is_set():  # the thread did not end in time: its last snapshot is all we have
        return
    while True:  # snapshots published before the stop
        try:
            snap = out.get_nowait()
        except _queue.Empty:
            break
        last = snap
        yield snap
    seq = (last.seq if last is not None else 0) + 1
    engine.advance()  # the engine thread has stopped: settled here
    yield engine.snapshot(seq, speed=speed, engine_state="stopped")


def options(args: argparse.Namespace) -> DemoOptions:
    """The demo's launch options from its parsed arguments (a caller's own Namespace may leave
    out ``--classad-routes`` and the metrics options)."""
    return DemoOptions(config_dir=args.config_dir, state_dir=args.state_dir, seed=args.seed, speed=args.speed,
                       classad_routes=bool(getattr(args, "classad_routes", False)),
                       metrics=getattr(args, "metrics", None), name=getattr(args, "name", None))


def unreadable_input(opts: DemoOptions) -> str | None:
    """Why the demo's configuration cannot be read (one line), or None: ``--config-dir`` and the
    files the demo reads from it (a file that reads but has errors is :func:`build_status`'s)."""
    if opts.config_dir and (why := argcheck.unreadable(opts.config_dir, directory=True)):
        return why
    from engine.feeds.demo_files import DEFAULT_CONFIG_DIR, DemoFiles  # noqa: PLC0415 - kept off every command's start-up

    files = DemoFiles.in_dir(opts.config_dir or DEFAULT_CONFIG_DIR, opts.classad_routes)
    for path in [*files.config_paths(), files.sites, files.workload]:
        if why := argcheck.unreadable(str(path)):
            return why
    return None


def build_status(exc: BaseException) -> int:
    """The exit status of a demo that could not be built (module docstring): 2 when a file could
    not be read or the state directory written, 1 when a configuration file has errors."""
    if isinstance(exc, OSError) or getattr(exc, "unreadable", False):
        return argcheck.USAGE
    return argcheck.FINDINGS


def build_failed(exc: BaseException) -> int:
    """Say why the demo could not be built (one line on stderr); its exit status."""
    status = build_status(exc)
    why = str(exc)
    if isinstance(exc, OSError) and exc.filename:
        why = f"cannot write {exc.filename}: {exc.strerror or exc}"
    argcheck.usage_error("demo", why)
    return status


def table_errors(engine: FeedBase) -> list[str]:
    """The routing table's errors (each ``file:line: error: …``): the demo runs without the
    routes they leave out, as HTCondor's router does (htcondor.md §1.3)."""
    table = engine.table  # engine.contract.feed.FeedBase: None when it runs no routing table
    return [str(d) for d in table.errors] if table is not None else []


_FAULT_WORDS = {errno.ENOSPC: "is full", errno.EDQUOT: "is over its disk quota",
                errno.EROFS: "is on a read-only file system", errno.EACCES: "cannot be written (permission denied)",
                errno.EPERM: "cannot be written (operation not permitted)"}


def _utc(t: float) -> str:
    from datetime import datetime, timezone  # noqa: PLC0415

    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def _local(t: float) -> str:
    from datetime import datetime  # noqa: PLC0415

    return datetime.fromtimestamp(t).astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


@dataclass
class Stall:
    """What a headless run saw of a failed write (engine.feeds.demo.WriteFault): the first
    fault, the wall time the run noticed it, and when the engine resumed (virtual), if it did."""

    fault: Any
    wall: float
    wall_into: float
    resumed: float | None = None

    def report(self, state_dir: str, start: float, covered: float, wanted: float, still: bool) -> str:
        f = self.fault
        words = _FAULT_WORDS.get(f.errno, "cannot be written")
        head = (f"the state directory {state_dir} {words}: cannot write {f.path} ({f.why}) at virtual "
                f"{_utc(f.time)} ({f.time - start:,.0f} s into the run), wall {_local(self.wall)} "
                f"({self.wall_into:.1f} s after the start); the engine stalled at its last committed transaction "
                "(the log is intact)")
        if still:
            return head + (f" and was still stalled at the end: it covered {covered:,.0f} of {wanted:,.0f} "
                           "virtual seconds")
        return head + f" and resumed from it at virtual {_utc(self.resumed or f.time)}"


def run_headless(args: argparse.Namespace) -> int:
    # the parser checks these (engine.cli.args); a caller's own Namespace gets the same rule
    numbers = [args.duration, args.speed] + ([args.interval] if args.interval is not None else [])
    if not all(math.isfinite(x) for x in numbers) or args.duration < 0 or args.speed <= 0 or (
            args.interval is not None and args.interval <= 0):
        return argcheck.usage_error("demo", "--duration, --speed and --interval must be finite; --duration >= 0, "
                                            "--speed > 0, --interval > 0")
    from engine.clock import VirtualClock  # noqa: PLC0415
    # the demo's modules load before the stopwatch starts (as when this module imported them)
    from engine.feeds.demo_files import DemoFiles  # noqa: PLC0415, F401 - kept off every command's start-up
    from engine.launch import metrics  # noqa: PLC0415, F401 - kept off every command's start-up
    import tempfile  # noqa: PLC0415 - kept off every command's start-up

    stopwatch = VirtualClock(0.0, 1.0)  # real seconds since the command started: --duration counts set-up too
    if why := unreadable_input(options(args)):
        return argcheck.usage_error("demo", why)
    temporary = not args.state_dir
    state_dir = args.state_dir or tempfile.mkdtemp(prefix="routedeck-demo-")
    try:
        return _run(args, state_dir, temporary, stopwatch)
    finally:
        if temporary:
            shutil.rmtree(state_dir, ignore_errors=True)


def _run(args: argparse.Namespace, state_dir: str, temporary: bool, stopwatch: Any) -> int:
    kwargs: dict[str, Any] = dict(config_dir=args.config_dir, seed=args.seed, state_dir=state_dir)
    if temporary:
        kwargs["durable"] = False
    if getattr(args, "classad_routes", False):
        kwargs["classad_routes"] = True
    if getattr(args, "start", None) is not None:
        kwargs["start"] = args.start
    from engine.feeds.demo import build_demo  # noqa: PLC0415 - the embedded engine is for `demo` only, not every command's parser
    from engine.feeds.demo_files import DemoError  # noqa: PLC0415 - kept off every command's start-up
    from engine.launch import metrics as launch_metrics  # noqa: PLC0415 - kept off every command's start-up

    try:
        engine = build_demo(**kwargs)
    except (DemoError, OSError, ValueError) as exc:
        return build_failed(exc)
    if temporary:
        print(f"routedeck demo: state directory {state_dir} (temporary, removed at the end; "
              "--state-dir keeps one)", file=sys.stderr)
    else:
        print(f"routedeck demo: state directory {state_dir}", file=sys.stderr)
    errors = table_errors(engine)
    for e in errors:
        print(f"routedeck demo: {e}", file=sys.stderr)
    from engine.metrics.collector import Latest  # noqa: PLC0415

    latest = Latest()  # what --metrics serves: each snapshot printed
    srv = launch_metrics.server(getattr(args, "metrics", None), getattr(args, "name", None), latest.get,
                                engine.schedd_name, latest.listeners)
    if srv is not None:
        engine.count_unrouted = True  # routedeck_idle_unrouted_jobs (engine.views.build)
        if why := launch_metrics.started(srv):
            engine.close()
            return argcheck.usage_error("demo", why)
    speed = float(args.speed)
    max_speed = bool(getattr(args, "max_speed", False))
    virtual = args.duration if max_speed else args.duration * speed
    interval = args.interval or (600.0 if max_speed else speed)
    until = engine.now + virtual
    pace = Pace(virtual)
    gen = (snapshots_fast(engine, until, interval) if max_speed or virtual == 0
           else snapshots_paced(engine, until, interval, speed, args.duration, pace, stopwatch))
    crashed = False
    from engine.clock import SystemClock  # noqa: PLC0415  (the one wall clock: how long the run took)

    wall = SystemClock()
    began, start_v = wall.now(), engine.now
    stall: Stall | None = None
    try:
        for snap in gen:
            latest.put(snap)
            if args.json:
                emit(snapshot_json(snap))
            else:
                print(summary_line(snap), flush=True)
            crashed = crashed or snap.engine_state == "crashed"
            if snap.engine_state == "crashed":
                print(f"routedeck demo: the engine crashed:\n{snap.error}", file=sys.stderr)
            fault = getattr(engine, "write_fault", None)
            if stall is None and fault is not None:  # noticed at this snapshot (wall time)
                now = wall.now()
                stall = Stall(fault, now, now - began)
            elif stall is not None and fault is None and stall.resumed is None:
                stall.resumed = engine.now
    finally:
        engine.close()
        if srv is not None:
            srv.stop()
    still = getattr(engine, "write_fault", None) is not None
    if stall is not None:
        print("routedeck demo: " + stall.report(state_dir, start_v, engine.now - start_v, virtual, still),
              file=sys.stderr)
    if pace.lagged and pace.virtual < pace.wanted_virtual and not crashed and not still:  # a paced run cut at --duration
        print(f"routedeck demo: the engine could not keep up with x{speed:g}: it covered {pace.virtual:.0f} of "
              f"{pace.wanted_virtual:.0f} virtual seconds in {pace.real:.1f} real seconds (x{pace.speed:.0f}); "
              "stopped at --duration", file=sys.stderr)
    elif not crashed and not still and (
            note := speed_note(engine.now - start_v, wall.now() - began, None if max_speed else speed)):
        print(f"routedeck demo: {note}", file=sys.stderr)
    return argcheck.worst(1 if crashed or stall is not None else 0, argcheck.config_status(errors))


def speed_note(virtual: float, real: float, asked: float | None) -> str | None:
    """What a headless run says about its speed: at maximum speed the speed it reached; at a
    paced speed, only when it could not keep up (less than 95 % of the speed asked)."""
    if real <= 0 or virtual <= 0:
        return None
    reached = virtual / real
    if asked is None:
        return f"ran at x{reached:,.0f} ({virtual:,.0f} virtual s in {real:.1f} s)"
    if reached < 0.95 * asked:
        return (f"the engine could not keep up: x{reached:,.0f} reached of the x{asked:,.0f} asked "
                f"({virtual:,.0f} virtual s in {real:.1f} s)")
    return None


