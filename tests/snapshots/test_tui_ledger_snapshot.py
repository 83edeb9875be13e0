"""Snapshot test (pytest-textual-snapshot) of the ledger screen (issue 29): every idle source job
with its verdict, the route a matched job takes or why the others wait, and the hold countdown,
at 80×24 and 132×40. Deterministic: canned ledger entries at the frozen virtual time
``tui_fixtures.T0`` (the screen reads no clock), cursor blink off. Update with
``--snapshot-update`` and review the SVG."""

from __future__ import annotations

import pytest

from engine.router.unrouted import Entry
from tui.app import make_app

from tests.helpers.tui_fixtures import FakeFeed, FakeRuntime, make_snapshot, wait_until

_REQ = {"route": "CMS_T2", "verdict": "no_match", "detail": '(VO == "cms") is false (VO = "atlas")'}
ENTRIES = (
    Entry("101.0", "matched", ({"route": "CMS_T2", "verdict": "matched", "detail": "3/100 jobs, 1 idle"},),
          None, "route CMS_T2"),
    Entry("102.0", "no_match", (_REQ, dict(_REQ, route="Site_B")), {"at": 0, "in": 1500.0, "policy":
          "SYSTEM_PERIODIC_HOLD", "action": "hold", "reason": "no matching routes, route job limit, or route "
          "failure threshold"}, "no route's REQUIREMENTS match"),
    Entry("103.0", "route_full", (dict(_REQ, verdict="route_full", detail="MaxIdleJobs 20 reached (20 idle)"),),
          None, "every matching route refuses jobs"),
    Entry("104.0", "throttled", (), {"at": 0, "in": 86_000.0, "policy": "SYSTEM_PERIODIC_REMOVE",
                                      "action": "remove", "reason": "idle for a day"},
          "every matching route refuses jobs"),
    Entry("105.0", "not_candidate", (), None, 'umbrella: Managed isnt "External" (Managed = "External")'),
)


class LedgerFeed(FakeFeed):
    def ledger(self, now: float) -> list:
        return list(ENTRIES)


class LedgerRuntime(FakeRuntime):
    def __init__(self, snapshot) -> None:
        super().__init__(snapshot)
        self.feed = LedgerFeed(self)


@pytest.mark.parametrize("size", [(80, 24), (132, 40)])
def test_ledger_screen(snap_compare, size):
    app = make_app(LedgerRuntime(make_snapshot(200)), blink=False, watch_files=False)

    async def run_before(pilot):
        await wait_until(pilot, lambda: pilot.app.snapshot is not None)
        await pilot.press("l")
        await wait_until(pilot, lambda: getattr(pilot.app.screen, "entries", None) is not None)
        await pilot.press("down")

    assert snap_compare(app, terminal_size=size, run_before=run_before)
