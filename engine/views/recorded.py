"""Build the UI's :class:`~engine.contract.snapshot.Snapshot` from a recorded queue state.

Used by replay and by watch, both on an ``engine.queue.jobqueue.JobQueue`` (its ``table``:
key → {attribute: value text}); the demo builds its snapshot in ``engine.views.build``
from its live router, with the same row rules (``engine.views.rows``). Sources: htcondor.md §3.1 (keys, cluster chaining),
§1.5 (what a route's counts mean), §1.6 (routed copy attributes), §1.9 (router_q's view of a
routed copy). Design decisions and invariants:

- A job's effective ad is its cluster ad ``0<c>.-1`` overlaid with its proc ad ``<c>.<p>``
  (proc wins), as the schedd chains them. Attribute names are looked up as HTCondor writes
  them (``RouteName``, ``JobStatus``, …); the queue stores every name under that one
  spelling (``engine.queue.records.canonical_name``), so a log written with other
  capitalisation is read the same.
- A *routed copy* is a job whose ``RouteName`` is defined (condor_router_q's constraint,
  htcondor.md §1.9); per-route counts come only from routed copies present in the recorded
  queue: ``routed`` = copies on the route (the router tracks a copy until it is removed from
  the queue), ``idle`` = routed − running (held copies count as idle, as in HTCondor §1.5).
- Running and held are counted as *the router last saw them* ("router view"), because that is
  what the router's own figures (and RouteDeck's live board) show: ``is_running``/``is_held``
  are refreshed only at the status check (§1.5), and that check mirrors the copy's status into
  the source job and sets the source's ``RoutedToJobId`` at its first push (§1.6). So a copy
  whose source (``RoutedFromJobId``) does not point back at it yet counts as idle, and
  otherwise it has the source's status. A copy without a source in the queue (or without
  ``RoutedFromJobId``) has its own status. ``route_counts(..., router_view=False)`` gives the
  queue's own view. With this rule a demo recording replays with exactly the live counts
  (tests/engine/feeds/test_replay_demo.py).
- A *source* job is one with ``RoutedToJobId`` or ``Managed == "External"``.
- Values are evaluated as literals through :mod:`engine.classad` with a per-text cache, so
  100,000 jobs with a handful of distinct status texts cost dictionary look-ups.
- Route limits come from an optional routing table (``limits``: name → (max_jobs, max_idle));
  without one they read -1 ("unknown"). State and reason are the live router's rule
  (``engine.views.rows``): only the rebuilt throttle can stop a route without a table.
- Rows keep the order they were first shown in (``route_order``, kept by the feed): the table's
  routes first, then recorded ones as they appeared — no row changes place between snapshots.
- Settling and showing are apart: :func:`take` (a feed's advance, a player's move) takes the
  queue's change events into the rows and counts and appends new routes to ``route_order``;
  :func:`view_of` reads what it settled into an immutable :class:`~engine.views.snapshot.View`
  (:func:`settle` is both); :func:`engine.views.snapshot.snapshot_of` builds the snapshot from
  it and changes nothing.
- Cron rows carry the ``DeferralTime`` the feed's rebuilt schedd holds (``deferral``); it is not
  in the log (htcondor.md §2.4).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

from engine import classad
from engine.contract.codes import JobStatus
from engine.crondor.zones import get_zone
from engine.router.throttle import RouteStats
from engine.schedd.cron import ATTRS as CRON_ATTRS
from engine.schedd.cron import view_runs
from engine.queue.job import schedd_status
from engine.queue.records import job_order
from engine.contract.snapshot import CronView, RouteView
from engine.views.rows import cron_row, queue_counts, recorded_route_state
from engine.views.snapshot import View


def literal(text: str | None) -> Any:
    """The value of a literal (or constant) value text; None when absent, undefined or bad.

    Plain integers and plain strings (no escape, no inner quote) are read directly — they are
    most values of a queue and mostly distinct (times, ids), so a cache would not help; the
    rest goes to classad2 through engine.classad, cached per text."""
    if text is None:
        return None
    if text.isascii() and text.isdigit():
        return int(text)
    plain = classad.plain_string(text)
    return plain if plain is not None else _evaluated(text)


@functools.lru_cache(maxsize=65536)
def _evaluated(text: str) -> Any:
    try:
        v = classad.evaluate(text)
    except classad.ClassAdError:
        return None
    if classad.is_undefined(v) or classad.is_error(v):
        return None
    return v


def literal_int(text: str | None) -> int | None:
    if text is not None and text.isdigit() and text.isascii():  # literal's plain integer, at once
        return int(text)
    v = literal(text)
    return classad.as_int(v) if v is not None and not isinstance(v, str) else None


def literal_str(text: str | None) -> str | None:
    v = literal(text)
    return v if isinstance(v, str) else None


class Effective:
    """A proc ad chained to its cluster ad, read-only (no copy: snapshots of 100,000 jobs)."""

    __slots__ = ("proc", "cluster")

    def __init__(self, proc: Mapping[str, str], cluster: Mapping[str, str] | None) -> None:
        self.proc = proc
        self.cluster = cluster

    def get(self, name: str, default: Any = None) -> Any:
        v = self.proc.get(name)
        if v is None and self.cluster is not None:
            v = self.cluster.get(name)
        return default if v is None else v

    def __contains__(self, name: object) -> bool:
        return name in self.proc or (self.cluster is not None and name in self.cluster)

    def as_dict(self) -> dict[str, str]:
        out = dict(self.cluster or {})
        out.update(self.proc)
        return out


def iter_jobs(ads: Mapping[str, Mapping[str, str]]) -> Iterator[tuple[str, Effective]]:
    """(job id "c.p", effective ad) of every proc ad, in key order of the queue."""
    for key, ad in ads.items():
        if key[0] == "0":
            continue  # header, user records and cluster ads all start with "0"
        c, dot, p = key.partition(".")
        if not dot or not p or p[0] == "-":
            continue
        yield key, Effective(ad, ads.get("0" + c + ".-1"))


@dataclass
class RouteCounts:
    routed: int = 0
    running: int = 0
    held: int = 0
    completed: int = 0
    removed: int = 0
    first_seen: int = 0  # order of first appearance in the queue (stable board order)

    @property
    def idle(self) -> int:
        return self.routed - self.running

    def add(self, status: int | None, n: int = 1) -> None:
        """Count (``n`` 1) or uncount (-1) one routed copy seen in ``status``."""
        self.routed += n
        field = _STATUS_FIELD.get(status)  # type: ignore[arg-type]
        if field is not None:
            setattr(self, field, getattr(self, field) + n)


_STATUS_FIELD = {JobStatus.RUNNING: "running", JobStatus.TRANSFERRING_OUTPUT: "running", JobStatus.HELD: "held",
                 JobStatus.COMPLETED: "completed", JobStatus.REMOVED: "removed"}

CRON_ROW_STATUSES = (JobStatus.IDLE, JobStatus.RUNNING, JobStatus.HELD)


def job_status(attrs: Any) -> int:
    """The job's status as the schedd has it (``engine.queue.job.schedd_status``: Idle, or its
    ``InitialJobStatus``, when the ad has no integer ``JobStatus``)."""
    return schedd_status(literal_int(attrs.get("JobStatus")), literal_int(attrs.get("InitialJobStatus")))


def is_cron_row(attrs: Any) -> bool:
    """A crondor row: a job with any ``Cron*`` attribute, idle, running or held (htcondor.md §2.4)."""
    return any(a in attrs for a in CRON_ATTRS) and job_status(attrs) in CRON_ROW_STATUSES


def seen_status(job: str, attrs: Any, ads: Mapping[str, Mapping[str, str]]) -> int | None:
    """The routed copy's status as the router last saw it (module docstring, "router view")."""
    src = literal_str(attrs.get("RoutedFromJobId"))
    if src is None:
        return literal_int(attrs.get("JobStatus"))
    proc = ads.get(src)
    if proc is None:
        return literal_int(attrs.get("JobStatus"))  # source gone: nothing mirrors any more
    source = Effective(proc, ads.get("0" + src.partition(".")[0] + ".-1"))
    if literal_str(source.get("RoutedToJobId")) != job:
        return None  # not status-checked yet: the router counts it idle
    return literal_int(source.get("JobStatus"))


