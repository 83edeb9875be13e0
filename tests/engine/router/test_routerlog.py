"""JobRouterLog routing-table blocks (engine.router.routerlog).

Source: htcondor.md §1.5 — the header line, the column line and one row per route written with
``%-24s %-11s %7d/%7d %7d/%7d %8s`` then ``         %7d %9d %6d`` (``JobRouter::GetCandidateJobs``,
one ``dprintf(D_ALWAYS)`` so only the first line has the time stamp); the throttle is
``ThrottleDesc``: ``none`` or ``%g jobs/sec`` of throttle/600. The rows below are built with
those format strings.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from engine.router.routerlog import RouterLogFollower, parse_router_log, parse_stamp
from tests.helpers.routerlog import block, row

LOG = (
    "11/21/26 14:30:01 ******************************************************\n"
    "11/21/26 14:30:01 ** condor_job_router (CONDOR_JOB_ROUTER) STARTING UP\n"
    + block("11/21/26 14:30:05", [row("Site1_Slurm", "entries:001", 212, 500, 18, 50, 0, 57, 51, 0),
                                  row("BlackHole", "entries:003", 14, 100, 14, 50, 3.4, 40, 0, 39)])
    + "11/21/26 14:30:05 JobRouter: Found candidate job 12.0\n"
    + "\x00garbage \xff line\n"
    + block("11/21/26 14:30:25.250", [row("A_route_with_a_very_long_name_here", "JOB_ROUTER_ROUTE_A_route",
                                          3, 10, 1, -1, 0, 1, 2, 3)])
)


def _utc(*a):
    return datetime(*a, tzinfo=timezone.utc).timestamp()


def test_tables_rows_and_times():
    tables, problems = parse_router_log(LOG, tz="UTC")
    assert problems == []
    assert [t.time for t in tables] == [_utc(2026, 11, 21, 14, 30, 5), _utc(2026, 11, 21, 14, 30, 25, 250000)]
    first = tables[0].by_name()
    s1, bh = first["Site1_Slurm"], first["BlackHole"]
    assert (s1.submitted, s1.max_jobs, s1.idle, s1.max_idle, s1.throttle) == (212, 500, 18, 50, None)
    assert (s1.recent_started, s1.recent_succeeded, s1.recent_failed) == (57, 51, 0)
    assert bh.throttle_text == "0.00566667 jobs/sec"
    assert bh.throttle_per_window == pytest.approx(3.4, rel=1e-5)  # %g keeps 6 significant digits
    (long,) = tables[1].rows
    assert long.name == "A_route_with_a_very_long_name_here" and long.source == "JOB_ROUTER_ROUTE_A_route"
    assert long.max_idle == -1 and long.line == 11


def test_tool_mode_rows_without_recent_columns():
    """§1.5 / GetCandidateJobs: as a tool (condor_job_router_info) there are no Recent columns."""
    text = block("01/02/25 03:04:05", [row("Only", "entries:001", 0, 100, 0, 50, 0)])
    (t,), _ = parse_router_log(text.replace(" Recent: Started Succeeded Failed", ""), tz="UTC")
    (r,) = t.rows
    assert r.name == "Only" and r.recent_started is None and r.max_jobs == 100


def test_garbage_and_broken_rows_do_not_crash():
    text = block("11/21/26 14:30:05", [row("Good", "entries:001", 1, 2, 1, 2, 0, 0, 0, 0), "Bad row here"])
    tables, problems = parse_router_log(text + "\n\n%%%% 12/99/99 99:99:99\n", tz="UTC")
    assert [r.name for r in tables[0].rows] == ["Good"]
    assert problems and problems[0].line == 4 and "Bad row" in problems[0].message
    assert parse_stamp("13/45/26 99:00:00 x") is None


def test_follower_reads_appended_blocks_and_survives_rotation(tmp_path):
    path = tmp_path / "JobRouterLog"
    path.write_text("11/21/26 14:30:01 starting\n")
    f = RouterLogFollower(path, tz="UTC")
    assert f.poll() == []
    with open(path, "a") as fh:
        fh.write(block("11/21/26 14:30:05", [row("R1", "entries:001", 1, 10, 1, 5, 0, 1, 0, 0)]))
    (t,) = f.poll()
    assert t.rows[0].submitted == 1 and f.latest is t
    with open(path, "a") as fh:  # a partial write: nothing until the line is complete
        fh.write(block("11/21/26 14:31:05", [row("R1", "entries:001", 2, 10, 2, 5, 0, 2, 0, 0)])[:-20])
    assert f.poll() == []
    with open(path, "a") as fh:
        fh.write(block("11/21/26 14:31:05", [row("R1", "entries:001", 2, 10, 2, 5, 0, 2, 0, 0)])[-20:])
    (t2,) = f.poll()
    assert t2.rows[0].submitted == 2
    path.rename(tmp_path / "JobRouterLog.old")  # MAX_JOB_ROUTER_LOG rotation
    path.write_text(block("11/21/26 14:32:05", [row("R1", "entries:001", 3, 10, 0, 5, 0, 3, 1, 0)]))
    (t3,) = f.poll()
    assert t3.rows[0].submitted == 3 and t3.time == _utc(2026, 11, 21, 14, 32, 5)
