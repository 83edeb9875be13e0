"""``replay DIR`` at a moment reads a window of the archive, not all of it (issue 27 limits).

The archive: sample_configs/recordings/demo-3h.job_queue.log (and three copies of it end to end,
tests/helpers/demo_days.py) recorded with small segments. A moment is opened from one state
checkpoint and the segments from it to the moment (engine.feeds.replay.archive.open_window): the
number of segments and zstd decompressions does not grow with the archive's length, and what
``replay DIR --at T --json`` prints — transaction number, counts per status, per route (routed,
idle, running, held and the recent started / succeeded / failed of the router's stats window,
htcondor.md §1.5) — equals the whole archive opened and played to T. (Not the throttle: a window
reconstructs it from its start only, the documented departure of engine.feeds.replay.archive.)
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import re

import pytest
import zstandard

import engine.feeds.replay.archive as archive_mod_replay
import engine.record.archive as archive_mod
from engine.clock import ManualClock
from engine.feeds.replay.archive import open_archive, open_window, summarize
from engine.feeds.replay.player import Player
from engine.record.recorder import Recorder
from engine.views.build import RowIndex
from tests.helpers.demo_days import long_log
from tui.cli import main

SEGMENT, FRAME = 256 << 10, 64 << 10
# the long archive: segments of four catch-up writes (PENDING_FRAMES frames each), an inner state
# checkpoint after each of the first three, so its windows start from inner checkpoints as often
# as the short one's (no inner checkpoint: a write fills its segment) start from segments'
LONG_SEGMENT, EVERY = 4 * SEGMENT, SEGMENT // 2
# one test process builds the module's archives and window answers once (--dist loadgroup)
pytestmark = pytest.mark.xdist_group("record-window")


def record(tmp_path, copies: int, segment: int = SEGMENT, checkpoint_bytes: int | None = None):
    log = tmp_path / f"job_queue-{copies}.log"
    log.write_bytes(long_log(copies))
    arch = tmp_path / f"arch-{copies}"
    Recorder(log, arch, tz="UTC", segment_bytes=segment, frame_bytes=FRAME,
             checkpoint_bytes=checkpoint_bytes).poll(0, flush=True)
    return arch


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    d = tmp_path_factory.mktemp("window")
    return record(d, 1), record(d, 3, LONG_SEGMENT, EVERY)


def inner_checkpoints(arch) -> list[dict]:
    return [x for x in archive_mod.Archive.open(arch, readonly=True).index_lines() if x["kind"] == "state"]


class Counting:
    """Counts what the archive decompresses: segments whose frames are read, and zstd calls."""

    def __init__(self, monkeypatch):
        self.segments: list[int] = []
        self.states: list[int] = []  # the segment of each state checkpoint read (its first or an inner one)
        self.inners: list[int] = []
        self.frames: list[tuple[int, int]] = []  # (segment, first transaction) of each frame read alone
        self.decompressions = 0
        frames, read_state, real = archive_mod.Archive.frames, archive_mod.Archive.read_state, zstandard.ZstdDecompressor
        frame, inner = archive_mod.Archive.frame, archive_mod.Archive.inner_state
        counter = self

        class Dctx:
            def __init__(self, *a, **kw):
                self._d = real(*a, **kw)

            def decompress(self, data, *a, **kw):
                counter.decompressions += 1
                return self._d.decompress(data, *a, **kw)

        def counting_frames(arch, k):
            counter.segments.append(k)
            return frames(arch, k)

        def counting_state(arch, k):
            counter.states.append(k)
            return read_state(arch, k)

        def counting_inner(arch, line):
            counter.states.append(line["seg"])
            counter.inners.append(line["txn"])
            return inner(arch, line)

        def counting_frame(arch, line):
            counter.frames.append((line["seg"], line["first"]))
            return frame(arch, line)

        monkeypatch.setattr(archive_mod.zstandard, "ZstdDecompressor", Dctx)
        monkeypatch.setattr(archive_mod.Archive, "frames", counting_frames)
        monkeypatch.setattr(archive_mod.Archive, "read_state", counting_state)
        monkeypatch.setattr(archive_mod.Archive, "frame", counting_frame)
        monkeypatch.setattr(archive_mod.Archive, "inner_state", counting_inner)

    def reset(self):
        self.segments, self.states, self.frames, self.decompressions = [], [], [], 0
        self.inners: list[int] = []  # the transaction each inner state checkpoint read is before


@pytest.mark.slow
def test_a_moment_costs_the_same_few_segments_however_long_the_archive(archives, monkeypatch):
    short, long_ = archives
    count = Counting(monkeypatch)
    costs = {}
    for arch in archives:
        s = summarize(arch, "UTC")
        assert len(s.segments) >= 10 if arch is short else len(s.segments) + len(inner_checkpoints(arch)) >= 30
        worst = (0, 0)
        rng = random.Random(7)
        for _ in range(20):
            t = rng.uniform(s.start, s.end)
            count.reset()
            open_window(arch, "UTC", time=t, summary=s)
            assert len(count.states) == 1  # a segment's state checkpoint or an inner one
            # no segment read whole: the frames from the checkpoint's segment on, each once, in order
            assert count.segments == [], count.segments
            assert count.frames == sorted(set(count.frames)) and count.frames[0][0] == count.states[0], count.frames
            worst = max(worst, (len({k for k, _ in count.frames}), count.decompressions))
        costs[arch] = worst
    # the long archive is three times the short one: a moment in it costs as many segments and
    # frames (up to where the moment falls against segment boundaries: one segment, its frames),
    # a bound set by the window's minutes, not by the archive's length
    frames_per_segment = SEGMENT // FRAME + 1
    assert costs[long_][0] <= costs[short][0] + 1 <= 6, costs
    assert costs[long_][1] <= costs[short][1] + frames_per_segment, costs


def _route_rows(routes):
    return sorted((r["name"], r["routed"], r["idle"], r["running"], r["held"], r["recent_started"],
                   r["recent_succeeded"], r["recent_failed"]) for r in routes)


@pytest.fixture(scope="module")
def window(archives):
    """The 3-copy archive (with inner state checkpoints) read by windows: ``replay DIR --at AT --tz
    UTC --json`` at 56 moments (25 random times, 15 random transaction numbers, start, end, #0, #1,
    and 12 moments whose window starts just before or just after an inner checkpoint), each run
    once for the tests below, and the whole archive opened: (dir, whole, summary, {at: the JSON
    printed})."""
    arch = archives[1]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(archive_mod_replay, "WHOLE_BELOW", 0)  # read by windows, however small
        whole, s = open_archive(arch, tz="UTC"), summarize(arch, "UTC")
        rng = random.Random(3)
        moments = [f"{rng.uniform(s.start, s.end):.3f}" for _ in range(25)]
        moments += [f"#{rng.randrange(0, s.steps + 1)}" for _ in range(15)] + ["start", "end", "#0", "#1"]
        moments += around_inner_checkpoints(arch)
        answers = {}
        for at in moments:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main(["replay", str(arch), "--at", at, "--tz", "UTC", "--json"]) == 0
            answers[at] = json.loads(out.getvalue())
    return arch, whole, s, answers


def around_inner_checkpoints(arch) -> list[str]:
    """Moments whose window (``WINDOW`` seconds) starts a second before, at, and a second or two
    after the time of three inner checkpoints (one early, one in the middle, one late), each with
    an inner checkpoint before it in its segment."""
    end = max(x["t1"] for x in archive_mod.Archive.open(arch, readonly=True).index_lines() if x["kind"] == "frame")
    inner = inner_checkpoints(arch)
    # a checkpoint with an inner one before it in its segment (the window just before it starts there)
    inner = [x for k, x in enumerate(inner) if k and inner[k - 1]["seg"] == x["seg"]
             and x["time"] + archive_mod_replay.WINDOW + 2 < end]
    picked = [inner[0], inner[len(inner) // 2], inner[-1]]
    return [f"{x['time'] + archive_mod_replay.WINDOW + d:.3f}" for x in picked for d in (-1.0, 0.0, 1.0, 2.0)]


@pytest.mark.slow
def test_moments_around_inner_checkpoints_start_from_them(window, monkeypatch):
    """The windows of the moments around inner checkpoints (:func:`around_inner_checkpoints`) start
    from an inner checkpoint (the one before for those just before), never from the segment's."""
    arch = window[0]
    count = Counting(monkeypatch)
    monkeypatch.setattr(archive_mod_replay, "WHOLE_BELOW", 0)
    used = []
    for at in around_inner_checkpoints(arch):
        count.reset()
        open_window(arch, "UTC", time=float(at), summary=window[2])
        assert len(count.inners) == len(count.states) == 1, (at, count.inners, count.states)
        used.append(count.inners[0])
    # each group of four: the window just before the checkpoint starts from the one before it
    assert all(len(set(used[k:k + 4])) == 2 for k in range(0, len(used), 4)), used


