"""What the engine shows the UI: immutable snapshots, numbered events, and the commands back.

This module is the contract between the engine thread and any consumer (the Textual app, the
headless ``--json`` printers, tests). Invariants:

- Everything here is frozen and built only from immutable values (tuples, str, numbers,
  ``types.MappingProxyType`` over a dict nobody else holds), so a snapshot can cross threads
  without locks and be kept for as long as the consumer likes.
- Snapshots are published at a bounded rate and a newer one replaces an older one still queued;
  nothing is lost silently because every event carries a sequence number and the snapshot holds
  the ring of the most recent ones (a consumer that sees a gap in ``Event.seq`` knows it missed
  some and can say so).
- The jobs table is large (100,000 rows): it is rebuilt only when the queue changed
  (``jobs_version``) and shared between consecutive snapshots otherwise. The engine's is an
  immutable :class:`engine.rowseq.RowSeq` (chunks shared between snapshots, so a new table costs
  what changed); any sequence of rows (a ``tuple`` in tests) is accepted: read it through
  ``len``, iteration and indexing only.
- Times are epoch seconds of the engine's clock (virtual in demo and replay).
- Commands are imperative dataclasses (``ApplyRoutes``); events are facts in the past tense
  (``kind`` such as ``"route-throttled"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Sequence

# JobStatus names and letters, derived from engine.contract.codes.JobStatus (the one definition)
from engine.contract.codes import STATUS_LETTERS, STATUS_NAMES  # noqa: F401

ROUTE_STATES = ("accepting", "full", "idle-limit", "throttled", "disabled", "unlisted")

# What a UI may offer, per feed (``Snapshot.controls``): "pause" (Pause/Resume), "speed"
# (SetSpeed), "step" (Step), "seek" (Seek and bookmarks), "jobs" (hold/release/remove/qedit),
# "routes" (ApplyRoutes: switch the routing table), "execute" (the Hooks and Slots views: the feed
# has an embedded execute node; the runtime adds it to a feed's own controls when it has one). A
# feed lists only what applies to it; the runtime refuses the others, and the UI does not offer
# their keys.
EXECUTE = "execute"
CONTROLS = frozenset({"pause", "speed", "step", "seek", "jobs", "routes", EXECUTE})
HOOKS_IN_JSON = 100  # the most recent hook invocations in ``--json`` (the snapshot keeps up to 2000)

HELD_WITHIN = (300, 600, 1800, 3600)  # Snapshot.held_soon's windows (seconds, cumulative)


@dataclass(frozen=True)
class RouteView:
    """One row of the routes board (figures of the JobRouterLog table, htcondor.md §1.5)."""

    index: int  # 1-based match order; 0 for routes that are not enabled
    name: str
    source_label: str  # "JOB_ROUTER_ROUTE_X", "entries:1", …
    syntax: str  # "transform" | "classad"
    state: str  # one of ROUTE_STATES
    reason: str | None  # why it is not accepting, with the numbers
    routed: int  # num_jobs: tracked jobs on this route (not RETIRED)
    idle: int  # num_jobs - num_running (includes held copies and not-yet-submitted)
    running: int
    held: int
    max_jobs: int
    max_idle: int  # negative = no limit
    recent_started: int
    recent_succeeded: int
    recent_failed: int
    failure_rate: float  # failures per second in the current window
    failure_threshold: float
    throttle: float | None  # jobs per 600 s window; None = no throttle
    window_start: float  # stats_begin_time
    next_reevaluation: float  # window_start + 600
    rate_history: tuple[float, ...] = ()  # failure rate of past windows, oldest first (sparklines)
    routed_history: tuple[int, ...] = ()
    grid_resource: str | None = None
    requirements: str | None = None
    location: str | None = None  # "file:line" of the definition
    reported: "ReportedRoute | None" = None  # watch: the real router's own row (JobRouterLog)
    # started / succeeded / failed since the feed's statistics began (every closed 600 s window
    # plus the open one: RouteStats.totals); they never go back while the feed runs (a watched
    # log read again from its start begins again from 0)
    started_total: int = 0
    succeeded_total: int = 0
    failed_total: int = 0


@dataclass(frozen=True)
class ReportedRoute:
    """The real router's figures for a route, from its JobRouterLog table (htcondor.md §1.5).

    Shown beside RouteDeck's own counts in watch mode; ``time`` is the table's log time."""

    time: float | None
    submitted: int
    max_jobs: int
    idle: int
    max_idle: int
    throttle: float | None  # jobs per 600 s window; None = "none"
    recent_started: int | None
    recent_succeeded: int | None
    recent_failed: int | None


@dataclass(frozen=True)
class JobRow:
    """One job of the jobs screen: enough to sort, filter and draw a row."""

    job: str  # "c.p"
    status: int
    owner: str
    route: str | None  # RouteName of a routed copy, or the route its copy runs on (source)
    kind: str  # "source" | "routed" | "plain"
    routed_to: str | None  # source: RoutedToJobId
    routed_from: str | None  # routed copy: RoutedFromJobId
    qdate: int | None
    entered_status: int | None
    cmd: str = ""
    hold_reason: str | None = None
    deferral_time: int | None = None


@dataclass(frozen=True)
class CronView:
    """One crondor job (htcondor.md §2): its schedule, next DeferralTime and window."""

    job: str
    fields: tuple[str | None, str | None, str | None, str | None, str | None]  # m h dom mon dow
    status: int
    deferral_time: int | None
    window: int  # DeferralWindow
    prep_time: int  # DeferralPrepTime
    next_runs: tuple[int, ...]  # RouteDeck's correct next runs
    schedd_runs: tuple[int, ...]  # what an HTCondor >= 10.3 schedd would pick
    state: str  # "idle" | "waiting" (deferred, Running but not started) | "running" | "held" | "invalid"
    tz: str
    lints: tuple[str, ...] = ()
    hold_reason: str | None = None
    hold_code: int | None = None


@dataclass(frozen=True)
class SlotRow:
    """One slot of the embedded startd (htcondor.md §4.2; built by ``engine.views.execute``)."""

    name: str  # "slot1@host"
    slot_id: int
    state: str  # State: Owner | Unclaimed | Claimed | Preempting
    activity: str  # Activity: Idle | Busy | Vacating
    keyword: str | None  # the slot's hook keyword (None: the slot never fetches)
    job: str | None  # the claimed job's id
    claim: str | None  # "fetched" (FETCH_WORK) | "pushed" (a match) | None (no claim)
    last_fetch: int | None  # LastFetchWorkCompleted; None = never
    next_fetch: float | None  # when tryFetchWork will next run FETCH_WORK; None = not scheduled
    next_why: str  # why then (FetchWorkDelay, START false, no keyword)
    fetch_delay: int  # NextFetchWorkDelay: FetchWorkDelay as last evaluated
    cron_attrs: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # merged Startd Cron
    cron_why: tuple[str, ...] = ()  # which Startd Cron ads merged here and why


@dataclass(frozen=True)
class HookRow:
    """One hook invocation (fetch-work, starter or daemon ClassAd hook), oldest first in
    ``Snapshot.hooks``; ``seq`` numbers invocations from 1 over the feed's life, so a consumer
    tells new ones from those it has seen (the failure toasts)."""

    seq: int
    family: str  # "fetch" (startd) | "starter" | "cron"
    keyword: str
    hook: str  # FETCH_WORK, PREPARE_JOB, …, or the cron job's name
    target: str  # slot name, job id or cron job
    path: str
    args: tuple[str, ...]
    started: float  # engine time
    duration: float | None  # seconds the program ran (measured); None: withheld or not measured
    exit: int | None  # returncode (negative: signal); None: withheld, timed out, flooded, not started
    ended: str  # how it ended, in words ("exited with status 0", "timed out and was killed", …)
    withheld: bool  # not run: hooks need --allow-hooks outside the demo
    stdout_bytes: int
    parsed: Mapping[str, str]  # the ad it returned, as the engine read it
    error: str | None  # why its output was (partly) ignored, or how it failed to run
    decision: str  # what the startd/starter/cron did with it
    failure: str | None  # non-zero exit, timeout, flood, not started, garbage output; None = fine
    stdin: str = ""
    stdout: str = ""
    stderr: str = ""


@dataclass(frozen=True)
class Event:
    seq: int
    time: float
    kind: str  # "route-throttled", "route-unthrottled", "job-routed", "config-reloaded", "hook-failed", …
    message: str
    level: str = "info"  # "info" | "warning" | "error"
    route: str | None = None
    job: str | None = None


@dataclass(frozen=True)
class PolicyState:
    """One schedd periodic policy knob as the schedd takes it (engine.lang.user_policy.policy_checks):
    whether it parses; one that does not never fires (htcondor.md §8)."""

    knob: str
    parses: bool
    note: str = ""


@dataclass(frozen=True)
class Diagnostic:
    level: str
    message: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file else ""
        return f"{where}{self.level}: {self.message}"


@dataclass(frozen=True)
class ReplayMark:
    """A moment of a recorder's archive the replay bar marks (engine.feeds.replay.archive)."""

    time: float
    kind: str  # "generation": a compaction began a new log generation; "gap": records were missed
    transaction: int  # the step at which it is replayed


