"""Replay index and seeking (engine.feeds.replay.index / timeline).

Sources: htcondor.md §3.1 (record format), §3.2 (transactions, ``106 #`` comments), §3.3 (the
owner's reading rules: apply at 106, drop a trailing open transaction and a torn last line);
product.md §2 "Record times"; the real log bbockelm/golang-htcondor real_job_submission.log
(tests/data/replay/, see tests/data/PROVENANCE.md).
"""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pytest
from zoneinfo import ZoneInfo

from tests.helpers.paths import TESTS
from engine.feeds.replay.index import build_index
from engine.queue import reader
from engine.queue.timeline import CARRIED, COMMENT, SET, parse_comment_time
from tests.helpers.replay_logs import T0, Recording, as_expected

DATA = TESTS / "data" / "replay"


def _index(tmp_path, rec: Recording, every: int = 50, torn: bool = False):
    p = tmp_path / "job_queue.log"
    p.write_text(rec.text(torn=torn))
    return build_index(p, every=every, tz="UTC")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_seek_equals_straight_replay_at_random_points(tmp_path, seed):
    """Seeking to step i gives the state of applying steps 0..i from the start (§3.3: a
    transaction is applied at its 106; records outside transactions apply as they come)."""
    rec = Recording(seed, steps=400)
    ix = _index(tmp_path, rec, every=37)
    assert ix.steps == len(rec.states)
    assert len(ix.plan) > 5
    assert len(ix.checkpoints) == 1  # built by the seeks that need them
    rng = random.Random(seed)
    for i in [0, ix.steps - 1] + [rng.randrange(ix.steps) for _ in range(60)]:
        assert as_expected(ix.state_at(i)) == rec.states[i], f"step {i}"
    assert ix.state_at(-1).table == {}
    assert len(ix.checkpoints) > 3


def _state(q) -> tuple:
    return q.snapshot_state(), sorted(q.ids()), {k: q._kinds[k] for k in sorted(q._kinds)}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_checkpoint_by_the_fast_loader_equals_the_step_by_step_one(tmp_path, seed):
    """A checkpoint far from any built one is read by the loader's fast path with the owner's
    rules (htcondor.md §3.3: records apply at their 106, records outside transactions as they
    come); on a log without problems that is the state the step scanner builds interval by
    interval. Both are checked against the recording's own states."""
    # the recording as a schedd writes it: with the header ad (its 103s to 0.0 are otherwise
    # ignored) and without SetAttributes of unknown ads (replay ignores them; the owner's fast path
    # does not take them and the index then walks interval by interval)
    lines = [line for line in Recording(seed, steps=400).text().split("\n") if " Ghost " not in line]
    lines.insert(1, "101 0.0 Job Machine")
    p = tmp_path / "job_queue.log"
    p.write_text("\n".join(lines))
    cold = build_index(p, every=37, tz="UTC")
    assert cold.problems == []
    last = cold.plan[-1]
    assert reader.committed_state(cold.data[: cold.ends[last]]) is not None  # the fast path takes it
    direct = cold.state_at(last)  # one cold read: no checkpoint in between is built
    assert sorted(cold.built) == [-1, last]
    walked = build_index(p, every=37, tz="UTC")
    for cp in walked.plan[1:]:
        walked.state_at(cp)  # each from the one before
    assert sorted(walked.built) == walked.plan
    assert _state(direct) == _state(walked.state_at(last))
    assert len(direct) > 0 and "0.0" in direct.table
    for i in range(last - 40, cold.steps):
        assert _state(cold.state_at(i)) == _state(walked.state_at(i)), f"step {i}"


def test_checkpoints_are_built_step_by_step_when_the_log_has_problems(tmp_path):
    """A log with a corrupt record is read with replay's lenient rules only (the corrupt record is
    skipped, htcondor.md §3.3 departure documented in the index): the fast loader is not used."""
    rec = Recording(5, steps=300)
    text = rec.text()
    lines = text.split("\n")
    k = next(i for i, line in enumerate(lines) if line.startswith("103 ") and i > 20)
    lines.insert(k, "103 1.0")  # a SetAttribute without name and value
    p = tmp_path / "job_queue.log"
    p.write_text("\n".join(lines))
    ix = build_index(p, every=37, tz="UTC")
    assert [pr.line for pr in ix.problems] == [k + 1]
    ix.state_at(ix.steps - 1)
    assert sorted(ix.built) == ix.plan  # every interval walked


def test_checkpoints_are_not_changed_by_later_writes(tmp_path):
    """Copy-on-write: the state handed out by a seek can be changed without touching the index."""
    rec = Recording(7, steps=200)
    ix = _index(tmp_path, rec, every=20)
    s = ix.state_at(100)
    for key in list(s.table):
        s.apply_quiet([(103, key, "JobStatus", "3"), (102, key, "", "")])
    assert not s.table
    assert as_expected(ix.state_at(100)) == rec.states[100]
    assert as_expected(ix.state_at(120)) == rec.states[120]


