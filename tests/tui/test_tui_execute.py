"""The Hooks screen and the Slots view on a real execute node (issue 12 item 4), in Pilot.

The node is ``tests/execute_fixture.py``: a Startd built from real hook scripts and stepped on a
manual clock; its rows come from the one builder (``engine.views.execute``) the demo's snapshot
uses. What the rows mean follows htcondor.md §4.2 (tryFetchWork, FetchWorkDelay) and
src/condor_startd.V6/StartdHookMgr.cpp (FetchClient::hookExited: invalid output ignored).
"""

from __future__ import annotations

import pytest

from engine.views.execute import HookIndex, execute_views
from tui.app import make_app
from tui.screens.help import TextScreen
from tui.screens.hooks import HooksScreen
from tui.screens.slots import SlotsScreen

from tests.helpers.execute_fixture import T0, build_node
from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until
from engine.feeds.demo import build_demo
from tests.helpers.demo_fixture import ROOT
from tests.helpers.toasts import told_notes
from tui.screens.hooks import _dropped

pytestmark = pytest.mark.anyio


def _node_app(tmp_path, monkeypatch, **changes):
    sd = build_node(tmp_path, monkeypatch)
    index = HookIndex()
    slots, hooks = execute_views(sd, index)
    rt = FakeRuntime(make_snapshot(50, slots=slots, hooks=hooks, **changes))
    return sd, index, rt, make_app(rt, blink=False, watch_files=False)


def _toasts(app):
    return [(n.title, n.message) for n in told_notes(app)]


async def _on(pilot, cls):
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, cls) and bool(pilot.app.screen._keys))


