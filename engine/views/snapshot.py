"""The one builder of the contract's :class:`~engine.contract.snapshot.Snapshot` (issue 26).

Every feed settles what it shows in its advance — the demo from its live router and queue
(``engine.views.build``), replay and watch from a recorded queue (``engine.views.recorded.settle``)
— into a :class:`View` and the fields only it has; :func:`snapshot_of` builds the complete
snapshot from them and the runtime's part (sequence, speed, state, controls, error), which are
its inputs: nothing is patched into a snapshot afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from engine.contract.snapshot import CronView, RouteView, Snapshot


@dataclass(frozen=True)
class View:
    """What a feed shows at one moment, settled by its advance (module docstring): immutable, so a
    snapshot built from it is a pure read, on any thread."""

    time: float
    routes: tuple[RouteView, ...]
    queue_counts: Mapping[str, int]
    total_jobs: int
    jobs: Any  # the jobs table (engine.rowseq.RowSeq), shared with the next view where unchanged
    jobs_version: int
    cron_jobs: tuple[CronView, ...]


def snapshot_of(view: View, *, seq: int, mode: str = "replay", speed: float = 1.0, paused: bool = True,
                with_jobs: bool = True, tz: str = "UTC", **given: Any) -> Snapshot:
    """The one snapshot of a settled view: reads, changes nothing. ``given`` are the fields the
    feed and the runtime add (the demo's inactive routes and execute node, the replay's position,
    the events, the runtime's state and controls), or show otherwise (watch's routes with the
    router's own figures)."""
    fields: dict[str, Any] = dict(
        clock="virtual" if mode == "replay" else "real", engine_state="paused" if paused else "running",
        time=view.time, routes=view.routes, queue_counts=view.queue_counts, total_jobs=view.total_jobs,
        jobs=view.jobs if with_jobs else (), jobs_version=view.jobs_version, cron_jobs=view.cron_jobs)
    fields.update(given)
    return Snapshot(seq=seq, mode=mode, speed=speed, paused=paused, tz=tz, **fields)
