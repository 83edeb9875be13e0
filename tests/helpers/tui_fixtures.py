"""Canned engine snapshots and a fake runtime for the dashboard's tests and bench.

The figures imitate what the engine publishes in the demo (product.md §6 sketches): six
routes in match order — two accepting, one idle-limited, a throttled black hole (failure rate
above its threshold, htcondor.md §1.5), a full one and one defined but not listed
(``unlisted``) — 100,000 job rows, and crondor jobs one of which carries the weekday lint of
htcondor.md §2.3 item 4. Everything is built from a seeded ``random.Random`` and a fixed
virtual time, so snapshot tests are deterministic.

:class:`FakeRuntime` has the runtime's methods (``start``/``send``/``stop``/``latest``/``query``);
its feed (:class:`FakeFeed`, an ``engine.contract.feed.FeedBase``) offers the why-not and the job
ads the UI asks for; tests drive it with ``push`` and ``crash``.
"""

from __future__ import annotations

import dataclasses
import random
import threading
from types import MappingProxyType
import time

from engine.contract import commands as C
from engine.contract import snapshot as S
from engine.contract.feed import Check, FeedBase, WhyNot

T0 = 1795271525.0  # 2026-11-21 14:32:05 UTC = 08:32:05 America/Chicago (product.md sketch time)


def _route(index, name, state, reason, routed, idle, running, held, max_jobs, max_idle,
           started, ok, failed, rate, threshold, throttle, history, grid, req):
    return S.RouteView(
        index=index, name=name, source_label=f"JOB_ROUTER_ROUTE_{name}", syntax="transform",
        state=state, reason=reason, routed=routed, idle=idle, running=running, held=held,
        max_jobs=max_jobs, max_idle=max_idle, recent_started=started, recent_succeeded=ok,
        recent_failed=failed, failure_rate=rate, failure_threshold=threshold, throttle=throttle,
        window_start=T0 - 348, next_reevaluation=T0 + 252, rate_history=history,
        routed_history=(0, 40, 90, 150, 190, routed), grid_resource=grid, requirements=req,
        location=f"/etc/condor/routes.conf:{index * 8 + 1}",
    )


def make_routes() -> tuple[tuple[S.RouteView, ...], tuple[S.RouteView, ...]]:
    routes = (
        _route(1, "Site1_Slurm", "accepting", None, 212, 18, 194, 0, 500, 50, 57, 51, 0, 0.0,
               0.03, None, (0.0, 0.0, 0.0, 0.0), "batch slurm site1.example", "TARGET.WantSlurm =?= true"),
        _route(2, "Site2_PBS", "idle-limit", "idle jobs 50 >= MaxIdleJobs 50", 60, 50, 10, 0, 200,
               50, 12, 10, 0, 0.0, 0.03, None, (0.0, 0.0, 0.0), "batch pbs site2.example", "true"),
        _route(3, "BlackHole", "throttled",
               "throttle 3.4 jobs/600 s (rate 0.065 > 0.030); re-evaluated in 4m12s", 14, 14, 0, 0,
               100, 50, 40, 0, 39, 0.065, 0.03, 3.4, (0.01, 0.04, 0.07, 0.065), "condor bh.example bh.example:9619",
               "true"),
        _route(4, "Overflow", "accepting", None, 0, 0, 0, 0, 100, 50, 0, 0, 0, 0.0, 0.03, None, (),
               "batch slurm overflow.example", "true"),
        _route(5, "GPU_Site", "full", "routed 40 >= MaxJobs 40", 40, 3, 36, 1, 40, -1, 8, 7, 1,
               0.0017, 0.03, None, (0.0, 0.002, 0.0017), "batch slurm gpu.example", "RequestGPUs > 0"),
    )
    unlisted = (
        dataclasses.replace(
            _route(0, "OldSite", "unlisted", "defined, not in JOB_ROUTER_ROUTE_NAMES", 0, 0, 0, 0,
                   100, 50, 0, 0, 0, 0.0, 0.03, None, (), "batch pbs old.example", "true"),
            index=0, location="/etc/condor/routes.conf:60"),
    )
    return routes, unlisted


