"""One demo recording, three feeds, one view: at ten virtual moments the demo's own snapshot,
replay at that moment and watch following the log as it is written agree field by field on
every route row and every cron row.

Sources: htcondor.md §1.5 (a route's figures, ``AcceptingMoreJobs``, ``AdjustFailureThrottles``;
rebuilt from the routed copies by engine.views.figures and engine.feeds.replay.stats), §2.4 (the
``DeferralTime`` a schedd holds is never logged: replay and watch rebuild it with
engine.schedd.cron.CronObserver), §3.2 (the ``106 # time`` comments that date each transaction).

Fields a log cannot carry (compared nowhere, and why):

- ``RouteView.source_label``, ``syntax``, ``location``, ``grid_resource``, ``requirements``:
  where and how the route was written in the routing table; the log holds only the routed
  copies (a recorded row says ``recorded``).
- ``RouteView.rate_history`` / ``routed_history``: the live router keeps closed windows since
  *it* started (and across table swaps); a log rebuild starts its windows at the log's first
  transaction — equal for a recording that starts with the demo, not in general.
- ``Snapshot.events``: the live router's events (job-routed, hook failures, config reloads)
  are facts of the process, not of the queue; replay re-creates only the throttle changes.
- The jobs table's ``JobRow.route`` of a source job whose copy is gone (the live router still
  tracks it as retired until its next poll).
"""

from __future__ import annotations

import pytest

from engine.contract import commands as C
from engine.clock import ManualClock
from engine.feeds import demo
from engine.feeds.replay.index import build_index
from engine.feeds.replay.player import Player
from engine.feeds.watch.follow import WatchEngine
from engine.feeds.watch.setup import WatchSetup
from engine.views.figures import table_rules
from engine.feeds.watch.feed import WatchFeed
from engine.feeds.replay.feed import ReplayFeed

ROUTE_FIELDS = ("index", "name", "state", "reason", "routed", "idle", "running", "held", "max_jobs", "max_idle",
                "recent_started", "recent_succeeded", "recent_failed", "failure_rate", "failure_threshold",
                "throttle", "window_start", "next_reevaluation")
CRON_FIELDS = ("job", "fields", "status", "deferral_time", "window", "prep_time", "next_runs", "schedd_runs",
               "state", "tz", "lints", "hold_reason", "hold_code")
MOMENTS = [demo.DEMO_START + 367 * k for k in range(1, 11)]  # ten moments over an hour, off the poll grid
POLL = 7  # virtual seconds between two polls of the watcher


def _rows(snap, kind):
    fields = ROUTE_FIELDS if kind == "route" else CRON_FIELDS
    rows = snap.routes if kind == "route" else snap.cron_jobs
    return [tuple((f, getattr(r, f)) for f in fields) for r in rows]


def _diff(a, b):
    out = []
    for ra, rb in zip(a, b):
        out += [(fa, va, vb) for (fa, va), (_fb, vb) in zip(ra, rb) if va != vb]
    if len(a) != len(b):
        out.append(("rows", len(a), len(b)))
    return out


