"""The one set of row rules every mode's snapshot is made of: route rows, cron rows, queue counts
and the event ring (demo, watch and replay all build their snapshots with these).

Sources: htcondor.md §1.5 (a route accepts jobs unless its throttle, idle limit or MaxJobs says
no, in that order: ``JobRoute::AcceptingMoreJobs``), §2.4 (the ``DeferralTime`` the schedd holds;
hold code 25 for an invalid schedule), §2.5 (hold code 20 for a missed run). Design decisions and
invariants:

- A route's state and reason come only from :func:`engine.router.throttle.route_state` (the live
  router's rule and wording, "≥"); recorded modes give it a :class:`RouteStats` rebuilt from the
  routed copies, so a recorded and a live row of the same moment say the same thing.
- Queue counts always carry the same keys (``QUEUE_KEYS``, zero counts included) in every mode;
  other statuses (transferring, suspended, …) are added when present.
- A cron row's next runs and the ≥ 10.3 schedd's prediction come from the crondor engine at the
  snapshot's moment; its ``DeferralTime`` is the value the caller's schedd (live or rebuilt from
  a log) holds. ``waiting``/``running`` and the moment the next runs follow are
  :func:`engine.crondor.deferral.run_state` (the one boundary rule: at the second
  ``DeferralTime + DeferralOffset`` the job runs). ``state`` is ``invalid`` for a schedule that cannot be parsed (held or not: the
  schedd holds it with code 25), ``held`` for any other hold (``hold_code`` tells a missed run,
  20, from a user's hold, 1).
- The event ring is two bounded rings numbered from one sequence: a burst of job events never
  pushes a throttle or config event out before a snapshot carries it.
"""

from __future__ import annotations

import heapq
from collections import deque
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from engine.contract import snapshot as S
from engine.contract.codes import JobStatus
from engine.crondor.deferral import run_state
from engine.router.throttle import RouteStats, route_state
from engine.schedd.cron import ATTRS as CRON_ATTRS
from engine.schedd.cron import schedule_of

QUEUE_KEYS = ("idle", "running", "held", "removed", "completed")
STATE_KEYS = {1: "idle", 2: "running", 3: "removed", 4: "completed", 5: "held", 6: "transferring", 7: "suspended"}

EVENT_RING = 500  # job events kept (job-routed, job-finished, …: thousands per minute at max speed)
NOTABLE_RING = 200  # everything else: throttles, config reloads/rejections, hook failures, …
SNAPSHOT_JOB_EVENTS = 200  # job events per snapshot; the notable ring rides along whole
# Per-job facts: high volume, so they get their own ring and cannot push the notable ones out.
JOB_KINDS = frozenset({"routing-failed", "orphan-adopted", "orphan-removed", "orphan-yielded", "policy-fired"})


def is_job_event(kind: str) -> bool:
    return kind.startswith("job-") or kind in JOB_KINDS


# ------------------------------------------------------------------------------------------ queue


def queue_counts(statuses: Iterable[int | None] | Mapping[int | None, int]) -> Mapping[str, int]:
    """Jobs by status name, every key of ``QUEUE_KEYS`` present (zero included).

    Takes either job statuses one by one or a {status: count} mapping."""
    counts = {k: 0 for k in QUEUE_KEYS}
    items = statuses.items() if isinstance(statuses, Mapping) else ((s, 1) for s in statuses)
    for st, n in items:
        key = STATE_KEYS.get(st, str(st)) if st is not None else "unknown"
        counts[key] = counts.get(key, 0) + n
    return MappingProxyType(counts)


# ------------------------------------------------------------------------------------------ routes


class _Limits:
    __slots__ = ("max_jobs", "max_idle_jobs")

    def __init__(self, max_jobs: int, max_idle: int) -> None:
        # an unknown MaxJobs (no routing table) never makes a route full
        self.max_jobs = max_jobs if max_jobs >= 0 else 1 << 62
        self.max_idle_jobs = max_idle


def recorded_route_state(stats: RouteStats, max_jobs: int, max_idle: int) -> tuple[str, str | None]:
    """(state, reason) of a route by the router's own rule (module docstring)."""
    _ok, state, reason = route_state(_Limits(max_jobs, max_idle), stats)
    return state, reason


