"""Faults while the demo writes its state (issue 14 item 5): a full disk, a read-only state
directory, and kill -9 at random moments. None loses a committed transaction or crashes the
engine.

HTCondor's schedd EXCEPTs when a job_queue.log write fails and is restarted; at startup it
loads the log with the owner's rules (htcondor.md §3.3: a torn tail or an unfinished trailing
transaction is discarded, the log is rotated), the router adopts its routed copies from their
attributes (§1.7 AdoptOrphans). RouteDeck's demo stalls instead of dying and performs that same
restart once the disk takes writes again. The full disk is simulated by the file object the
writer opens (``QueueLogWriter._open``): while "full", a write puts half its bytes in the file
and raises ENOSPC (or EROFS), as a real short write does.
"""

from __future__ import annotations

import errno
import json
import os
import random
import re
from pathlib import Path

import pytest

import engine.queue.writer as W
from engine.feeds.demo import build_demo
from engine.queue.reader import load_log
from engine.schedd.history import iter_history, read_history
from tests.helpers.demo_fixture import make_config_dir
from tests.helpers.forked_cli import Forks
from tests.helpers.demo_fixture import _copies_per_source, _guard_single_copy
from engine.cli.demo import snapshots_fast
from engine.cli.demo import speed_note
from tui.cli import main



