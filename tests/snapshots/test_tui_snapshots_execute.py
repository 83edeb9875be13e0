"""Snapshot tests of the Hooks screen and the Slots view (issue 12 item 4) at 80×24 and 120×36,
on a real execute node (``tests/execute_fixture.py``: real hook scripts, manual clock, hook
durations frozen) and the snapshot tests' frozen time. Hook paths show relative to the working
directory, so the test runs in the node's temporary directory. Update with ``--snapshot-update``
on the specific test and review the SVGs.
"""

from __future__ import annotations

import pytest

from engine.views.execute import execute_views
from tui.app import make_app

from tests.helpers.execute_fixture import T0, build_node
from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until

SIZES = {"80x24": (80, 24), "120x36": (120, 36)}


def _app(tmp_path, monkeypatch):
    sd = build_node(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)
    slots, hooks = execute_views(sd)
    return make_app(FakeRuntime(make_snapshot(50, slots=slots, hooks=hooks, time=float(T0 + 60))), blink=False,
                    watch_files=False)


@pytest.mark.parametrize("size", SIZES)
def test_hooks(snap_compare, tmp_path, monkeypatch, size):
    async def run_before(pilot):
        await wait_until(pilot, lambda: pilot.app.snapshot is not None)
        await pilot.press("h")  # every invocation; the cursor on the newest (the garbage FETCH_WORK)
        await wait_until(pilot, lambda: bool(getattr(pilot.app.screen, "_keys", None)))
        await pilot.press("up")  # PREPARE_JOB: the Cmd it returned in the panel
        await pilot.pause()

    assert snap_compare(_app(tmp_path, monkeypatch), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_slots(snap_compare, tmp_path, monkeypatch, size):
    async def run_before(pilot):
        await wait_until(pilot, lambda: pilot.app.snapshot is not None)
        await pilot.press("o")  # slot1 claimed by fetched work, slot2 idle after a garbage fetch
        await wait_until(pilot, lambda: bool(getattr(pilot.app.screen, "_keys", None)))
        await pilot.pause()

    assert snap_compare(_app(tmp_path, monkeypatch), terminal_size=SIZES[size], run_before=run_before)
