"""``routedeck record --router-log``: the JobRouterLog's lines archived beside the transactions, so
``replay DIR --at T --json`` shows the real router's routing table of that moment (issue 27).

The router log is written in the router's own format (htcondor.md §1.5, tests/helpers/routerlog.py:
one routing-table block per poll, only its first line stamped ``%m/%d/%y %H:%M:%S``)."""

from __future__ import annotations

import json

import pytest

from engine.record.archive import Archive
from engine.record.recorder import Recorder
from tests.helpers.compaction import ScheddLog
from tests.helpers.paths import REPO
from tests.helpers.routerlog import poll_block, stamp
from tui.cli import main

DEMO = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"
START = 1795219200.0  # the demo recording's first moment


@pytest.mark.slow
def test_replay_shows_the_real_routers_table_of_the_moment_across_a_restart(tmp_path, capsys):
    schedd = ScheddLog(tmp_path / "job_queue.log", DEMO.read_bytes())
    rlog = tmp_path / "JobRouterLog"
    rlog.write_text("".join(poll_block(START + 600 + 10 * k, 0, k) for k in range(3)))

    def recorder():
        return Recorder(tmp_path / "job_queue.log", tmp_path / "archive", tz="UTC", router_log=rlog)

    schedd.advance(len(schedd.steps) // 2)
    recorder().poll(0, flush=True)
    with open(rlog, "a") as fh:  # a half-written last line is read at the next poll only
        fh.write("".join(poll_block(START + 1800 + 10 * k, 18.0, 20 + k) for k in range(3)) + stamp(START + 1900))
    rec = recorder()  # a restart: reads the router log on from where the archive says
    schedd.advance(len(schedd.steps))
    rec.poll(1, flush=True)
    with open(rlog, "a") as fh:
        fh.write(" JobRouter: Found candidate job 13.0\n")
    rec.poll(2, flush=True)

    arch = Archive.open(tmp_path / "archive", readonly=True)
    frames = [x for x in arch.index_lines() if x["kind"] == "rlog"]
    archived = [line for x in frames for line in arch.router_frame(x)]
    assert archived == rlog.read_text().splitlines()  # every line once, in order
    assert all(x["t0"] <= x["t1"] for x in frames)

    def at(t: float) -> dict:
        assert main(["replay", str(tmp_path / "archive"), "--at", f"{t}", "--tz", "UTC", "--json"]) == 0
        return json.loads(capsys.readouterr().out)["router_log"]

    got = at(START + 1825)  # after the router's poll at +1820
    assert got["table"]["time"] == START + 1820
    bh = {r["name"]: r for r in got["table"]["routes"]}["BlackHole"]
    assert (bh["throttle_text"], bh["throttle"], bh["recent_failed"]) == ("0.03 jobs/sec", pytest.approx(18.0), 22)
    texts = [x["text"] for x in got["lines"]]
    assert any("JobRouter: Checking for candidate jobs" in t for t in texts)
    assert all(START + 1795 <= x["time"] <= START + 1855 for x in got["lines"])
    early = at(START + 615)
    assert early["table"]["time"] == START + 610
    assert {r["name"]: r["throttle"] for r in early["table"]["routes"]} == {"Site1_Slurm": None, "BlackHole": None}
    assert at(START + 100)["table"] is None  # before the router's first poll in the log


def test_an_archive_without_a_router_log_says_null(tmp_path, capsys):
    schedd = ScheddLog(tmp_path / "job_queue.log", DEMO.read_bytes())
    schedd.advance(40)
    Recorder(tmp_path / "job_queue.log", tmp_path / "archive", tz="UTC").poll(0, flush=True)
    assert main(["replay", str(tmp_path / "archive"), "--at", "end", "--tz", "UTC", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["router_log"] is None