def route_counts(ads: Mapping[str, Mapping[str, str]], jobs: list | None = None,
                 router_view: bool = True) -> dict[str, RouteCounts]:
    """Per-route counts from the routed copies in the queue (module docstring), by a scan of every
    job; snapshots keep the same counts from change events (``engine.views.recorded_tally``)."""
    out: dict[str, RouteCounts] = {}
    for job, attrs in (jobs if jobs is not None else iter_jobs(ads)):
        name = literal_str(attrs.get("RouteName"))
        if name is None:
            continue
        rc = out.get(name)
        if rc is None:
            rc = out[name] = RouteCounts(first_seen=len(out))
        rc.add(seen_status(job, attrs, ads) if router_view else literal_int(attrs.get("JobStatus")))
    return out


def route_views(counts: Mapping[str, RouteCounts],
                limits: Mapping[str, tuple[int, int]] | None = None,
                figures: Mapping[str, Any] | None = None,
                order: list[str] | None = None, now: float | None = None,
                locations: Mapping[str, str] | None = None) -> tuple[RouteView, ...]:
    """Board rows: the table's routes in order (when given), then recorded routes not in it, in
    the order they were first seen (``order``, kept by the caller across snapshots so rows never
    change places: :func:`extend_order` appends new names to it when the feed settles; read
    here, never changed).

    ``figures`` (route name → :class:`engine.feeds.replay.stats.Figures`) adds the reconstructed
    recent counts and throttle. State and reason are the live router's rule
    (:func:`engine.views.rows.recorded_route_state`). ``locations``: the table's definitions
    (engine.views.figures.route_locations)."""
    order = extend_order(list(order or ()), counts, figures)  # a copy: a name not settled yet still shows
    names = list(limits or {}) + [n for n in order if n not in (limits or {})]
    rows = []
    for i, name in enumerate(names, 1):
        rc = counts.get(name) or RouteCounts()
        fig = (figures or {}).get(name)
        max_jobs, max_idle = (limits or {}).get(name, (-1, -1))
        stats = RouteStats(name=name, stats_begin_time=fig.window_start if fig is not None else 0.0,
                           num_jobs=rc.routed, num_running=rc.running, num_held=rc.held,
                           recent_routed=fig.recent_started if fig is not None else 0,
                           recent_succeeded=fig.recent_succeeded if fig is not None else 0,
                           recent_failed=fig.recent_failed if fig is not None else 0,
                           throttle=fig.throttle if fig is not None else 0.0)
        state, reason = recorded_route_state(stats, max_jobs, max_idle)
        if state != "throttled" and limits is not None and name not in limits:
            state, reason = "unlisted", "recorded copies of a route not in the routing table"
        rows.append(RouteView(
            index=i, name=name, source_label="recorded", syntax="transform", state=state, reason=reason,
            routed=rc.routed, idle=rc.idle, running=rc.running, held=rc.held, max_jobs=max_jobs,
            max_idle=max_idle, location=(locations or {}).get(name),
            **(_figure_fields(fig, stats, now) if fig is not None else _NO_FIGURES),
        ))
    return tuple(rows)


