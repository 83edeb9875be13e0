"""One moment parser for ``replay --at``, ``--transaction``, ``--reroute --at`` and ``:seek``
(engine/feeds/replay/moment.py; issue 11 items 15 and 16).

Not HTCondor behaviour (RouteDeck's own command line); the recordings are the generator's
(tests/replay_logs.py) and the real golang-htcondor log of tests/data/replay (PROVENANCE.md).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
import io
import sys

from engine.contract import commands as C
from engine.contract import snapshot as S
from engine.feeds.replay.moment import MomentError, parse_moment, step_of_transaction, transaction_number
from tests.helpers.replay_logs import Recording
from tui.cli import main
from tui.widgets.replay_bar import parse_seek
from engine.launch.options import ReplayOptions
from engine.launch.replay import replay_runtime
from tui.app import make_app
from tests.helpers.tui_fixtures import wait_until
from tests.helpers.toasts import told

START = datetime(2026, 11, 21, 0, 0, 5, tzinfo=timezone.utc).timestamp()
END = datetime(2026, 11, 21, 3, 0, 0, tzinfo=timezone.utc).timestamp()
LOG = dict(start=START, end=END, transactions=19455, tz="UTC")


def at(text: str, **kw) -> C.Seek:
    return parse_moment(text, **{**LOG, **kw})


def test_every_form():
    assert at("01:30") == C.Seek(time=START - 5 + 5400)
    assert at("01:30:10") == C.Seek(time=START - 5 + 5410)
    assert at("2026-11-21T01:30") == at("2026-11-21 01:30") == at("2026-11-21T01:30:00Z") == at("01:30")
    assert at("2026-11-21T02:30+01:00") == at("01:30")
    assert at("2026-11-21") == C.Seek(time=START)  # the day the log begins: from its start
    assert at(str(int(START + 60))) == C.Seek(time=START + 60)
    assert at("+60") == C.Seek(time=START + 60)
    assert at("-300") == C.Seek(time=END - 300)  # before the end, never epoch -300
    # durations as the replay bar writes them (tui.text.format.duration), as offsets
    assert at("+1h30m") == at("+ 1h 30m") == at("+90m") == at("+5400") == C.Seek(time=START + 5400)
    assert at("-45m") == C.Seek(time=END - 2700) and at("+9m05s") == C.Seek(time=START + 545)
    assert at("+1h29m58s") == C.Seek(time=START + 5398) and at("+2.5s") == C.Seek(time=START + 2.5)
    assert at("start") == C.Seek(time=START) and at("end") == C.Seek(time=END)
    assert at("#1") == C.Seek(transaction=0) and at("#0") == C.Seek(transaction=-1)
    assert at("#19455") == C.Seek(transaction=19454)


def test_clock_time_is_on_the_logs_day_in_its_zone():
    # 2026-11-21 00:00:05 UTC is 2026-11-20 18:00:05 in Chicago (CST, UTC-6)
    assert at("18:30", tz="America/Chicago") == C.Seek(time=START - 5 + 1800)
    # a log over midnight: 00:30 is on its second day
    start, end = START - 3600, START + 3600  # 23:00:05 .. 01:00:05 UTC
    assert at("00:30", start=start, end=end) == C.Seek(time=START - 5 + 1800)
    assert at("23:30", start=start, end=end) == C.Seek(time=START - 5 - 1800)


@pytest.mark.parametrize("text, words", [
    ("05:00", "05:00 (2026-11-21 05:00:00 UTC) is after the end of the recording: the log runs from "
              "2026-11-21 00:00:05 UTC to 2026-11-21 03:00:00 UTC (2 h 59 min 55 s)"),
    ("-99999", "is before the start of the recording"),
    ("+99999", "(1 d 3 h 46 min after the start, 2026-11-22 03:46:44 UTC) is after the end"),
    ("300", "(for seconds after the start, write +300)"),
    ("2026-11-22T00:00", "is after the end of the recording"),
    ("#19456", "transaction 19456 is outside the log, which has 19,455 transactions: give 1 to 19,455, "
               "or 0 for before the first"),
    ("#-1", "transaction -1 is outside the log"),
    ("25:00", "not a clock time"),
    ("soon", "not a time: 'soon'; give start, end, #N"),
    ("+1h5", "not a time: '+1h5'"),
    ("+h", "not a time: '+h'"),
    ("+1d", "(1 d 0 h 0 min after the start"),
    ("+30m1h", "not a time"),
    ("", "no time given"),
    ("1e999", "not a time"),
    ("+nan", "not a time"),
])
def test_refusals_say_why_with_the_range_in_words(text, words):
    with pytest.raises(MomentError) as exc:
        at(text)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_numbering_round_trip():
    assert [transaction_number(step_of_transaction(n, 5)) for n in range(6)] == list(range(6))
    with pytest.raises(MomentError):
        step_of_transaction(6, 5)


def test_seek_prompt_uses_the_same_parser():
    """``:seek`` (tui/widgets/replay_bar.parse_seek) accepts what ``--at`` accepts and refuses the same."""
    pos = S.ReplayPosition(transaction=3, transactions=19455, time=START, start=START, end=END, times_inferred=False)
    snap = S.Snapshot(seq=1, time=START, mode="replay", clock="virtual", speed=1.0, paused=True,
                      engine_state="paused", routes=(), replay=pos, tz="UTC")
    for text in ("01:30", "-300", "#6386", "2026-11-21T01:30", "+60"):
        assert parse_seek(text, snap) == at(text)
    for text in ("-99999", "#999999", "05:00"):
        with pytest.raises(ValueError) as exc:
            parse_seek(text, snap)
        assert str(exc.value) == str(pytest.raises(MomentError, at, text).value)


def _run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def log(tmp_path):
    rec = Recording(7, steps=120)
    path = tmp_path / "job_queue.log"
    path.write_text(rec.text())
    return str(path), rec


def test_replay_transaction_numbering_is_the_same_in_text_and_json(log, capsys):
    path, rec = log
    rc, out, _ = _run(capsys, "replay", path, "--transaction", "40", "--tz", "UTC")
    assert rc == 0 and out.startswith(f"{path}: transaction 40 of 120 at ")
    rc, out, _ = _run(capsys, "replay", path, "--transaction", "40", "--json", "--tz", "UTC")
    doc = json.loads(out)
    assert doc["replay"]["transaction"] == 40 and doc["replay"]["time"] == rec.times[39]
    rc, out, _ = _run(capsys, "replay", path, "--at", "#40", "--json", "--tz", "UTC")
    assert json.loads(out)["replay"]["transaction"] == 40
    rc, out, _ = _run(capsys, "replay", path, "--transaction", "0", "--tz", "UTC")
    assert rc == 0 and "before the first transaction" in out.splitlines()[0]


def test_replay_at_clock_time_and_outside_the_log(log, capsys):
    path, rec = log
    t = rec.times[60]
    hhmm = datetime.fromtimestamp(t, timezone.utc).strftime("%H:%M:%S") + (f"{t % 1:.1f}"[1:] if t % 1 else "")
    rc, out, err = _run(capsys, "replay", path, "--at", hhmm, "--json", "--tz", "UTC")
    doc = json.loads(out)
    assert rc == 0 and doc["replay"]["time"] == rec.times[60]
    assert rec.times[doc["replay"]["transaction"] - 1] == rec.times[60]
    rc, out, err = _run(capsys, "replay", path, "--at", "+99999999", "--json")
    assert (rc, out) == (2, "") and err.count("\n") == 1 and "is after the end of the recording" in err
    rc, out, err = _run(capsys, "replay", path, "--at", "01:00", "--transaction", "3")
    assert (rc, out) == (2, "") and "not both" in err


def test_reroute_stops_at_the_moment(log, capsys, tmp_path):
    """``--reroute --at`` cuts the recording and the re-routed run at that moment (it used to be ignored)."""
    path, rec = log
    cfg = tmp_path / "routes.conf"
    cfg.write_text("JOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=rt\n  REQUIREMENTS true\n"
                   "  GridResource = \"batch slurm\"\n@rt\n")
    rc, out, err = _run(capsys, "replay", path, "--reroute", "--config", str(cfg), "--json")
    whole = json.loads(out)
    assert rc == 0 and whole["transaction"] == 120 and whole["end"] == rec.times[-1]
    assert "re-routing" in err and "100%" in err  # progress on stderr
    rc, out, _ = _run(capsys, "replay", path, "--reroute", "--config", str(cfg), "--json", "--at", "#30")
    part = json.loads(out)
    assert rc == 0 and part["transaction"] == 30 and part["end"] == rec.times[29]
    assert part["source_jobs"] < whole["source_jobs"]



def test_reroute_progress_on_a_terminal_is_one_updating_bar(log, tmp_path, monkeypatch, capsys):
    """On a terminal ``--reroute`` shows one line rewritten in place (a bar, the share done and
    the recording's time reached); a log file gets a plain line per quarter (issue 14 item 4)."""
    path, rec = log
    cfg = tmp_path / "routes.conf"
    cfg.write_text("JOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=rt\n  REQUIREMENTS true\n"
                   "  GridResource = \"batch slurm\"\n@rt\n")

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["replay", path, "--reroute", "--config", str(cfg), "--json"]) == 0
    lines = err.getvalue().split("\r")
    assert len(lines) == 20 and lines[-1].endswith("recorded\n")
    assert "[" + "█" * 10 + "░" * 10 + "]" in lines[9] and " 50%" in lines[9]
    capsys.readouterr()