@dataclass(frozen=True)
class ReplayPosition:
    transaction: int  # index of the last applied transaction
    transactions: int  # total
    time: float
    start: float
    end: float
    times_inferred: bool  # True when the log has no `106 #` timestamps
    marks: tuple[ReplayMark, ...] = ()  # an archive's generation boundaries and gaps, in time order


@dataclass(frozen=True)
class Snapshot:
    seq: int
    time: float
    mode: str  # "demo" | "watch" | "replay"
    clock: str  # "virtual" | "real"
    speed: float
    paused: bool
    engine_state: str  # "starting" | "running" | "paused" | "stopped" | "crashed" | "stalled" (a write failed)
    routes: tuple[RouteView, ...]
    inactive_routes: tuple[RouteView, ...] = ()  # disabled / unlisted, flagged on the board
    queue_counts: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    total_jobs: int = 0
    jobs: Sequence[JobRow] = ()  # engine.rowseq.RowSeq from the engine; immutable
    jobs_version: int = 0
    cron_jobs: tuple[CronView, ...] = ()
    events: tuple[Event, ...] = ()  # the most recent events, oldest first
    table_version: int = 0
    config_files: tuple[str, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    routing_enabled: bool = True
    readonly: bool = False
    replay: ReplayPosition | None = None
    error: str | None = None  # the engine's crash text when "crashed", the failed write when "stalled"
    tz: str = "UTC"
    controls: frozenset[str] = CONTROLS  # what the UI may offer in this mode (CONTROLS)
    history_upto: int = 0  # events with seq <= this were re-told after a replay jump: history, not news
    schedd_ad: Mapping[str, str] | None = None  # demo with SCHEDD_CRON_* jobs: the schedd ad they feed
    slots: tuple[SlotRow, ...] = ()  # the embedded execute node's slots; () without one
    hooks: tuple[HookRow, ...] = ()  # its hook invocations, oldest first; () without one
    # watch (no speed: live): log seconds per second of the runtime's clock, when the watched log's
    # own clock clearly does not run at real time (a log written by ``demo --speed 30``: ~30);
    # None when about real time or not measured (engine.feeds.watch.pace.LogPace)
    log_rate: float | None = None
    # watch: the followed log's health (engine.metrics exports them; None in the other modes).
    # log_lag: seconds from the newest transaction's ``106 #`` time to now on the runtime's own
    # (wall) clock, None when the log has no timestamps yet; log_problems: the current log
    # generation's problems (engine.feeds.watch.follow.WatchEngine.problems, the last 50); generation:
    # how many times the log was read again from its start (rotated, replaced)
    log_lag: float | None = None
    log_problems: int | None = None
    log_generation: int | None = None
    # idle source jobs by why they wait (engine.router.unrouted.REASONS), when the feed was asked
    # to count them (``count_unrouted``: demo and watch with --metrics); None otherwise
    unrouted: Mapping[str, int] | None = None
    # the same tally's held-soon counts (routedeck_jobs_held_soon): S -> the idle source jobs the
    # schedd's periodic policy holds within S seconds, for S in HELD_WITHIN (cumulative); None
    # when ``unrouted`` is None
    held_soon: Mapping[int, int] | None = None
    # the schedd's SYSTEM_PERIODIC_* policies of the feed's config, each with whether it parses
    # (routedeck_policy_parses); () without a config
    policies: tuple[PolicyState, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The headless ``--json`` form (issue 5's documented keys). A limit that is not known or
        not set (negative in ``RouteView``) is null, never -1 (issue 11 item 19)."""
        return {
            "time": self.time,
            "mode": self.mode,
            "routes": [
                {
                    "name": r.name,
                    "routed": r.routed,
                    "idle": r.idle,
                    "running": r.running,
                    "held": r.held,
                    "max_jobs": _known(r.max_jobs),
                    "max_idle": _known(r.max_idle),
                    "recent_started": r.recent_started,
                    "recent_succeeded": r.recent_succeeded,
                    "recent_failed": r.recent_failed,
                    "failure_rate": round(r.failure_rate, 6),
                    "throttle": r.throttle,
                    "accepting": r.state == "accepting",
                    "not_accepting_reason": r.reason,
                    "state": r.state,
                    **({"router_log": {
                        "time": r.reported.time, "submitted": r.reported.submitted,
                        "max_jobs": _known(r.reported.max_jobs), "idle": r.reported.idle,
                        "max_idle": _known(r.reported.max_idle), "throttle": r.reported.throttle,
                        "recent_started": r.reported.recent_started,
                        "recent_succeeded": r.reported.recent_succeeded,
                        "recent_failed": r.reported.recent_failed,
                    }} if r.reported is not None else {}),
                }
                for r in self.routes
            ],
            "queue": dict(self.queue_counts),
            "total_jobs": self.total_jobs,
            "cron_jobs": [
                {
                    "job": c.job,
                    "deferral_time": c.deferral_time,
                    "next_runs": list(c.next_runs),
                    "schedd_runs": list(c.schedd_runs),
                    "state": c.state,
                    "window": c.window,
                    "prep_time": c.prep_time,
                    "hold_code": c.hold_code,  # 20: missed its run (§2.5); 25: invalid schedule (§2.4)
                }
                for c in self.cron_jobs
            ],
            "events": [
                {"seq": e.seq, "time": e.time, "kind": e.kind, "level": e.level, "message": e.message}
                for e in self.events
            ],
            # the demo's schedd ad with its SCHEDD_CRON_* attributes (old-syntax values), when it has any
            **({"schedd_ad": dict(self.schedd_ad)} if self.schedd_ad is not None else {}),
            "slots": [
                {
                    "name": s.name, "state": s.state, "activity": s.activity, "keyword": s.keyword,
                    "job": s.job, "claim": s.claim, "last_fetch": s.last_fetch, "next_fetch": s.next_fetch,
                    "next_fetch_why": s.next_why, "fetch_delay": s.fetch_delay, "cron_attrs": dict(s.cron_attrs),
                }
                for s in self.slots
            ],
            "hooks": [
                {
                    "seq": h.seq, "family": h.family, "keyword": h.keyword, "hook": h.hook, "target": h.target,
                    "path": h.path, "args": list(h.args), "started": h.started, "duration": h.duration,
                    "exit": h.exit, "ended": h.ended, "withheld": h.withheld, "stdout_bytes": h.stdout_bytes,
                    "parsed": dict(h.parsed), "error": h.error, "decision": h.decision, "failure": h.failure,
                }
                for h in self.hooks[-HOOKS_IN_JSON:]
            ],
            # only while a write fails (full disk, read-only state directory): the engine waits
            **({"engine_state": self.engine_state, "error": self.error} if self.engine_state == "stalled" else {}),
        }


def _known(n: int | None) -> int | None:
    return None if n is None or n < 0 else n


def frozen_map(d: Mapping[str, int]) -> Mapping[str, int]:
    return MappingProxyType(dict(d))
