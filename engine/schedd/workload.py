"""The demo workload: job templates as old-syntax ClassAd text, arrival processes, cron jobs.

File format (TOML, read with the standard ``tomllib``; see ``sample_configs/demo/workload.toml``)::

    [[job]]                      # a stream of ordinary jobs
    name = "cms-analysis"
    rate = 90                    # clusters per hour, Poisson arrivals (0 = none after the start)
    initial = 20                 # clusters submitted at time zero
    procs = [1, 4]               # procs per cluster, uniform (default [1, 1])
    ad = '''
    Owner = "alice"
    JobUniverse = 5
    '''

    [[cron]]                     # one crondor job (one cluster, one proc), submitted at time zero
    name = "hourly-sync"
    site = "local"               # the executor it runs on (a site with local = true)
    runtime = "fixed 120"        # optional: overrides the site's run-time distribution
    ad = '''
    CronMinute = "0"
    '''

Design decisions and invariants:

- Job ads stay text (``{name: old-syntax value}``), parsed with ``engine.classad_ads.parse_old_ad``
  so every line is checked; errors name the file and the line inside it.
- Arrivals are deterministic for a seed: each stream owns ``random.Random("<seed>:arrivals:<name>")``.
  :class:`Arrivals` is a pure generator driven by ``due(now)`` and ``next_time()``; it never reads
  a clock.
- A cron entry is just a job template submitted once; the schedd treats it like any job with
  ``Cron*`` attributes (htcondor.md §2.4).
"""

from __future__ import annotations

import heapq
import re
import random
import tomllib
from dataclasses import dataclass
from pathlib import Path

from engine.classad import ClassAdError
from engine.classad_ads import parse_old_ad
from engine.schedd.sites import RunTime, SiteConfigError


_WHERE = re.compile(r"^.*?:\d+: ")


def _strip_where(exc: Exception) -> str:
    """The message of a ClassAd error without its own ``source:line:`` prefix."""
    return _WHERE.sub("", str(exc))


class WorkloadError(ValueError):
    pass


# Bounds that keep a mistyped number from exhausting memory (a demo, not a stress tool).
MAX_CLUSTERS = 1_000_000
MAX_PROCS = 100_000
MAX_RATE = 1_000_000.0


@dataclass(frozen=True)
class JobTemplate:
    name: str
    attrs: dict[str, str]  # old-syntax value text
    rate: float = 0.0  # clusters per hour
    initial: int = 0
    procs: tuple[int, int] = (1, 1)
    runtime: RunTime | None = None
    site: str | None = None
    limit: int | None = None  # at most this many clusters in total (None = no limit)
    cron: bool = False


@dataclass(frozen=True)
class Workload:
    jobs: tuple[JobTemplate, ...]
    cron: tuple[JobTemplate, ...]
    path: str = "<workload>"


_JOB_KEYS = {"name", "rate", "initial", "procs", "ad", "runtime", "site", "limit"}


def _ad_line(text: str, ad: str) -> int:
    """1-based line of the file where the ad's first non-blank line is."""
    first = next((ln for ln in ad.splitlines() if ln.strip()), "")
    idx = text.find(first) if first else -1
    return text.count("\n", 0, idx) + 1 if idx >= 0 else 1


