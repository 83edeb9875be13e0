"""Simulated execution sites for the demo: where routed copies (and local cron jobs) "run".

Design decisions and invariants:

- One :class:`Site` per route or GridResource (and one or more executors for local-universe
  jobs), described in the demo config (:class:`SiteSpec`): slots, start latency, run-time
  distribution, failure probability, and a *black hole* mode in which every job fails fast, so
  the router's failure-rate throttle (htcondor.md §1.5) can be seen.
- Deterministic for a given seed: every site owns a ``random.Random`` seeded from
  ``"<seed>:<site name>"`` (string seeds are hashed with SHA-512 by ``random``, independent of
  ``PYTHONHASHSEED``); the global ``random`` module is never used. Draws happen in event order,
  and events are ordered by ``(time, sequence number)``, so a run is a pure function of the
  seed and the submissions.
- Time only moves through :meth:`SiteSet.advance` with the engine's ``now``; nothing here reads
  a clock. :meth:`SiteSet.next_time` tells the engine when the next thing happens, so a
  maximum-speed run can jump from event to event.
- Status flows back with HTCondor's update delays (htcondor.md §7): a start is reported only
  ``STARTER_INITIAL_UPDATE_INTERVAL`` (8 s) after it happened; the exit status arrives with the
  final update at exit. A job removed at the site produces no report.
- A grid site's reports (the routed copies' status, which the gridmanager writes into the queue)
  reach the schedd at the gridmanager's schedd contacts: at once when the last contact is
  ``GRIDMANAGER_CONTACT_SCHEDD_DELAY`` (5 s) or more ago, else at that contact plus the delay,
  all pending updates together (gridmanager.cpp ``RequestContactSchedd``, ``doContactSchedd``:
  one transaction for every job's dirty attributes). Each report keeps the time it happened.
  Local-universe sites (the schedd's own starter) and executors report at once.
- A site with ``startd = true`` is not simulated: its jobs go to an *executor* attached with
  :meth:`SiteSet.attach` (the demo's embedded startd, ``engine.feeds.demo_execute``), which
  really runs them and returns the same :class:`SiteReport` kinds at the same update points. This
  module does not import the execute side (sibling layers); it only knows the protocol
  :class:`Executor`.
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol

STARTER_INITIAL_UPDATE_INTERVAL = 8  # htcondor.md §7
GRIDMANAGER_CONTACT_SCHEDD_DELAY = 5  # gridmanager.cpp: param_integer(..., 5)


class SiteConfigError(ValueError):
    pass


@dataclass(frozen=True)
class RunTime:
    """A run-time distribution: ``fixed``, ``uniform``, ``exponential`` or ``lognormal``."""

    kind: str = "exponential"
    a: float = 600.0  # fixed: value; uniform: low; exponential: mean; lognormal: median
    b: float = 0.0  # uniform: high; lognormal: sigma

    KINDS = ("fixed", "uniform", "exponential", "lognormal")

    def __post_init__(self) -> None:
        if not (math.isfinite(self.a) and math.isfinite(self.b)):
            raise SiteConfigError("run-time parameters must be finite numbers")
        if self.kind not in self.KINDS:
            raise SiteConfigError(f"unknown run-time distribution {self.kind!r} (one of {', '.join(self.KINDS)})")
        if self.a < 0 or self.b < 0:
            raise SiteConfigError("run-time parameters must not be negative")
        if self.kind == "uniform" and self.b < self.a:
            raise SiteConfigError(f"uniform run time: high {self.b} < low {self.a}")

    def draw(self, rng: random.Random) -> float:
        if self.kind == "fixed":
            return self.a
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b)
        if self.kind == "exponential":
            return rng.expovariate(1.0 / self.a) if self.a > 0 else 0.0
        return self.a * math.exp(rng.gauss(0.0, self.b))

    @classmethod
    def parse(cls, text: str) -> "RunTime":
        """``"exponential 600"``, ``"uniform 60 300"``, ``"fixed 120"``, ``"lognormal 600 0.5"``."""
        parts = str(text).split()
        if not parts:
            raise SiteConfigError("empty run-time distribution")
        try:
            nums = [float(p) for p in parts[1:]]
        except ValueError:
            raise SiteConfigError(f"run-time distribution {text!r}: parameters must be numbers") from None
        need = {"fixed": 1, "uniform": 2, "exponential": 1, "lognormal": 2}.get(parts[0])
        if need is None:
            raise SiteConfigError(f"unknown run-time distribution {parts[0]!r} in {text!r}")
        if len(nums) != need:
            raise SiteConfigError(f"run-time distribution {text!r}: {parts[0]} takes {need} number(s)")
        return cls(parts[0], nums[0], nums[1] if need == 2 else 0.0)


@dataclass(frozen=True)
class SiteSpec:
    name: str
    slots: int = 10
    start_latency: tuple[float, float] = (5.0, 30.0)  # uniform, seconds
    runtime: RunTime = field(default_factory=RunTime)
    failure_probability: float = 0.0
    black_hole: bool = False
    black_hole_after: tuple[float, float] = (2.0, 10.0)  # how fast a black hole fails its jobs
    routes: tuple[str, ...] = ()  # route names whose copies run here
    grid_resources: tuple[str, ...] = ()  # GridResource values whose copies run here
    local: bool = False  # runs local-universe (12) jobs of the schedd
    startd: bool = False  # its jobs run for real on the demo's embedded startd (an attached Executor)

    def __post_init__(self) -> None:
        if self.slots < 0:
            raise SiteConfigError(f"site {self.name}: slots must be >= 0, not {self.slots}")
        if not 0.0 <= self.failure_probability <= 1.0:
            raise SiteConfigError(f"site {self.name}: failure_probability must be within 0..1")
        lo, hi = self.start_latency
        if not all(math.isfinite(x) for x in (lo, hi, *self.black_hole_after)):
            raise SiteConfigError(f"site {self.name}: start_latency and black_hole_after must be finite numbers")
        if lo < 0 or hi < lo:
            raise SiteConfigError(f"site {self.name}: start_latency must be 0 <= low <= high")
        if self.startd and (self.local or self.black_hole):
            raise SiteConfigError(f"site {self.name}: startd = true cannot be combined with local or black_hole "
                                  f"(the embedded startd really runs the routed copies)")


@dataclass(frozen=True)
class SiteReport:
    """What the site tells the schedd about a job, visible at ``time``."""

    time: float
    job: str
    kind: str  # "running" | "exited" | "missed" (the starter refused: deferral window missed)
    site: str
    started: float  # when the job really started (JobCurrentStartDate)
    exit_code: int = 0
    ended: float | None = None


class Executor(Protocol):
    """Where a ``startd = true`` site's jobs really run (the demo's embedded startd)."""

    def submit(self, job: str, now: float) -> None: ...
    def cancel(self, job: str, now: float) -> None: ...
    def next_time(self) -> float | None: ...
    def advance(self, now: float) -> list[SiteReport]: ...


@dataclass
class _Job:
    job: str
    submitted: float
    started: float | None = None
    end: float | None = None
    exit_code: int = 0
    cancelled: bool = False
    runtime: RunTime | None = None  # the job's own distribution (cron jobs), else the site's
    gate: Callable[[float], tuple[str, float]] | None = None  # the starter's deferral check


class Site:
    def __init__(self, spec: SiteSpec, seed: int | str) -> None:
        self.spec = spec
        self.rng = random.Random(f"{seed}:{spec.name}")
        self.jobs: dict[str, _Job] = {}
        self.waiting: list[str] = []  # FIFO of jobs waiting for a slot
        self.busy = 0
        self.started = 0
        self.failed = 0
        self.succeeded = 0

    def stats(self) -> dict[str, int]:
        return {"slots": self.spec.slots, "busy": self.busy, "waiting": len(self.waiting),
                "started": self.started, "succeeded": self.succeeded, "failed": self.failed}


class SiteSet:
    """All sites plus one time-ordered heap of pending site events."""

    def __init__(self, specs: Iterable[SiteSpec], seed: int | str = 0) -> None:
        self.sites: dict[str, Site] = {}
        for spec in specs:
            if spec.name in self.sites:
                raise SiteConfigError(f"site {spec.name!r} defined twice")
            self.sites[spec.name] = Site(spec, seed)
        self._heap: list[tuple[float, int, str, str, str]] = []  # (time, seq, kind, site, job)
        self._seq = 0
        self._where: dict[str, str] = {}  # job -> site
        self.executors: dict[str, Executor] = {}  # site name -> executor (startd = true sites)
        # the gridmanager's pending schedd updates and its next / last contact
        self._pending: list[SiteReport] = []
        self._contact_at: float | None = None
        self._last_contact = float("-inf")

    def attach(self, site: str, executor: Executor) -> None:
        """Run ``site``'s jobs on ``executor`` instead of simulating them."""
        if site not in self.sites or not self.sites[site].spec.startd:
            raise SiteConfigError(f"site {site!r} is not declared with startd = true")
        self.executors[site] = executor

    # -- lookup ---------------------------------------------------------------------------

    def site_for(self, route: str | None, grid_resource: str | None, universe: int | None) -> Site | None:
        """GridResource first (a route's GridResource names the site), then the route name."""
        if universe == 12:
            return next((s for s in self.sites.values() if s.spec.local), None)
        for s in self.sites.values():
            if grid_resource and grid_resource in s.spec.grid_resources:
                return s
        for s in self.sites.values():
            if route and route.lower() in (r.lower() for r in s.spec.routes):
                return s
        return None

    def site_named(self, name: str) -> Site | None:
        return self.sites.get(name)

    def location(self, job: str) -> str | None:
        return self._where.get(job)

    # -- input from the schedd ------------------------------------------------------------

    def submit(self, site: Site, job: str, now: float, runtime: RunTime | None = None,
               gate: Callable[[float], tuple[str, float]] | None = None) -> None:
        """Hand a job to a site; it starts when a slot is free plus the start latency."""
        if job in self._where:
            return
        self._where[job] = site.spec.name
        executor = self.executors.get(site.spec.name)
        if executor is not None:
            executor.submit(job, now)
            return
        site.jobs[job] = _Job(job, now, runtime=runtime, gate=gate)
        site.waiting.append(job)
        self._dispatch(site, now)

    def cancel(self, job: str, now: float) -> None:
        """The job was removed or held at the schedd: forget it, free its slot (no report)."""
        name = self._where.pop(job, None)
        if name is None:
            return
        executor = self.executors.get(name)
        if executor is not None:
            executor.cancel(job, now)
            return
        site = self.sites[name]
        j = site.jobs.pop(job, None)
        if j is None:
            return
        j.cancelled = True
        if job in site.waiting:
            site.waiting.remove(job)
        else:  # running, or its slot is reserved with the start pending
            site.busy -= 1
            self._dispatch(site, now)

    # -- time -----------------------------------------------------------------------------

    def next_time(self) -> float | None:
        if not self.executors and self._contact_at is None:  # the common case: simulated sites only
            return self._heap[0][0] if self._heap else None
        times = [self._heap[0][0]] if self._heap else []
        if self._contact_at is not None:
            times.append(self._contact_at)
        times += [t for t in (e.next_time() for e in self.executors.values()) if t is not None]
        return min(times) if times else None

    def _report(self, out: list[SiteReport], site: Site, r: SiteReport) -> None:
        """A report of ``site`` at ``r.time``: a local site's at once, a grid site's at the
        gridmanager's next schedd contact."""
        if site.spec.local:
            out.append(r)
            return
        self._pending.append(r)
        if self._contact_at is None:
            self._contact_at = max(r.time, self._last_contact + GRIDMANAGER_CONTACT_SCHEDD_DELAY)

    def advance(self, now: float) -> list[SiteReport]:
        """Process every site event due at or before ``now``; return the reports now visible."""
        out: list[SiteReport] = []
        while self._heap and self._heap[0][0] <= now:
            t, _, kind, name, job = heapq.heappop(self._heap)
            site = self.sites[name]
            j = site.jobs.get(job)
            if j is None or j.cancelled:
                continue
            if kind == "start":
                decision, at = j.gate(t) if j.gate is not None else ("start", t)
                if decision == "missed":  # the starter refuses: no run, slot freed at once
                    site.busy -= 1
                    del site.jobs[job]
                    self._where.pop(job, None)
                    self._report(out, site, SiteReport(t, job, "missed", name, t))
                    self._dispatch(site, t)
                    continue
                j.started = t
                site.started += 1
                self._start_run(site, j, max(t, at))
            elif kind == "report-start":
                if j.end is None or j.end > t:
                    self._report(out, site, SiteReport(t, job, "running", name, t if j.started is None else j.started))
            elif kind == "end":
                site.busy -= 1
                del site.jobs[job]
                self._where.pop(job, None)
                if j.exit_code == 0:
                    site.succeeded += 1
                else:
                    site.failed += 1
                self._report(out, site, SiteReport(t, job, "exited", name, t if j.started is None else j.started,
                                                   j.exit_code, t))
                self._dispatch(site, t)
        if self._contact_at is not None and self._contact_at <= now:  # doContactSchedd
            out.extend(self._pending)
            self._pending = []
            self._last_contact = self._contact_at
            self._contact_at = None
        for name, executor in self.executors.items():
            for r in executor.advance(now):
                if r.kind != "running":  # the job left the executor: the schedd may hand it out again
                    self._where.pop(r.job, None)
                out.append(r)
        return out

    # -- internals ------------------------------------------------------------------------

    def _push(self, t: float, kind: str, site: str, job: str) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, kind, site, job))

    def _dispatch(self, site: Site, now: float) -> None:
        while site.waiting and site.busy < site.spec.slots:
            job = site.waiting.pop(0)
            site.busy += 1
            lo, hi = site.spec.start_latency
            self._push(now + site.rng.uniform(lo, hi), "start", site.spec.name, job)

    def _start_run(self, site: Site, j: _Job, t: float) -> None:
        """The payload runs from ``t`` (a deferred job's starter waits until then)."""
        spec = site.spec
        if spec.black_hole:
            lo, hi = spec.black_hole_after
            run, code = site.rng.uniform(lo, hi), 1
        else:
            run = (j.runtime or spec.runtime).draw(site.rng)
            code = 0
            if spec.failure_probability > 0 and site.rng.random() < spec.failure_probability:
                run, code = run * site.rng.random(), 1
        j.end = t + max(1.0, round(run))
        j.exit_code = code
        self._push((t if j.started is None else j.started) + STARTER_INITIAL_UPDATE_INTERVAL, "report-start", spec.name, j.job)
        self._push(j.end, "end", spec.name, j.job)