def test_trailing_open_transaction_and_torn_line_are_not_steps(tmp_path):
    """§3.3: at EOF an open transaction is discarded, and an unterminated last line too."""
    rec = Recording(4, steps=50)
    ix = _index(tmp_path, rec, torn=True)
    assert ix.steps == 50
    assert as_expected(ix.state_at(49)) == rec.states[49]
    messages = " ".join(p.message for p in ix.problems)
    assert "unterminated last line" in messages and "no EndTransaction" in messages


def test_corrupt_record_is_reported_with_its_line_and_skipped(tmp_path):
    """§3.1: an unknown op code is an error; replay names the line and goes on (documented
    departure from the schedd, which would EXCEPT inside a closed transaction)."""
    p = tmp_path / "job_queue.log"
    p.write_text("107 1 CreationTimestamp 1795300000\n105 \n101 1.0 Job Machine\nZMG nonsense\n"
                 "103 1.0 JobStatus 2\n103 1.0 Bad \n106 \n")
    ix = build_index(p)
    assert ix.steps == 1
    assert ix.state_at(0).table == {"1.0": {"JobStatus": "2"}}
    assert [(pr.line, "error" in pr.message) for pr in ix.problems] == [(4, True), (6, True)]
    assert ix.problems[0].where(str(p)).startswith(f"{p}:4: ")


def test_nul_byte_ends_the_log(tmp_path):
    """§3.1: a NUL byte counts as EOF for the reader."""
    p = tmp_path / "job_queue.log"
    p.write_bytes(b"107 1 CreationTimestamp 1795300000\n105 \n101 1.0 Job Machine\n106 \n"
                  b"105 \n103 1.0 X 1\n106 \n\0\0\0")
    ix = build_index(p)
    assert ix.steps == 2 and "NUL" in ix.problems[0].message


def test_times_from_commit_comments(tmp_path):
    """§3.2: ``106 # <ISO-8601 local time with microseconds>[ NONDURABLE]``."""
    rec = Recording(5, steps=100)
    ix = _index(tmp_path, rec)
    assert ix.has_comments
    for i in range(ix.steps):
        if ix.sources[i] == COMMENT:
            assert ix.times[i] == pytest.approx(rec.times[i], abs=1e-6)
    assert parse_comment_time("106 # 2026-11-21T14:32:05.123456 NONDURABLE", "UTC") == \
        pytest.approx(datetime(2026, 11, 21, 14, 32, 5, 123456, timezone.utc).timestamp())
    assert parse_comment_time("106 # 2026-11-21T08:32:05.000000", "America/Chicago") == \
        pytest.approx(datetime(2026, 11, 21, 14, 32, 5, tzinfo=timezone.utc).timestamp())  # CST = UTC-6
    assert parse_comment_time("106 # not a time", "UTC") is None


def test_times_inferred_from_time_attributes(tmp_path):
    """product.md §2: without comments, a step's time is the latest time attribute it sets
    (EnteredCurrentStatus, QDate, …), else the previous step's; times never go back."""
    rec = Recording(6, steps=150, comments=False)
    ix = _index(tmp_path, rec)
    assert not ix.has_comments
    assert set(ix.sources) <= {SET, CARRIED} and SET in ix.sources and CARRIED in ix.sources
    for i in range(ix.steps):
        assert ix.times[i] <= rec.times[i] + 1e-9  # attributes hold whole seconds of the step time
        if i:
            assert ix.times[i] >= ix.times[i - 1]
        if ix.sources[i] == SET:
            assert ix.times[i] == int(rec.times[i]) or ix.times[i] == ix.times[i - 1]
    assert ix.step_at_time(T0 - 1) == -1
    assert ix.step_at_time(ix.times[-1]) == ix.steps - 1


def test_real_log_replays():
    """bbockelm/golang-htcondor real_job_submission.log: job 1.0 ends Held (JobStatus 5) with
    Cmd "sleep" (htcondor.md §6 "job_queue.log: facts"); the NextClusterNum record written
    outside a transaction is a step of its own; the log has no commit comments, so every time
    is carried from its CreationTimestamp."""
    ix = build_index(DATA / "real_job_submission.log")
    assert ix.problems == []
    assert ix.creation_timestamp == 1763853165 and ix.sequence == 1
    last = ix.state_at(ix.steps - 1)
    assert last.table["1.0"]["JobStatus"] == "5" and last.table["1.0"]["Cmd"] == '"sleep"'
    assert last.my_type("0.2") == "Owner" and last.my_type("1.-2") == "ClusterPvt"
    assert [ix.lines[i] for i in range(ix.steps)] == [2, 3, 6, 13, 14]
    assert not ix.has_comments and set(ix.sources) == {CARRIED}
    assert set(ix.times) == {1763853165.0}