# ------------------------------------------------------------------------------------------ cron


def cron_row(job: str, attrs: Any, *, status: int, deferral: int | None, now: float, tz: str,
             runs: Callable[[Any, float], tuple[tuple[int, ...], tuple[int, ...]]],
             text: Callable[[str | None], Any], number: Callable[[str | None], int | None]) -> S.CronView:
    """One crondor row (module docstring). ``runs(attrs, now)`` gives (RouteDeck's next runs,
    the ≥ 10.3 schedd's); ``text``/``number`` read a string / integer attribute value."""
    sched = schedule_of(attrs.as_dict() if hasattr(attrs, "as_dict") else attrs)
    rs = run_state(sched.valid, status, deferral, now, number(attrs.get("DeferralOffset")) or 0)
    state = rs.state
    next_runs, schedd = runs(attrs, rs.runs_after) if sched.valid else ((), ())
    lints = ()
    if next_runs and schedd and next_runs[0] != schedd[0]:
        lints = (f"an HTCondor >= 10.3 schedd would pick {schedd[0]} instead of {next_runs[0]} "
                 "(its CronTab::nextRunTime; documented rule: the manual's Time Scheduling for Job Execution)",)
    fields = tuple((lambda v, raw: v if v is not None else raw)(text(attrs.get(n)), attrs.get(n)) for n in CRON_ATTRS)
    return S.CronView(
        job=job, fields=fields, status=status, deferral_time=deferral,
        window=number(attrs.get("DeferralWindow")) or 0, prep_time=number(attrs.get("DeferralPrepTime")) or 0,
        next_runs=next_runs, schedd_runs=schedd, state=state, tz=tz, lints=lints,
        hold_reason=text(attrs.get("HoldReason")) if status == JobStatus.HELD else None,
        hold_code=number(attrs.get("HoldReasonCode")) if status == JobStatus.HELD else None)


# ------------------------------------------------------------------------------------------ events


class EventRing:
    """Two bounded rings numbered from one sequence (module docstring)."""

    def __init__(self, job_ring: int = EVENT_RING, notable_ring: int = NOTABLE_RING) -> None:
        self.job_events: deque[S.Event] = deque(maxlen=job_ring)
        self.notable_events: deque[S.Event] = deque(maxlen=notable_ring)
        self.seq = 0

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def record(self, event: S.Event) -> None:
        (self.job_events if is_job_event(event.kind) else self.notable_events).append(event)

    def emit(self, time: float, kind: str, message: str, level: str = "info", route: str | None = None,
             job: str | None = None) -> S.Event:
        event = S.Event(self.next_seq(), time, kind, message, level, route, job)
        self.record(event)
        return event

    def __iter__(self):
        """Every event kept, oldest first (both rings merged by sequence number)."""
        return heapq.merge(self.job_events, self.notable_events, key=lambda e: e.seq)

    def __len__(self) -> int:
        return len(self.job_events) + len(self.notable_events)

    def recent(self, job_limit: int = SNAPSHOT_JOB_EVENTS) -> tuple[S.Event, ...]:
        """The notable ring whole plus the last ``job_limit`` job events, merged by sequence number."""
        jobs = self.job_events
        if len(jobs) > job_limit:
            jobs = list(jobs)[-job_limit:]
        return tuple(heapq.merge(jobs, self.notable_events, key=lambda e: e.seq))


_POLICIES: dict[int, tuple[Any, tuple[S.PolicyState, ...]]] = {}


def policy_states(config: Any) -> tuple[S.PolicyState, ...]:
    """The config's periodic policies and whether each parses (``Snapshot.policies``), worked out
    once per config object (a reload is a new one)."""
    if config is None or not hasattr(config, "get"):
        return ()
    kept = _POLICIES.get(id(config))
    if kept is not None and kept[0] is config:
        return kept[1]
    # the policy checker: only for a config's policies (the demo, watch), off replay's start-up (issue 27)
    from engine.lang.user_policy import policy_checks  # noqa: PLC0415 - only with a config

    states = tuple(S.PolicyState(c.knob, c.parses, c.note) for c in policy_checks(config.get))
    if len(_POLICIES) > 16:
        _POLICIES.clear()
    _POLICIES[id(config)] = (config, states)
    return states

