"""Daemon ClassAd hooks (Startd Cron / Schedd Cron, "Hawkeye"): jobs, schedule, output, targeting.

HTCondor facts followed (``htcondor/htcondor`` HEAD; docs/execute.md lists them with places):

- Jobs (``CronJobMgr::DoConfig``/``ParseJobList``, ``src/condor_utils/cron_job_mgr.cpp``):
  ``<MGR>_JOBLIST`` (``STARTD_CRON`` / ``SCHEDD_CRON``), names separated by commas or spaces.
  Knobs ``<MGR>_<job>_<item>`` (``CronJobParams::Initialize``, ``cron_job_params.cpp``):
  ``EXECUTABLE`` (none: the job is skipped), ``PERIOD`` (``%lld%c``: ``s``/``m``/``h``, case
  insensitive; required and non-zero for Periodic, ignored for OneShot/OnDemand), ``MODE``
  (``Periodic`` default, ``WaitForExit``, ``OneShot``, ``OnDemand``; case-insensitive; unknown →
  skipped), ``PREFIX``, ``ARGS`` (``AppendArgsV1RawOrV2Quoted``), ``ENV``
  (``MergeFromV1RawOrV2Quoted``), ``CWD``, ``KILL``, ``RECONFIG``, ``RECONFIG_RERUN``,
  ``JOB_LOAD``, ``CONDITION``; startd only ``SLOTS`` (``StartdCronJobParams::Initialize``: a list
  of slot numbers; one non-number drops the list, i.e. all slots).
- Process (``CronJob::StartJobProcess``, ``cron_job.cpp``): argv[0] is the job name, then
  ``ARGS``; environment the daemon's plus ``ENV`` plus ``<MGR NAME>_INTERFACE_VERSION=1`` and
  ``<SUBSYS>_CRON_NAME=<MGR NAME>`` (``ClassAdCronJob::Initialize``, ``classad_cron_job.cpp``);
  cwd ``CWD``. No path check (``validateHookPath`` is not called for cron jobs).
- Schedule (``CronJob::Schedule``, ``CronJob::Reaper``): Periodic and WaitForExit and OneShot
  start at initialisation; Periodic reruns every PERIOD; WaitForExit reruns PERIOD after it
  exited (0: at once); OneShot never again; OnDemand only on request.
- Output (``CronJobOut::Output``, ``cron_job_io.cpp``; ``ClassAdCronJob::ProcessOutput``):
  empty lines ignored; a line starting with ``-`` ends an ad, its rest (trimmed) being that ad's
  separator arguments; every other line is ``PREFIX`` + line, inserted alone (a bad line is
  logged and skipped). An ad with at least one good line gets ``<PREFIX>LastUpdate = now`` and
  is published. The output is processed whatever the exit status.
- Startd publication (``StartdCronJob::Publish``, ``startd_cron_job.cpp``): a first separator
  token without ``:`` is a tag naming the ad ``<job>.<tag>``; ``update``/``update:<bool>`` asks
  for a collector update. The named ad is *replaced* (``StartdNamedClassAd::AggregateFrom`` for
  a non-monitor ad). The job's own ad is registered when the job is created
  (``StartdCronJob::StartdCronJob``), tagged ads when first published, and slots merge them in
  that order (``StartdNamedClassAdList::Publish``) when ``SLOTS`` allows the slot and
  ``StartdNamedClassAd::ShouldMergeInto`` says so: ``SlotMergeConstraint`` (cron ad MY, slot ad
  TARGET), else a string ``SlotName`` or ``Name`` that prefixes the slot's ``Name``, else an
  integer ``SlotTypeId``, else ``SlotId``, else every slot. ``Name``, ``SlotID``,
  ``SlotMergeConstraint``, ``SlotName``, ``SlotTypeId`` are never merged
  (``dont_merge_these``).
- Schedd publication (``ScheddCronJob::Publish``): the separator arguments are ignored; every
  ad replaces the job's one named ad, which merges into the schedd ad.

RouteDeck departures: a cron job runs to its end inside the engine step (with the runner's
timeout and output cap, so ``KILL`` and ``JOB_LOAD``/``MAX_JOB_LOAD`` have nothing to act on; a
WaitForExit job exits at the time it started); a job killed for the timeout or the output cap,
or that could not start, publishes nothing. The executable must pass ``validateHookPath`` (the
hooks' rule; HTCondor runs cron jobs as the condor user without it). ``CONDITION`` and
``RECONFIG`` are read and shown but not acted on. Nothing runs without ``allow_run``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from engine.classad import ClassAdError, evaluate, is_true, make_ad
from engine.classad_ads import parse_old_ad
from engine.execute import hooks as hk
from engine.execute.argsenv import ArgsError, env_pairs, split_v2
from engine.hookrun import validate_hook_path

STARTD_CRON, SCHEDD_CRON = "STARTD_CRON", "SCHEDD_CRON"
PERIODIC, WAIT_FOR_EXIT, ONE_SHOT, ON_DEMAND = "Periodic", "WaitForExit", "OneShot", "OnDemand"
MODES = {m.lower(): m for m in (WAIT_FOR_EXIT, PERIODIC, ONE_SHOT, ON_DEMAND)}
NO_MERGE = frozenset(a.lower() for a in ("Name", "SlotID", "SlotMergeConstraint", "SlotName", "SlotTypeId"))
MAX_LINES = 10_000  # output lines looked at per run (the output cap bounds their size)
_PERIOD = re.compile(r"\s*([+-]?\d+)(.?)", re.S)


@dataclass(frozen=True)
class CronProblem:
    """A job skipped or a knob ignored, with where it was set (``file:line``)."""

    job: str
    knob: str
    where: str
    message: str
    fatal: bool  # the job is skipped (HTCondor: "Failed to initialize job ...; skipping")

    def __str__(self) -> str:
        return f"{self.where}: {'error' if self.fatal else 'warning'}: {self.knob}: {self.message}"


@dataclass(frozen=True)
class CronJobParams:
    mgr: str  # STARTD_CRON / SCHEDD_CRON
    name: str
    executable: str
    mode: str
    period: int
    prefix: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    slots: tuple[int, ...] = ()  # empty: all slots
    condition: str | None = None

    def knob(self, item: str) -> str:
        return f"{self.mgr}_{self.name}_{item}"


def _where(config: Any, knob: str) -> str:
    loc = config.location(knob) if hasattr(config, "location") else None
    return f"{loc.file}:{loc.line}" if loc is not None else "<config>"


def job_names(config: Any, mgr: str) -> list[str]:
    """``<MGR>_JOBLIST`` (``StringTokenIterator``: commas and whitespace), duplicates once."""
    text = hk._knob(config, f"{mgr}_JOBLIST") or ""
    return list(dict.fromkeys(w for w in re.split(r"[\s,]+", text) if w))


def parse_period(text: str) -> int | None:
    """``sscanf("%lld%c")`` with an ``s``/``m``/``h`` modifier; None when HTCondor refuses it."""
    m = _PERIOD.match(text)
    if m is None:
        return None
    mult = {"": 1, "s": 1, "m": 60, "h": 3600}.get(m[2].lower())
    return None if mult is None else int(m[1]) * mult


def split_args(text: str, knob: str) -> list[str]:
    """``AppendArgsV1RawOrV2Quoted``: ``"..."`` is V2, anything else V1 (whitespace)."""
    t = text.strip()
    if len(t) >= 2 and t[0] == '"' and t[-1] == '"':
        return split_v2(t[1:-1].replace('""', '"'), knob)
    return t.split()


def split_env(text: str, knob: str) -> dict[str, str]:
    """``MergeFromV1RawOrV2Quoted``: ``"..."`` is V2 (whitespace), else V1 (``;``)."""
    t = text.strip()
    if len(t) >= 2 and t[0] == '"' and t[-1] == '"':
        words = split_v2(t[1:-1].replace('""', '"'), knob)
    else:
        words = [w.strip() for w in t.split(";") if w.strip()]
    return env_pairs(words, knob)


def load_jobs(config: Any, mgr: str) -> tuple[list[CronJobParams], list[CronProblem]]:
    """The usable jobs of one manager and every problem found (``CronJobParams::Initialize``)."""
    jobs: list[CronJobParams] = []
    problems: list[CronProblem] = []
    for name in job_names(config, mgr):
        def get(item: str) -> str | None:
            return hk._knob(config, f"{mgr}_{name}_{item}")

        def bad(item: str, message: str, fatal: bool = True) -> None:
            knob = f"{mgr}_{name}_{item}"
            problems.append(CronProblem(name, knob, _where(config, knob if knob in config else f"{mgr}_JOBLIST"),
                                        message, fatal))

        exe = get("EXECUTABLE")
        if exe is None:
            bad("EXECUTABLE", f"no path found for job '{name}'; skipping")
            continue
        mode_text = get("MODE")
        mode = MODES.get(mode_text.lower()) if mode_text else PERIODIC
        if mode is None:
            bad("MODE", f"unknown job mode {mode_text!r} (Periodic, WaitForExit, OneShot, OnDemand); skipping")
            continue
        period_text = get("PERIOD")
        period = 0
        if mode in (ONE_SHOT, ON_DEMAND):
            if period_text:
                bad("PERIOD", f"ignoring the period of a {mode} job", fatal=False)
        elif period_text is None:
            bad("PERIOD", f"no job period found for job '{name}'; skipping")
            continue
        else:
            parsed = parse_period(period_text)
            if parsed is None or parsed < 0:
                bad("PERIOD", f"invalid job period {period_text!r} (a number with an optional s, m or h); skipping")
                continue
            if parsed == 0 and mode == PERIODIC:
                bad("PERIOD", "Periodic requires a non-zero period; skipping")
                continue
            period = parsed
        try:
            args = tuple(split_args(get("ARGS") or "", f"{mgr}_{name}_ARGS"))
        except ArgsError as exc:
            bad("ARGS", f"failed to parse arguments: {exc}; skipping")
            continue
        try:
            env = split_env(get("ENV") or "", f"{mgr}_{name}_ENV")
        except ArgsError as exc:
            bad("ENV", f"failed to parse environment: {exc}; skipping")
            continue
        slots: tuple[int, ...] = ()
        if mgr == STARTD_CRON and get("SLOTS"):
            words = [w for w in re.split(r"[\s,]+", get("SLOTS") or "") if w]
            if all(w[0].isdigit() for w in words):
                slots = tuple(int(re.match(r"\d+", w)[0]) for w in words)  # type: ignore[index]
            else:
                bad("SLOTS", "invalid slot number: ignoring the slot list (all slots)", fatal=False)
        problem = validate_hook_path(f"{mgr}_{name}_EXECUTABLE", exe)
        if problem:
            bad("EXECUTABLE", problem + " (RouteDeck checks cron executables like hooks)")
            continue
        jobs.append(CronJobParams(mgr, name, exe, mode, period, get("PREFIX") or "", args, env, get("CWD"),
                                  slots, get("CONDITION")))
    return jobs, problems


# ------------------------------------------------------------------------------------------
# output


@dataclass
class CronAd:
    """One published block: its separator arguments and attributes (prefix and LastUpdate added)."""

    args: str
    attrs: dict[str, str]


def parse_output(text: str, prefix: str, now: float, source: str = "cron output") -> tuple[list[CronAd], list[str]]:
    """``CronJobOut::Output`` + ``ClassAdCronJob::ProcessOutput``: the ads in output order and the
    bad lines (skipped, as HTCondor logs "Can't insert")."""
    ads: list[CronAd] = []
    bad: list[str] = []
    cur: dict[str, str] = {}
    sep = ""

    def flush() -> None:
        nonlocal cur, sep
        if cur:
            cur[f"{prefix}LastUpdate"] = str(int(now))
            ads.append(CronAd(sep, cur))
        cur, sep = {}, ""

    for n, raw in enumerate(text.split("\n")[:MAX_LINES], 1):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line:
            continue
        if line[0] == "-":
            if line[1:].strip():
                sep = line[1:].strip()
            flush()
            continue
        full = prefix + line
        try:
            cur.update(parse_old_ad(full, source) if not full.lstrip().startswith("#") else _refuse(full))
        except ClassAdError as exc:
            bad.append(f"{source}:{n}: can't insert {line[:100]!r}: {str(exc).split(': ', 1)[-1]}")
    flush()
    return ads, bad


def _refuse(line: str) -> dict[str, str]:
    raise ClassAdError("not an 'Attr = expr' line", line)


def ad_name(job: str, args: str) -> tuple[str, bool]:
    """``StartdCronJob::Publish``: the named ad's name and whether the job asked for an update."""
    words = [w for w in re.split(r"[\s,]+", args) if w]
    name, update = job, False
    if words and ":" not in words[0]:
        name = f"{job}.{words[0]}"
        words = words[1:]
    for w in words:
        key, colon, value = w.partition(":")
        if key.lower() == "update":
            update = True if not colon else value.strip().lower() in ("true", "1", "yes", "t")
    return name, update


