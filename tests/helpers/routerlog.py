"""JobRouterLog text in the router's own format (htcondor.md §1.5, ``JobRouter::GetCandidateJobs``):
the header line, the column line and one row per route written with ``%-24s %-11s %7d/%7d
%7d/%7d %8s`` then ``         %7d %9d %6d``, one ``dprintf(D_ALWAYS)`` so only the first line has
the time stamp; the throttle is ``ThrottleDesc``: ``none`` or ``%g jobs/sec`` of throttle/600."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from engine.record.recorder import Recorder
from tests.helpers.compaction import ScheddLog
from tests.helpers.paths import REPO

COLUMNS = ("Route Name               Source      Submitted/Max        Idle/Max     Throttle"
           " Recent: Started Succeeded Failed")


def row(name, source, cur, mx, idle, mxidle, throttle, started=None, succ=None, fail=None):
    desc = "none" if throttle <= 0 else "%g jobs/sec" % (throttle / 600)
    text = "%-24s %-11s %7d/%7d %7d/%7d %8s" % (name, source, cur, mx, idle, mxidle, desc)
    if started is not None:
        text += "         %7d %9d %6d" % (started, succ, fail)
    return text


def block(stamp, rows):
    return f"{stamp} JobRouter: Checking for candidate jobs. routing table is:\n{COLUMNS}\n" + \
        "".join(r + "\n" for r in rows)


def stamp(t: float) -> str:
    """The router log's default stamp (``%m/%d/%y %H:%M:%S``) of ``t``, in UTC."""
    return datetime.fromtimestamp(t, timezone.utc).strftime("%m/%d/%y %H:%M:%S")


def poll_block(t: float, bh_throttle: float, failed: int) -> str:
    """One poll of a router with two routes at ``t``: its table, then one more line."""
    return (block(stamp(t), [row("Site1_Slurm", "entries:001", 212, 500, 18, 50, 0, 57, 51, 0),
                             row("BlackHole", "entries:003", 14, 100, 14, 50, bh_throttle, 40, 0, failed)])
            + f"{stamp(t)} JobRouter: Found candidate job 12.0\n")


DEMO_START = 1795219200.0  # the demo recording's first moment (sample_configs/recordings/demo-3h)
THROTTLED_FROM = DEMO_START + 1200  # archive_with_router_log: BlackHole throttled from this poll on


def archive_with_router_log(tmp: Path, steps: int = 3000, router_log: bool = True) -> Path:
    """A recorder's archive (``tmp/archive``) of the demo recording's first ``steps`` transactions
    (3000: its first 1715 s), recorded with ``--router-log`` (unless ``router_log`` is False) over a
    JobRouterLog of one poll every 20 s from +600 s to +1700 s: Site1_Slurm never throttled,
    BlackHole throttled (18 jobs/600 s, ``0.03 jobs/sec``) from :data:`THROTTLED_FROM` on, its
    Recent Failed counting the polls."""
    schedd = ScheddLog(tmp / "job_queue.log",
                       (REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log").read_bytes())
    rlog = tmp / "JobRouterLog"
    rlog.write_text("".join(poll_block(t, 18.0 if t >= THROTTLED_FROM else 0.0, k)
                            for k, t in enumerate(DEMO_START + 600 + 20 * n for n in range(56))))
    schedd.advance(steps)
    Recorder(tmp / "job_queue.log", tmp / "archive", tz="UTC", router_log=rlog if router_log else None).poll(
        0, flush=True)
    return tmp / "archive"