@pytest.mark.parametrize("seed", [31, 32])
def test_seek_equals_the_foundation_reader_on_the_truncated_log(tmp_path, seed):
    """Cross-check against an independent implementation of the owner's rules (htcondor.md
    §3.3, engine.queue.reader): reading the log cut just after step i gives the state a seek
    to step i gives."""

    rec = Recording(seed, steps=250)
    ix = _index(tmp_path, rec, every=29)
    rng = random.Random(seed)
    for i in [0, ix.steps - 1] + [rng.randrange(ix.steps) for _ in range(25)]:
        res = reader.load_bytes(ix.data[: ix.ends[i]], source="job_queue.log", mode="owner")
        assert as_expected(ix.state_at(i)) == res.queue.snapshot_state(), f"step {i}"
    real = reader.load_log(DATA / "real_job_submission.log", mode="owner")
    ix = build_index(DATA / "real_job_submission.log")
    assert as_expected(ix.state_at(ix.steps - 1)) == real.queue.snapshot_state()


@pytest.mark.parametrize("tz", ["UTC", "America/Chicago", None])
@pytest.mark.parametrize("text", [
    "106 # 2026-11-21T00:00:00.000000", "# 2026-03-08T02:30:15.5", "# 2026-11-01T01:30:00",
    "# 2026-11-21T00:00:59 NONDURABLE", "# 2026-11-21T00:00:00+02:00", "# 2026-13-21T00:00:00", "#", "106"])
def test_comment_time_fast_path_equals_a_full_parse(text, tz):
    """The ``106 # <time>`` comment (htcondor.md §3.2) read by minute (one zone lookup per minute,
    the seconds added) gives what a full ISO parse in the zone gives, DST gaps and folds included
    (2026-03-08 02:30 does not exist in Chicago, 2026-11-01 01:30 happens twice)."""
    body = text.strip()
    body = body[3:].strip() if body.startswith("106") else body
    body = body[1:].strip().removesuffix("NONDURABLE").strip() if body.startswith("#") else ""
    try:
        moment = datetime.fromisoformat(body) if body else None
    except ValueError:
        moment = None
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo(tz)) if tz else moment.astimezone()
    want = moment.timestamp() if moment is not None else None
    assert parse_comment_time(text, tz) == pytest.approx(want) if want is not None else parse_comment_time(text, tz) is None


def test_idle_builds_every_checkpoint_one_interval_at_a_time(tmp_path):
    """Issue 30: the replay feed builds the seek checkpoints while the runtime waits, one interval
    per call, so a later seek never walks several intervals (the seek bench's max); the states
    are the ones a seek builds."""
    rec = Recording(4, steps=400)
    ix = _index(tmp_path, rec, every=37)
    walked = []
    calls = 0
    while ix.build_next_checkpoint():
        calls += 1
        walked.append(sorted(ix.built))
    assert calls == len(ix.plan) - 1 and sorted(ix.built) == ix.plan
    assert all(len(b) == k + 2 for k, b in enumerate(walked))  # one more each time, in order
    for i in range(0, ix.steps, 7):
        assert as_expected(ix.state_at(i)) == rec.states[i], f"step {i}"


def test_a_start_state_given_as_a_queue_replays_as_its_compacted_body():
    """``build_index(start=q)`` (a window's start state, engine.feeds.replay.archive.open_window)
    indexes, seeks and counts route figures as the same state written as a compacted body (§3.4)
    after the ``107`` line would, and nothing it does writes to ``q``."""
    from engine.feeds.replay.stats import RouteHistory  # noqa: PLC0415 - this test only
    from engine.queue.writer import dump_chunks  # noqa: PLC0415 - this test only
    from tests.helpers.paths import REPO  # noqa: PLC0415 - this test only

    data = (REPO / "sample_configs/recordings/demo-3h.job_queue.log").read_bytes()[: 1 << 19]
    data = data[: data.rfind(b"\n") + 1]
    whole = build_index("demo", tz="UTC", data=data)
    k = whole.steps // 2
    q = whole.state_at(k)
    before = q.snapshot_state()
    head, rest = data[: data.find(b"\n") + 1], data[whole.ends[k]:]
    text = build_index("demo", tz="UTC", data=head + b"".join(dump_chunks(q)) + rest, every=500)
    given = build_index("demo", tz="UTC", data=head + rest, start=q, every=500)
    assert given.head is q and given.steps == text.steps == whole.steps - k
    assert list(given.times) == list(text.times) and given.sources == text.sources
    rng = random.Random(27)
    for step in [0, given.steps - 1] + rng.sample(range(given.steps), 8):
        assert given.state_at(step).snapshot_state() == text.state_at(step).snapshot_state()
    a = RouteHistory(text, None, 10.0, "UTC").build()
    b = RouteHistory(given, None, 10.0, "UTC").build()
    assert b.tracks and list(b.closes) == list(a.closes) and b.changes == a.changes
    for step in rng.sample(range(given.steps), 5):
        assert b.figures(step, given.times[step]) == a.figures(step, text.times[step])
    assert b.cron_times.keys() == a.cron_times.keys() and b.cron_values == a.cron_values
    assert q.snapshot_state() == before  # the stats wrote their own copy, the seeks forks
