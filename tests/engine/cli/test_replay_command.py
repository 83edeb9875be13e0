"""``routedeck replay LOG --at TIME --json`` (product.md §5; issue 7 item 4).

Sources: the real log bbockelm/golang-htcondor real_job_submission.log (job 1.0 ends held,
htcondor.md §6 "job_queue.log: facts"); htcondor.md §1.9 (routed copy = RouteName defined) and
§1.5 (idle = routed − running) for the per-route figures, computed here from the generator's
own expected states.
"""

from __future__ import annotations

import json
import argparse

from tests.helpers.replay_logs import Recording
from tui.cli import main
from tui.cli import build_parser
import tui.app
import tui.shell.launch

REAL = "tests/data/replay/real_job_submission.log"


def _run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_real_log_at_end_and_at_a_transaction(capsys):
    rc, out, _ = _run(capsys, "replay", REAL, "--at", "end", "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["mode"] == "replay" and doc["queue"] == {"idle": 0, "running": 0, "held": 1, "removed": 0, "completed": 0} and doc["total_jobs"] == 1
    assert doc["replay"]["times_inferred"] and doc["replay"]["transactions"] == 5
    rc, out, _ = _run(capsys, "replay", REAL, "--transaction", "3", "--json")  # 1-based, as printed
    doc = json.loads(out)
    assert doc["total_jobs"] == 0 and doc["replay"]["line"] == 6 and doc["replay"]["transaction"] == 3


def _expected_routes(state):
    out = {}
    for key, (_t, attrs) in state.items():
        c, _, p = key.partition(".")
        if key.startswith("0") or p.startswith("-"):
            continue
        merged = dict(state.get("0%s.-1" % c, ("", {}))[1])
        merged.update(attrs)
        if "RouteName" in merged:
            name = merged["RouteName"].strip('"')
            r = out.setdefault(name, [0, 0])
            r[0] += 1
            r[1] += merged.get("JobStatus") == "2"
    return {n: (r[0], r[0] - r[1], r[1]) for n, r in out.items()}


def test_per_route_counts_at_times(tmp_path, capsys):
    rec = Recording(21, steps=200)
    log = tmp_path / "job_queue.log"
    log.write_text(rec.text())
    for i in (10, 77, 150, 199):
        t = rec.times[i]
        while i + 1 < len(rec.times) and rec.times[i + 1] == t:
            i += 1  # --at lands on the last transaction at that time
        rc, out, _ = _run(capsys, "replay", str(log), "--at", repr(t), "--json", "--tz", "UTC")
        doc = json.loads(out)
        got = {r["name"]: (r["routed"], r["idle"], r["running"]) for r in doc["routes"]}
        assert rc == 0 and doc["replay"]["transaction"] == i + 1  # transactions count from 1
        assert got == _expected_routes(rec.states[i])


def test_bad_input_exit_codes(tmp_path, capsys):
    rc, _, err = _run(capsys, "replay", str(tmp_path / "missing.log"))
    assert rc == 2 and "cannot read" in err
    rc, _, err = _run(capsys, "replay", REAL, "--transaction", "99")
    assert rc == 2 and "transaction 99 is outside the log, which has 5 transactions: give 1 to 5" in err
    bad = tmp_path / "bad.log"
    bad.write_text("107 1 CreationTimestamp 1\n105 \n101 1.0 Job Machine\nXYZ\n106 \n")
    rc, out, err = _run(capsys, "replay", str(bad), "--json")
    # replay skips the corrupt record and shows the rest; the exit status is the schedd's verdict
    # (htcondor.md §3.3: a corrupt record inside a committed transaction is fatal), as in queue
    assert rc == 1 and f"{bad}:4: error" in err and json.loads(out)["total_jobs"] == 1
    assert "fatal: the schedd would refuse to start on this log" in err


def test_one_subparser_each_screen_or_headless(tmp_path, capsys, monkeypatch):
    """product.md §5: ``replay``/``watch`` are one subcommand each (tui.shell.launch), the headless
    flags forwarded to the engine; without them the dashboard opens in replay/watch mode."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert sub.choices["replay"].get_default("func") is tui.shell.launch.run_replay
    assert sub.choices["watch"].get_default("func") is tui.shell.launch.run_watch
    opened = []

    class FakeApp:
        return_code = 0

        def run(self):
            pass

    def fake_make_app(runtime, *, mode, readonly=False, **kw):
        opened.append((mode, readonly, runtime))
        return FakeApp()

    monkeypatch.setattr(tui.app, "make_app", fake_make_app)
    assert main(["replay", REAL]) == 0
    assert opened[-1][:2] == ("replay", True) and opened[-1][2].feed.player.index.steps == 5
    assert main(["watch", "--queue-log", REAL]) == 0
    assert opened[-1][:2] == ("watch", True)
    rc, out, _ = _run(capsys, "replay", REAL, "--transaction", "2", "--json")
    assert rc == 0 and json.loads(out)["replay"]["transaction"] == 2 and len(opened) == 2
    rc, out, _ = _run(capsys, "watch", "--queue-log", REAL, "--once", "--json")
    assert rc == 0 and json.loads(out.splitlines()[0])["total_jobs"] == 1 and len(opened) == 2


def test_a_moment_runs_with_the_collector_paused_and_reroute_with_it_on(monkeypatch):
    """engine/cli/replay.py run_headless: a moment is one bulk pass (engine.gcpause); --reroute's
    router pauses it itself. The collector is on again after either."""
    import gc  # noqa: PLC0415 - this test only
    from engine.cli import replay as replay_cli  # noqa: PLC0415 - this test only

    seen = []
    monkeypatch.setattr(replay_cli, "_run_headless", lambda args: seen.append(gc.isenabled()) or 0)
    assert main(["replay", REAL, "--at", "end", "--json"]) == 0
    assert main(["replay", REAL, "--reroute", "--config", "sample_configs/demo/condor_config"]) == 0
    assert seen == [False, True] and gc.isenabled()


def test_the_collector_is_on_again_after_a_moment_that_raises(monkeypatch, capsys):
    """engine/cli/replay.py run_headless pauses the collector for a moment (engine.gcpause): a
    moment that fails still gives it back (review of s15-at, finding 6)."""
    import gc  # noqa: PLC0415 - this test only
    from engine.cli import replay as replay_cli  # noqa: PLC0415 - this test only

    seen = []

    def fails(args):
        seen.append(gc.isenabled())
        raise ValueError("a moment outside the log")

    monkeypatch.setattr(replay_cli, "_run_headless", fails)
    assert gc.isenabled()
    try:
        main(["replay", REAL, "--at", "end", "--json"])
    except ValueError:
        pass
    assert seen == [False] and gc.isenabled()