OWNERS = ("alice", "bob", "cms", "atlas", "ligo", "osg01", "icecube", "dune")
STATUSES = (1, 1, 1, 2, 2, 2, 2, 4, 5, 3)


def make_jobs(n: int = 100_000, seed: int = 7) -> tuple[S.JobRow, ...]:
    """``n`` jobs: one source job in three is routed (its copy follows it as cluster+50000)."""
    rng = random.Random(seed)
    route_names = ("Site1_Slurm", "Site2_PBS", "BlackHole", "Overflow", "GPU_Site")
    rows: list[S.JobRow] = []
    cluster = 100
    while len(rows) < n:
        status = rng.choice(STATUSES)
        owner = rng.choice(OWNERS)
        q = int(T0 - rng.randint(60, 86_400))
        job = f"{cluster}.0"
        routed = len(rows) + 1 < n and rng.random() < 0.33
        if routed:
            route = rng.choice(route_names)
            copy = f"{cluster + 500_000}.0"
            rows.append(S.JobRow(job, status, owner, route, "source", copy, None, q, q + 30,
                                 f"/home/{owner}/run.sh"))
            rows.append(S.JobRow(copy, status, owner, route, "routed", None, job, q + 5, q + 30,
                                 f"/home/{owner}/run.sh",
                                 hold_reason="Globus error 17" if status == 5 else None))
        else:
            rows.append(S.JobRow(job, status, owner, None, "plain", None, None, q, q + 10,
                                 f"/home/{owner}/analysis.sh",
                                 hold_reason="Job exceeded memory" if status == 5 else None))
        cluster += 1
    return tuple(rows[:n])


def make_cron() -> tuple[S.CronView, ...]:
    tz = "America/Chicago"
    two_h = 1795276800  # 2026-11-21 10:00 CST
    weekday = 1795422600  # 2026-11-23 02:30 CST (Monday)
    monday = 1795413600  # 2026-11-23 00:00 CST
    day = 86_400
    return (
        S.CronView("12.0", ("0", "*/2", "*", "*", "*"), 1, two_h, 0, 300,
                   tuple(two_h + 7200 * k for k in range(5)),
                   tuple(two_h + 7200 * k for k in range(5)), "idle", tz),
        S.CronView("13.0", ("30", "2", "*", "*", "1-5"), 1, weekday, 360, 120,
                   (weekday, weekday + day, weekday + 2 * day), (weekday, weekday + day, weekday + 2 * day),
                   "idle", tz),
        S.CronView("14.0", ("0", "0", "*", "*", "1"), 1, monday, 0, 300,
                   (monday, monday + 7 * day, monday + 14 * day),
                   (monday, monday + 7 * day, monday + 7 * day + 120), "idle", tz,
                   lints=("after the Nov 30 run, an HTCondor >= 10.3 schedd reruns it every ~2 min "
                          "until Dec 1 (its CronTab::nextRunTime); Unix cron would not",)),
        S.CronView("15.0", ("*/10", "*", "*", "*", "*"), 2, int(T0 + 475), 0, 300,
                   (int(T0 + 475), int(T0 + 1075)), (int(T0 + 475), int(T0 + 1075)), "waiting", tz),
        S.CronView("16.0", ("0", "3", "*", "*", "*"), 5, 1795251600, 0, 300, (1795251600 + day,),
                   (1795251600 + day,), "held", tz, hold_reason="Job missed its deferral time", hold_code=20),
    )


def make_events() -> tuple[S.Event, ...]:
    return (
        S.Event(40, T0 - 245, "config-reloaded", "config reloaded from routes.conf (2 routes changed)"),
        S.Event(41, T0 - 7, "route-throttled", "BlackHole throttled: 39 failures in 600 s",
                level="warning", route="BlackHole"),
    )