def _value(attrs: Mapping[str, str], name: str, target: Any = None) -> Any:
    for k in attrs:
        if k.lower() == name.lower():
            return evaluate(k, make_ad(attrs), target)
    return None


def should_merge_into(attrs: Mapping[str, str], slot_ad: Mapping[str, str]) -> tuple[bool, str | None]:
    """``StartdNamedClassAd::ShouldMergeInto``: (merge?, the attribute that decided)."""
    low = {k.lower() for k in attrs}
    slot = make_ad(slot_ad)
    if "slotmergeconstraint" in low:
        return is_true(_value(attrs, "SlotMergeConstraint", slot)), "SlotMergeConstraint"
    for attr in ("SlotName", "Name"):
        wanted = _value(attrs, attr) if attr.lower() in low else None
        if isinstance(wanted, str):
            have = _value(slot_ad, "Name")
            if isinstance(have, str):
                if wanted:
                    used = "SlotName" if "slotname" in low else "Name"
                    return have.startswith(wanted), used
            break  # LookupString found one (SlotName first, else Name): Name is not looked at again
    for attr in ("SlotTypeId", "SlotId"):
        mine, theirs = _value(attrs, attr), _value(slot_ad, attr)
        if _is_int(mine) and _is_int(theirs):
            return mine == theirs, attr
    return True, None


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def merge_attrs(into: dict[str, str], attrs: Mapping[str, str], ignoring: frozenset[str] = NO_MERGE) -> None:
    """``MergeClassAdsIgnoring(dont_merge_these)``: case-insensitive replace."""
    low = {k.lower(): k for k in into}
    for k, v in attrs.items():
        if k.lower() in ignoring:
            continue
        old = low.get(k.lower())
        if old is not None and old != k:
            del into[old]
        into[k] = v
        low[k.lower()] = k