def extend_order(order: list[str], counts: Mapping[str, RouteCounts],
                 figures: Mapping[str, Any] | None = None) -> list[str]:
    """Append to ``order`` the routes it does not name yet: the counted ones in the order they
    were first seen, then those only the figures name (:func:`route_views`' row order)."""
    known = set(order)
    for n in sorted((n for n in counts if n not in known), key=lambda n: counts[n].first_seen):
        order.append(n)
        known.add(n)
    for n in (figures or {}):
        if n not in known:
            order.append(n)
            known.add(n)
    return order


_NO_FIGURES = dict(recent_started=0, recent_succeeded=0, recent_failed=0, failure_rate=0.0,
                   failure_threshold=0.0, throttle=None, window_start=0.0, next_reevaluation=0.0)


def _figure_fields(fig: Any, stats: RouteStats, now: float | None) -> dict:
    return dict(recent_started=fig.recent_started, recent_succeeded=fig.recent_succeeded,
                recent_failed=fig.recent_failed,
                failure_rate=stats.failure_rate(now) if now is not None else fig.failure_rate,
                failure_threshold=fig.threshold, throttle=fig.throttle if fig.throttle > 0 else None,
                window_start=fig.window_start, next_reevaluation=stats.next_reevaluation(),
                rate_history=fig.rate_history, **_totals(getattr(fig, "totals", None)))


