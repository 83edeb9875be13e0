"""The embedded startd: static slots, fetch-work hooks, claims, one starter per claim.

HTCondor facts followed (``src/condor_startd.V6/``, htcondor.md §4.2):

- Slot ad: ``Name`` (``slot<N>@<host>``), ``SlotID``, ``State``, ``Activity``, ``Start``, ``Rank``,
  ``FetchWorkDelay`` (the config knob inserted as an expression, ``ResMgr.cpp`` ``configInsert``),
  ``LastFetchWorkSpawned``, ``LastFetchWorkCompleted``, ``NextFetchWorkDelay``
  (``Resource::publish``), ``HasJobDeferral``.
- ``tryFetchWork`` (``Resource.cpp``): only with a keyword; not while a fetch is in progress;
  ``FetchWorkDelay`` is evaluated as an integer with the slot ad as MY and the current claim's
  job ad as TARGET, **300 when undefined or not an integer** (``evalNextFetchWorkDelay``); if
  ``> 0`` and ``now - LastFetchWorkCompleted < delay`` wait; if START is locally false, skip a
  full delay; else run FETCH_WORK. It is called from the state evaluation in Owner, Unclaimed
  and Claimed (not Suspended) (``ResState.cpp``) and when a starter of a fetch claim exits.
- ``handleHookFetchWork`` (``StartdHookMgr.cpp``): no job while Claimed/Idle with a fetch claim →
  the claim is evicted. Missing ``RequestCpus``/``RequestMemory``/``RequestDisk`` become 1 on a
  static slot. Refused while Preempting or when START (MY slot, TARGET job) is not true; when
  Claimed by anything but an idle fetch claim, the job's Rank must be **strictly greater** than
  the current claim's. A job without a string ``HookKeyword`` gets the slot's keyword. Then
  REPLY_FETCH (``accept``/``reject``). Accepted: an idle fetch claim takes the job and spawns
  it; a busy claim is preempted (the job is evicted, EVICT_CLAIM for a fetch claim) and the new
  claim spawned; an unclaimed slot is claimed and spawned.

RouteDeck simplifications (the engine steps on a clock): the state evaluation runs at every
:meth:`Startd.step` (HTCondor's ``POLLING_INTERVAL`` is 5 s); Preempting/Vacating is left in
the same step (the job is killed at once, no ``MaxVacateTime``); a slot whose claim ends goes
to Owner and is evaluated back to Unclaimed when START is not false.
"""

from __future__ import annotations

import itertools
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from engine.classad import as_int, evaluate, format_value, is_true, make_ad, parse_expr, quote
from engine.execute import hooks as hk
from engine.execute.daemon_cron import STARTD_CRON, CronManager
from engine.execute.starter import INITIAL_UPDATE_INTERVAL, UPDATE_INTERVAL, Report, Starter
from engine.hookrun import HookOutputError

FETCH_DELAY_DEFAULT = 300
OWNER, UNCLAIMED, CLAIMED, PREEMPTING = "Owner", "Unclaimed", "Claimed", "Preempting"
IDLE_ACT, BUSY_ACT = "Idle", "Busy"


@dataclass
class Claim:
    claim_id: str
    job_id: str
    job: dict[str, str]
    rank: float
    fetched: bool
    starter: Starter | None = None


@dataclass
class JobRecord:
    """What the startd knows of one job: its ad as last reported (the shadow's view)."""

    job_id: str
    slot: str
    fetched: bool
    ad: dict[str, str]
    reports: list[Report] = field(default_factory=list)


@dataclass
class Slot:
    slot_id: int
    name: str  # "slot1"
    host: str
    keyword: str | None
    state: str = UNCLAIMED
    activity: str = IDLE_ACT
    claim: Claim | None = None
    fetching: bool = False
    last_fetch_spawned: int = 0
    last_fetch_completed: int | None = None  # None: never fetched (HTCondor's 0 is long ago)
    next_fetch_delay: int = 0
    next_fetch_at: float | None = None
    why_next: str = ""
    extra: dict[str, str] = field(default_factory=dict)  # merged daemon ClassAd hook attributes
    cron_why: list[str] = field(default_factory=list)  # which Startd Cron ads merged here and why

    @property
    def full_name(self) -> str:
        return f"{self.name}@{self.host}"


