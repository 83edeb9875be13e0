"""Pilot test of watch mode: the dashboard follows a queue log written in ``tmp_path`` and shows
the real router's JobRouterLog figures beside RouteDeck's own (product.md §2 "watch";
htcondor.md §3.5 the follower applies records as read, §1.5 the JobRouterLog routing table,
§1.9 a routed copy is a job with RouteName). No sleeping: after each write the test sends the
watch feed its wake-up command (what the file watcher does) and waits for the snapshot with a
timeout.
"""

from __future__ import annotations


import shutil
from pathlib import Path

import pytest

from engine.launch.options import WatchOptions
from engine.launch.watch import watch_runtime
from engine.queue.writer import open_queue
from engine.contract.commands import WakeUp
from tui.app import make_app
from tui.screens.watch_board import WatchRoutesScreen

from tests.helpers.tui_fixtures import wait_until

T0 = 1795300000.0
pytestmark = pytest.mark.anyio


def _submit(q, now, route=None, src=None):
    with q.transaction(now=now) as t:
        c = t.new_cluster()
        key = f"0{c}.-1"
        t.set_attribute(key, "Owner", '"alice"')
        if route:
            t.set_attribute(key, "RouteName", f'"{route}"')
            t.set_attribute(key, "RoutedFromJobId", f'"{src}"')
        cp = t.new_proc(c)
        t.set_attribute(cp, "ProcId", "0")
        t.set_attribute(cp, "JobStatus", "1")
    return f"{c}.0"


def _routed(app, name):
    snap = app.snapshot
    return next((r.routed for r in snap.routes if r.name == name), None) if snap else None


async def test_watch_follows_the_log_and_shows_the_router_log(tmp_path):
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, T0)
    src = _submit(q, T0 + 1)
    _submit(q, T0 + 2, route="Site1", src=src)
    rl = tmp_path / "JobRouterLog"
    rl.write_text(
        "11/21/26 14:30:05 JobRouter: Checking for candidate jobs. routing table is:\n"
        "Route Name               Source      Submitted/Max        Idle/Max     Throttle Recent: Started Succeeded Failed\n"
        + "%-24s %-11s %7d/%7d %7d/%7d %8s" % ("Site1", "entries:001", 3, 100, 1, 50, "0.00566667 jobs/sec")
        + "         %7d %9d %6d\n" % (4, 2, 39))
    args = WatchOptions(queue_log=str(log), router_log=str(rl), tz="UTC", slow_poll=60.0)
    runtime = watch_runtime(args)
    app = make_app(runtime, mode="watch", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(120, 40)) as pilot:
        runtime.send(WakeUp())
        await wait_until(pilot, lambda: _routed(app, "Site1") == 1)
        assert isinstance(app.screen, WatchRoutesScreen) and app.snapshot.mode == "watch" and app.readonly
        site1 = next(r for r in app.snapshot.routes if r.name == "Site1")
        assert site1.reported.submitted == 3 and site1.reported.recent_failed == 39
        await pilot.pause()
        panel = str(app.screen.query_one("#router-log").render())
        assert "Site1" in panel and "3.4/600s" in panel and "4/2/39" in panel
        src2 = _submit(q, T0 + 3)  # the schedd goes on writing: a second copy on Site1
        _submit(q, T0 + 4, route="Site1", src=src2)
        runtime.send(WakeUp())
        await wait_until(pilot, lambda: _routed(app, "Site1") == 2)
        assert app.snapshot.total_jobs == 4


@pytest.mark.slow
async def test_why_not_in_watch_answers_from_the_ledger(tmp_path):
    """Issue 29: in watch the why-not screen said "this engine offers no routing explanation".
    It shows the job's ledger entry over the followed queue (engine.views.ledger.ledger_at, the
    computation of ``routedeck why``): the verdict and every route's verdict in match order. The
    log is the shipped demo recording (sample_configs/recordings/README.md) with its config."""
    root = Path(__file__).resolve().parents[2]
    log = tmp_path / "job_queue.log"
    shutil.copy(root / "sample_configs" / "recordings" / "demo-3h.job_queue.log", log)
    conf = str(root / "sample_configs" / "demo" / "condor_config")
    runtime = watch_runtime(WatchOptions(queue_log=str(log), config=(conf,), tz="UTC", slow_poll=60.0))
    app = make_app(runtime, mode="watch", readonly=True, blink=False, watch_files=False)
    async with app.run_test(size=(80, 24)) as pilot:
        runtime.send(WakeUp())
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.total_jobs > 0, timeout=60)
        route_names = [r.name for r in app.snapshot.routes]
        waiting = next(j.job for j in app.snapshot.jobs if j.status == 1 and j.kind != "routed" and not j.routed_to
                       and j.job not in {c.job for c in app.snapshot.cron_jobs})
        app.run_command_line(f"why {waiting}")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "WhyNotScreen" and app.screen.checks is not None,
                         timeout=30)
        text = str(app.screen.query_one("#whynot").render())
        assert "no routing explanation" not in text and app.screen.verdict
        labels = [c.label for c in app.screen.checks]
        assert [label.split("]")[0].lstrip("[") for label in labels[:len(route_names)]] == route_names
