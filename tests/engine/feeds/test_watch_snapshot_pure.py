"""Taking a snapshot changes nothing (issue 26): the watch feed advances its state (the router's
windows closed up to now, the crondor run, the queue's change events taken into the jobs table and
the route counts, the notices published) in ``advance()`` — after a poll, and by the runtime before
each snapshot — and ``snapshot()`` only reads what the last advance settled. So two snapshots in a
row are equal and leave the state as it was, and a snapshot taken on another thread (the TUI's, a
metrics scrape) cannot take the engine thread's change events from under it (a snapshot that did
crashed the engine with a KeyError).

The log is the shipped recording sample_configs/recordings/demo-3h.job_queue.log, cut after a
transaction and followed on a manual clock.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

from engine.clock import ManualClock
from engine.contract.commands import WakeUp
from engine.contract.snapshot import Snapshot
from engine.feeds.watch.feed import WatchFeed
from engine.feeds.watch.follow import WatchEngine
from engine.feeds.watch.setup import resolve
from tests.helpers.pure_snapshot import two_equal_snapshots

LOG = Path("sample_configs/recordings/demo-3h.job_queue.log")
CONFIG = "sample_configs/demo/condor_config"
WALL = 1_900_000_000.0


def _cuts(data: bytes, fractions: list[float]) -> list[int]:
    """The end of the first committed transaction after each fraction of the log."""
    out = []
    for f in fractions:
        at = data.index(b"\n106", int(len(data) * f)) + 1
        out.append(data.index(b"\n", at) + 1)
    return out


def _state(feed: WatchFeed) -> tuple:
    """What a snapshot must not change: the rebuilt windows and crondor, the events, the change
    events not yet taken into the jobs table and the route counts, the rows' order."""
    eng = feed.engine
    cron = eng.cron
    return (eng.figures.last_close, eng.figures.next_close, feed.ring.seq, feed.history_upto,
            frozenset(eng.rows.index.dirty), frozenset(eng.rows.tally.dirty), eng.rows.index.version,
            tuple(eng.route_order), len(eng._notices), len(eng.figures.events),
            None if cron is None else (len(cron.seen), getattr(cron, "now", None)))


def _shown(snap: Snapshot) -> Snapshot:
    """The snapshot with its jobs table as a tuple (two feeds' tables are equal row by row)."""
    return dataclasses.replace(snap, jobs=tuple(snap.jobs))


def _feed(tmp_path: Path, data: bytes, upto: int) -> tuple[WatchFeed, ManualClock, Path]:
    log = tmp_path / "job_queue.log"
    log.write_bytes(data[:upto])
    wall = ManualClock(WALL)
    feed = WatchFeed(WatchEngine(resolve(str(log), CONFIG, None), wall, tz="UTC"))
    feed.step(wall.now())  # the first read: the backlog
    return feed, wall, log


def test_two_snapshots_in_a_row_are_equal_and_change_nothing(tmp_path):
    data = LOG.read_bytes()
    first, second = _cuts(data, [0.2, 0.4])
    feed, wall, log = _feed(tmp_path, data, first)
    with log.open("ab") as fh:
        fh.write(data[first:second])
    wall.advance(900)  # later than a polling period: windows are due, the crondor has runs to make
    feed.handle(WakeUp())  # read what was appended
    one = two_equal_snapshots(lambda: feed.snapshot(5), lambda: _state(feed))
    assert one.total_jobs > 0 and one.routes


def test_a_snapshot_on_another_thread_reads_what_the_feed_settled(tmp_path):
    data = LOG.read_bytes()
    cuts = _cuts(data, [0.1, 0.2, 0.3, 0.4, 0.5])
    feed, wall, log = _feed(tmp_path, data, cuts[0])
    (tmp_path / "ref").mkdir()
    ref, ref_wall, ref_log = _feed(tmp_path / "ref", data, cuts[0])  # the same log, never snapshotted meanwhile
    for start, end in zip(cuts, cuts[1:]):
        for f, clock, path in ((feed, wall, log), (ref, ref_wall, ref_log)):
            with path.open("ab") as fh:
                fh.write(data[start:end])
            clock.advance(300)
            f.handle(WakeUp())
        before = _state(feed)
        got: list = []
        reader = threading.Thread(target=lambda: got.append(feed.snapshot(9)))
        reader.start()
        reader.join()
        assert _state(feed) == before
        assert got[0] == feed.snapshot(9)
    # the snapshots on the other thread changed nothing: the feed that had them and one that had
    # none are at the same state and show the same
    assert _shown(feed.snapshot(1)) == _shown(ref.snapshot(1))
    assert _state(feed) == _state(ref)