# ------------------------------------------------------------------------------------------
# the manager


@dataclass
class CronJobState:
    params: CronJobParams
    next_run: float | None = None  # None: not scheduled (OneShot done, OnDemand)
    runs: int = 0
    fails: int = 0
    last_run: float | None = None
    last_error: str | None = None


class CronManager:
    """One daemon's cron jobs on the engine's clock. ``ads`` keeps the named ads in registration
    order; :meth:`slot_attrs` / :meth:`schedd_attrs` give what a slot / the schedd ad merges."""

    def __init__(self, config: Any, mgr: str, runner: hk.HookRunner, *, subsys: str | None = None) -> None:
        self.mgr = mgr
        self.runner = runner
        self.jobs, self.problems = load_jobs(config, mgr)
        self.mgr_name = mgr.split("_")[0]  # "STARTD" / "SCHEDD" (SetName(name, name, "_cron"))
        self.subsys = subsys or self.mgr_name
        self.state = {j.name: CronJobState(j) for j in self.jobs}
        self.ads: dict[str, tuple[CronJobParams, dict[str, str]]] = {}
        for j in self.jobs:  # StartdCronJob's constructor registers the job's own (empty) ad
            self.ads[j.name] = (j, {})
        self.updates_requested = 0
        self.on_publish: Callable[[str, dict[str, str]], None] | None = None
        self._started = False

    def environment(self, job: CronJobParams) -> dict[str, str]:
        env = dict(os.environ)
        env.update(job.env)
        env[f"{self.mgr_name}_INTERFACE_VERSION"] = "1"
        env[f"{self.subsys}_CRON_NAME"] = self.mgr_name
        return env

    def next_time(self) -> float | None:
        """When a cron job next runs (None: none scheduled)."""
        return min((st.next_run for st in self.state.values() if st.next_run is not None), default=None)

    def step(self, now: float) -> None:
        if not self._started:  # CronJobMgr::Initialize → ScheduleAllJobs
            self._started = True
            for st in self.state.values():
                st.next_run = None if st.params.mode == ON_DEMAND else now
        for st in self.state.values():
            if st.next_run is not None and now >= st.next_run:
                self.run(st.params.name, now)

    def run(self, name: str, now: float) -> hk.Invocation:
        """Run one job now (the schedule's or an OnDemand request) and publish its output."""
        st = self.state[name]
        job = st.params
        inv = self.runner.invoke_path("cron", self.mgr, job.name, self.mgr_name.lower(), job.executable, "", now,
                                      args=job.args, env=self.environment(job), cwd=job.cwd, argv0=job.name)
        st.last_run = now
        if job.mode == PERIODIC:
            st.next_run = (st.next_run if st.next_run is not None else now) + job.period
            if st.next_run <= now:  # the engine skipped ahead: the timer fires once, then keeps its period
                st.next_run = now + job.period
        elif job.mode == WAIT_FOR_EXIT:
            st.next_run = now + job.period if job.period > 0 else now + 1  # "at once": the next step
        else:
            st.next_run = None
        r = inv.result
        if r is None:
            inv.decision = "withheld"
            return inv
        if r.unfinished:
            st.fails += 1
            inv.error = st.last_error = r.describe()
            inv.decision = "nothing published"
            return inv
        st.runs += 1
        ads, bad = parse_output(r.stdout, job.prefix, now, f"{job.executable} stdout")
        published: dict[str, str] = {}
        names: list[str] = []
        for ad in ads:
            if self.mgr == STARTD_CRON:
                ad_name_, update = ad_name(job.name, ad.args)
            else:
                ad_name_, update = job.name, False
            self.ads[ad_name_] = (job, dict(ad.attrs))  # replaced in place (dict keeps the order)
            self.updates_requested += update
            published.update(ad.attrs)
            names.append(ad_name_)
            if self.on_publish is not None:
                self.on_publish(ad_name_, ad.attrs)
        inv.parsed = published
        inv.error = st.last_error = "; ".join(bad) if bad else None
        inv.decision = ("published " + ", ".join(names)) if names else "no attributes published"
        return inv

    def slot_attrs(self, slot_id: int, slot_ad: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
        """What one slot merges (``StartdNamedClassAdList::Publish``) and why, ad by ad."""
        merged: dict[str, str] = {}
        why: list[str] = []
        base = dict(slot_ad)
        for name, (job, attrs) in self.ads.items():
            if not attrs:
                continue
            if job.slots and slot_id not in job.slots:
                why.append(f"{name}: not in {job.knob('SLOTS')}")
                continue
            ok, used = should_merge_into(attrs, base)
            if ok:
                merge_attrs(merged, attrs)
                merge_attrs(base, attrs)
                why.append(f"{name}: merged" + (f" ({used} matches)" if used else ""))
            elif used:
                why.append(f"{name}: not merged ({used} does not match)")
        return merged, why

    def schedd_attrs(self) -> dict[str, str]:
        """``Scheduler::adlist_publish``: every named ad merged into the schedd ad."""
        merged: dict[str, str] = {}
        for _job, attrs in self.ads.values():
            merge_attrs(merged, attrs, ignoring=frozenset())
        return merged