# one test process builds the module's demo run once (--dist loadgroup)
pytestmark = pytest.mark.xdist_group("view-parity")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One demo run, its log followed by a watcher as it is written (polled every POLL s)."""
    tmp_path = tmp_path_factory.mktemp("parity")
    engine = demo.build_demo(state_dir=tmp_path, seed=3)
    limits, rules, period = table_rules(engine.table)
    clock = ManualClock(engine.now)
    watch = WatchEngine(WatchSetup(queue_log=str(tmp_path / "job_queue.log"), limits=limits, rules=rules,
                                   polling_period=period), clock)
    live, watched = [], []
    watch.poll()  # the watcher starts with the log (header only): everything after is followed
    try:
        t = engine.now
        for moment in MOMENTS:
            while t + POLL < moment:
                t += POLL
                engine.step(t)
                clock.set(t)
                watch.poll()
            engine.step(moment)
            clock.set(moment)
            t = moment
            watch.poll()
            engine.advance()  # a snapshot only reads what the advance settled (issue 26)
            live.append(engine.snapshot())
            watched.append(watch.snapshot(with_jobs=False))
    finally:
        engine.close()
    return tmp_path, (limits, rules, period), live, watched


@pytest.mark.slow
def test_demo_replay_and_watch_agree_on_every_route_and_cron_row(run):
    tmp_path, (limits, rules, period), live, watched = run
    player = Player(build_index(tmp_path / "job_queue.log"), ManualClock(0), limits=limits, rules=rules,
                    polling_period=period)
    # the comparison is not empty: routes routed, failed and throttled; cron jobs have DeferralTimes
    assert any(r.recent_started for s in live for r in s.routes)
    assert any(r.recent_failed for s in live for r in s.routes)
    assert any(r.throttle for s in live for r in s.routes)
    assert any(c.deferral_time for s in live for c in s.cron_jobs)
    for moment, want, got_watch in zip(MOMENTS, live, watched):
        player.seek(time=moment)
        got_replay = player.snapshot(with_jobs=False, time=moment)
        for kind in ("route", "cron"):
            assert _diff(_rows(want, kind), _rows(got_replay, kind)) == [], f"replay, {kind} rows at {moment}"
            assert _diff(_rows(want, kind), _rows(got_watch, kind)) == [], f"watch, {kind} rows at {moment}"
        assert dict(want.queue_counts) == dict(got_replay.queue_counts) == dict(got_watch.queue_counts)


def test_watch_started_on_a_running_demo_log_shows_its_figures_after_one_poll(run):
    """Watch opened next to a demo that has run for an hour (the same run's log, read anew): after
    its first poll (a bulk load of the whole log, every transaction told with its ``106 #`` time,
    htcondor.md §3.2) it shows
    the demo's recent started/succeeded/failed, the black hole's throttle (htcondor.md §1.5) and
    the cron jobs' DeferralTimes and next runs (§2.4) — the demo's own rows, field by field."""
    tmp_path, (limits, rules, period), live, _watched = run
    want = live[-1]  # the demo an hour in: its log is complete up to this moment
    watch = WatchEngine(WatchSetup(queue_log=str(tmp_path / "job_queue.log"), limits=limits, rules=rules,
                                   polling_period=period), ManualClock(want.time))
    assert watch.poll()
    got = watch.snapshot(with_jobs=False)
    routes = {r.name: r for r in got.routes}
    assert sum(r.recent_started for r in got.routes) and sum(r.recent_succeeded for r in got.routes)
    assert sum(r.recent_failed for r in got.routes)
    assert routes["BlackHole"].throttle and routes["BlackHole"].recent_failed
    assert got.cron_jobs and all(c.next_runs for c in got.cron_jobs if c.state != "invalid")
    assert any(c.deferral_time for c in got.cron_jobs)
    for kind in ("route", "cron"):
        assert _diff(_rows(want, kind), _rows(got, kind)) == [], kind


def test_watch_tells_the_routers_events_from_the_log(run):
    """Watch has no router to drain, so it rebuilds the router's events from the log: a routed
    copy appearing is ``job-routed`` in the router's words (``JobRouted``, engine/router/lifecycle.py:
    "SRC routed to ROUTE as DEST", RoutedFromJobId/RouteName per htcondor.md §1.6), a copy leaving
    is ``job-retired`` with its outcome (§1.5), and a closed failure window that changes a throttle
    is ``throttle-adjusted`` / ``route-throttled`` with the demo's own text (§1.5). The demo run's
    events are compared with those of a watcher reading its log anew."""
    tmp_path, (limits, rules, period), live, _watched = run
    want = live[-1]

    feed = WatchFeed(WatchEngine(WatchSetup(queue_log=str(tmp_path / "job_queue.log"), limits=limits,
                                            rules=rules, polling_period=period), ManualClock(want.time)))
    feed.step(want.time)
    got = feed.snapshot().events
    kinds = {e.kind for e in got}
    assert {"job-routed", "job-retired", "route-throttled"} <= kinds
    demo_routed = {e.message for e in want.events if e.kind == "job-routed"}
    watch_routed = {e.message for e in feed.ring.job_events if e.kind == "job-routed"}
    assert demo_routed and demo_routed <= watch_routed
    demo_throttles = [(e.time, e.message) for e in want.events if e.kind in ("route-throttled", "throttle-adjusted")]
    watch_throttles = [(e.time, e.message) for e in got if e.kind in ("route-throttled", "throttle-adjusted")]
    assert demo_throttles and set(demo_throttles) <= set(watch_throttles)
    retired = [e for e in got if e.kind == "job-retired"]
    assert any("(failure)" in e.message and e.route == "BlackHole" for e in retired)


def test_replay_tells_the_same_router_events_as_watch(run):
    """Replay rebuilds the router's events from the recording in its one pass (engine.feeds.replay.
    stats), watch commit by commit (engine.views.figures.LiveFigures): the same copies routed and
    retired, the same throttle changes, at the same times, in the same words (htcondor.md §1.5,
    §1.6; the router's wording in engine/router/events.py)."""
    tmp_path, (limits, rules, period), live, _watched = run
    want = live[-1]
    watch = WatchEngine(WatchSetup(queue_log=str(tmp_path / "job_queue.log"), limits=limits, rules=rules,
                                   polling_period=period), ManualClock(want.time))
    watch.poll()
    watch.snapshot(with_jobs=False)  # closes the windows up to now
    watched = {(e.time, e.kind, e.message) for e in watch.figures.events}
    player = Player(build_index(tmp_path / "job_queue.log"), ManualClock(0), limits=limits, rules=rules,
                    polling_period=period)
    player.history.build()
    replayed = {(c[0], c[1], c[2]) for c in player.history.changes if c[0] <= want.time}
    assert {k for _, k, _ in replayed} >= {"job-routed", "job-retired", "route-throttled"}
    assert replayed == watched


def test_replay_after_a_jump_shows_the_events_that_led_to_the_moment(run):
    """A seek (``--at``, ``:seek``, a bookmark) lands on a moment with the events pane showing the
    recorded router's last events before it, as if played there (they were dropped: the pane said
    "no events yet" after a jump), and playing on adds the next ones."""
    tmp_path, (limits, rules, period), live, _watched = run
    player = Player(build_index(tmp_path / "job_queue.log"), ManualClock(0), limits=limits, rules=rules,
                    polling_period=period)
    feed = ReplayFeed(player)
    moment = MOMENTS[len(MOMENTS) // 2]
    assert feed.handle(C.Seek(time=moment)) is None
    events = feed.snapshot().events
    routed = [e for e in events if e.kind == "job-routed"]
    assert routed and all(e.time <= moment for e in events)
    player.history.build()
    before = [c for c in player.history.changes if c[0] <= player.time()]
    assert (routed[-1].time, routed[-1].message) == next((c[0], c[2]) for c in reversed(before) if c[1] == "job-routed")


@pytest.mark.slow
def test_watch_without_a_consumer_keeps_no_router_events(run):
    """Headless watch (engine.cli.watch.run_headless) has no feed draining the router's events:
    built with ``collect_events=False`` it keeps none, and its figures are the same (§1.5)."""
    tmp_path, (limits, rules, period), live, _watched = run
    want = live[-1]
    setup = WatchSetup(queue_log=str(tmp_path / "job_queue.log"), limits=limits, rules=rules, polling_period=period)
    kept, bare = (WatchEngine(setup, ManualClock(want.time), collect_events=c) for c in (True, False))
    for w in (kept, bare):
        w.poll()
    a, b = kept.snapshot(with_jobs=False), bare.snapshot(with_jobs=False)
    assert kept.figures.events and not bare.figures.events
    assert a.routes == b.routes
