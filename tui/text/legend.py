"""What each column of the board, the jobs list and the crondor table means: one place, read by
the screens (the help line for the focused column) and by ``?`` help (``legend_sections``).

Keys are the column titles as shown in the headers; the text names the HTCondor rule behind a
figure where there is one, by the knob, attribute or manual section a user can look up (not this
repository's spec: help cited ``htcondor.md``, which a user does not have; issue 29).
"""

from __future__ import annotations

BOARD: dict[str, str] = {
    "#": "match order: the router tries routes in this order (JOB_ROUTER_ROUTE_NAMES)",
    "Route": "route name; ⚠ = the routing table has a lint about this route",
    "State": "accepting · full (MaxJobs) · idle-limit (MaxIdleJobs) · THROTTLED · disabled · unlisted",
    "Throttle": "jobs the route may start per 600 s while failing too often (— none; the route's FailureRateThreshold)",
    "Fail/s": "failed routed jobs per second this window; red above the route's failure threshold",
    "St/Ok/Fail": "routed copies started / succeeded / failed in the current 600 s window",
    "Routed/Max": "routed copies of this route in the queue / MaxJobs (bar: how full)",
    "Idle/MaxIdle": "idle routed copies / MaxIdleJobs (∞ = no limit); at the limit the route stops accepting",
    "Run": "routed copies running",
    "Held": "routed copies held",
    "Trend": "failure rate over the last windows (red: above threshold)",
    "Re-eval": "time until the throttle and failure rate are re-evaluated (the router's 600 s statistics window)",
    "Not accepting because": "why the route takes no more jobs now",
}

JOBS: dict[str, str] = {
    "Job": "job id (ClusterId.ProcId)",
    "Status": "JobStatus by name: Idle 1, Running 2, Removed 3, Completed 4, Held 5",
    "Owner": "the job's Owner",
    "Route": "route of a routed copy; for a source job, the route its copy took",
    "Cmd / hold reason": "HoldReason for a held job, else its Cmd",
    "In status": "time since EnteredCurrentStatus",
    "Kind": "source (submitted by a user), routed (the router's copy of a source job), plain",
    "To/From": "→ routed copy of this source job; ← the source job this copy came from",
    "Submitted": "QDate, in the engine's zone",
}

CRON: dict[str, str] = {
    "Job": "job id of the crondor job",
    "Schedule": "cron_minute cron_hour cron_day_of_month cron_month cron_day_of_week (manual: Time Scheduling for Job Execution)",
    "Next run": "the DeferralTime the schedd computes for the next run, in the job's zone",
    "In": "countdown to the next run (red: overdue; held: how long ago the missed run was due)",
    "Window": "−CronPrepTime … +CronWindow: when the job may be matched and started",
    "State": "idle, waiting (deferred, matched before its time), running, held (missed its window), invalid",
    "": "⚠ = a lint about this schedule (below the table)",
    "Schedd pick": "where an HTCondor ≥ 10.3 schedd picks a different next run than the documented rule "
                   "(its CronTab::nextRunTime)",
}

TABLES = (("Routes board", BOARD), ("Jobs", JOBS), ("Crondor", CRON))


def legend_line(table: dict[str, str], title: str) -> str:
    """``Title: meaning`` for the help line under a table."""
    what = table.get(title)
    return f"{title or 'lint'}: {what}" if what else title


def legend_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """For ``?`` help: one section per table, a row per column."""
    return [(f"{name} columns", [(k or "⚠", v) for k, v in table.items()]) for name, table in TABLES]
