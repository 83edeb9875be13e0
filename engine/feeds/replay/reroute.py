"""Re-route a recording: feed its source jobs through the engine's router with another table.

``routedeck replay LOG --reroute --config CONFIG…`` (product.md §2 "replay", issue 7 item 2).
Sources: htcondor.md §1.5 (what counts as success and failure of a routed job), §1.6 (routed copy
attributes ``RouteName``/``RoutedFromJobId``), §1.9 (a routed copy = ``RouteName`` defined).

Design decisions and invariants:

- One pass over the recording (the index's scan, applying every step to a private state) finds
  the *source jobs* — every proc ad that appears and is not a routed copy — with the time of the
  step that created it and its effective ad at the end of that step, and tallies the recorded
  routed copies per route.
- The simulation is the demo's engine (:class:`engine.feeds.demo.Simulation`: embedded schedd, simulated
  sites, the router with the given table, ``JOB_ROUTER_POLLING_PERIOD`` ticks) with the recorded
  jobs as its arrivals, at their recorded times, on a virtual clock; it runs from the first to
  the last step's time of the recording, so both sides cover the same window. Nothing shows
  its events: it drops them (``collect_events=False``) instead of filing them for snapshots.
- Attributes the previous routing wrote into a source job (``Managed``, ``ManagedManager``,
  ``RoutedToJobId``, …) and the schedd's own bookkeeping (``ClusterId``, ``ProcId``, ``QDate``,
  ``JobStatus``, ``EnteredCurrentStatus``, ``GlobalJobId``) are dropped before resubmission; the
  embedded schedd sets its own.
- Both sides are measured the same way, from the routed copies seen in a queue
  (:class:`CopyTally`): ``routed`` = copies created on the route, ``succeeded`` = copies that left
  the queue Completed with ExitCode 0, ``nonzero_exit`` = Completed with another code (the router
  counts those as failures only when the route's ``JobFailureTest`` says so, §1.5, which a
  recording cannot tell), ``failed`` = copies that left it in any other state (§1.5: "removed
  routed jobs count as failures"), ``active`` = copies still in the queue at the end. Unrouted
  source jobs are counted separately.
- Sites: ``--sites FILE`` (the demo's ``sites.toml`` format), else ``sites.toml`` beside the first
  config file, else one generic site per route (1000 slots, 5–30 s start, exponential 600 s runs,
  no failures). Runs are deterministic for a given ``--seed``.
- ``until`` (``--at``/``--transaction``, a ``Seek`` from :mod:`engine.feeds.replay.moment`)
  cuts both sides at the same moment: the recording is read up to that transaction and the
  simulation runs up to its time. The simulation reports its progress (a fraction) through
  ``progress``; the command prints it on stderr.
- Hooks (htcondor.md §1.8): a recording or a config names programs (``JOB_ROUTER_HOOK_KEYWORD``,
  a job's ``HookKeyword``, ``<KW>_HOOK_<TYPE>``). They run only with ``--allow-hooks``; without
  it the router withholds them (engine.router.hooks: a job whose translate hook is withheld is not
  routed, the other hooks are treated as not defined) and the report lists each program as
  ``would run: PATH`` (JSON ``hooks``: type, path, ran, jobs, runs).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from engine.feeds.replay.index import LogIndex
from engine.queue.jobqueue import JobQueue, JobAdded, JobChanged, JobRemoved
from engine.queue.steps import scan_steps
from engine.queue.records import is_proc_key
from engine.views.recorded import literal_int, literal_str
from engine.schedd.workload import JobTemplate
from engine.schedd.sites import SiteSpec, SiteSet
from engine.feeds.demo import Simulation, system_policy
from engine.feeds.demo_files import load_sites
from engine.router.router import JobRouter
from engine.router.loader import load_config_and_table
from engine.schedd.queue_store import QueueStore
from engine.schedd.schedd import Schedd

DROP = frozenset(a.lower() for a in (
    "Managed", "ManagedManager", "RoutedToJobId", "RoutedBy", "RouteName", "RoutedFromJobId",
    "ClusterId", "ProcId", "QDate", "JobStatus", "EnteredCurrentStatus", "GlobalJobId",
    "WorkloadTemplate", "LastJobStatus", "JobCurrentStartDate", "JobStartDate", "CompletionDate",
    "NumJobStarts", "JobRunCount", "RemoteWallClockTime", "ExitCode", "ExitBySignal",
))


@dataclass
class RouteTally:
    routed: int = 0
    succeeded: int = 0  # left the queue Completed with ExitCode 0
    nonzero_exit: int = 0  # left Completed with another ExitCode (a failure only if JobFailureTest says so)
    failed: int = 0  # left the queue in any other state (removed, …)
    active: int = 0  # still in the queue at the end


@dataclass
class CopyTally:
    """Per-route outcome of routed copies, fed with queue facts (module docstring)."""

    routes: dict[str, RouteTally] = field(default_factory=dict)
    # key ("c.p" or a job id, one kind per tally) → route, status, exit
    _live: dict[Any, tuple[str, int | None, int | None]] = field(default_factory=dict)

    def added(self, key: Any, route: str, status: int | None) -> None:
        self.routes.setdefault(route, RouteTally()).routed += 1
        self._live[key] = (route, status, None)

    def tracks(self, key: Any) -> bool:
        """``key`` is a routed copy still in the queue (only those take ``status``)."""
        return key in self._live

    def status(self, key: Any, status: int | None, exit_code: int | None) -> None:
        if key in self._live:
            self._live[key] = (self._live[key][0], status, exit_code)

    def removed(self, key: Any) -> None:
        got = self._live.pop(key, None)
        if got is not None:
            t = self.routes[got[0]]
            if got[1] == 4 and got[2] in (0, None):
                t.succeeded += 1
            elif got[1] == 4:
                t.nonzero_exit += 1
            else:
                t.failed += 1

    def finish(self) -> dict[str, RouteTally]:
        for route, _status, _exit in self._live.values():
            self.routes[route].active += 1
        self._live.clear()
        return self.routes


@dataclass
class RecordedJob:
    key: str
    time: float
    attrs: dict[str, str]


@dataclass
class Recording:
    jobs: list[RecordedJob]
    routes: dict[str, RouteTally]
    unrouted: int
    start: float
    end: float


class RecordingScan:
    """What :func:`read_recording` keeps of each step, applied to its own ``state``: the source
    jobs (by step, with their effective ad at the end of it) and the recorded routed copies.
    Fed either by its own scan of the log or by the index's (``build_index(follow=…)``: the log is
    parsed once for both); ``steps`` counts the steps seen."""

    def __init__(self) -> None:
        self.state = JobQueue()
        self.tally = CopyTally()
        self.found: list[tuple[int, str, dict[str, str]]] = []  # (step, key, attrs) of each source job
        self.routed_sources: set[str] = set()
        self.steps = 0

    def on_step(self, records: list) -> None:
        step = self.steps
        self.steps += 1
        state, tally = self.state, self.tally
        new: list[str] = []
        touched: set[str] = set()
        for op, key, name, _value in records:
            if op == 101 and is_proc_key(key):
                new.append(key)
            elif op == 102 and is_proc_key(key):
                tally.removed(key)
            elif op == 103 and (name == "JobStatus" or name == "ExitCode"):
                touched.add(key)
        for key in new:
            job = state.get(key)
            if job is None:
                continue
            attrs = job.attrs
            route = literal_str(attrs.get("RouteName"))
            if route is not None or "RoutedFromJobId" in attrs:
                tally.added(key, route or "(unknown)", literal_int(attrs.get("JobStatus")))
                src = literal_str(attrs.get("RoutedFromJobId"))
                if src:
                    self.routed_sources.add(src)
            else:
                self.found.append((step, key, attrs))
        for key in touched:
            if not tally.tracks(key):
                continue  # not a routed copy in the queue: status() would ignore it
            job = state.get(key)
            if job is not None:
                attrs = job.attrs
                tally.status(key, literal_int(attrs.get("JobStatus")), literal_int(attrs.get("ExitCode")))

    def recording(self, index: LogIndex, last: int) -> Recording:
        """The recording up to step ``last``, which must be the last step this scan saw."""
        times = index.times
        jobs = [RecordedJob(key, times[step], attrs) for step, key, attrs in self.found]
        unrouted = sum(1 for j in jobs if j.key not in self.routed_sources)
        start = times[0] if index.steps else 0.0
        end = times[last] if index.steps and last >= 0 else start
        return Recording(jobs, self.tally.finish(), unrouted, start, end)


def read_recording(index: LogIndex, last_step: int | None = None, scanned: RecordingScan | None = None) -> Recording:
    """Source jobs with their arrival times, and the recorded per-route tallies, up to and
    including step ``last_step`` (default: the last; -1: nothing). ``scanned``: a
    :class:`RecordingScan` the index's own pass fed (``build_index(follow=…)``), used when it saw
    exactly the steps asked for; otherwise the log is read again up to ``last_step``."""
    last = index.steps - 1 if last_step is None else last_step
    if scanned is not None and scanned.steps == last + 1 == index.steps:
        return scanned.recording(index, last)
    scan = RecordingScan()
    if last >= 0:
        scan_steps(index.data, 0, index.ends[last], scan.state, lambda _s, _e, _l, records, _end=None:
                   scan.on_step(records), None)
    return scan.recording(index, last)


class RecordedArrivals:
    """The demo engine's ``Arrivals`` interface over recorded jobs (one cluster each)."""

    def __init__(self, jobs: list[RecordedJob]) -> None:
        self._items = [(j.time, JobTemplate(name=j.key, attrs={k: v for k, v in j.attrs.items()
                                                              if k.lower() not in DROP}))
                       for j in sorted(jobs, key=lambda j: j.time)]
        self._i = 0

    def next_time(self) -> float | None:
        return self._items[self._i][0] if self._i < len(self._items) else None

    def due(self, now: float) -> list[tuple[Any, int]]:
        out = []
        while self._i < len(self._items) and self._items[self._i][0] <= now:
            out.append((self._items[self._i][1], 1))
            self._i += 1
        return out


