"""The Prometheus series of one RouteDeck feed, read from its last published snapshot.

:class:`SnapshotCollector` is a ``prometheus_client`` custom collector: at every scrape it takes
the snapshot reference its ``source`` returns (``Runtime.latest``, or a :class:`Latest` the
headless loops put each snapshot in) and turns it into metric families. Snapshots are immutable
(engine.contract.snapshot), so a scrape reads one consistent state without a lock and never
calls into, waits for or blocks the engine thread; a scrape before the first snapshot gives no
series but the collector's own.

Decisions:

- Every series carries ``schedd`` (the config's ``SCHEDD_NAME``, the demo's name, or ``--name``);
  the route's series carry ``route``. No label comes from unbounded job data: the only per-job
  label is ``job`` on the crondor series (a schedd has few cron jobs).
- ``routedeck_route_jobs{state}``: ``idle`` is the idle copies *not* held (RouteView.idle, which
  counts held copies as idle as HTCondor does, minus ``held``), so the three states add up to
  the route's routed copies.
- A limit that is unset or unlimited (negative in RouteView: no ``MaxIdleJobs``, a watched route
  the config does not list) has no ``_max_*`` series: absent means "no limit", as PromQL's
  ``absent()`` / ``unless`` can tell; likewise no throttle, no ``routedeck_route_throttle_jobs``.
- The ``*_total`` counters are the engine's own cumulative figures (``RouteView.*_total``: the
  sum of every closed 600 s window's recent figures plus the open window's, kept in
  ``engine.router.throttle.RouteStats``), not running totals kept here from the snapshots a
  scrape happens to see: a window that closes between two scrapes would otherwise lose the jobs
  of its last seconds. They restart from 0 when the feed's statistics begin again (a new process,
  a watched log read again from its start), which Prometheus's ``rate()`` treats as a reset.
- Cost (bench/metrics.py): prometheus_client formats about 7 µs per sample, so rendering one
  snapshot whole costs about 5 ms at 50 routes and 50 ms at 500 (13 series per route). The server
  (engine.metrics.server.Exposition) renders each published snapshot once, on its own thread,
  encoding only the route families whose samples changed (:func:`snapshot_parts`), and scrapes
  copy the kept bytes; this collector (its fallback, ``exposition()``) keeps the
  families of the last snapshot it read for the next collect of the same snapshot.
- ``routedeck_idle_unrouted_jobs{reason}`` exists when the feed counts them (``Snapshot.unrouted``:
  the demo, and watch with a routing table in its config; ``--metrics`` turns the count on): the
  tally of the why-not ledger's verdicts (engine.router.unrouted, the pipeline ``routedeck why``
  prints), and ``routedeck_jobs_held_soon{within}`` the same tally's hold countdowns
  (``Snapshot.held_soon``); the log
  series exist in watch (``Snapshot.log_*``).
"""

from __future__ import annotations

import threading
from typing import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from engine.contract.codes import HoldCode
from engine.contract.snapshot import Snapshot

ENGINE_STATES = ("starting", "running", "paused", "stopped", "crashed", "stalled")
JOB_STATES = ("idle", "running", "held")

