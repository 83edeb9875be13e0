"""Recent figures and the failure-rate throttle reconstructed from a recording, and the replay's
reused job rows.

Sources: htcondor.md §1.5 (the AdjustFailureThrottles formula, 600 s tumbling windows, what
counts as success / failure / interrupted); §3.1/§3.2 (log records). The constructed recordings
are written here line by line; the expected throttles are computed in the tests from the §1.5
formula, not taken from engine.router.throttle.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from engine.clock import ManualClock
from engine.feeds.replay.index import build_index, iter_step_records
from engine.feeds.replay.player import Player
from engine.feeds.replay.stats import RouteRule

from tests.helpers.replay_logs import Recording
from engine.feeds.replay.feed import ReplayFeed
from engine.feeds.replay.stats import RouteHistory
import engine.feeds.replay.stats as ST
from engine.queue.records import is_proc_key, job_order

ROOT = REPO
T0 = 1795300000


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds")


class Log:
    """A recording built transaction by transaction (htcondor.md §3.2 framing)."""

    def __init__(self) -> None:
        self.lines = ["107 1 CreationTimestamp %d" % T0]
        self.cluster = 0

    def txn(self, t: float, *records: str) -> None:
        self.lines += ["105 ", *records, "106 # " + _iso(t)]

    def source(self, t: float) -> str:
        self.cluster += 1
        c = self.cluster
        self.txn(t, f"101 0{c}.-1 Job Machine", f"103 0{c}.-1 Owner \"u\"", f"101 {c}.0 Job Machine",
                 f"103 {c}.0 JobStatus 1", f"103 {c}.0 ProcId 0")
        return f"{c}.0"

    def copy(self, t: float, src: str, route: str) -> str:
        self.cluster += 1
        c = self.cluster
        self.txn(t, f"101 0{c}.-1 Job Machine", f"103 0{c}.-1 RouteName \"{route}\"",
                 f"103 0{c}.-1 RoutedFromJobId \"{src}\"", f"101 {c}.0 Job Machine", f"103 {c}.0 JobStatus 1",
                 f"103 {src} RoutedToJobId \"{c}.0\"")
        return f"{c}.0"

    def finish(self, t: float, copy: str, src: str, status: int, exit_code: int | None = None,
               src_status: int = 4) -> None:
        c = copy.partition(".")[0]
        recs = [f"103 {copy} JobStatus {status}"]
        if exit_code is not None:
            recs.append(f"103 {copy} ExitCode {exit_code}")
        self.txn(t, *recs, f"103 {src} JobStatus {src_status}")
        self.txn(t + 1, f"102 {src}", f"102 {copy}", f"102 0{c}.-1")

    def write(self, path: Path) -> Path:
        path.write_text("\n".join(self.lines) + "\n")
        return path


def _expected_throttle(failed: int, num_jobs: int, succeeded: int, threshold: float = 0.03) -> float:
    """htcondor.md §1.5, decelerate branch: 600 * threshold / (failed / (failed + jobs + succeeded))."""
    return 600 * threshold / (failed / (failed + num_jobs + succeeded))


def _black_hole(tmp_path: Path, failures: int = 30, keep: int = 4, successes: int = 5) -> Path:
    """In the first 600 s: ``failures`` copies on BH complete with ExitCode 1, ``successes`` with 0,
    and ``keep`` copies stay idle in the queue (num_jobs at the window's close)."""
    log = Log()
    t = T0 + 1.0
    for i in range(failures + successes + keep):
        src = log.source(t)
        cp = log.copy(t + 1, src, "BH")
        if i < failures:
            log.finish(t + 3, cp, src, 4, exit_code=1)
        elif i < failures + successes:
            log.finish(t + 3, cp, src, 4, exit_code=0)
        t += 10
    log.txn(T0 + 1100, "103 0.0 NextClusterNum 998")  # later steps, in the second and third windows
    log.txn(T0 + 1300, "103 0.0 NextClusterNum 999")
    return log.write(tmp_path / "bh.log")


def test_throttle_follows_the_formula_after_the_first_window(tmp_path):
    """§1.5: rate 30/600 s > 0.03 -> throttle = 600*0.03/(30/(30+4+5)); reached by the next
    window's routed copies, the route is throttled. Before the close no throttle exists."""
    index = build_index(_black_hole(tmp_path))
    player = Player(index, ManualClock(0))
    player.seek(time=T0 + 500)
    bh = {r.name: r for r in player.snapshot().routes}["BH"]
    assert bh.throttle is None and bh.recent_failed > 0 and bh.state == "accepting"
    player.seek(time=T0 + 1100)
    bh = {r.name: r for r in player.snapshot().routes}["BH"]
    assert bh.throttle == pytest.approx(_expected_throttle(30, 4, 5))
    assert (bh.recent_started, bh.recent_succeeded, bh.recent_failed) == (0, 0, 0)  # a fresh window
    assert bh.rate_history and bh.rate_history[-1] == pytest.approx(30 / 600, rel=0.02)
    # §1.5 accelerate branch after a window with nothing: a = (3*0 - 2*0) + 2 = 2, throttle * 2
    player.seek(time=T0 + 1300)
    bh = {r.name: r for r in player.snapshot().routes}["BH"]
    assert bh.throttle == pytest.approx(2 * _expected_throttle(30, 4, 5))


def test_window_counts_and_throttled_state(tmp_path):
    """§1.5: the throttle limits routed copies per window: once recent_routed >= throttle the
    route does not accept more (AcceptingMoreJobs' first condition)."""
    log = Log()
    t = T0 + 1.0
    for _ in range(40):  # 40 failures in the first window: throttle 600*0.03/(40/40) = 18
        src = log.source(t)
        cp = log.copy(t + 1, src, "BH")
        log.finish(t + 2, cp, src, 4, exit_code=1)
        t += 10
    t = T0 + 700
    for i in range(20):  # 20 copies routed in the second window, still in the queue
        src = log.source(t)
        log.copy(t + 1, src, "BH")
        t += 5
    index = build_index(log.write(tmp_path / "bh2.log"))
    player = Player(index, ManualClock(0))
    player.seek(step=index.steps - 1)
    bh = {r.name: r for r in player.snapshot().routes}["BH"]
    assert bh.throttle == pytest.approx(_expected_throttle(40, 0, 0))
    assert bh.recent_started == 20 and bh.state == "throttled"
    # step back to 17 copies in the window: 17 < 18, accepting
    player.seek(step=index.steps - 1 - 2 * 3)
    bh = {r.name: r for r in player.snapshot().routes}["BH"]
    assert bh.recent_started == 17 and bh.state == "accepting"


def test_failure_rules(tmp_path):
    """§1.5 "what counts": a removed copy fails; a completed copy succeeds unless JobFailureTest
    (with a table) or a non-zero ExitCode (without one) says otherwise; a copy whose source was
    removed is interrupted (not counted)."""
    log = Log()
    s1 = log.source(T0 + 1)
    c1 = log.copy(T0 + 2, s1, "R")
    log.finish(T0 + 3, c1, s1, 3)  # removed copy: failure
    s2 = log.source(T0 + 10)
    c2 = log.copy(T0 + 11, s2, "R")
    log.finish(T0 + 12, c2, s2, 4, exit_code=2)  # non-zero exit
    s3 = log.source(T0 + 20)
    c3 = log.copy(T0 + 21, s3, "R")
    log.finish(T0 + 22, c3, s3, 3, src_status=3)  # source removed: interrupted
    s4 = log.source(T0 + 30)
    c4 = log.copy(T0 + 31, s4, "R")
    log.finish(T0 + 32, c4, s4, 4, exit_code=0)
    index = build_index(log.write(tmp_path / "rules.log"))
    player = Player(index, ManualClock(0))
    player.seek(step=index.steps - 1)
    r = {v.name: v for v in player.snapshot().routes}["R"]
    assert (r.recent_started, r.recent_succeeded, r.recent_failed) == (4, 1, 2)
    # with a table whose JobFailureTest never holds, the non-zero exit is a success
    player = Player(index, ManualClock(0), limits={"R": (100, 50)},
                    rules={"R": RouteRule(0.03, "ExitCode > 5")})
    player.seek(step=index.steps - 1)
    r = {v.name: v for v in player.snapshot().routes}["R"]
    assert (r.recent_succeeded, r.recent_failed) == (2, 1)


@pytest.mark.slow
def test_shipped_recording_black_hole_is_throttled_as_live():
    """The demo recording (sample_configs/recordings/README.md): the live demo run with the same
    seed showed BlackHole throttled from its second window on at 600*0.03/ratio jobs per window;
    the replay reconstructs the same figures from the recorded copies (§1.5)."""
    log = ROOT / "sample_configs/recordings/demo-3h.job_queue.log"
    out = subprocess.run([sys.executable, "-m", "tui.cli", "replay", str(log), "--at", "+3600", "--json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    bh = {r["name"]: r for r in json.loads(out.stdout)["routes"]}["BlackHole"]
    assert bh["state"] == "throttled" and bh["throttle"] == pytest.approx(18.0)
    assert bh["recent_failed"] > 0 and bh["recent_succeeded"] == 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reused_rows_equal_fresh_rows(tmp_path, seed):
    """Rows kept across moves (forward steps, backward seeks) equal rows built from scratch, and a
    job a transaction did not touch keeps its row object (engine/views/recorded_rows.py)."""
    rec = Recording(seed, steps=200)
    path = tmp_path / "r.log"
    path.write_text(rec.text())
    index = build_index(path, every=50)
    player = Player(index, ManualClock(0))
    rng = random.Random(seed)
    for _ in range(25):
        step = rng.randrange(-1, index.steps)
        player.seek(step=step)
        got = player.snapshot().jobs
        fresh = Player(index, ManualClock(0))
        fresh.seek(step=step)
        assert got == fresh.snapshot().jobs
    player.seek(step=100)
    before = {r.job: r for r in player.snapshot().jobs}
    touched = {rec[1] for rec in __import__("engine.feeds.replay.index", fromlist=["x"]).iter_step_records(index, 101)}
    player.seek(step=101)
    after = {r.job: r for r in player.snapshot().jobs}
    kept = [j for j in after if j in before and j not in touched and not any(t.startswith("0" + j.split(".")[0] + ".")
                                                                          for t in touched)]
    assert kept and all(after[j] is before[j] for j in kept)


def test_feed_emits_throttle_events_it_plays_through(tmp_path):
    """The router logs/emits a throttle change when a window closes (§1.5; engine.router.stats
    wording): playing through the close emits route-throttled once; a seek over it shows it once
    among the events that led to the new moment, re-told (``history_upto``: the dashboard does not
    toast it), and playing on does not repeat it."""
    index = build_index(_black_hole(tmp_path))
    feed = ReplayFeed(Player(index, ManualClock(0)))
    feed.handle(__import__("engine.contract.commands", fromlist=["Seek"]).Seek(time=T0 + 1100))
    told = [e for e in feed.ring.recent() if e.kind == "route-throttled"]
    assert len(told) == 1 and told[0].seq <= feed.history_upto and told[0].time == pytest.approx(T0 + 1 + 605, abs=1)
    feed.step(feed.now + 50)
    assert len([e for e in feed.ring.recent() if e.kind == "route-throttled"]) == 1
    feed = ReplayFeed(Player(index, ManualClock(0)))
    feed.step(feed.now + 1100)
    throttled = [e for e in feed.ring.recent() if e.kind == "route-throttled"]
    assert len(throttled) == 1 and throttled[0].route == "BH" and throttled[0].level == "warning"
    assert throttled[0].time == pytest.approx(T0 + 1 + 605, abs=1)  # the first poll after 600 s


def _history(ix):
    return RouteHistory(ix, None, 10.0, "UTC").build()


@pytest.mark.slow
def test_cron_sieve_gives_the_history_of_observing_every_touched_job(monkeypatch, tmp_path, shipped_index):
    """The replay's crondor history (engine.schedd.cron.CronObserver, htcondor.md §2.4
    ``needsCronTab``) observes only jobs that are cron jobs or have a cron attribute
    (``engine.schedd.cron.jobs_to_observe``); the oracle observes every touched job, as before the sieve. Same
    DeferralTimes at the same times, same router events, on the demo recording (cron jobs, routed
    copies) and on a constructed log whose cron attributes come later on a cluster ad."""
    def every_touched_job(keys, seen, ads, names):  # the loop before the sieve
        jobs = set()
        for key in keys:
            if is_proc_key(key):
                jobs.add(key)
            elif key[:1] == "0" and key.endswith(".-1"):
                jobs.update(k for k in seen if k.partition(".")[0] == key[1:-3])
        return sorted(jobs, key=job_order)

    log = Log()
    log.txn(T0, "101 01.-1 Job Machine", '103 01.-1 Cmd "/bin/sleep"', "101 1.0 Job Machine",
            "103 1.0 JobStatus 1", "103 1.0 ProcId 0")
    log.txn(T0 + 30, '103 1.0 cronminute "*/5"', "103 1.0 JobStatus 1")
    log.txn(T0 + 40, "101 02.-1 Job Machine", '103 02.-1 CronHour "3"', "101 2.0 Job Machine",
            "103 2.0 JobStatus 1")
    log.txn(T0 + 400, "103 2.0 JobStatus 5", "103 2.0 HoldReasonCode 1")
    log.txn(T0 + 500, '103 01.-1 CronDayOfWeek "1"', "103 1.0 JobStatus 1")
    (tmp_path / "job_queue.log").write_text("\n".join(log.lines) + "\n")
    # the demo recording's index (build_index(…, tz="UTC"), shared: tests/helpers/shipped_index.py),
    # then the constructed log's; each read by both histories (the index does not depend on the sieve)
    for path, ix in ((shipped_index("UTC").path, shipped_index("UTC")),
                     (tmp_path / "job_queue.log", build_index(tmp_path / "job_queue.log", tz="UTC"))):
        sieved = _history(ix)
        with monkeypatch.context() as m:
            m.setattr(ST, "jobs_to_observe", every_touched_job)
            every = _history(ix)
        assert sieved.cron_values and sieved.cron_values == every.cron_values, path
        assert {k: list(v) for k, v in sieved.cron_times.items()} == {k: list(v) for k, v in every.cron_times.items()}
        assert sieved.changes == every.changes


def test_a_history_without_events_has_the_same_figures_and_makes_none(tmp_path):
    """``RouteHistory(collect_events=False)`` (the headless replay, which shows no router events): no
    events are made, and every figure, throttle and deferral is the one a history with events
    gives. A moment imports the router's events module only where events are made."""
    index = build_index(_black_hole(tmp_path), tz="UTC")
    full, bare = RouteHistory(index, None, 10.0, "UTC").build(), RouteHistory(index, None, 10.0, "UTC", collect_events=False)
    bare.build()
    kinds = {c[1] for c in full.changes}
    assert {"job-routed", "job-retired", "route-throttled"} <= kinds and bare.changes == []
    for step in range(0, index.steps, 7):
        t = index.times[step]
        assert bare.figures(step, t) == full.figures(step, t)
    assert (bare.closes, bare.cron_times, bare.cron_values) == (full.closes, full.cron_times, full.cron_values)
    code = ("import contextlib, io, sys\nfrom tui.cli import main\nwith contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main(['replay', {str(_black_hole(tmp_path))!r}, '--at', 'end', '--json']) == 0\n"
            "assert 'engine.router.events' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


@pytest.mark.parametrize("with_start", [False, True])
def test_a_history_applies_the_records_its_index_kept_as_it_would_read_them(tmp_path, monkeypatch, with_start):
    """``build_index(keep_records=True)`` (an archive window's index: issue 27) keeps each step's
    records; the history's pass applies them instead of reading the text again, and comes to the
    same figures, events, deferrals and queue; then drops them. ``with_start``: a window's index,
    its step 0 a starting state (``start=``, no text read for it: the records kept are from step 1)."""
    log = _black_hole(tmp_path)
    start = None
    if with_start:
        whole = build_index(log, tz="UTC")
        k = whole.steps // 2
        start = whole.state_at(k)
        assert start.table
        data = log.read_bytes()
        data = data[: data.find(b"\n") + 1] + data[whole.ends[k]:]
    else:
        data = None
    read = build_index(log, tz="UTC", data=data, start=start)
    kept = build_index(log, tz="UTC", data=data, start=start, keep_records=True)
    assert read.step_records is None and len(kept.step_records) == kept.steps - with_start
    assert (kept.head is not None) == with_start
    for i, (records, _end) in enumerate(kept.step_records):  # step i + 1 when step 0 is the head (LogIndex)
        assert list(iter_step_records(kept, i + with_start)) == [r for r in records if r.__class__ is tuple], i
    want = RouteHistory(read, None, 10.0, "UTC")
    want_state = want.state_after(read.steps - 2)
    monkeypatch.setattr(ST, "scan_steps", lambda *a, **k: pytest.fail("the text read again"))
    got = RouteHistory(kept, None, 10.0, "UTC")
    assert got.state_after(kept.steps - 2).table == want_state.table
    assert (got.closes, got.changes, got.cron_times, got.cron_values) == (want.closes, want.changes, want.cron_times,
                                                                          want.cron_values)
    for step in range(0, kept.steps, 5):
        assert got.figures(step, kept.times[step]) == want.figures(step, read.times[step])
    assert kept.step_records is None  # applied, then dropped