PROGRESS_STEPS = 20
PROGRESS_BAR = 20  # cells of the terminal progress bar


def _hms(seconds: int) -> str:
    h, rest = divmod(max(0, seconds), 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}"


def default_sites(route_names: list[str]) -> list[Any]:
    return [SiteSpec(name=f"site-{n}", slots=1000, routes=(n,)) for n in route_names]


def simulate(rec: Recording, config_files: list[str], *, sites_file: str | None = None,
             seed: int = 1, allow_hooks: bool = False, progress: Any = None,
             ) -> tuple[dict[str, RouteTally], int, list[str], list[str], list]:
    """Run the recorded arrivals through the router with the table of ``config_files``.

    Returns (per-route tallies, unrouted source jobs, route names in table order, diagnostics,
    the hook programs that ran or — without ``allow_hooks`` — would have run)."""
    loaded = load_config_and_table(config_files)
    config, table, diagnostics = loaded.config, loaded.table, loaded.problems
    names = [r.name for r in table.routes]
    if sites_file is None and config_files:
        beside = Path(config_files[0]).resolve().parent / "sites.toml"
        sites_file = str(beside) if beside.exists() else None
    specs = load_sites(sites_file) if sites_file else default_sites(names)
    queue = JobQueue()
    tally = CopyTally()
    sources: set[str] = set()
    routed_sources: set[str] = set()

    # a copy whose status and exit code were read at a change: until a change names one of them
    # (the queue's own spelling), reading them again gives what the tally holds
    read: set[Any] = set()

    # the copies are tallied by job id (the event's own key; no "c.p" text per event), told once per
    # committed batch (no call per event; nothing the other subscribers do changes the queue)
    def on_events(events: list[Any]) -> None:
        for e in events:
            kind = type(e)
            if kind is JobChanged:  # the common case first
                jid = e.id
                if not tally.tracks(jid):
                    continue  # not a routed copy: nothing to tally
                if jid in read:
                    names = e.names
                    if queue.spelling("JobStatus") not in names and queue.spelling("ExitCode") not in names:
                        continue
                else:
                    read.add(jid)
                job = queue.get(jid)
                if job is not None:
                    tally.status(jid, literal_int(job.get("JobStatus")), literal_int(job.get("ExitCode")))
            elif kind is JobAdded:
                job = queue.get(e.id)
                route = literal_str(job.get("RouteName")) if job is not None else None
                if route is not None:
                    tally.added(e.id, route, literal_int(job.get("JobStatus")))
                    src = literal_str(job.get("RoutedFromJobId"))
                    if src:
                        routed_sources.add(src)
                else:
                    sources.add("%d.%d" % e.id)
            elif kind is JobRemoved:
                tally.removed(e.id)
                read.discard(e.id)

    queue.subscribe_batch(on_events)
    sites = SiteSet(specs, seed=seed)
    schedd = Schedd(QueueStore(queue), sites, None, system_policy(config))
    router = JobRouter(table, queue, now=rec.start, allow_hooks=allow_hooks)
    engine = Simulation(queue=queue, schedd=schedd, sites=sites, arrivals=RecordedArrivals(rec.jobs), router=router,
                    table=table, config=config, start=rec.start, seed=seed, state_dir=None,
                    config_files=tuple(config_files),
                    poll_period=config.get_int("JOB_ROUTER_POLLING_PERIOD", 10), collect_events=False)
    try:
        parts = PROGRESS_STEPS if progress is not None else 1
        for k in range(1, parts + 1):
            engine.run_until(rec.start + (rec.end - rec.start) * k / parts)
            if progress is not None:
                progress(k / parts)
    finally:
        router.close()
    unrouted = len(sources - routed_sources)
    return tally.finish(), unrouted, names, diagnostics, router.hooks.report()