def _totals(totals: tuple[int, int, int] | None) -> dict:
    """RouteView's ``*_total`` counters from a Figures' ``totals`` (none: a feed without them)."""
    if totals is None:
        return {}
    return dict(started_total=totals[0], succeeded_total=totals[1], failed_total=totals[2])


def cron_views(jobs: list, time: float, tz: str, deferral: Callable[[str], int | None]) -> tuple[CronView, ...]:
    """Crondor rows of the recorded queue's idle, running and held cron jobs, with the
    ``DeferralTime`` a schedd would hold (``deferral(job)``; htcondor.md §2.4: it is never logged)."""
    zone = get_zone(tz)

    def runs(attrs: Any, now: float) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return view_runs(attrs.as_dict(), now, zone)

    out = []
    for job, attrs in jobs:
        if not is_cron_row(attrs):
            continue
        out.append(cron_row(job, attrs, status=job_status(attrs), deferral=deferral(job), now=time, tz=tz, runs=runs,
                            text=literal_str, number=literal_int))
    out.sort(key=lambda c: job_order(c.job))
    return tuple(out)


def take(ads: Mapping[str, dict], *, rows: Any, route_order: list[str] | None = None,
         figures: Mapping[str, Any] | None = None, jobs: bool = True) -> None:
    """Take the queue's change events into the rows and the tally and append new routes to
    ``route_order`` (the state-changing half of :func:`settle`). ``jobs`` False: the jobs table
    is not brought up to date (a view without it: :func:`view_of`)."""
    # rows come from the shared row index (engine.views.recorded_rows over engine.views.build.RowIndex)
    # and the route counts, cron jobs and job count from its tally (engine.views.recorded_tally):
    # only jobs that changed since the last take are looked at again
    rows.rebind(ads)
    rows.tally.update(ads)
    if jobs:
        rows.table()
    if route_order is not None:
        extend_order(route_order, rows.tally.counts, figures)


def view_of(ads: Mapping[str, dict], *, rows: Any, time: float, limits: Mapping[str, tuple[int, int]] | None = None,
            figures: Mapping[str, Any] | None = None, route_order: list[str] | None = None, jobs_version: int = 0,
            tz: str = "UTC", deferral: Callable[[str], int | None] | None = None,
            locations: Mapping[str, str] | None = None, jobs: bool = True) -> View:
    """The view of ``ads`` at ``time`` from what the last :func:`take` settled: a read, which changes
    nothing (the jobs table as the row index last built it). ``jobs`` False: without the jobs
    table (``()``; the headless ``replay --json`` without ``--jobs``), its counts by status read
    from the ads (``RowIndex.counted``)."""
    tally = rows.tally
    return View(
        time=time, routes=route_views(tally.counts, limits, figures, route_order, time, locations),
        queue_counts=queue_counts(rows.index.status_counts if jobs else rows.index.counted()),
        total_jobs=len(tally.procs), jobs=rows.index.cached if jobs else (),
        jobs_version=jobs_version,
        cron_jobs=cron_views(tally.cron_jobs(ads), time, tz, deferral or (lambda _job: None)),
    )


def settle(ads: Mapping[str, dict], *, rows: Any, time: float, limits: Mapping[str, tuple[int, int]] | None = None,
           figures: Mapping[str, Any] | None = None, route_order: list[str] | None = None, jobs_version: int = 0,
           tz: str = "UTC", deferral: Callable[[str], int | None] | None = None,
           locations: Mapping[str, str] | None = None, jobs: bool = True) -> View:
    """:func:`take`, then :func:`view_of` at ``time`` (a feed's advance; nothing a snapshot does)."""
    take(ads, rows=rows, route_order=route_order, figures=figures, jobs=jobs)
    return view_of(ads, rows=rows, time=time, limits=limits, figures=figures, route_order=route_order,
                   jobs_version=jobs_version, tz=tz, deferral=deferral, locations=locations, jobs=jobs)