@pytest.fixture(scope="module")
def played(window):
    """The whole archive played to each of the window's moments, by one player seeking from one
    moment to the next in time order (forward: a third less than in the window's random order):
    {at: (the player's position, its snapshot)}. Both tests below compare with it (the throttle
    test seeked its own player to the same 25 times)."""
    _arch, whole, s, answers = window
    player = Player(whole.index, ManualClock(0.0), tz="UTC")

    def target(at: str) -> dict:
        if at.startswith("#"):
            return dict(step=int(at[1:]) - 1)
        return dict(time={"start": s.start, "end": s.end}.get(at) or float(at))

    def order(at: str) -> int:
        t = target(at)
        return t["step"] if "step" in t else whole.index.step_at_time(t["time"])

    seen = {}
    for at in sorted(answers, key=order):
        player.seek(**target(at))
        seen[at] = (player.position, player.snapshot(with_jobs=False))
    return seen


@pytest.mark.slow
def test_replay_dir_at_a_moment_equals_the_whole_archive_played_there(window, played, capsys, monkeypatch):
    arch, whole, s, answers = window
    assert s.steps == whole.index.steps and (s.start, s.end) == (whole.index.times[0], whole.index.times[-1])
    for at, got in answers.items():
        assert got["replay"]["archive"]["window"] is not None
        position, snap = played[at]
        want = {r.name: r for r in snap.routes}
        assert got["replay"]["transaction"] == position + 1, at
        assert got["replay"]["transactions"] == whole.index.steps
        assert got["queue"] == {k: snap.queue_counts.get(k, 0) for k in got["queue"]}, at
        assert got["total_jobs"] == snap.total_jobs, at
        rows = {n: (n, r.routed, r.idle, r.running, r.held, r.recent_started, r.recent_succeeded, r.recent_failed)
                for n, r in want.items()}
        assert _route_rows(got["routes"]) == sorted(rows[r["name"]] for r in got["routes"]), at
        # a route the reused player keeps showing (stable rows) but not yet seen at this moment: all zero
        assert all(not any(rows[n][1:]) for n in set(rows) - {r["name"] for r in got["routes"]}), at
    monkeypatch.setattr(archive_mod_replay, "WHOLE_BELOW", 0)  # read by windows, however small
    assert main(["replay", str(arch), "--at", "end", "--tz", "UTC"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{arch}: transaction {s.steps:,} of {s.steps:,}")
    assert out[1].startswith("read from ") and "throttles carried in from the recorder's window counts" in out[1]


@pytest.mark.slow
def test_the_throttle_of_a_window_equals_the_whole_archive_played_there(window, played):
    answers = window[3]
    times = [at for at in answers if not at.startswith("#") and at not in ("start", "end")]
    assert len(times) == 25 + 12  # and the 12 around inner checkpoints
    for at in times:
        got = {r["name"]: r["throttle"] for r in answers[at]["routes"]}
        want = {r.name: r.throttle for r in played[at][1].routes}
        assert got == {n: want[n] for n in got}, at


@pytest.mark.slow
def test_a_window_starts_at_the_time_of_the_state_it_starts_from(archives):
    """The window's first step (the state at its start, a compacted body) is dated at the last
    transaction applied to it, not at the latest time attribute its ads hold: in days of demo
    history those are the first copy's, hours older, and the stats' cron cycles ran from there
    (30 days: 30 s for one ``replay DIR --at``)."""
    long_ = archives[1]
    s = summarize(long_, "UTC")
    rng = random.Random(9)
    for _ in range(10):
        at = rng.uniform(s.start + 4 * 3600, s.end)
        w = open_window(long_, "UTC", time=at, summary=s)
        assert at - archive_mod_replay.WINDOW - 3600 < w.index.times[0] <= at - archive_mod_replay.WINDOW, at
        assert list(w.index.times) == sorted(w.index.times)


def test_a_moment_without_jobs_builds_no_jobs_table_and_counts_the_same(archives, monkeypatch):
    """``replay DIR --at T --json`` without ``--jobs`` prints the jobs' counts by status, not their
    rows: the jobs table (``RowIndex.table``, a row per job) is not built, and every figure is the
    one ``--jobs`` prints beside its rows."""
    arch = archives[0]
    monkeypatch.setattr(archive_mod_replay, "WHOLE_BELOW", 0)
    s = summarize(arch, "UTC")
    real = RowIndex.table
    for at in (f"{s.start + (s.end - s.start) * k / 4:.3f}" for k in range(1, 5)):
        answers = []
        for jobs in (["--jobs"], []):
            if not jobs:
                monkeypatch.setattr(RowIndex, "table", lambda self: pytest.fail("a jobs table built"))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main(["replay", str(arch), "--at", at, "--tz", "UTC", "--json", *jobs]) == 0
            answers.append(json.loads(out.getvalue()))
            monkeypatch.setattr(RowIndex, "table", real)
        with_rows, without = answers
        rows = with_rows.pop("jobs")
        assert len(rows) == with_rows["total_jobs"] > 0 and without == with_rows, at


def test_a_checkpoint_is_dated_as_an_index_of_it_dates_it(archives):
    """``summarize`` dates the first kept checkpoint (step 0: after retention a whole queue) from its
    time attributes alone (``checkpoint_time``): the time, and the ``107``'s CreationTimestamp, an
    index pass over it gives — for every segment's checkpoint of both archives and for hand-made
    ones (no time attribute, names spelled in other cases, times before the creation, the ``107``
    alone, a malformed ``107``)."""
    states = [archive_mod.Archive.open(a, readonly=True).read_state(k) for a in archives
              for k in archive_mod.Archive.open(a, readonly=True).segments()]
    assert sum(len(x) > 100 for x in states) >= 10
    head = b"107 3 CreationTimestamp 1795219200\n"
    states += [head, b"107 3 CreationTimestamp x\n101 1.0 Job Machine\n103 1.0 qdate 1795219300\n",
               head + b"101 1.0 Job Machine\n103 1.0 Owner \"u\"\n",
               head + b"101 1.0 Job Machine\n103 1.0 QDATE 1795219999\n103 1.0 EnteredCurrentStatus 1795219000\n",
               head + b"101 1.0 Job Machine\n103 1.0 LastMatchTime 1795210000\n103 1.0 QDateX 1795299999\n",
               b"101 1.0 Job Machine\n103 1.0 JobStartDate 1795219500\n"]
    for state in states:
        index = archive_mod_replay.build_index("<checkpoint>", tz="UTC", data=state)
        want = (index.steps > 0, index.times[0] if index.steps else None, index.creation_timestamp)
        assert archive_mod_replay.checkpoint_time(state) == want, state[:200]


def test_step_ends_are_the_complete_106_lines_of_a_frame():
    """A window cuts a frame at a transaction's end (``_step_ends``, read with ``bytes.find``): each
    complete line that is ``106`` or ``106 <comment>`` — the same ends and ``#`` comments as the
    multi-line pattern it replaced gives — and nothing else (``1060``, ``x106``, a last line
    without its newline)."""
    pattern = re.compile(rb"^106(?: ([^\n]*))?\n", re.M)
    parts = [b"106\n", b"106 \n", b"106 # 2026-01-01T00:00:00\n", b"106 # 2026-01-01T00:00:00 NONDURABLE\n",
             b"106 x\n", b"1060 y\n", b"106x\n", b"105 \n", b"103 1.0 A 106\n", b"\n", b"106 #", b"106",
             b"x106 #\n"]
    rng = random.Random(27)
    for _ in range(20_000):
        raw = b"".join(rng.choice(parts) for _ in range(rng.randrange(0, 8)))
        want = [(m.end(), m[1] if m[1] and m[1].startswith(b"#") else None) for m in pattern.finditer(raw)]
        assert list(archive_mod_replay._step_ends(raw)) == want, raw
