"""JobRouterLog text in the router's own format (htcondor.md §1.5, ``JobRouter::GetCandidateJobs``):
the header line, the column line and one row per route written with ``%-24s %-11s %7d/%7d
%7d/%7d %8s`` then ``         %7d %9d %6d``, one ``dprintf(D_ALWAYS)`` so only the first line has
the time stamp; the throttle is ``ThrottleDesc``: ``none`` or ``%g jobs/sec`` of throttle/600."""

from __future__ import annotations

from datetime import datetime, timezone

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