# name -> (type, help): every family the exporters can give (the dashboard's test checks its
# PromQL names against these; counters are named here with their exposed ``_total``)
METRICS: dict[str, tuple[str, str]] = {
    "routedeck_snapshot_timestamp_seconds": ("gauge", "The engine time of the snapshot these figures come from "
                                             "(virtual in the demo)."),
    "routedeck_engine_state": ("gauge", "The engine's state: 1 for the current one (starting, running, paused, "
                               "stopped, crashed, stalled)."),
    "routedeck_routing_enabled": ("gauge", "1 when the routing table enables routing."),
    "routedeck_queue_jobs": ("gauge", "Jobs in the schedd's queue by status."),
    "routedeck_route_jobs": ("gauge", "Routed copies on the route by state (idle not held, running, held)."),
    "routedeck_route_match_order": ("gauge", "The route's place in the routing table's match order, from 1 "
                                    "(absent: the route is not enabled)."),
    "routedeck_route_window_start_timestamp_seconds": ("gauge", "When the route's current 600 s failure-rate window "
                                                       "began (epoch seconds; absent: no router window)."),
    "routedeck_route_max_jobs": ("gauge", "The route's MaxJobs (absent: unknown)."),
    "routedeck_route_max_idle_jobs": ("gauge", "The route's MaxIdleJobs (absent: no limit)."),
    "routedeck_route_accepting": ("gauge", "1 when the route accepts new jobs now."),
    "routedeck_route_full": ("gauge", "1 when the route is at MaxJobs or MaxIdleJobs."),
    "routedeck_route_throttled": ("gauge", "1 when the route's failure-rate throttle stops it taking jobs."),
    "routedeck_route_throttle_jobs": ("gauge", "The route's throttle: jobs it may start per 600 s window "
                                      "(absent: no throttle)."),
    "routedeck_route_failure_rate": ("gauge", "Failures per second in the route's current 600 s window."),
    "routedeck_route_failure_rate_threshold": ("gauge", "The route's FailureRateThreshold (failures per second)."),
    "routedeck_route_jobs_started_total": ("counter", "Jobs routed to the route since RouteDeck began counting."),
    "routedeck_route_jobs_succeeded_total": ("counter", "Routed copies that left the route successfully."),
    "routedeck_route_jobs_failed_total": ("counter", "Routed copies that left the route as failures."),
    "routedeck_idle_unrouted_jobs": ("gauge", "Idle source jobs not routed, by why they wait (matched: taken at "
                                     "the next poll; no_match, route_full, throttled, not_candidate)."),
    "routedeck_jobs_held_soon": ("gauge", "Idle source jobs the schedd's periodic policy (SYSTEM_PERIODIC_HOLD or the "
                                 "job's PeriodicHold) holds within `within` seconds (cumulative: 300, 600, 1800, "
                                 "3600), as the why-not ledger predicts."),
    "routedeck_cron_next_run_timestamp_seconds": ("gauge", "The crondor job's next run (epoch seconds)."),
    "routedeck_cron_missed_run": ("gauge", "1 when the crondor job is held for missing its run "
                                  "(hold code 20: its deferral window passed)."),
    "routedeck_log_lag_seconds": ("gauge", "Seconds from the newest transaction time in the followed "
                                  "job_queue.log to now."),
    "routedeck_log_problems": ("gauge", "Problems found in the current generation of the followed log."),
    "routedeck_log_generation": ("gauge", "Times the followed log was read from its start: 1 for the first "
                                 "read, one more each time it was rotated or replaced."),
    "routedeck_policy_parses": ("gauge", "1 when the schedd periodic policy knob parses as a ClassAd expression; "
                                "0: the schedd never fires it (user_job_policy.cpp)."),
    # routedeck record --metrics: the recorder's own figures (engine.metrics.record)
    "routedeck_record_transactions_archived_total": ("counter", "Transactions of the log archived by this "
                                                     "recorder process."),
    "routedeck_record_errors_total": ("counter", "Polls of this recorder process that failed (a write, a full "
                                      "disk, the archive unreadable)."),
    "routedeck_record_failing": ("gauge", "1 while archiving is stopped by the last failure (retried)."),
    "routedeck_record_archive_size_bytes": ("gauge", "Bytes the archive takes on disk."),
    "routedeck_record_archive_segments": ("gauge", "Segments in the archive."),
    "routedeck_record_pending_bytes": ("gauge", "Bytes of transactions read from the log, waiting for the next "
                                       "write to the archive."),
    "routedeck_record_last_transaction_timestamp_seconds": ("gauge", "The time of the newest transaction in the "
                                                            "archive (epoch seconds)."),
    "routedeck_record_lag_seconds": ("gauge", "Seconds from the newest transaction in the archive to now."),
    "routedeck_record_behind_bytes": ("gauge", "Bytes of the log's current generation not in the archive yet."),
    "routedeck_record_following": ("gauge", "1 when the archive follows the log's current generation; 0: the log "
                                   "cannot be read or has moved on to a generation not caught up yet."),
}