def compare(recorded: dict[str, RouteTally], rerouted: dict[str, RouteTally], order: list[str]) -> list[dict]:
    """One row per route: table order first, then routes only the recording has."""
    names = list(order) + sorted(n for n in set(recorded) | set(rerouted) if n not in order)
    rows = []
    for n in names:
        a, b = recorded.get(n, RouteTally()), rerouted.get(n, RouteTally())
        rows.append({"route": n, "in_table": n in order,
                     "recorded": vars(a).copy(), "rerouted": vars(b).copy(),
                     "difference": {k: getattr(b, k) - getattr(a, k) for k in vars(a)}})
    return rows


def run_reroute(index: LogIndex, args: argparse.Namespace, until: Any = None, *,
                emit: Callable[[Any], None], scanned: RecordingScan | None = None) -> int:
    """``--reroute``; ``until``: a ``Seek`` (step or time) where both sides stop (default: the end);
    ``emit`` writes the ``--json`` document (the CLI's one JSON writer, ``engine.cli.jsonout.emit``);
    ``scanned``: the recording as the index's pass read it (:func:`read_recording`).
    Returns the exit status: 2 usage, 1 when the config has errors (named on stderr), else 0."""
    if not args.config:
        print("routedeck replay: --reroute needs --config CONFIG with the routing table", file=sys.stderr)
        return 2
    last = index.steps - 1
    if until is not None and until.transaction is not None:
        last = until.transaction
    elif until is not None and until.time is not None:
        last = index.step_at_time(until.time)
    rec = read_recording(index, last, scanned)
    if until is not None and until.time is not None:
        rec.end = max(rec.start, until.time)

    tty = sys.stderr.isatty()

    def progress(fraction: float) -> None:
        if not tty and round(fraction * 100) % 25:
            return  # a log file gets a line per quarter, a terminal one updating line
        bar = ""
        if tty:  # a bar and the recording's time reached (virtual: no wall clock is read here)
            done = round(fraction * PROGRESS_BAR)
            reached = int((rec.end - rec.start) * fraction)
            bar = (f" [{'█' * done}{'░' * (PROGRESS_BAR - done)}]  {_hms(reached)} of "
                   f"{_hms(int(rec.end - rec.start))} recorded")
        print(f"routedeck replay: re-routing {len(rec.jobs)} source jobs: {fraction:4.0%}{bar}", file=sys.stderr,
              end="\r" if tty and fraction < 1 else "\n", flush=True)

    tallies, unrouted, order, diagnostics, hooks = simulate(
        rec, args.config, sites_file=getattr(args, "sites", None), seed=args.seed,
        allow_hooks=bool(getattr(args, "allow_hooks", False)), progress=progress)
    for d in diagnostics:
        print(d, file=sys.stderr)
    status = 1 if diagnostics else 0  # a config with errors is a finding (engine.cli.args "What the input decides")
    rows = compare(rec.routes, tallies, order)
    if args.json:
        doc = {"log": args.log, "start": rec.start, "end": rec.end, "transaction": last + 1,
               "transactions": index.steps, "source_jobs": len(rec.jobs),
               "unrouted": {"recorded": rec.unrouted, "rerouted": unrouted}, "routes": rows,
               "hooks": [h.to_json() for h in hooks]}
        emit(doc)
        return status
    upto = "" if last == index.steps - 1 else f" (up to transaction {last + 1:,} of {index.steps:,})"
    print(f"{args.log}: {len(rec.jobs)} source jobs over {rec.end - rec.start:.0f} s{upto}, re-routed with "
          f"{', '.join(args.config)}")
    cols = ("routed", "succeeded", "nonzero_exit", "failed", "active")
    print(f"{'Route':24} " + " ".join(f"{c:>15}" for c in cols) + "   (recorded → rerouted)")
    for r in rows:
        cells = [f"{r['recorded'][k]:>6} → {r['rerouted'][k]:<6}" for k in cols]
        flag = "" if r["in_table"] else "  (not in the new table)"
        print(f"{r['route']:24} " + " ".join(f"{c:>15}" for c in cells) + flag)
    print(f"{'(not routed)':24} {rec.unrouted:>6} → {unrouted:<6}")
    for h in hooks:
        print(f"hook {h.line()}")
    return status
