"""The demo's embedded execute node: a :class:`~engine.execute.startd.Startd` stepped on the
Simulation's virtual clock, and the ``startd = true`` site whose routed copies it really runs.

Design decisions and invariants:

- Declared by the demo's ``condor_config``: ``DAEMON_LIST`` naming ``STARTD`` gives the demo an
  embedded startd (``Simulation.startd``; None otherwise), with the execute knobs of the same
  config (``NUM_SLOTS``, ``START``, ``RANK``, fetch-work and starter hooks, ``STARTD_CRON_*``).
  A ``[[site]]`` of ``sites.toml`` with ``startd = true`` hands its routes' copies to it
  (:class:`StartdSite`, the ``engine.schedd.sites.Executor`` protocol); the other sites stay
  simulated. ``SCHEDD_CRON_*`` jobs of the same config feed the schedd ad the demo keeps.
- The schedd's side of a push is the negotiator's match: a copy waits (Idle, at the site) until
  a slot is Unclaimed, its ad satisfies the copy's ``Requirements`` and the slot's START accepts
  the copy (:meth:`Startd.push`). HTCondor evaluates a route's own Requirements against the job
  ad only (htcondor.md §1), so a route that depends on a slot's dynamic attribute says so in the
  copy's Requirements (``SET Requirements …``), which the execute pool matches against the slot
  ad — as an HTCondor-CE route does for its local batch pool.
- Status goes back with seed 003's update points (htcondor.md §7): Running when the starter's
  first update arrives (``STARTER_INITIAL_UPDATE_INTERVAL`` after the spawn), the exit with the
  final update; the starter's usage attributes (``ImageSize``, ``ResidentSetSize``,
  ``RemoteUserCpu``, ``RemoteSysCpu``, ``ExitBySignal``/``ExitSignal``) are written into the copy
  after the schedd applied the report. A starter hold (PREPARE_JOB failure, a missed deferral,
  a transfer refused) holds the copy with the starter's reason and code; an eviction or a
  withheld run puts it back to Idle at the site's queue.
- Time: :meth:`StartdSite.advance` steps the startd once per call at ``now`` (the Simulation calls
  it at every event time); :meth:`next_time` asks for the next whole second while a job runs
  (a finished process is noticed at the first step after it ended, so ``RemoteWallClockTime``
  is virtual time), else at the next fetch or Startd Cron run, at most ``POLL`` seconds ahead.
  A step runs hooks to their end (each bounded by its timeout) and only polls job processes,
  so it stays short and never blocks the runtime's stop for long.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from engine.classad import quote
from engine.contract.codes import JobStatus
from engine.execute.startd import JobRecord, Startd
from engine.execute.starter import Report
from engine.schedd.sites import SiteReport

POLL = 5  # the startd's POLLING_INTERVAL default: state evaluation at least this often
USAGE = ("ImageSize", "ResidentSetSize", "RemoteUserCpu", "RemoteSysCpu", "ExitBySignal", "ExitSignal",
         "ExitReason", "JobDuration")


@dataclass
class _Run:
    started: float | None = None
    reported: bool = False


@dataclass
class Pending:
    """What the schedd still has to apply after a step's reports (in the Simulation's tick)."""

    holds: list[tuple[str, float, str, int, int]] = field(default_factory=list)
    requeues: list[tuple[str, float, str]] = field(default_factory=list)
    attrs: dict[str, dict[str, str]] = field(default_factory=dict)


class StartdSite:
    """A ``startd = true`` site: its jobs are pushed to the embedded startd and really run."""

    def __init__(self, startd: Startd, site: str, job_ad: Callable[[str], dict[str, str] | None]) -> None:
        self.startd = startd
        self.site = site
        self.job_ad = job_ad
        self.waiting: list[str] = []  # FIFO: copies at the site without a slot yet
        self.runs: dict[str, _Run] = {}
        self.pushed = 0
        self.stepped: float | None = None
        self.pending = Pending()
        self._reports: list[SiteReport] = []
        startd.on_report = self._on_report

    # -- the Executor protocol ----------------------------------------------------------------

    def submit(self, job: str, now: float) -> None:
        if job not in self.waiting and job not in self.runs:
            self.waiting.append(job)

    def cancel(self, job: str, now: float) -> None:
        if job in self.waiting:
            self.waiting.remove(job)
        if self.runs.pop(job, None) is not None:
            self.startd.remove(job, now)

    def next_time(self) -> float | None:
        if self.stepped is None:
            return None  # the Simulation's first event steps it
        t = self.stepped + POLL
        if self.waiting:
            t = self.stepped + 1
        other = self.startd.next_time(self.stepped)
        if other is not None:
            t = min(t, other)
        return max(t, self.stepped + 1)

    def advance(self, now: float) -> list[SiteReport]:
        if self.stepped is not None and now <= self.stepped:
            return []
        self.stepped = now
        self.startd.step(now)
        while self.waiting:
            job = self.waiting[0]
            ad = self.job_ad(job)
            if ad is None:
                self.waiting.pop(0)
                continue
            self.runs[job] = _Run()
            if not self.startd.push(job, ad, now):
                del self.runs[job]
                break  # FIFO: the head waits for a free, matching slot
            self.waiting.pop(0)
            self.pushed += 1
        out, self._reports = self._reports, []
        return out

    # -- starter reports ----------------------------------------------------------------------

    def _on_report(self, record: JobRecord, rep: Report) -> None:
        if record.fetched:
            return  # fetched work belongs to the FETCH_WORK hook's queue, not to this schedd
        run = self.runs.get(record.job_id)
        if run is None:
            return
        job, a = record.job_id, rep.attrs
        usage = {k: v for k, v in a.items() if k in USAGE}
        if usage:
            self.pending.attrs.setdefault(job, {}).update(usage)
        if rep.kind == "start":
            run.started = rep.time
        elif rep.kind == "update":
            start = run.started if run.started is not None else rep.time
            if not run.reported and rep.time > start:  # the first update after the spawn (seed 003)
                run.reported = True
                self._reports.append(SiteReport(rep.time, job, "running", self.site, start))
        elif rep.kind == "exit":
            del self.runs[job]
            start = run.started if run.started is not None else rep.time
            code = _int(a.get("ExitCode"), 0)
            if a.get("ExitBySignal") == "true":
                code = 128 + _int(a.get("ExitSignal"), 0)  # non-zero for the schedd; the signal itself follows
            self._reports.append(SiteReport(rep.time, job, "exited", self.site, start, code, rep.time))
        elif rep.kind == "hold":
            del self.runs[job]
            self.pending.holds.append((job, rep.time, _unquote(a.get("HoldReason", '""')),
                                       _int(a.get("HoldReasonCode"), 0), _int(a.get("HoldReasonSubCode"), 0)))
            self._reports.append(SiteReport(rep.time, job, "held", self.site, run.started or rep.time))
        elif rep.kind == "requeue":
            self.runs.pop(job, None)
            self.pending.requeues.append((job, rep.time, _unquote(a.get("LastHoldReason", '""'))))
            self._reports.append(SiteReport(rep.time, job, "requeued", self.site, run.started or rep.time))

    def apply(self, schedd: Any, now: float) -> None:
        """After ``schedd.apply_reports``: holds, requeues and the starter's usage attributes."""
        p, self.pending = self.pending, Pending()
        for job, t, reason, code, sub in p.holds:
            schedd.hold(job, t, reason or "held by the starter", code, sub)
        store = schedd.store
        todo = [(job, attrs) for job, attrs in p.attrs.items() if store.attrs(job) is not None]
        requeue = [(job, t) for job, t, _why in p.requeues if (store.attrs(job) or {}).get("JobStatus") == JobStatus.RUNNING.text]
        if not todo and not requeue:
            return
        with store.transaction(now) as tx:
            for job, attrs in todo:
                for k, v in attrs.items():
                    tx.set(job, k, v)
            for job, t in requeue:  # evicted or withheld: Idle again (the shadow's requeue)
                tx.set(job, "JobStatus", JobStatus.IDLE.text)
                tx.set(job, "EnteredCurrentStatus", str(int(t)))


def _int(text: str | None, default: int) -> int:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return default


def _unquote(text: str) -> str:
    t = text.strip()
    return t[1:-1].replace('\\"', '"') if len(t) >= 2 and t[0] == t[-1] == '"' else t


def schedd_ad(name: str, counts: dict[int, int], cron_attrs: dict[str, str], now: float) -> dict[str, str]:
    """The demo's schedd ad: the identity and job totals a schedd publishes
    (``Scheduler::count_jobs``), then the ``SCHEDD_CRON_*`` attributes merged in
    (``Scheduler::adlist_publish``)."""
    ad = {"MyType": '"Scheduler"', "Name": quote(name), "MyCurrentTime": str(int(now))}
    for attr, key in (("TotalIdleJobs", 1), ("TotalRunningJobs", 2), ("TotalHeldJobs", 5)):
        ad[attr] = str(counts.get(key, 0))
    ad.update(cron_attrs)
    return ad
