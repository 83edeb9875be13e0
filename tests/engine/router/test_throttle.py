"""The failure-rate throttle and AcceptingMoreJobs, checked against htcondor.md §1.5.

Every expected number below is worked out by hand from the §1.5 pseudo-code (the arithmetic is
in the comments), with a manual clock moving through the 600-second windows.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from engine.clock import ManualClock
from engine.router.throttle import (
    THROTTLE_UPDATE_INTERVAL,
    RouteStats,
    StatsBook,
    accepting,
    route_state,
    throttle_desc,
)
from engine.router.throttle import count_limit


def route(max_jobs=100, max_idle=50, threshold=0.03):
    return SimpleNamespace(name="R", max_jobs=max_jobs, max_idle_jobs=max_idle, failure_rate_threshold=threshold)


def test_window_is_600_seconds_and_tumbling():
    """§1.5: nothing happens until 600 s after stats_begin_time; then counters reset, begin = now."""
    clock = ManualClock(1000)
    s = RouteStats("R", stats_begin_time=clock.now())
    s.recent_failed, s.recent_succeeded, s.recent_routed = 3, 4, 7
    clock.advance(599)
    assert s.adjust_failure_throttle(clock.now(), 0.03) is None
    assert (s.recent_failed, s.recent_succeeded, s.recent_routed) == (3, 4, 7)
    clock.advance(31)  # a late poll: the window lasted 630 s
    adj = s.adjust_failure_throttle(clock.now(), 0.03)
    assert adj is not None and adj.delta == 630
    assert (s.recent_failed, s.recent_succeeded, s.recent_routed) == (0, 0, 0)
    assert s.stats_begin_time == 1630  # now, not begin + 600
    assert THROTTLE_UPDATE_INTERVAL == 600


def test_black_hole_scenario_step_by_step():
    """§1.5 decelerate branch, then the accelerate branch's quirks, window after window."""
    clock = ManualClock(10_000)
    s = RouteStats("BlackHole", stats_begin_time=clock.now())
    thr = 0.03

    # window 1: 39 failures, 1 success, 14 jobs on the route.
    s.recent_failed, s.recent_succeeded, s.num_jobs, s.recent_routed = 39, 1, 14, 40
    clock.advance(600)
    adj = s.adjust_failure_throttle(clock.now(), thr)
    # rate = 39/600 = 0.065 > 0.03 -> ratio = 39/(39+14+1) = 39/54
    assert adj.branch == "decelerate"
    assert adj.rate == pytest.approx(0.065)
    assert adj.ratio == pytest.approx(39 / 54)
    # throttle = 600*0.03/(39/54) = 18*54/39 = 972/39
    assert s.throttle == pytest.approx(972 / 39)  # 24.923...
    assert throttle_desc(s.throttle) == "%g jobs/sec" % ((972 / 39) / 600)

    # window 2 (650 s): 10 failures, no success: rate 10/650 = 0.0154 <= 0.03 -> accelerate branch;
    # a = 3*0 - 2*10 = -20, not normalised (a <= 0), + 2 = -18, not > 1 -> unchanged.
    s.num_jobs = 30
    s.recent_failed, s.recent_succeeded = 10, 0
    clock.advance(650)
    adj = s.adjust_failure_throttle(clock.now(), thr)
    assert adj.branch == "accelerate" and adj.accel == pytest.approx(-18.0)
    assert s.throttle == pytest.approx(972 / 39)

    # window 3: 5 successes, 0 failures: a = 15/5 + 2 = 5 -> x5.
    s.recent_succeeded = 5
    clock.advance(600)
    adj = s.adjust_failure_throttle(clock.now(), thr)
    assert adj.accel == pytest.approx(5.0)
    assert s.throttle == pytest.approx(5 * 972 / 39)

    # window 4: nothing finished: a = 0 -> 2.0 -> x2.
    clock.advance(600)
    s.adjust_failure_throttle(clock.now(), thr)
    assert s.throttle == pytest.approx(10 * 972 / 39)

    # window 5: 2 ok, 2 failed (rate 2/600 < 0.03): a = (6-4)/4 + 2 = 2.5.
    s.recent_succeeded, s.recent_failed = 2, 2
    clock.advance(600)
    s.adjust_failure_throttle(clock.now(), thr)
    assert s.throttle == pytest.approx(25 * 972 / 39)

    # window 6: 1 ok, 2 failed: a = 3 - 4 = -1 (not normalised) + 2 = 1.0, not > 1 -> unchanged.
    s.recent_succeeded, s.recent_failed = 1, 2
    clock.advance(600)
    adj = s.adjust_failure_throttle(clock.now(), thr)
    assert adj.accel == pytest.approx(1.0)
    assert s.throttle == pytest.approx(25 * 972 / 39)
    assert len(s.history) == 6 and s.history[0].failed == 39


def test_zero_throttle_stays_zero_when_accelerating():
    """§1.5: 'if a > 1.0: throttle = throttle * a  # 0 stays 0'."""
    s = RouteStats("R", stats_begin_time=0)
    s.recent_succeeded = 50
    adj = s.adjust_failure_throttle(600, 0.03)
    assert adj.accel == pytest.approx(5.0) and s.throttle == 0


def test_throttle_removed_above_cap():
    """§1.5: throttle > 600*threshold*10000 -> 0 ("remove throttle")."""
    thr = 0.0001  # cap = 600 * 0.0001 * 10000 = 600
    s = RouteStats("R", stats_begin_time=0, throttle=150.0)
    s.recent_succeeded = 4  # a = 12/4 + 2 = 5 -> 750 > 600 -> removed
    adj = s.adjust_failure_throttle(600, thr)
    assert adj.computed == 0 and adj.removed and s.throttle == 0
    # just below the cap it stays: 119 * 5 = 595
    s2 = RouteStats("R", stats_begin_time=0, throttle=119.0)
    s2.recent_succeeded = 4
    s2.adjust_failure_throttle(600, thr)
    assert s2.throttle == pytest.approx(595.0)