class Latest:
    """The last snapshot, for loops without a runtime (headless demo and watch): ``put`` from the
    loop, ``get`` from the scrape thread (one reference, replaced whole). ``listeners`` are called
    with each snapshot put (the metrics server's ``published``: they must not block)."""

    def __init__(self) -> None:
        self._snap: Snapshot | None = None
        self._lock = threading.Lock()
        self.listeners: list[Callable[[Snapshot], None]] = []

    def put(self, snap: Snapshot) -> None:
        with self._lock:
            self._snap = snap
        for fn in self.listeners:
            fn(snap)

    def get(self) -> Snapshot | None:
        with self._lock:
            return self._snap


def family(name: str, labels: list[str]) -> Metric:
    """An empty family of ``name`` (its type and help from METRICS)."""
    kind, doc = METRICS[name]
    if kind == "counter":
        return CounterMetricFamily(name, doc, labels=labels)
    return GaugeMetricFamily(name, doc, labels=labels)


class SnapshotCollector(Collector):
    """The series of the snapshot ``source()`` returns (module docstring)."""

    def __init__(self, source: Callable[[], Snapshot | None], schedd: str) -> None:
        self.source = source
        self.schedd = schedd
        # the families of the last snapshot scraped, kept with it: a second scrape of the same
        # snapshot (two Prometheus servers of an HA pair) reuses them; a tuple replaced whole
        self._kept: tuple[Snapshot, list[Metric]] | None = None

    def describe(self) -> Iterator[Metric]:
        for name in METRICS:
            yield family(name, [])

    def collect(self) -> Iterator[Metric]:
        snap = self.source()
        if snap is None:
            return
        kept = self._kept
        if kept is not None and kept[0] is snap:
            yield from kept[1]
            return
        out = families(snap, self.schedd)
        self._kept = (snap, out)
        yield from out


def families(snap: Snapshot, schedd: str) -> list[Metric]:
    """The metric families of one snapshot."""
    return [f for _key, part in snapshot_parts(snap, schedd) for f in part()]


def snapshot_parts(snap: Snapshot, schedd: str) -> list[tuple[object, Callable[[], list[Metric]]]]:
    """The families of ``snap`` in parts, in exposition order: ``(key, build)``, where a part whose
    key equals the previous snapshot's gives the same families (each route family, keyed by its
    samples: most do not change between two snapshots), None: build it every time (the few
    other series). The server encodes only the parts that changed (engine.metrics.server.Exposition)."""
    return [(None, lambda: _head(snap, schedd)), *_route_parts(snap.routes, schedd),
            (None, lambda: _tail(snap, schedd))]


def _adder(out: list[Metric], schedd: str) -> Callable[..., Metric]:
    def fam(name: str, *labels: str) -> Metric:
        f = family(name, ["schedd", *labels])
        out.append(f)
        return f

    return fam


def _head(snap: Snapshot, s: str) -> list[Metric]:
    out: list[Metric] = []
    fam = _adder(out, s)
    fam("routedeck_snapshot_timestamp_seconds").add_metric([s], snap.time)
    f = fam("routedeck_engine_state", "state")
    for st in ENGINE_STATES:
        f.add_metric([s, st], 1.0 if snap.engine_state == st else 0.0)
    fam("routedeck_routing_enabled").add_metric([s], 1.0 if snap.routing_enabled else 0.0)
    f = fam("routedeck_queue_jobs", "status")
    for status, n in sorted(snap.queue_counts.items()):
        f.add_metric([s, status], n)
    return out


def _one(v: float) -> tuple:
    return (((), v),)


