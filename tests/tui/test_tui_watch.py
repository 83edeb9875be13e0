"""Pilot test of watch mode: the dashboard follows a queue log written in ``tmp_path`` and shows
the real router's JobRouterLog figures beside RouteDeck's own (product.md §2 "watch";
htcondor.md §3.5 the follower applies records as read, §1.5 the JobRouterLog routing table,
§1.9 a routed copy is a job with RouteName). No sleeping: after each write the test sends the
watch feed its wake-up command (what the file watcher does) and waits for the snapshot with a
timeout.
"""

from __future__ import annotations


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