# ------------------------------------------------------------------------------ :seek on the dashboard


@pytest.mark.slow
@pytest.mark.anyio
async def test_seek_prompt_on_the_dashboard(log):
    """``:seek HH:MM:SS``, ``:seek -S`` and ``:seek #N`` move the real replay engine as ``--at``
    would; a moment outside the log is an error toast with the range, and nothing moves."""
    path, rec = log
    args = ReplayOptions(log=path, speed=1.0, tz="UTC")
    runtime = replay_runtime(args)
    app = make_app(runtime, mode="replay", readonly=True, blink=False, watch_files=False)
    player = runtime.feed.player

    async def cmd(pilot, text):
        await pilot.press("colon")
        await pilot.pause()
        pilot.app.screen.query_one("#command-input").value = text
        await pilot.press("enter")

    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.replay is not None)
        t = rec.times[60]
        text = datetime.fromtimestamp(t, timezone.utc).strftime("%H:%M:%S") + (f"{t % 1:.1f}"[1:] if t % 1 else "")
        await cmd(pilot, f"seek {text}")
        await wait_until(pilot, lambda: player.index.times[player.position] == t)
        await cmd(pilot, "seek -300")
        want = player.index.step_at_time(rec.times[-1] - 300)
        await wait_until(pilot, lambda: player.position == want)
        await cmd(pilot, "seek #7")
        await wait_until(pilot, lambda: player.position == 6)
        await cmd(pilot, "seek #999999")
        await wait_until(pilot, lambda: any(
            "transaction 999999 is outside the log, which has 120 transactions: give 1 to 120" in t for t in told(app)))
        await cmd(pilot, "seek +99999999")
        await wait_until(pilot, lambda: any("is after the end of the recording: the log runs from" in t for t in told(app)))
        assert player.position == 6