_JOBS_CACHE: dict[int, tuple[S.JobRow, ...]] = {}


def jobs(n: int) -> tuple[S.JobRow, ...]:
    if n not in _JOBS_CACHE:
        _JOBS_CACHE[n] = make_jobs(n)
    return _JOBS_CACHE[n]


def make_snapshot(n_jobs: int = 100_000, **changes) -> S.Snapshot:
    routes, inactive = make_routes()
    rows = jobs(n_jobs)
    counts = {"idle": 0, "running": 0, "held": 0, "completed": 0, "removed": 0}
    names = {1: "idle", 2: "running", 5: "held", 4: "completed", 3: "removed"}
    for r in rows:
        counts[names[r.status]] += 1
    snap = S.Snapshot(
        seq=1, time=T0, mode="demo", clock="virtual", speed=60.0, paused=False,
        engine_state="running", routes=routes, inactive_routes=inactive,
        queue_counts=MappingProxyType(counts), total_jobs=len(rows), jobs=rows, jobs_version=1,
        cron_jobs=make_cron(), events=make_events(), table_version=3,
        config_files=("/etc/condor/routes.conf",), tz="America/Chicago",
    )
    return dataclasses.replace(snap, **changes) if changes else snap


class FakeFeed(FeedBase):
    """The feed behind :class:`FakeRuntime`: a canned why-not, and job ads made from the latest
    snapshot's rows (plus a RequestMemory)."""

    def __init__(self, runtime: FakeRuntime) -> None:
        self.runtime = runtime
        self._index: dict[str, S.JobRow] = {}
        self._index_of: tuple | None = None

    def why_not(self, job: str, now: float) -> WhyNot:
        return WhyNot(None, (
            Check("global limit", True, "312 routed of JOB_ROUTER_MAX_JOBS -1 (no limit)"),
            Check("source constraint", True, "JobUniverse == 5 && WantJobRouter =?= true: true"),
            Check("route 1 Site1_Slurm requirements", False, "TARGET.WantSlurm =?= true: false"),
            Check("route 2 Site2_PBS requirements", True, "true"),
            Check("route 2 Site2_PBS capacity", False, "idle 50 >= MaxIdleJobs 50"),
        ))

    def job_ad(self, job: str) -> dict[str, str]:
        jobs = self.runtime.latest().jobs
        if self._index_of is not jobs:
            self._index = {r.job: r for r in jobs}
            self._index_of = jobs
        r = self._index.get(job)
        if r is None:
            return {}
        c, p = r.job.split(".")
        ad = {"ClusterId": c, "ProcId": p, "JobStatus": str(r.status), "Owner": f'"{r.owner}"',
              "Cmd": f'"{r.cmd}"', "QDate": str(r.qdate), "RequestMemory": str(1000 + int(c) % 7 * 1000)}
        if r.route:
            ad["RouteName"] = f'"{r.route}"'
        return ad