class Startd:
    def __init__(self, config: Any, state_dir: str | Path, *, num_slots: int | None = None,
                 allow_hooks: bool = False, runner: hk.HookRunner | None = None, host: str | None = None,
                 on_report: Callable[[JobRecord, Report], None] | None = None) -> None:
        self.config = config
        self.state_dir = Path(state_dir)
        self.runner = runner or hk.HookRunner(config, allow_run=allow_hooks)
        self.host = host or (config.get("FULL_HOSTNAME") if config.get("FULL_HOSTNAME") else socket.gethostname())
        n = num_slots if num_slots is not None else config.get_int("NUM_SLOTS", 1) if hasattr(config, "get_int") else 1
        self.slots = [Slot(i, f"slot{i}", self.host, hk.slot_keyword(config, f"slot{i}")) for i in range(1, max(1, n) + 1)]
        self.start_expr = parse_expr(config.get("START") or "true")
        self.rank_expr = parse_expr(config.get("RANK") or "0")
        self.fetch_delay_text = config.get("FetchWorkDelay")
        self.jobs: dict[str, JobRecord] = {}
        self.on_report = on_report
        self._ids = itertools.count(1)
        self._dirs = itertools.count(_next_sandbox(self.state_dir / "execute"))
        self.initial_interval = _int_knob(config, "STARTER_INITIAL_UPDATE_INTERVAL", INITIAL_UPDATE_INTERVAL)
        self.interval = max(1, _int_knob(config, "STARTER_UPDATE_INTERVAL", UPDATE_INTERVAL))
        self.cron = CronManager(config, STARTD_CRON, self.runner)  # STARTD_CRON_JOBLIST (engine.execute.daemon_cron)

    # -- slot ad and policy ---------------------------------------------------------------

    def slot_ad(self, slot: Slot, now: float | None = None) -> dict[str, str]:
        ad = {
            "MyType": '"Machine"', "Name": quote(slot.full_name), "Machine": quote(self.host),
            "SlotID": str(slot.slot_id), "SlotTypeId": "0", "SlotType": '"Static"',
            "State": quote(slot.state), "Activity": quote(slot.activity),
            "Start": self.start_expr.text, "Rank": self.rank_expr.text,
            "Cpus": "1", "Memory": "1024", "Disk": "1048576", "HasJobDeferral": "true",
            "LastFetchWorkSpawned": str(slot.last_fetch_spawned),
            "LastFetchWorkCompleted": str(slot.last_fetch_completed or 0),
            "NextFetchWorkDelay": str(slot.next_fetch_delay),
        }
        if self.fetch_delay_text:
            ad["FetchWorkDelay"] = self.fetch_delay_text
        if slot.claim is not None:
            ad["JobId"] = quote(slot.claim.job_id)
        if now is not None:
            ad["MyCurrentTime"] = str(int(now))
        for k, v in slot.extra.items():
            if k not in ad:
                ad[k] = v
        return ad

    def fetch_delay(self, slot: Slot, now: float) -> int:
        """``evalNextFetchWorkDelay``: slot ad as MY, the claim's job as TARGET; 300 if not an int."""
        my = make_ad(self.slot_ad(slot, now))
        target = make_ad(slot.claim.job) if slot.claim is not None else None
        value = as_int(evaluate("FetchWorkDelay", my, target, now=now)) if "FetchWorkDelay" in my else None
        slot.next_fetch_delay = FETCH_DELAY_DEFAULT if value is None else value
        return slot.next_fetch_delay

    def willing(self, slot: Slot, job: dict[str, str] | None, now: float) -> bool:
        my = make_ad(self.slot_ad(slot, now))
        value = evaluate(self.start_expr, my, make_ad(job) if job is not None else None, now=now)
        if job is None:
            return value is not False  # "START is not locally FALSE"
        return is_true(value)

    def rank(self, slot: Slot, job: dict[str, str], now: float) -> float:
        value = evaluate(self.rank_expr, make_ad(self.slot_ad(slot, now)), make_ad(job), now=now)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0

    # -- the step -------------------------------------------------------------------------

    def refresh_cron(self, now: float) -> None:
        """Each slot's merged Startd Cron attributes, targeted against the slot ad itself
        (``StartdNamedClassAdList::Publish``)."""
        for slot in self.slots:
            slot.extra = {}
            slot.extra, slot.cron_why = self.cron.slot_attrs(slot.slot_id, self.slot_ad(slot, now))

    def step(self, now: float) -> None:
        if self.cron.jobs:
            self.cron.step(now)
            self.refresh_cron(now)
        for slot in self.slots:
            claim = slot.claim
            if claim is not None and claim.starter is not None:
                claim.starter.step(now)
                if claim.starter.done:
                    self._starter_exited(slot, now)
            self._eval_state(slot, now)

    def _eval_state(self, slot: Slot, now: float) -> None:
        if slot.state == OWNER and self.willing(slot, None, now):
            slot.state, slot.activity = UNCLAIMED, IDLE_ACT
        elif slot.state == UNCLAIMED and not self.willing(slot, None, now):
            slot.state = OWNER
        self.try_fetch(slot, now)

    def try_fetch(self, slot: Slot, now: float) -> None:
        """``Resource::tryFetchWork``."""
        if not slot.keyword:
            slot.why_next = "no hook keyword (SLOT<N>_JOB_HOOK_KEYWORD / STARTD_JOB_HOOK_KEYWORD)"
            slot.next_fetch_at = None
            return
        if slot.fetching:
            return
        delay = self.fetch_delay(slot, now)
        if delay > 0 and slot.last_fetch_completed is not None and now - slot.last_fetch_completed < delay:
            slot.next_fetch_at = slot.last_fetch_completed + delay
            slot.why_next = f"FetchWorkDelay {delay} s since the last fetch completed"
            return
        if not self.willing(slot, None, now):
            slot.last_fetch_completed = int(now)  # resetFetchWorkTimer(): a full delay again
            slot.next_fetch_at = now + (delay if delay > 0 else 1)
            slot.why_next = "START is locally false"
            return
        self._fetch(slot, now)

    def _fetch(self, slot: Slot, now: float) -> None:
        slot.fetching, slot.last_fetch_spawned = True, int(now)
        inv = self.runner.invoke("fetch", slot.keyword, hk.FETCH_WORK, slot.name,
                                 hk.fetch_stdin(self.slot_ad(slot, now)), now)
        job: dict[str, str] | None = None
        if inv is not None and inv.result is not None:
            r = inv.result
            if r.unfinished:
                inv.error, inv.decision = r.describe(), "no job"
            else:
                try:
                    job = hk.fetch_output(r.stdout, f"{r.path} stdout")
                    inv.parsed = job
                except HookOutputError as exc:
                    inv.error, inv.decision = f"ignoring invalid hook output: {exc}", "no job"
                    job = None
                    self._fetch_completed(slot, now)
                    return
        elif inv is not None:
            inv.decision = "withheld"
        self._handle_fetch(slot, job or None, now, inv)
        self._fetch_completed(slot, now)

    def _fetch_completed(self, slot: Slot, now: float) -> None:
        slot.fetching, slot.last_fetch_completed = False, int(now)
        delay = self.fetch_delay(slot, now)
        slot.next_fetch_at = now + (delay if delay > 0 else 1)
        slot.why_next = f"FetchWorkDelay = {delay}" if delay > 0 else "FetchWorkDelay ≤ 0: next attempt in 1 s"

    def _handle_fetch(self, slot: Slot, job: dict[str, str] | None, now: float, inv: hk.Invocation | None) -> bool:
        """``StartdHookMgr::handleHookFetchWork``."""
        claim = slot.claim
        idle_fetch = claim is not None and claim.fetched and slot.state == CLAIMED and slot.activity == IDLE_ACT
        if not job:
            if inv is not None and not inv.decision:
                inv.decision = "no work"
            if idle_fetch:
                self._evict(slot, now, "no more fetched work")
            return False
        for attr in ("RequestCpus", "RequestMemory", "RequestDisk"):
            if not any(k.lower() == attr.lower() for k in job):
                job[attr] = "1"
        rank = 0.0
        if slot.state == PREEMPTING:
            willing, why = False, "still preempting the previous job"
        elif not self.willing(slot, job, now):
            willing, why = False, "START is not true for this job"
        else:
            rank = self.rank(slot, job, now)
            willing, why = True, f"accepted with Rank {format_value(rank)}"
            if slot.state == CLAIMED and not idle_fetch and claim is not None and rank <= claim.rank:
                willing, why = False, (f"Rank {format_value(rank)} is not greater than the current claim's "
                                       f"{format_value(claim.rank)}")
        if hk.job_hook_keyword(job) is None:
            job["HookKeyword"] = quote(slot.keyword or "")
        new_id = f"<fetch#{next(self._ids)}#{slot.name}>"
        self.runner.invoke("fetch", slot.keyword, hk.REPLY_FETCH, slot.name,
                           hk.reply_fetch_stdin(job, self.slot_ad(slot, now), new_id if willing else None), now,
                           args=("accept" if willing else "reject",))
        if inv is not None:
            inv.decision = why if willing else f"rejected: {why}"
        if not willing:
            if idle_fetch:
                self._evict(slot, now, "fetched job refused")
            return False
        job_id = _job_id(job, new_id)
        if idle_fetch and claim is not None:
            claim.job, claim.rank, claim.job_id = job, rank, job_id
        else:
            if claim is not None:  # a busy claim: preempted by the higher-ranked fetched job
                self._evict(slot, now, f"preempted by fetched work with Rank {format_value(rank)}")
            slot.claim = Claim(new_id, job_id, job, rank, fetched=True)
        slot.state, slot.activity = CLAIMED, IDLE_ACT
        self._spawn(slot, now)
        return True

    def matches(self, slot: Slot, job: dict[str, str], now: float) -> bool:
        """The negotiator's side of a match: the job's ``Requirements`` (MY job, TARGET slot) is
        true; a job without Requirements matches. HTCondor's match is symmetric (``IsAMatch`` →
        ``MatchClassAd::symmetricMatch``, ``src/condor_utils/compat_classad_util.cpp``): the slot's
        side (START) is :meth:`willing`."""
        if not any(k.lower() == "requirements" for k in job):
            return True
        return is_true(evaluate("Requirements", make_ad(job), make_ad(self.slot_ad(slot, now)), now=now))

    def push(self, job_id: str, job: dict[str, str], now: float) -> bool:
        """A job pushed to the slots as a schedd's match would be: the first unclaimed slot whose
        ad satisfies the job's Requirements and whose START accepts the job."""
        for slot in self.slots:
            if (slot.claim is None and slot.state == UNCLAIMED and self.matches(slot, job, now)
                    and self.willing(slot, job, now)):
                slot.claim = Claim(f"<push#{next(self._ids)}#{slot.name}>", job_id, dict(job),
                                   self.rank(slot, job, now), fetched=False)
                slot.state, slot.activity = CLAIMED, IDLE_ACT
                self._spawn(slot, now)
                return True
        return False

    def _spawn(self, slot: Slot, now: float) -> None:
        claim = slot.claim
        assert claim is not None
        record = self.jobs[claim.job_id] = JobRecord(claim.job_id, slot.name, claim.fetched, dict(claim.job))

        def report(rep: Report, record: JobRecord = record) -> None:
            record.reports.append(rep)
            record.ad.update(rep.attrs)
            if self.on_report is not None:
                self.on_report(record, rep)

        sandbox = self.state_dir / "execute" / f"dir_{next(self._dirs)}"
        claim.starter = Starter(claim.job_id, dict(claim.job), sandbox, self.runner, self.config, report,
                                slot_name=slot.name, initial_interval=self.initial_interval, interval=self.interval)
        slot.activity = BUSY_ACT
        claim.starter.begin(now)
        if claim.starter.done:
            self._starter_exited(slot, now)

    def _starter_exited(self, slot: Slot, now: float) -> None:
        claim = slot.claim
        if claim is None:
            return
        claim.starter = None
        if claim.fetched:
            slot.state, slot.activity = CLAIMED, IDLE_ACT
            self.try_fetch(slot, now)  # a starter of fetched work exited: fetch again
        else:
            slot.claim = None
            slot.state, slot.activity = UNCLAIMED, IDLE_ACT

    def _evict(self, slot: Slot, now: float, why: str) -> None:
        """``terminateFetchedWork`` / preemption: kill the job, EVICT_CLAIM for a fetch claim."""
        claim = slot.claim
        if claim is None:
            return
        slot.state, slot.activity = PREEMPTING, "Vacating"
        if claim.starter is not None:
            claim.starter.evict(now, "evict")
            claim.starter = None
        if claim.fetched:
            inv = self.runner.invoke("fetch", slot.keyword, hk.EVICT_CLAIM, slot.name,
                                     hk.evict_claim_stdin(claim.job, self.slot_ad(slot, now), claim.claim_id), now)
            if inv is not None:
                inv.decision = why
        slot.claim = None
        slot.state, slot.activity = OWNER, IDLE_ACT

    def remove(self, job_id: str, now: float) -> bool:
        """The job was removed or held at its schedd: kill it (JOB_EXIT with ``remove``), free the
        slot; a fetch claim keeps its slot Claimed/Idle and fetches again."""
        for slot in self.slots:
            claim = slot.claim
            if claim is None or claim.job_id != job_id or claim.fetched:
                continue
            if claim.starter is not None:
                claim.starter.evict(now, "remove")
                claim.starter = None
            slot.claim = None
            slot.state, slot.activity = UNCLAIMED, IDLE_ACT
            return True
        return False

    def next_time(self, now: float) -> float | None:
        """When a step next has something to do: a running or waiting starter needs polling
        (the next second, or a waiting deferred job's start second if sooner), else the next
        fetch or the next Startd Cron run."""
        if self.busy():
            waits = [s.claim.starter.wait_until for s in self.slots if s.claim is not None and s.claim.starter is not None
                     and s.claim.starter.phase == "waiting" and s.claim.starter.wait_until is not None]
            return min([now + 1, *waits])
        times = [s.next_fetch_at for s in self.slots if s.next_fetch_at is not None]
        cron = self.cron.next_time()
        if cron is not None:
            times.append(cron)
        return min(times) if times else None

    def busy(self) -> bool:
        return any(s.claim is not None and s.claim.starter is not None for s in self.slots)


def _job_id(job: dict[str, str], fallback: str) -> str:
    ad = make_ad(job)
    c, p = evaluate("ClusterId", ad), evaluate("ProcId", ad)
    if isinstance(c, int) and isinstance(p, int):
        return f"{c}.{p}"
    return fallback


def _next_sandbox(execute: Path) -> int:
    """The first ``dir_<n>`` number after those a previous run left (a resumed demo keeps them)."""
    try:
        nums = [int(p.name[4:]) for p in execute.iterdir() if p.name.startswith("dir_") and p.name[4:].isdigit()]
    except OSError:
        return 1
    return max(nums, default=0) + 1


def _int_knob(config: Any, name: str, default: int) -> int:
    text = config.get(name)
    try:
        return int(str(text).strip()) if text is not None and str(text).strip() else default
    except ValueError:
        return default
