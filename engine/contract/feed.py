"""What a feed (demo, watch, replay) is to the runtime and to the queries (``engine.views.queries``):
:class:`FeedBase` declares the members every feed has and the optional abilities with typed
"not offered" defaults; a feed subclasses it and overrides what it offers, so callers read members
instead of probing with ``getattr``/``hasattr`` (issue 26). An ability that can also answer "nothing" (no candidate, no job) says "not offered" with
:data:`NOT_OFFERED` (``why_not_candidate``) or None (the others, which answer something otherwise)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Iterable, Literal

from engine.contract import snapshot as S


class Unavailable(enum.Enum):
    """The typed "this feed does not offer it" of an ability whose None is an answer."""

    NOT_OFFERED = "not offered"


NOT_OFFERED = Unavailable.NOT_OFFERED


@dataclass(frozen=True)
class Check:
    """One step of the router's decision for a job, as the why-not screen shows it."""

    label: str
    ok: bool | None  # None = informational
    detail: str


@dataclass(frozen=True)
class WhyNot:
    """A feed's answer to "why is this job not routed": the verdict and the steps, in order."""

    verdict: str | None
    checks: tuple[Check, ...]

    @classmethod
    def of(cls, verdict: str | None, steps: Iterable[tuple[str, bool | None, str, str | None]]) -> WhyNot:
        """From ``(label, ok, detail, route)`` steps (the router's and the ledger's explanations):
        a step on a route is labelled ``[route] label``; an empty verdict is None."""
        return cls(verdict or None, tuple(Check(f"[{route}] {label}" if route else str(label),
                                                None if ok is None else bool(ok), str(detail))
                                          for label, ok, detail, route in steps))


class FeedBase:
    """What a data source gives the runtime (``engine.runtime.Runtime``): the demo's
    ``engine.feeds.demo.Simulation``, ``engine.feeds.watch.feed.WatchFeed``,
    ``engine.feeds.replay.feed.ReplayFeed``.

    Every feed has: ``now`` (where the feed is, on the runtime clock), ``next_time()`` (when it next
    has something to do), ``step(t)`` (everything due up to ``t``; never goes back), ``handle``,
    ``emit`` and ``snapshot``. ``controls`` (``engine.contract.snapshot.CONTROLS``) says which
    commands apply; the runtime refuses the others and handles pause/speed/step itself, through the
    clock, so ``handle`` gets only the rest.

    Defaults for what a feed does not offer: the full command set, stepped only as a whole
    (``sliceable``), no embedded execute node (``startd``), no failed write (``write_error``), no
    routing table it runs (``table``), no why-not, no why-not candidate, no job ads, no in-memory
    DeferralTime, no archived JobRouterLog."""

    now: float
    controls: frozenset[str] = frozenset(S.CONTROLS)
    # step(t) once or step(t1), step(t) give the same state: the runtime may step it action by
    # action to stay responsive to stop() (the demo)
    sliceable: bool = False
    startd: Any = None  # the embedded execute node, None when the feed has none
    write_error: str | None = None  # set while stalled on a failed write, None otherwise
    # the routing table the feed runs (engine.router.table.RoutingTable; the contract imports no
    # router), None when it runs none: replay and watch trace with their config files' table
    table: Any = None

    def why_not(self, job: str, now: float) -> WhyNot | None:
        """Why ``job`` is not routed at ``now``; None: this feed offers no routing explanation."""
        return None

    def why_not_candidate(self, route: str | None, now: float) -> tuple[str, str] | None | Literal[
            Unavailable.NOT_OFFERED]:
        """``(job, why picked)``: the job a why-not about ``route`` is most likely about, None when
        there is none; :data:`NOT_OFFERED` when the feed has no router to ask (the caller picks
        from the snapshot's rows)."""
        return NOT_OFFERED

    def ledger(self, now: float) -> list | None:
        """Every idle source job's why-not ledger entry at ``now`` (engine.router.unrouted.Entry, the
        entries of ``routedeck why``); None: this feed offers no ledger. Raises LookupError, with
        what to do, when the feed could but has no routing table (replay without --config)."""
        return None

    def router_log(self, now: float) -> dict | None | Literal[Unavailable.NOT_OFFERED]:
        """The real router's JobRouterLog at the recorded moment ``now`` (htcondor.md §1.5), as
        ``routedeck replay DIR --at T --json`` gives it under ``router_log``
        (``engine.feeds.replay.archive.router_log_at``): ``table`` (its last routing table at or
        before ``now``: ``time`` and ``routes``, each route's figures as the router printed them;
        None before its first) and ``lines`` (``time`` and ``text`` of the lines within 30 s).
        None: the feed could (a recorder's archive) but holds no JobRouterLog (recorded without
        ``--router-log``); :data:`NOT_OFFERED`: the feed reads no archive."""
        return NOT_OFFERED

    def job_ad(self, job: str) -> dict[str, str] | None:
        """The full ad of ``job`` (old-syntax texts; empty when the job is not in the queue);
        None: this feed offers no full ads (the caller uses the snapshot row's attributes)."""
        return None

    def deferral_time(self, job: str) -> int | None:
        """The schedd's in-memory DeferralTime of a crondor job (never logged, htcondor.md §2.4);
        None when the job has none or the feed keeps none (the snapshot row's stands in)."""
        return None

    def next_time(self) -> float:
        raise NotImplementedError

    def step(self, t: float) -> None:
        raise NotImplementedError

    def handle(self, command: Any) -> str | None:
        """Apply a command; an error text, or None."""
        raise NotImplementedError

    def emit(self, time: float, kind: str, message: str, level: str = "info", route: str | None = None,
             job: str | None = None) -> None:
        raise NotImplementedError

    def snapshot(self, seq: int = 0, *, speed: float = 1.0, paused: bool = False, engine_state: str = "running",
                 clock: str = "virtual", jobs: tuple = (), controls: frozenset[str] | None = None,
                 error: str | None = None) -> S.Snapshot:
        """One complete snapshot of what the last ``advance`` settled (a read): the runtime gives its
        part — ``controls`` (None: every control, the contract's default) and ``error`` (a crash's or a
        failed write's text)."""
        raise NotImplementedError

    def sync_log(self, speed: float, monotonic: Any) -> None:
        """Sync what the feed's own queue log holds before a snapshot is published (the demo's
        grouped fdatasync above real time, issue 30); ``monotonic`` is the runtime's wall clock.
        A feed that writes no log has nothing to sync."""

    def idle(self) -> bool:
        """One bounded unit of background work, done by the runtime's thread when it would
        otherwise wait (the replay's checkpoints, issue 30); True when there is more to do. A feed
        with nothing to prepare returns False."""
        return False

    def advance(self) -> None:
        """Bring the state a snapshot reads up to the feed's now (windows closed, change events taken
        into the jobs table, events published), so that ``snapshot()`` only reads and changes
        nothing (issue 26); the runtime calls it before each snapshot. A feed whose snapshot reads
        its state as it is has nothing to do."""
