"""The recorder's per-route window counts (engine.record.counts, issue 27): what a window of the
archive needs to know the failure-rate throttle in force at its start (htcondor.md §1.5,
``AdjustFailureThrottles``), kept across restarts and compactions, folded with the routing
table's thresholds at replay time."""

from __future__ import annotations

import json
import random
from datetime import datetime, timezone

import pytest

import engine.feeds.replay.archive as replay_archive
from engine.feeds.replay.archive import open_archive
from engine.feeds.replay.stats import RouteHistory
from engine.record.archive import Archive
from engine.record.counts import fold
from engine.record.files import ArchiveError
from engine.record.recorder import Recorder
from engine.router.throttle import RouteStats
from engine.views.figures import RouteRule
from tests.helpers.compaction import ScheddLog
from tests.helpers.paths import REPO
from tui.cli import main

DEMO = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"


def closes(arch) -> list[dict]:
    return [x for x in Archive.open(arch, readonly=True).index_lines() if x["kind"] == "close"]


def record(tmp_path, name: str, chunks: int, restart: bool, compact_every: int = 0):
    d = tmp_path / name
    d.mkdir()
    schedd = ScheddLog(d / "job_queue.log", DEMO.read_bytes())
    per = -(-len(schedd.steps) // chunks)
    rec = None
    for i in range(chunks):
        schedd.advance(per)
        if rec is None or restart:  # a new process each time: the counts come back from recorder.json
            rec = Recorder(d / "job_queue.log", d / "archive", tz="UTC", segment_bytes=200_000)
        rec.poll(i, flush=True)
        if compact_every and i % compact_every == compact_every - 1:
            schedd.compact()
    return d / "archive"


@pytest.mark.slow
def test_restarts_and_compactions_keep_the_counts_of_one_uninterrupted_recorder(tmp_path):
    whole = record(tmp_path, "whole", 1, restart=False)
    pieces = record(tmp_path, "pieces", 9, restart=True, compact_every=2)
    want = closes(whole)
    assert len(want) >= 15  # a 3-hour recording: a window close every ~600 s
    got = closes(pieces)
    assert [(x["t"], x["routes"]) for x in got] == [(x["t"], x["routes"]) for x in want]
    # and they are replay's: folded with the default thresholds, the throttle of every route
    # after every close is the one the whole archive played gives (RouteHistory)
    seeds, exact = fold(want, None)
    history = RouteHistory(open_archive(whole, tz="UTC").index, None, 10, "UTC").build()
    assert exact and any(t for after in seeds.values() for t in after.values())  # some route is throttled
    for name, tr in history.tracks.items():
        for k, c in enumerate(history.closes):  # (a route not seen yet by a close: none)
            assert seeds[c].get(name, 0.0) == tr.at_close[k][1], (name, c)


def _close(t, **routes):
    return {"kind": "close", "txn": 0, "t": t, "routes": routes}


def test_the_fold_recounts_exit_code_failures_for_a_table_without_a_failure_test():
    # 30 failures in 600 s, 20 of them completed copies with a non-zero exit code: without a
    # table all 30 are failures (rate 0.05 > 0.03: throttled); a table without JobFailureTest
    # counts those 20 as succeeded (10 / 600 s = 0.0167: not throttled)
    lines = [_close(1000.0, A=[600.0, 40, 5, 30, 10, 20])]
    no_table, exact = fold(lines, None)
    assert exact and no_table[1000.0]["A"] == pytest.approx(600 * 0.03 / (30 / (30 + 10 + 5)))
    table, exact = fold(lines, {"A": RouteRule(0.03)})
    assert exact and table[1000.0]["A"] == 0.0
    _, exact = fold(lines, {"A": RouteRule(0.03, "ExitCode =!= 0")})
    assert not exact  # the recorder could not evaluate the test: a window's throttle is estimated


def test_the_fold_is_the_routers_adjust_failure_throttle_close_after_close_and_since_keeps_the_later_closes():
    # htcondor.md §1.5: the throttle after each close is AdjustFailureThrottles' (RouteStats) from the
    # one before; routes that fail now and then (throttled, then recovering to none), one that never
    # fails (none throughout), a window shorter than 600 s (no update), thresholds of a table
    rng = random.Random(27)
    lines, t = [], 10_000.0
    for _ in range(400):
        t += rng.choice([600.0, 610.0, 900.0])
        routes = {}
        for name, p_fail in (("A", 0.3), ("B", 0.05), ("Calm", 0.0)):
            failed = rng.randrange(1, 60) if rng.random() < p_fail else 0
            exit_failed = rng.randrange(0, failed + 1)
            routes[name] = [rng.choice([600.0, 599.0, 700.0]), rng.randrange(50), rng.randrange(50), failed,
                            rng.randrange(200), exit_failed]
        lines.append(_close(t, **routes))
    for rules in (None, {"A": RouteRule(0.01), "B": RouteRule(0.2)}):
        stats = {name: RouteStats(name=name, stats_begin_time=0.0) for name in ("A", "B", "Calm")}
        want = {}
        for x in lines:
            for name, (delta, _routed, ok, failed, num_jobs, exit_failed) in x["routes"].items():
                rule = RouteRule() if rules is None else rules.get(name, RouteRule())
                if rules is not None:  # a table without JobFailureTest: exit-code failures succeeded
                    ok, failed = ok + exit_failed, failed - exit_failed
                s = stats[name]
                s.stats_begin_time, s.recent_failed, s.recent_succeeded, s.num_jobs = x["t"] - delta, failed, ok, num_jobs
                s.adjust_failure_throttle(x["t"], rule.threshold)
                want.setdefault(x["t"], {})[name] = s.throttle
        got, exact = fold(lines, rules)
        assert exact and got == want
        assert any(v for after in want.values() for v in after.values())  # throttled at times …
        assert sum(1 for after in want.values() if after["A"] == 0.0) > 10  # … and none at others
        since = lines[300]["t"]
        later, _ = fold(lines, rules, since=since)
        assert later == {c: after for c, after in want.items() if c >= since}


@pytest.mark.slow
def test_a_window_says_whether_its_throttle_is_recorded_or_estimated(tmp_path, capsys, monkeypatch):
    arch = record(tmp_path, "a", 1, restart=False)
    monkeypatch.setattr(replay_archive, "WHOLE_BELOW", 0)  # read by windows, however small

    def window():
        assert main(["replay", str(arch), "--at", "end", "--tz", "UTC", "--json"]) == 0
        return json.loads(capsys.readouterr().out)["replay"]["archive"]["window"]

    assert window()["throttle"] == "recorded"
    # an archive recorded before the counts were kept: no close lines, no counts in recorder.json
    meta = json.loads((arch / "recorder.json").read_text())
    meta.pop("figures")
    (arch / "recorder.json").write_text(json.dumps(meta))
    assert window()["throttle"] == "estimated"
    # and a recorder resuming it does not start counting in its middle
    rec = Recorder(tmp_path / "a" / "job_queue.log", arch, tz="UTC")
    rec.poll(0, flush=True)
    assert rec.archive.meta.figures is None


def test_a_catch_up_closes_windows_only_at_their_polls(tmp_path, monkeypatch):
    """Per-transaction work (bench/record.py's catch-up): a step before the next window's poll does
    not go through ``LiveFigures.close_until``; the windows and their counts are the same."""
    from engine.views.figures import LiveFigures  # noqa: PLC0415 - the class spied on, for this test only

    calls = []
    close_until = LiveFigures.close_until

    def spy(self, t, inclusive=True):
        calls.append(t)
        return close_until(self, t, inclusive)

    monkeypatch.setattr(LiveFigures, "close_until", spy)
    schedd = ScheddLog(tmp_path / "job_queue.log", DEMO.read_bytes())
    schedd.advance(2000)
    rec = Recorder(tmp_path / "job_queue.log", tmp_path / "archive", tz="UTC")
    rec.poll(0, flush=True)
    span = rec.last_time - rec.counts.figures.start
    assert 0 < len(calls) <= span / rec.counts.figures.period + 1 < 2000 / 4
    assert closes(tmp_path / "archive")  # windows were closed and recorded


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.0")


@pytest.mark.parametrize("source_first", [True, False])
def test_a_copy_is_judged_on_the_ads_the_queue_holds_when_it_leaves(tmp_path, source_first):
    """``LiveFigures.refresh`` before a step destroys a copy: its references point to the ads the
    queue holds then. After a state checkpoint (``JobQueue.fork``: the ads written after it are
    new dicts) the copy's completion is seen, and a source that came after the copy was tracked
    is found (htcondor.md §1.5: a copy with no source job in the queue when it leaves is
    interrupted, not counted; here the source is there)."""
    t0 = 1795219200
    copy = ["101 02.-1 Job Machine", "103 02.-1 ClusterId 2", "101 2.0 Job Machine", "103 2.0 ProcId 0",
            "103 2.0 JobStatus 1", '103 2.0 RoutedFromJobId "1.0"', '103 2.0 RouteName "Site1"']
    source = ["101 01.-1 Job Machine", "103 01.-1 ClusterId 1", "101 1.0 Job Machine", "103 1.0 ProcId 0",
              "103 1.0 JobStatus 2"]

    def txn(lines, t):
        return "".join(line + "\n" for line in ["105 ", *lines, f"106 # {_stamp(t)}"])

    log = tmp_path / "job_queue.log"
    first, second = (source, copy) if source_first else (copy, source)
    log.write_text(f"107 1 CreationTimestamp {t0}\n" + txn(first, t0 + 10) + txn(second, t0 + 20))
    rec = Recorder(log, tmp_path / "archive", tz="UTC", segment_bytes=1)  # every write starts a segment
    rec.poll(0, flush=True)
    assert rec.base is not None  # the queue forked: what is written next goes to new dicts
    with open(log, "a") as fh:
        fh.write(txn(["103 2.0 JobStatus 4", "103 2.0 ExitCode 0"], t0 + 30) + txn(["102 2.0", "102 02.-1"], t0 + 40))
    rec.poll(1, flush=True)
    assert rec.counts.figures.stats["Site1"].totals == (1, 1, 0)  # started, succeeded, failed


def test_a_moment_parses_the_closes_up_to_it_and_folds_what_all_of_them_give(tmp_path):
    """``summarize`` keeps the window closes' lines raw (most of a long archive's index) and
    ``close_lines`` parses those a moment's fold reads (at or before it; issue 27): the fold is
    the one of every close. A close line written otherwise (keys in another order, a time that is
    not a plain number) is parsed all the same; an index with one not beginning as the archive
    writes them is parsed whole, in order."""
    arch = record(tmp_path, "a", 1, restart=False)
    every = closes(arch)
    s = replay_archive.summarize(arch, "UTC")
    assert len(s.closes) == len(every) >= 15 and not [x for x in s.lines if x["kind"] == "close"]
    assert replay_archive.close_lines(s) == every
    odd = json.loads(s.closes[3])
    s.closes[3] = b'{"kind":"close","t":%r,"txn":%d,"routes":%s}' % (odd["t"], odd["txn"], json.dumps(odd["routes"]).encode())
    s.closes[5] = s.closes[5].replace(b'"t":%r' % every[5]["t"], b'"t":%de-1' % (every[5]["t"] * 10))
    s.closes[6] = s.closes[6].replace(b'"t":', b'"t": ')  # not dated without a parse
    assert [json.loads(line) for line in s.closes] == every
    times = [x["t"] for x in every]
    for until in [times[0] - 1, times[2], times[3], times[4] + 1, times[5], (times[5] + times[6]) / 2, times[-1], None]:
        for rules in (None, {"BlackHole": RouteRule(0.01)}):
            assert fold(replay_archive.close_lines(s, until), rules, until) == fold(every, rules, until), until
    index = arch / "index-1.jsonl"
    text = index.read_bytes()
    first = text.index(b'{"kind":"close","txn":')
    index.write_bytes(text[:first] + b'{"txn":' + text[first + 22:first + 22 + text[first + 22:].index(b",")]
                      + b',"kind":"close"' + text[first + 22 + text[first + 22:].index(b","):])
    assert len(index.read_bytes()) == len(text)  # the same bytes counted by recorder.json
    s = replay_archive.summarize(arch, "UTC")
    assert s.closes == [] and [x for x in s.lines if x["kind"] == "close"] == every
    assert fold(replay_archive.close_lines(s, times[4]), None, times[4]) == fold(every, None, times[4])


def test_a_damaged_close_line_before_the_moment_names_the_index_file(tmp_path):
    """A close line a moment reads that does not parse is the index file's error, as when the whole
    index was parsed (review of s15-at, finding 4: it said "the archive's index"). One after the
    moment is not read (close_lines' docstring), so the moment before it still opens."""
    arch = record(tmp_path, "a", 1, restart=False)
    every = closes(arch)
    index = arch / "index-1.jsonl"
    text = index.read_bytes()
    at = [i for i in range(len(text)) if text.startswith(b'{"kind":"close",', i)][2]
    routes = text.index(b'"routes":', at)
    index.write_bytes(text[:routes] + b'"routes"!' + text[routes + 9:])  # the same length
    s = replay_archive.summarize(arch, "UTC")
    times = [x["t"] for x in every]
    with pytest.raises(ArchiveError) as exc:
        replay_archive.close_lines(s, times[-1])
    assert str(exc.value).startswith(f"{index}: unreadable index (")
    assert replay_archive.close_lines(s, times[1]) == every[:2]