class FakeRuntime:
    """Same methods as ``engine.runtime.Runtime``; state changes by commands are simulated."""

    controls = S.CONTROLS  # before the first snapshot: every control (its snapshots say their own)

    def __init__(self, snapshot: S.Snapshot | None = None, *, fail_on_start: str | None = None,
                 publish=None) -> None:
        self._snap = snapshot if snapshot is not None else make_snapshot(2_000)
        self._lock = threading.Lock()
        self.sent: list[object] = []
        self.started = False
        self.stopped = False
        self.fail_on_start = fail_on_start
        self.publish = publish
        self.feed = FakeFeed(self)

    def start(self) -> None:
        if self.fail_on_start:
            raise RuntimeError(self.fail_on_start)
        self.started = True
        if self.publish:
            self.publish(self._snap)

    def stop(self) -> None:
        self.stopped = True

    def latest(self) -> S.Snapshot:
        with self._lock:
            return self._snap

    def push(self, snap: S.Snapshot) -> None:
        with self._lock:
            self._snap = snap
        if self.publish:
            self.publish(snap)

    def update(self, **changes) -> S.Snapshot:
        snap = dataclasses.replace(self.latest(), seq=self.latest().seq + 1, **changes)
        self.push(snap)
        return snap

    def crash(self, error: str) -> None:
        self.update(engine_state="crashed", error=error)

    def send(self, command: object) -> None:
        self.sent.append(command)
        if isinstance(command, C.Pause):
            self.update(paused=True, engine_state="paused")
        elif isinstance(command, C.Resume):
            self.update(paused=False, engine_state="running")
        elif isinstance(command, C.SetSpeed):
            self.update(speed=command.speed)
        elif isinstance(command, C.ApplyRoutes):
            snap = self.latest()
            ev = S.Event(snap.events[-1].seq + 1 if snap.events else 1, snap.time, "config-reloaded",
                         f"config reloaded from {command.config_files[0]} ({command.reason})")
            self.update(table_version=snap.table_version + 1, events=snap.events + (ev,))

    def query(self, fn, timeout: float | None = None):
        """``fn(feed)``, run here (``Runtime.query`` runs it on the engine thread)."""
        return fn(self.feed)


POLL = 0.005  # s between looks: what is awaited (a snapshot, a worker) is seen ~2 ms after, not ~10 (was 0.02)


async def wait_until(pilot, cond, timeout: float = 5.0) -> None:
    """Let the app run until ``cond()`` holds (the bridge thread delivers snapshots asynchronously)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            await pilot.pause()
            return
        await pilot.pause(POLL)
    if cond():
        return
    raise AssertionError(f"timed out waiting for {getattr(cond, '__name__', cond)}")


async def newer_snapshot(pilot, app, runtime: FakeRuntime, **changes) -> None:
    """A newer snapshot from ``runtime`` (``changes`` to the latest), until the app has it."""
    seq = runtime.update(**changes).seq
    await wait_until(pilot, lambda: app.snapshot.seq == seq)


async def settle(pilot) -> None:
    """Four of Pilot's pauses: the app's messages, the paints they ask for and what runs after those."""
    for _ in range(4):
        await pilot.pause()


async def wait_prewarmed(pilot, app) -> None:
    """Until the app's background build of the other views (tui.shell.prewarm) has ended. It composes,
    lays out and draws five or six screens off screen, one at a time behind keys and snapshots: ~1 s
    on a quiet machine, over 5 s at a load of 12 (seen twice in whole-suite runs), so it gets a
    minute; the wait ends as soon as it holds."""
    await wait_until(pilot, lambda: app.prewarmed, timeout=60.0)


def write_routes_conf(path, *, max_idle: int = 50) -> str:
    """A small transform-syntax routing table (htcondor.md §1.2 shapes) for editor tests."""
    text = (
        "# routes for the editor tests\n"
        "JOB_ROUTER_ROUTE_NAMES = Site1_Slurm Site2_PBS\n"
        "JOB_ROUTER_ROUTE_Site1_Slurm @=jrt\n"
        '  REQUIREMENTS Owner == "alice"\n'
        '  GridResource = "batch slurm"\n'
        "  MaxJobs = 500\n"
        f"  MaxIdleJobs = {max_idle}\n"
        "@jrt\n"
        "JOB_ROUTER_ROUTE_Site2_PBS @=jrt\n"
        "  REQUIREMENTS true\n"
        '  GridResource = "batch pbs"\n'
        "@jrt\n"
    )
    path.write_text(text)
    return text


def snapshot_for_conf(path, n_jobs: int = 200) -> S.Snapshot:
    routes, inactive = make_routes()
    routes = tuple(dataclasses.replace(r, location=f"{path}:3" if r.name == "Site1_Slurm" else f"{path}:9")
                   for r in routes[:2])
    return make_snapshot(n_jobs, routes=routes, inactive_routes=(), config_files=(str(path),))