def test_fractional_throttle_floor_to_one_only_without_failures():
    """§1.5: 'if 0 < throttle < 1 and recent_failed == 0: throttle = 1'."""
    thr = 0.0001
    s = RouteStats("R", stats_begin_time=0)
    s.recent_failed = 1  # rate 1/600 = 0.00167 > 0.0001; ratio = 1/(1+0+0) = 1
    s.adjust_failure_throttle(600, thr)
    assert s.throttle == pytest.approx(600 * 0.0001)  # 0.06 jobs per window
    # with a failure in the accelerating branch the fraction stays (rate 1/60000 < threshold)
    s.recent_failed = 1
    s.adjust_failure_throttle(60_600, thr)  # delta 60000: rate 1.67e-5 <= 1e-4
    # a = -2 -> 0 -> not > 1: unchanged 0.06, not floored because a failure happened
    assert s.throttle == pytest.approx(0.06)
    # a quiet window: a = 2 -> 0.12, then floored to 1
    adj = s.adjust_failure_throttle(61_200, thr)
    assert adj.floored and s.throttle == 1.0


def test_tiny_change_is_not_applied():
    """JobRouter.cpp: the throttle changes only when |new - old| > 0.0001 (htcondor.md §1.5 code)."""
    # decelerate to a value within 1e-4 of the old one: ratio 1 -> 600*thr
    s = RouteStats("R", stats_begin_time=0, throttle=18.00005)
    s.recent_failed = 100  # rate 0.1667 > 0.03; ratio = 100/100 = 1 -> 18.0
    adj = s.adjust_failure_throttle(600, 0.03)
    assert adj.computed == pytest.approx(18.0) and s.throttle == 18.00005


def test_accepting_three_conditions_with_reasons():
    """§1.5 AcceptingMoreJobs: throttle, then MaxIdleJobs, then MaxJobs."""
    s = RouteStats("R", stats_begin_time=0, throttle=3.4)
    s.recent_routed = 4
    ok, state, reason = route_state(route(), s)
    assert not ok and state == "throttled"
    assert reason.startswith("throttled: 4 routed ≥ throttle 3.4 per 600 s")
    # the window (stats_begin_time + THROTTLE_UPDATE_INTERVAL) as a moment, not epoch seconds (issue 29)
    assert reason.endswith("(until the window closes at 1970-01-01 00:10:00 UTC)")
    s.recent_routed = 3  # 3.4 <= 3 is false
    assert accepting(route(), s) == (True, None)

    s = RouteStats("R", stats_begin_time=0)
    s.num_jobs, s.num_running = 60, 10  # idle = 50
    ok, reason = accepting(route(max_idle=50), s)
    assert not ok and reason == "idle limit: 50 idle ≥ MaxIdleJobs 50"
    assert accepting(route(max_idle=-1), s) == (True, None)  # negative: no idle limit

    s.num_running = 60
    s.num_jobs = 100
    ok, reason = accepting(route(max_jobs=100), s)
    assert not ok and reason == "full: 100 ≥ MaxJobs 100"
    s.num_jobs = 99
    assert accepting(route(max_jobs=100), s)[0]

    s.num_jobs = 0
    ok, state, reason = route_state(route(max_jobs=0), s)
    assert not ok and state == "disabled"  # §1.3: 0 or less disables the route


def test_held_and_unsubmitted_count_as_idle():
    """§1.5: idle = num_jobs - num_running (held copies and jobs not yet submitted included)."""
    s = RouteStats("R", stats_begin_time=0)
    s.num_jobs, s.num_running, s.num_held = 5, 1, 2
    assert s.idle == 4


def test_state_kept_by_name_across_table_swap():
    """§1.5 CopyState: recent counters, begin time and throttle survive a reconfig, by name."""
    book = StatsBook()
    book.sync(["Site1", "Site2"], now=100)
    a = book.get("site1")  # names are case-insensitive
    a.recent_routed, a.recent_failed, a.recent_succeeded, a.throttle = 5, 2, 1, 7.5
    a.num_jobs = 9
    book.sync(["SITE1", "Site3"], now=400)
    b = book.get("Site1")
    assert (b.recent_routed, b.recent_failed, b.recent_succeeded, b.throttle) == (5, 2, 1, 7.5)
    assert b.stats_begin_time == 100
    assert book.get("Site3").stats_begin_time == 400  # a new route starts its window now
    assert book.get("Site2") is None  # dropped routes lose their state


def test_count_limit_is_where_route_state_stops_accepting():
    """The router's choice loop asks route_state again only from ``count_limit`` on (htcondor.md
    §1.5 ``AcceptingMoreJobs``: MaxJobs and MaxIdleJobs): with no throttle, every ``num_jobs``
    below it accepts, and from the limit on it does not."""
    for max_jobs in (-1, 0, 1, 5, 20):
        for max_idle in (-1, 0, 2, 7):
            for running in (0, 3, 9):
                route = SimpleNamespace(max_jobs=max_jobs, max_idle_jobs=max_idle)
                stats = RouteStats(name="r", stats_begin_time=0.0, num_running=running)
                limit = count_limit(route, stats)
                for n in range(running, 30):
                    stats.num_jobs = n
                    assert route_state(route, stats)[0] == (n < limit), (max_jobs, max_idle, running, n)