def _template(entry: dict, text: str, path: str, kind: str, n: int) -> JobTemplate:
    where = f"{path}: [[{kind}]] #{n}"
    if not isinstance(entry, dict):
        raise WorkloadError(f"{where}: must be a table")
    unknown = set(entry) - _JOB_KEYS
    if unknown:
        raise WorkloadError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(_JOB_KEYS))})")
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise WorkloadError(f"{where}: needs a name")
    where = f"{path}: [[{kind}]] {name!r}"
    ad = entry.get("ad")
    if not isinstance(ad, str):
        raise WorkloadError(f"{where}: needs an 'ad' string (old-syntax 'Attr = value' lines)")
    base = _ad_line(text, ad)
    try:
        attrs = parse_old_ad(ad, path)
    except ClassAdError as exc:
        # parse_old_ad counts lines inside the ad; shift to the file's line
        line = base + (exc.line or 1) - 1 - (1 if ad.startswith("\n") else 0)
        raise WorkloadError(f"{path}:{line}: {_strip_where(exc)}") from None
    try:
        runtime = RunTime.parse(entry["runtime"]) if "runtime" in entry else None
    except SiteConfigError as exc:
        raise WorkloadError(f"{where}: {exc}") from None
    procs = entry.get("procs", [1, 1])
    if isinstance(procs, int):
        procs = [procs, procs]
    if (not isinstance(procs, list) or len(procs) != 2 or not all(isinstance(p, int) for p in procs)
            or procs[0] < 1 or procs[1] < procs[0]):
        raise WorkloadError(f"{where}: procs must be [low, high] with 1 <= low <= high")
    rate = entry.get("rate", 0)
    initial = entry.get("initial", 1 if kind == "cron" else 0)
    limit = entry.get("limit")
    if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 <= rate <= MAX_RATE:
        raise WorkloadError(f"{where}: rate must be a number from 0 to {MAX_RATE} (clusters per hour)")
    if not isinstance(initial, int) or isinstance(initial, bool) or not 0 <= initial <= MAX_CLUSTERS:
        raise WorkloadError(f"{where}: initial must be an integer from 0 to {MAX_CLUSTERS}")
    if procs[1] > MAX_PROCS:
        raise WorkloadError(f"{where}: at most {MAX_PROCS} procs per cluster")
    if limit is not None and (not isinstance(limit, int) or limit < 0):
        raise WorkloadError(f"{where}: limit must be an integer >= 0")
    site = entry.get("site")
    if site is not None and not isinstance(site, str):
        raise WorkloadError(f"{where}: site must be a string")
    if kind == "cron":
        rate, procs = 0.0, [1, 1]
    return JobTemplate(name, attrs, float(rate), initial, (procs[0], procs[1]), runtime, site, limit, kind == "cron")


def parse_workload(text: str, path: str = "<workload>") -> Workload:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise WorkloadError(f"{path}: {exc}") from None
    unknown = set(data) - {"job", "cron"}
    if unknown:
        raise WorkloadError(f"{path}: unknown top-level key(s) {', '.join(sorted(unknown))} (use [[job]] and [[cron]])")
    jobs = tuple(_template(e, text, path, "job", i) for i, e in enumerate(data.get("job", []), 1))
    cron = tuple(_template(e, text, path, "cron", i) for i, e in enumerate(data.get("cron", []), 1))
    names = [t.name for t in jobs + cron]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise WorkloadError(f"{path}: template name(s) used twice: {', '.join(sorted(dup))}")
    return Workload(jobs, cron, path)


def load_workload(path: str | Path) -> Workload:
    p = Path(path)
    if p.exists() and not p.is_file():
        raise WorkloadError(f"{p}: not a regular file")
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise WorkloadError(f"{p}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise WorkloadError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    return parse_workload(text, str(p))


class Arrivals:
    """Poisson cluster arrivals for each job stream, deterministic for a seed."""

    def __init__(self, workload: Workload, seed: int | str, start: float) -> None:
        self.start = start
        self._heap: list[tuple[float, int, int, bool]] = []  # (time, template, size, from the stream)
        self._rngs: list[random.Random] = []
        self._count: list[int] = []
        self._templates = workload.jobs
        for i, t in enumerate(workload.jobs):
            rng = random.Random(f"{seed}:arrivals:{t.name}")
            self._rngs.append(rng)
            self._count.append(0)
            for _ in range(t.initial):
                self._push(start, i, False)
            if t.rate > 0:
                self._push(start + rng.expovariate(t.rate / 3600.0), i, True)
        self._pending_cron = list(workload.cron)

    def _push(self, when: float, i: int, stream: bool) -> None:
        t = self._templates[i]
        if t.limit is not None and self._count[i] >= t.limit:
            return
        self._count[i] += 1
        size = self._rngs[i].randint(*t.procs)
        heapq.heappush(self._heap, (when, i, size, stream))

    def next_time(self) -> float | None:
        if self._pending_cron:
            return self.start
        return self._heap[0][0] if self._heap else None

    def due(self, now: float) -> list[tuple[JobTemplate, int]]:
        """(template, procs) for every cluster arriving at or before ``now``, in time order."""
        out: list[tuple[JobTemplate, int]] = []
        if self._pending_cron and now >= self.start:
            out.extend((t, 1) for t in self._pending_cron)
            self._pending_cron = []
        while self._heap and self._heap[0][0] <= now:
            when, i, size, stream = heapq.heappop(self._heap)
            t = self._templates[i]
            out.append((t, size))
            if stream:
                self._push(when + self._rngs[i].expovariate(t.rate / 3600.0), i, True)
        return out