class Disk:
    """Files whose writes fail while ``full`` is set (ENOSPC, or ``code``); ``full_after``: the
    disk fills after that many successful writes; ``free_after``: space returns after that many
    failed ones (a run that resumes)."""

    def __init__(self) -> None:
        self.full = False
        self.code = errno.ENOSPC
        self.failures = 0
        self.writes = 0
        self.full_after: int | None = None
        self.free_after: int | None = None

    def open(self, path, mode="r", *a, **k):
        disk = self
        fh = open(path, mode, *a, **k)

        class Flaky:
            def write(self, data):
                if disk.full_after is not None and disk.writes >= disk.full_after and not disk.failures:
                    disk.full = True
                if disk.free_after is not None and disk.failures >= disk.free_after:
                    disk.full = False
                disk.writes += 1
                if disk.full:
                    disk.failures += 1
                    fh.write(data[: len(data) // 2])  # a short write: a torn tail
                    fh.flush()
                    raise OSError(disk.code, os.strerror(disk.code), str(path))
                return fh.write(data)

            def __getattr__(self, name):
                return getattr(fh, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                fh.close()

        return Flaky()


@pytest.fixture
def disk(monkeypatch):
    d = Disk()
    monkeypatch.setattr(W.QueueLogWriter, "_open", staticmethod(d.open))
    return d


def _committed(state: Path):
    return load_log(state / "job_queue.log")


@pytest.mark.slow
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_full_disk_stalls_keeps_the_committed_state_and_resumes(tmp_path, disk, code):
    """A failed write stops the engine's writing and moving (it says so: write_error, an error
    event, engine_state "stalled" in the JSON); its queue is the log's last committed state;
    when writes succeed again it restarts from the log (htcondor.md §3.3) and carries on, with no
    job lost and none routed twice."""
    cfg = make_config_dir(tmp_path)
    state = tmp_path / "state"
    engine = build_demo(config_dir=cfg, seed=3, state_dir=state)
    problems = _guard_single_copy(engine)
    engine.step(engine.start + 1800)
    disk.code = code
    disk.full = True
    snaps = list(snapshots_fast(engine, engine.now + 1200, 300))
    assert disk.failures >= 1 and engine.write_error is not None
    assert os.strerror(code) in engine.write_error
    stalled_at = engine.now
    last = snaps[-1].to_json()
    assert last["engine_state"] == "stalled" and os.strerror(code) in last["error"]
    assert json.loads(json.dumps(last))["engine_state"] == "stalled"
    assert any(e.kind == "queue-log-write-failed" and e.level == "error" for e in engine.events)
    # the engine's queue is what the log holds committed (the torn tail discarded on loading)
    on_disk = _committed(state)
    assert on_disk.needs_rotation  # the short write left a torn tail
    assert engine.queue.snapshot_state() == on_disk.queue.snapshot_state()
    committed = {j.key for j in on_disk.queue.jobs()}
    # still full: still stalled, nothing written, time does not move
    size = (state / "job_queue.log").stat().st_size
    engine.step(engine.now + 600)
    assert engine.write_error is not None and engine.now == stalled_at
    assert (state / "job_queue.log").stat().st_size == size
    # space returns: the next step restarts from the log and carries on
    disk.full = False
    engine.step(engine.now + 1800)
    assert engine.write_error is None
    assert any(e.kind == "queue-log-writable" for e in engine.events)
    problems += _guard_single_copy(engine)  # the restarted router
    engine.step(engine.now + 1800)
    engine.close()
    assert problems == []
    left = {f"{r.attrs['ClusterId']}.{r.attrs['ProcId']}" for r in read_history(state / "history")}
    assert committed <= {j.key for j in engine.queue.jobs()} | left
    final = _committed(state)
    assert not final.fatal and final.queue.snapshot_state() == engine.queue.snapshot_state()
    assert any(e.kind == "job-routed" and e.time > stalled_at for e in engine.events)


def _headless(capsys, cfg: Path, state: Path, hours: int = 2) -> tuple[int, list[dict], str]:
    """``routedeck demo --headless --max-speed --json`` in this process (the Disk fixture applies)."""
    rc = main(["demo", "--headless", "--max-speed", "--json", "--duration", str(hours * 3600), "--interval", "600",
               "--seed", "3", "--config-dir", str(cfg), "--state-dir", str(state)])
    out, err = capsys.readouterr()
    return rc, [json.loads(line) for line in out.splitlines()], err


@pytest.mark.parametrize("code, words", [(errno.ENOSPC, "is full"), (errno.EROFS, "is on a read-only file system")])
def test_a_headless_run_that_stalls_says_so_and_exits_1(tmp_path, disk, capsys, code, words):
    """Issue 25 item 7: the disk fills during a headless run. The demo stalls as before (its log
    keeps the last committed transaction, htcondor.md §3.3; engine_state "stalled"), and the run
    says on stderr which state directory failed, the error, and when (virtual and wall time),
    that it was still stalled at the end and how far it got — and exits 1 (was 0, with only
    "ran at x…" on stderr)."""
    cfg = make_config_dir(tmp_path)
    state = tmp_path / "state"
    disk.code = code
    disk.full_after = 400  # writes of log lines: well into the first virtual hour
    rc, snaps, err = _headless(capsys, cfg, state)
    assert rc == 1 and snaps[-1]["engine_state"] == "stalled" and os.strerror(code) in snaps[-1]["error"]
    stalled_at = next(s["time"] for s in snaps if s.get("engine_state") == "stalled")
    lines = [line for line in err.splitlines() if "state directory" in line and "stalled" in line]
    assert len(lines) == 1, err
    line = lines[0]
    assert f"the state directory {state} {words}: cannot write {state / 'job_queue.log'} ({os.strerror(code)})" in line
    m = re.search(r"at virtual (\S+ \S+Z) \(([\d,]+) s into the run\), wall (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", line)
    assert m, line
    covered = int(m[2].replace(",", ""))
    assert 0 < covered < 2 * 3600 and stalled_at - 600 <= snaps[0]["time"] + covered <= stalled_at
    assert f"still stalled at the end: it covered {covered:,} of 7,200 virtual seconds" in line
    assert "ran at x" not in err
    assert not _committed(state).fatal  # the log is intact: its committed transactions load


def test_a_headless_run_that_stalls_and_resumes_still_exits_1(tmp_path, disk, capsys):
    """Space returns during the run: the engine restarts from its log and covers the whole run
    (engine.feeds.demo), and the run says when it stalled and when it resumed; exit 1."""
    cfg = make_config_dir(tmp_path)
    state = tmp_path / "state"
    disk.full_after, disk.free_after = 200, 2
    rc, snaps, err = _headless(capsys, cfg, state, hours=1)
    assert rc == 1 and "engine_state" not in snaps[-1]  # in the JSON only while stalled
    assert any(s.get("engine_state") == "stalled" for s in snaps)
    assert snaps[-1]["time"] == snaps[0]["time"] + 3600
    line = next(line for line in err.splitlines() if "state directory" in line and "stalled" in line)
    assert f"the state directory {state} is full" in line and "resumed from it at virtual 2026-11-21" in line
    assert "still stalled" not in line


def test_a_state_directory_that_cannot_be_written_at_the_start(tmp_path, disk, capsys):
    """The disk is full before the demo writes its first record: nothing runs; one line naming
    the file and the error, exit 2 (a state directory the demo cannot use, engine.cli.args)."""
    cfg = make_config_dir(tmp_path)
    state = tmp_path / "state"
    disk.full = True
    rc, snaps, err = _headless(capsys, cfg, state)
    assert rc == 2 and snaps == []
    assert err.count("\n") == 1 and f"cannot write {state / 'job_queue.log'}: No space left on device" in err


def _demo_argv(cfg: Path, state: Path, seed: int, duration: int = 36000) -> list[str]:
    return ["demo", "--headless", "--max-speed", "--duration", str(duration), "--interval", "600", "--seed", str(seed),
            "--config-dir", str(cfg), "--state-dir", str(state)]


def _kill_run(forks: Forks, cfg: Path, state: Path, seed: int, rng: random.Random) -> None:
    """Start the headless demo at maximum speed on ``state`` in a process of its own and kill -9 it
    at a random moment (the process is forked from one that imported the command already:
    tests/helpers/forked_cli.py)."""
    pid, out = forks.start(_demo_argv(cfg, state, seed))
    lines = rng.randint(1, 6)  # kill after this many snapshots (engine mid-step, writing)
    try:
        for _ in range(lines):
            if not out.readline():
                break
    finally:
        forks.kill(pid)  # also when reading failed: reap waits for the child's end
        forks.reap()
        out.close()


class HistoryKeys:
    """The jobs (``ClusterId.ProcId``) of a history file's ads, as ``read_history`` reads them,
    parsing again only what follows the ads read before: the file only grows between two kills
    (read whole again if not), and an ad ends at a ``***`` line, after which ``iter_history``
    starts afresh, so the ads up to the last ``***`` line read are those of any longer file that
    starts with them. Reading the whole file after each of twenty kills was about half the CPU of
    the kill tests; every ad is still parsed (a kill that left a torn ad that a later run closes
    fails the parse) and every job taken."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.read = ""  # the text whose ads are in ``keys``: up to the end of its last ``***`` line
        self.keys: set[str] = set()

    def now(self) -> set[str]:
        if not self.path.exists():
            self.read, self.keys = "", set()
            return set()
        text = self.path.read_text()
        if not text.startswith(self.read):
            self.read, self.keys = "", set()
        new = text[len(self.read):]
        self.keys |= {f"{r.attrs['ClusterId']}.{r.attrs['ProcId']}" for r in iter_history(new, str(self.path))}
        end = new.rfind("\n***")  # the last *** line that starts a line of ``new`` ...
        end = (0 if new.startswith("***") else -1) if end < 0 else end + 1
        end = new.find("\n", end) if end >= 0 else -1  # ... read through its newline
        if end >= 0:
            self.read += new[:end + 1]
        return set(self.keys)


def _check_state(state: Path, before: set[str], history: HistoryKeys) -> set[str]:
    """The state directory after a kill: loads under the owner's rules, no committed job lost,
    no source with two live routed copies, routed counts consistent. Returns the committed jobs."""
    res = _committed(state)
    assert not res.fatal, res.problems
    jobs = {j.key for j in res.queue.jobs()}
    left = history.now()
    assert before <= jobs | left, sorted(before - jobs - left)[:5]
    copies = _copies_per_source(res.queue)
    assert all(len(c) == 1 for c in copies.values()), {s: c for s, c in copies.items() if len(c) > 1}
    for src, (dest,) in copies.items():  # each live copy's source is there and points at it
        source = res.queue.get(src)
        if source is not None and source.get("RoutedToJobId") is not None:
            assert source.get("RoutedToJobId").strip('"') == dest
    return jobs


def _kills(tmp_path: Path, count: int, seed: int) -> None:
    cfg = make_config_dir(tmp_path)
    state = tmp_path / "state"
    rng = random.Random(seed)
    committed: set[str] = set()
    history = HistoryKeys(state / "history")
    forks = Forks(tmp_path, _demo_argv(cfg, tmp_path / "warm-up", seed, duration=600))
    try:
        for _ in range(count):
            _kill_run(forks, cfg, state, seed, rng)
            if (state / "job_queue.log").exists():
                committed = _check_state(state, committed, history)
    finally:
        forks.close()
    # the last restart runs to completion of a stretch and stays consistent
    engine = build_demo(config_dir=cfg, seed=seed, state_dir=state)
    problems = _guard_single_copy(engine)
    engine.step(engine.now + 1800)
    engine.close()
    assert problems == []
    _check_state(state, committed, history)


@pytest.mark.slow
def test_kill_9_and_restart(tmp_path):
    """kill -9 of `routedeck demo --headless` twice at random moments, restarted from its state
    directory each time (htcondor.md §3.3, §1.7)."""
    _kills(tmp_path, 2, seed=11)


@pytest.mark.slow
def test_kill_9_twenty_times(tmp_path):
    """Twenty random kills of the demo, each restarted from the state the last one left."""
    _kills(tmp_path, 20, seed=12)


def test_a_run_that_cannot_keep_up_says_so():
    """Issue 14 item 1: a headless run that cannot keep up says so and reports the speed reached
    (the real time is measured by the command; the wording is this pure function's)."""
    assert speed_note(36000, 60.0, 600.0) is None  # x600 asked and reached
    slow = speed_note(36000, 86.6, 600.0)
    assert slow is not None and "could not keep up" in slow and "x416 reached of the x600 asked" in slow
    assert speed_note(7200, 2.0, None) == "ran at x3,600 (7,200 virtual s in 2.0 s)"
