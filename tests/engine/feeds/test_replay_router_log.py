"""The replay feed's ``router_log(now)`` ability (issue 27): the real router's JobRouterLog archived
by ``routedeck record --router-log``, at the replay's moment — the dashboard's router-log screen
reads it through ``engine.views.queries.routerlog.router_log``.

JobRouterLog facts (htcondor.md §1.5): ``JobRouter::GetCandidateJobs`` writes the routing table
once per poll with one ``dprintf(D_ALWAYS)``, so only the header line carries the time stamp; the
rows are ``Submitted/Max``, ``Idle/Max``, ``Throttle`` (``none`` or ``<%g> jobs/sec``) and
``Recent: Started Succeeded Failed``. The archive is a real one: the demo recording's first 3000
transactions recorded by the recorder beside a router log in that format (tests/helpers/routerlog.py).
"""

from __future__ import annotations

import pytest

from engine.contract.feed import NOT_OFFERED
from engine.feeds.replay.archive import router_log_at
from engine.record.archive import Archive
from engine.launch.options import ReplayOptions
from engine.launch.replay import replay_runtime
from engine.views.queries.routerlog import NO_ROUTER_LOG, NOT_AN_ARCHIVE, router_log
from tests.helpers.replay_logs import Recording
from tests.helpers.routerlog import DEMO_START, THROTTLED_FROM, archive_with_router_log


class _Engine:
    """Runs a query on the feed at once (``Runtime.query`` on its engine thread, without a thread)."""

    def __init__(self, feed) -> None:
        self.feed = feed

    def query(self, fn, timeout=None):
        return fn(self.feed)


def _feed(path) -> object:
    return replay_runtime(ReplayOptions(log=str(path), tz="UTC")).feed


def test_the_router_log_follows_the_moment_asked(tmp_path):
    feed = _feed(archive_with_router_log(tmp_path))
    before = feed.router_log(THROTTLED_FROM - 5)  # the poll at THROTTLED_FROM - 20: not yet throttled
    assert before["table"]["time"] == THROTTLED_FROM - 20
    assert {r["name"]: r["throttle"] for r in before["table"]["routes"]} == {"Site1_Slurm": None, "BlackHole": None}
    after = feed.router_log(THROTTLED_FROM + 5)
    assert after["table"]["time"] == THROTTLED_FROM
    bh = {r["name"]: r for r in after["table"]["routes"]}["BlackHole"]
    # the router prints jobs/sec (throttle / 600): 18 jobs per window is "0.03 jobs/sec"
    assert (bh["throttle_text"], bh["throttle"], bh["recent_failed"]) == ("0.03 jobs/sec", pytest.approx(18.0), 30)
    # the lines within 30 s of the moment, in order, each with its time (the rows carry the
    # header's stamp: one dprintf per table)
    times = [x["time"] for x in after["lines"]]
    assert times == sorted(times) and all(THROTTLED_FROM - 25 <= t <= THROTTLED_FROM + 35 for t in times)
    assert any("Checking for candidate jobs" in x["text"] for x in after["lines"])
    assert feed.router_log(DEMO_START + 100)["table"] is None  # before the router's first poll
    assert feed.router_log(DEMO_START + 100)["lines"] == []
    # the query says the same, as the dashboard reads it
    got, note = router_log(_Engine(feed), THROTTLED_FROM + 5)
    assert got == after and note == ""


def test_without_a_router_log_the_query_says_why(tmp_path):
    archive = archive_with_router_log(tmp_path, router_log=False)
    feed = _feed(archive)
    assert feed.router_log(THROTTLED_FROM) is None  # an archive, recorded without --router-log
    assert router_log(_Engine(feed), THROTTLED_FROM) == (None, NO_ROUTER_LOG)
    log = tmp_path / "plain.log"
    log.write_text(Recording(7, steps=20).text())
    plain = _feed(log)
    assert plain.router_log(0.0) is NOT_OFFERED  # a log: nothing archived beside it
    assert router_log(_Engine(plain), 0.0) == (None, NOT_AN_ARCHIVE)


def test_moving_through_one_frame_reads_it_once_and_answers_as_reading_it_again(tmp_path, monkeypatch):
    """A catch-up (``record --once``) archives the router's log read in one frame: the dashboard
    following the replay must not decompress and parse it again at every moment (400 ms a moment
    for 3 hours of a router's log); the answers are those of a fresh read."""
    archive = archive_with_router_log(tmp_path)
    feed = _feed(archive)
    reads = []
    frame = Archive.router_frame
    monkeypatch.setattr(Archive, "router_frame", lambda self, line: reads.append(line) or frame(self, line))
    moments = [DEMO_START + 590 + 7.5 * k for k in range(40)]
    got = [feed.router_log(t) for t in moments]
    assert len(reads) == 1
    assert got == [router_log_at(archive, t, "UTC") for t in moments]