@pytest.mark.slow
async def test_hooks_screen_lists_every_invocation_filters_and_opens_stdin_stdout(tmp_path, monkeypatch):
    """h opens the Hooks screen with every invocation, the cursor on the newest (the garbage
    FETCH_WORK, its error in the panel); / filters; Enter shows the full stdin and stdout."""
    sd, _index, _rt, app = _node_app(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("h")
        await _on(pilot, HooksScreen)
        screen = app.screen
        assert screen._keys == [1, 2, 3, 4, 5]
        assert screen.selected(app.snapshot).seq == 5
        panel = str(screen.query_one("#hooks-detail").render())
        assert "invalid hook output" in panel and "no job" in panel
        await pilot.press("slash", *"prepare")
        await wait_until(pilot, lambda: screen._keys == [4])
        assert "Cmd = \"/usr/bin/java\"" in str(screen.query_one("#hooks-detail").render())
        await pilot.press("enter")  # from the filter box back to the table
        await pilot.press("enter")  # the run's full stdin/stdout
        await wait_until(pilot, lambda: isinstance(app.screen, TextScreen))
        text = app.screen.text
        assert 'Cmd = "sample-java"' in text.split("── stdout")[0]  # the job ad on stdin
        assert 'Cmd = "/usr/bin/java"' in text.split("── stdout")[1]
        await pilot.press("escape")
        await pilot.press("escape")  # closes the filter: every invocation again
        await wait_until(pilot, lambda: app.screen._keys == [1, 2, 3, 4, 5])
        await pilot.press(*":hooks failed", "enter")  # the : command filters too
        await wait_until(pilot, lambda: app.screen._keys == [3, 5])


async def test_toasts_for_new_hook_failures_only(tmp_path, monkeypatch):
    """No toast for failures already there when the dashboard opens; a new snapshot with a new
    failed invocation (slot2's garbage FETCH_WORK again at T0+300, FetchWorkDelay 300) toasts it."""
    sd, index, rt, app = _node_app(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.pause()
        assert not [t for t in _toasts(app) if t[0] == "hook failed"]
        sd.step(T0 + 300)
        slots, hooks = execute_views(sd, index)
        rt.update(slots=slots, hooks=hooks, time=T0 + 300)
        await wait_until(pilot, lambda: any(t[0] == "hook failed" for t in _toasts(app)))
        failed = [m for t, m in _toasts(app) if t == "hook failed"]
        assert failed == ["FETCH_WORK for slot2: ignoring invalid hook output: fetch_bad.sh stdout:1: "
                          "not an 'Attr = expr' line: 'this is not a ClassAd'"]
        assert app.last_hook_seq == hooks[-1].seq


async def test_slots_view_and_enter_opens_the_slots_hooks(tmp_path, monkeypatch):
    """t opens the Slots view: slot1 Claimed/Busy by the fetched job 42.0, next fetch in 5 min
    (FetchWorkDelay 300, htcondor.md §4.2), the Startd Cron attribute in the panel; Enter opens
    the Hooks screen filtered to the slot."""
    sd, _index, _rt, app = _node_app(tmp_path, monkeypatch, time=float(T0 + 60))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("o")
        await _on(pilot, SlotsScreen)
        table = app.screen.query_one("#slots")
        row = [c.plain if hasattr(c, "plain") else c for c in table.get_row("slot1@node.test")]
        assert row[1:6] == ["Claimed/Busy", "42.0", "fetched", "in 4m00s", "08:32:05"]
        assert "Probe_Ready = true" in str(app.screen.query_one("#slots-detail").render())
        await pilot.press("enter")
        await _on(pilot, HooksScreen)
        assert app.screen.filter_text == "slot1"
        await wait_until(pilot, lambda: app.screen._keys == [2, 3])


async def test_hidden_and_refused_without_an_execute_node(tmp_path, monkeypatch):
    """Feeds without an execute node (watch, replay, a demo without one) do not offer the keys
    or the : commands (Snapshot.controls); typed, they say why."""
    rt = FakeRuntime(make_snapshot(50, controls=frozenset({"pause", "speed"})))
    app = make_app(rt, blink=False, watch_files=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        screen = app.screen
        assert app.check_action("show_hooks", ()) is False
        await pilot.press("h")
        await pilot.press(*":slots", "enter")
        await pilot.pause()
        assert app.screen is screen
        refused = [m for _t, m in _toasts(app) if "no execute node" in m]
        assert len(refused) == 2


def test_demo_snapshot_carries_the_node(tmp_path, monkeypatch):
    """The demo's snapshot builder reads Simulation.startd: with one, slots and hooks are there,
    numbered once per feed; without one, empty lists (engine/views/build.py)."""
    monkeypatch.chdir(ROOT)
    eng = build_demo("sample_configs/demo", state_dir=str(tmp_path / "demo"), seed=1, durable=False, stage=False)
    snap = eng.snapshot(1)
    assert eng.startd is None and snap.slots == () and snap.hooks == ()
    eng.startd = build_node(tmp_path, monkeypatch)
    eng.advance()  # a snapshot only reads what the advance settled (issue 26)
    snap = eng.snapshot(2)
    assert [s.name for s in snap.slots] == ["slot1@node.test", "slot2@node.test"]
    assert [h.seq for h in snap.hooks] == [1, 2, 3, 4, 5]
    eng.startd.runner.invocations.popleft()
    eng.advance()
    again = eng.snapshot(3)
    assert [h.seq for h in again.hooks] == [2, 3, 4, 5]  # the same numbers: one index per feed
    assert snap.to_json()["hooks"][0]["hook"] == "PROBE" and again.to_json()["slots"][0]["job"] == "42.0"


async def test_table_follows_the_bounded_deque(tmp_path, monkeypatch):
    """When the runner's bounded deque drops its oldest invocations and new ones come, the table
    drops and appends those rows (same numbers as the snapshot's) and the cursor stays on the
    newest."""
    sd, index, rt, app = _node_app(tmp_path, monkeypatch)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("h")
        await _on(pilot, HooksScreen)
        screen = app.screen
        sd.runner.invocations.popleft()
        sd.runner.invocations.popleft()
        sd.step(T0 + 300)
        slots, hooks = execute_views(sd, index)
        rt.update(slots=slots, hooks=hooks, time=T0 + 300)
        await wait_until(pilot, lambda: screen._keys and screen._keys[0] == 3)
        table = screen.query_one("#hooks")
        assert screen._keys == [h.seq for h in hooks] and table.row_count == len(hooks) > 3
        assert [table.get_row_at(i)[0] for i in range(table.row_count)] == [str(h.seq) for h in hooks]
        assert screen.selected(app.snapshot).seq == hooks[-1].seq


def test_dropped_rows():
    assert _dropped([1, 2, 3], [2, 3, 4]) == 1
    assert _dropped([1, 2, 3], [1, 2, 3, 4]) == 0
    assert _dropped([1, 2, 3], [4, 5]) is None  # everything dropped: rebuild
    assert _dropped([1, 2, 3], [1, 3]) is None  # a filter: rebuild


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (132, 40)])
async def test_hooks_and_slots_screens_fit_the_terminal(tmp_path, monkeypatch, size):
    """Issue 29's handling list: the Hooks screen was taller than the terminal at 80×24 and
    132×40 (the table took the whole height; its bottom border and the detail fell off). With
    more invocations than rows, the table, its border and the detail all fit above the footer."""
    sd, index, rt, app = _node_app(tmp_path, monkeypatch)
    for k in range(1, 16):
        sd.step(T0 + 300 * k)
    slots, hooks = execute_views(sd, index)
    assert len(hooks) > size[1]
    rt.update(slots=slots, hooks=hooks, time=T0 + 300 * 15)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and len(app.snapshot.hooks) == len(hooks))
        for key, cls, table_id in (("h", HooksScreen, "#hooks"), ("o", SlotsScreen, "#slots")):
            await pilot.press(key)
            await _on(pilot, cls)
            await pilot.pause()
            table = app.screen.query_one(table_id).region
            detail = app.screen.query_one(f"{table_id}-detail").region
            assert table.height >= 4 and detail.height >= 3
            assert table.bottom <= detail.y and detail.bottom <= size[1] - 1  # the footer's row
