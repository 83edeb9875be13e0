"""Facts the router reports while it polls: small frozen dataclasses, one class per kind.

The runtime drains them (``JobRouter.drain_events``) and turns them into numbered
``engine.contract.snapshot.Event`` rows (:meth:`RouterEvent.to_snapshot_event`). Names are past tense
(``JobRouted``), the ``kind`` strings are the snapshot vocabulary (``"route-throttled"``).
Every event carries the engine time it happened at; none is ever mutated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from engine.router.throttle import THROTTLE_UPDATE_INTERVAL, throttle_desc
from engine.contract.snapshot import Event

@dataclass(frozen=True)
class RouterEvent:
    time: float
    message: str
    route: str | None = None
    job: str | None = None  # source job "c.p"
    kind: ClassVar[str] = "router"
    level: ClassVar[str] = "info"

    def to_snapshot_event(self, seq: int):
        return Event(seq=seq, time=self.time, kind=self.kind, message=self.message,
                     level=self.level, route=self.route, job=self.job)


@dataclass(frozen=True)
class JobRouted(RouterEvent):
    dest: str | None = None  # routed copy "c.p"
    kind: ClassVar[str] = "job-routed"


@dataclass(frozen=True)
class JobEditedInPlace(RouterEvent):
    kind: ClassVar[str] = "job-edited"


@dataclass(frozen=True)
class JobRoutingFailed(RouterEvent):
    kind: ClassVar[str] = "routing-failed"
    level: ClassVar[str] = "warning"


@dataclass(frozen=True)
class JobFinished(RouterEvent):
    success: bool = True
    kind: ClassVar[str] = "job-finished"


@dataclass(frozen=True)
class JobRerouted(RouterEvent):
    kind: ClassVar[str] = "job-rerouted"
    level: ClassVar[str] = "warning"


@dataclass(frozen=True)
class JobRetired(RouterEvent):
    outcome: str = "success"  # "success" | "failure" | "interrupted"
    kind: ClassVar[str] = "job-retired"


@dataclass(frozen=True)
class RouteThrottled(RouterEvent):
    throttle: float = 0.0
    kind: ClassVar[str] = "route-throttled"
    level: ClassVar[str] = "warning"


@dataclass(frozen=True)
class RouteUnthrottled(RouterEvent):
    kind: ClassVar[str] = "route-unthrottled"


@dataclass(frozen=True)
class ThrottleAdjusted(RouterEvent):
    old: float = 0.0
    new: float = 0.0
    kind: ClassVar[str] = "throttle-adjusted"


@dataclass(frozen=True)
class HookFailed(RouterEvent):
    hook: str = ""
    kind: ClassVar[str] = "hook-failed"
    level: ClassVar[str] = "error"


@dataclass(frozen=True)
class HookWithheld(RouterEvent):
    """A hook program that would run but may not (no ``--allow-hooks``); said once per program."""

    hook: str = ""
    path: str = ""
    kind: ClassVar[str] = "hook-withheld"
    level: ClassVar[str] = "warning"


@dataclass(frozen=True)
class OrphanAdopted(RouterEvent):
    dest: str | None = None
    kind: ClassVar[str] = "orphan-adopted"


@dataclass(frozen=True)
class OrphanRemoved(RouterEvent):
    dest: str | None = None
    kind: ClassVar[str] = "orphan-removed"
    level: ClassVar[str] = "warning"


@dataclass(frozen=True)
class OrphanYielded(RouterEvent):
    kind: ClassVar[str] = "orphan-yielded"


@dataclass(frozen=True)
class PolicyFired(RouterEvent):
    action: str = ""  # "hold" | "remove"
    kind: ClassVar[str] = "policy-fired"
    level: ClassVar[str] = "warning"


@dataclass(frozen=True)
class TableSwitched(RouterEvent):
    kind: ClassVar[str] = "table-switched"


def throttle_events(now: float, route: str, adj: Any) -> list[RouterEvent]:
    """What a closed failure window tells (``adj``: a ``ThrottleAdjustment``): nothing when the
    throttle did not change; else the adjustment, plus "throttled" / "throttle removed" when it
    started or ended. One wording for the router, replay's figures and watch's."""
    if adj.old_throttle == adj.new_throttle:
        return []
    out: list[RouterEvent] = [ThrottleAdjusted(
        now, f"route {route}: throttle {throttle_desc(adj.old_throttle)} -> {throttle_desc(adj.new_throttle)} "
             f"({adj.explain()})", route, old=adj.old_throttle, new=adj.new_throttle)]
    if adj.old_throttle <= 0 < adj.new_throttle:
        out.append(RouteThrottled(now, f"{route} throttled: {adj.recent_failed} failures in {adj.delta:.0f} s; "
                                       f"at most {adj.new_throttle:.3g} jobs per {THROTTLE_UPDATE_INTERVAL} s",
                                  route, throttle=adj.new_throttle))
    elif adj.new_throttle <= 0 < adj.old_throttle:
        out.append(RouteUnthrottled(now, f"{route}: throttle removed", route))
    return out
