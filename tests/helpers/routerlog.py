"""JobRouterLog text in the router's own format (htcondor.md §1.5, ``JobRouter::GetCandidateJobs``):
the header line, the column line and one row per route written with ``%-24s %-11s %7d/%7d
%7d/%7d %8s`` then ``         %7d %9d %6d``, one ``dprintf(D_ALWAYS)`` so only the first line has
the time stamp; the throttle is ``ThrottleDesc``: ``none`` or ``%g jobs/sec`` of throttle/600."""

from __future__ import annotations

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