# the routes' families in exposition order: (name, labels after ``route``, the samples of a route:
# ((label values), value) each); a family is one part of the exposition, keyed by its samples
ROUTE_SERIES: tuple[tuple[str, tuple[str, ...], Callable], ...] = (
    ("routedeck_route_jobs", ("state",),
     lambda r: ((("idle",), max(0, r.idle - r.held)), (("running",), r.running), (("held",), r.held))),
    ("routedeck_route_match_order", (), lambda r: _one(r.index) if r.index > 0 else ()),
    ("routedeck_route_window_start_timestamp_seconds", (), lambda r: _one(r.window_start) if r.window_start > 0
     else ()),
    ("routedeck_route_max_jobs", (), lambda r: _one(r.max_jobs) if r.max_jobs >= 0 else ()),
    ("routedeck_route_max_idle_jobs", (), lambda r: _one(r.max_idle) if r.max_idle >= 0 else ()),
    ("routedeck_route_accepting", (), lambda r: _one(1.0 if r.state == "accepting" else 0.0)),
    ("routedeck_route_full", (), lambda r: _one(1.0 if r.state in ("full", "idle-limit") else 0.0)),
    ("routedeck_route_throttled", (), lambda r: _one(1.0 if r.state == "throttled" else 0.0)),
    ("routedeck_route_throttle_jobs", (), lambda r: _one(r.throttle) if r.throttle is not None else ()),
    ("routedeck_route_failure_rate", (), lambda r: _one(r.failure_rate)),
    ("routedeck_route_failure_rate_threshold", (), lambda r: _one(r.failure_threshold)),
    ("routedeck_route_jobs_started_total", (), lambda r: _one(r.started_total)),
    ("routedeck_route_jobs_succeeded_total", (), lambda r: _one(r.succeeded_total)),
    ("routedeck_route_jobs_failed_total", (), lambda r: _one(r.failed_total)),
)


def _route_parts(routes: tuple, s: str) -> list[tuple[object, Callable[[], list[Metric]]]]:
    parts: list[tuple[object, Callable[[], list[Metric]]]] = []
    for name, labels, samples_of in ROUTE_SERIES:
        samples = tuple((r.name, samples_of(r)) for r in routes)

        def build(name=name, labels=labels, samples=samples) -> list[Metric]:
            f = family(name, ["schedd", "route", *labels])
            for route, pairs in samples:
                for values, v in pairs:
                    f.add_metric([s, route, *values], v)
            return [f]

        parts.append(((s, name, samples), build))
    return parts


def _tail(snap: Snapshot, s: str) -> list[Metric]:
    out: list[Metric] = []
    fam = _adder(out, s)
    if snap.unrouted is not None:
        f = fam("routedeck_idle_unrouted_jobs", "reason")
        for reason, n in snap.unrouted.items():
            f.add_metric([s, reason], n)
    if snap.held_soon is not None:
        f = fam("routedeck_jobs_held_soon", "within")
        for within, n in sorted(snap.held_soon.items()):
            f.add_metric([s, str(within)], n)

    nxt = fam("routedeck_cron_next_run_timestamp_seconds", "job")
    missed = fam("routedeck_cron_missed_run", "job")
    for c in snap.cron_jobs:
        if c.next_runs:
            nxt.add_metric([s, c.job], c.next_runs[0])
        missed.add_metric([s, c.job], 1.0 if c.state == "held" and c.hold_code == HoldCode.MissedDeferredExecutionTime else 0.0)

    if snap.log_lag is not None:
        fam("routedeck_log_lag_seconds").add_metric([s], snap.log_lag)
    if snap.log_problems is not None:
        fam("routedeck_log_problems").add_metric([s], snap.log_problems)
    if snap.log_generation is not None:
        fam("routedeck_log_generation").add_metric([s], snap.log_generation)
    if snap.policies:
        parses = fam("routedeck_policy_parses", "knob")
        for p in snap.policies:
            parses.add_metric([s, p.knob], 1.0 if p.parses else 0.0)
    return out
