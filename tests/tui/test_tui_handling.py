"""Pilot tests of the dashboard's handling (issue 11 items 1–8): each reproduction of the issue is
a test here that failed before the fix.

1. the ``:`` line: docked at the bottom, typed text visible, completion, history, screen live
2. a palette entry that takes an argument keeps its pre-filled text when you type
3. ``b``/``j``/``c`` land on the live top screen of the view; headers stay live
4. one keymap: ``j`` never also moves a cursor, Esc never jumps views, space pauses, ``:b``
6. ``H``/``L``/``X`` and ``:hold``/``:rm`` ask first, toast, and are in the footer
7. the editor's Esc with unapplied edits asks (the demo's config copy: tests/test_demo_config_copy.py)
8. read-only modes show ``e View config``, never ``e Edit``

Item 5 (replay jumps accumulate) drives the real replay engine: tests/test_tui_replay.py.
"""

from __future__ import annotations

import dataclasses

import pytest
from textual import events

from engine.contract import commands as C
from tui.commands.palette import lookup

from tests.helpers.handling import NARROW, _app, _name, _open_prompt, _type
from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, snapshot_for_conf, wait_until, write_routes_conf
from tests.helpers.toasts import told
from tui.commands import keymap
from tui.app import RouteDeckApp
from tui.screens.cron import CronScreen
from tui.screens.jobs import JobsScreen
from tui.screens.route_detail import RouteDetailScreen
from tui.screens.routes import RoutesScreen
from tui.screens.whynot import WhyNotScreen
from tui.widgets.job_table import JobTable

pytestmark = pytest.mark.anyio


def _footer_keys(app) -> dict[str, str]:
    """Keys the footer shows on the current screen: key → description."""
    return {k: b.binding.description for k, b in app.screen.active_bindings.items()
            if b.binding.show and b.enabled}


# -- 1. the : command line --------------------------------------------------------------------


async def test_command_line_is_docked_at_the_bottom_and_shows_what_is_typed():
    app = _app()
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("colon")
        await _type(pilot, "speed 120")
        await pilot.pause()
        box = app.screen.query_one("#command-input")
        assert box.value == "speed 120"
        # one row, on the last line of the terminal, as wide as the terminal less the prompt
        assert box.region.y == NARROW[1] - 1 and box.region.height == 1 and box.region.width >= 70
        # the text is on screen, not hidden by a border
        assert "speed 120" in box.render_line(0).text
        hint = str(app.screen.query_one("#command-hint").render())
        assert ":speed X" in hint  # the command's own help above the prompt
        await pilot.press("enter")
        await pilot.pause()
        assert _name(app) == "RoutesScreen"


async def test_screen_behind_the_command_line_stays_live():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        board = app.screen
        await pilot.press("colon")
        await pilot.pause()
        assert _name(app) == "CommandLine"
        new = rt.update(time=rt.latest().time + 3600, routes=tuple(
            dataclasses.replace(r, routed=r.routed + 7) if r.name == "Site1_Slurm" else r for r in rt.latest().routes))
        await wait_until(pilot, lambda: app.snapshot.seq == new.seq)
        await pilot.pause()
        header = str(board.query_one("#status-header").render())
        assert "09:32:05" in header  # T0 + 1 h, in the snapshot's zone (Chicago)
        assert "219/" in str(board.query_one("#routes").get_cell(board.row_key("Site1_Slurm"), "routed"))  # 212 + 7


async def test_tab_completes_command_names_routes_jobs_and_columns():
    app = _app()
    async with app.run_test(size=NARROW) as pilot:
        box = await _open_prompt(app, pilot)
        await _type(pilot, "ed")
        await pilot.press("tab")
        assert box.value == "edit "
        await _type(pilot, "Bl")
        await pilot.press("tab")
        assert box.value == "edit BlackHole "
        box.value = "so"
        await pilot.press("tab")
        assert box.value == "sort "
        await _type(pilot, "ow")
        await pilot.press("tab")
        assert box.value == "sort owner "
        job = app.snapshot.jobs[3].job
        box.value = f"why {job[:-1]}"
        await pilot.pause()
        hint = str(app.screen.query_one("#command-hint").render())
        assert job in hint  # the candidates are listed above the prompt


async def test_the_command_line_completes_only_commands_this_mode_offers():
    """The ``:`` line is k9s-like: it does not complete to a command the mode refuses (``seek`` in
    the demo, ``hold`` in watch), as the Ctrl+P palette already did not list them."""
    demo = frozenset({"pause", "speed", "step", "jobs", "routes"})
    rt = FakeRuntime(dataclasses.replace(make_snapshot(50), controls=demo))
    app = _app(rt)
    async with app.run_test(size=NARROW) as pilot:
        box = await _open_prompt(app, pilot)
        await _type(pilot, "se")
        await pilot.press("tab")
        assert box.value == "se"  # not "seek ": the demo has no seek
        box.value = "s"
        await pilot.pause()
        hint = str(app.screen.query_one("#command-hint").render())
        assert "speed" in hint and "step" in hint and "seek" not in hint
        box.value = "ho"
        await pilot.press("tab")
        assert box.value == "hold "  # the demo can hold jobs
    watch = dataclasses.replace(make_snapshot(50), controls=frozenset())
    app = _app(FakeRuntime(watch))
    async with app.run_test(size=NARROW) as pilot:
        box = await _open_prompt(app, pilot)
        await _type(pilot, "ho")
        await pilot.press("tab")
        assert box.value == "ho"  # read-only watch: no hold
        box.value = "tr"
        await pilot.press("tab")
        assert box.value == "trace "  # always available


async def test_up_and_down_walk_the_history():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        for text in ("speed 30", "pause"):
            await pilot.press("colon")
            await _type(pilot, text)
            await pilot.press("enter")
            await pilot.pause()
        assert C.SetSpeed(30.0) in rt.sent and C.Pause() in rt.sent
        await pilot.press("colon")
        box = app.screen.query_one("#command-input")
        await pilot.press("up")
        assert box.value == "pause"
        await pilot.press("up")
        assert box.value == "speed 30"
        await pilot.press("down", "down")
        assert box.value == ""


# -- 2. palette entries with an argument ---------------------------------------------------------


async def test_palette_sort_then_typing_adds_to_the_prefilled_command():
    app = _app()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        entry = next(c for c in app.get_system_commands(app.screen) if c.title.startswith(":sort"))
        entry.callback()  # what Ctrl+P → "sort" → Enter runs
        await pilot.pause()
        box = app.screen.query_one("#command-input")
        assert box.value == "sort " and box.selection.is_empty and box.cursor_position == 5
        await _type(pilot, "owner")
        await pilot.press("enter")
        await wait_until(pilot, lambda: _name(app) == "JobsScreen")
        await pilot.pause()
        assert app.screen.table.model.sort_key == "owner"
        assert not any("unknown command" in t for t in told(app))


# -- 3. navigation ---------------------------------------------------------------------------------


async def test_b_from_a_route_detail_goes_back_to_the_board():
    app = _app()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("enter")  # open the first route
        await wait_until(pilot, lambda: _name(app) == "RouteDetailScreen")
        await pilot.press("b")
        await wait_until(pilot, lambda: _name(app) == "RoutesScreen")
        assert len(app.screen_stack) == 1


async def test_b_after_why_and_where_lands_on_the_live_board_not_the_old_why_not():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        job = rt.latest().jobs[0].job
        for text in (f"why {job}", 'where Owner == "alice"'):
            await pilot.press("colon")
            app.screen.query_one("#command-input").value = text
            await pilot.press("enter")
            await pilot.pause()
        assert _name(app) == "JobsScreen"
        await pilot.press("b")
        await wait_until(pilot, lambda: _name(app) == "RoutesScreen")
        new = rt.update(time=rt.latest().time + 60)
        await wait_until(pilot, lambda: app.snapshot.seq == new.seq)
        await pilot.pause()
        assert "08:33:05" in str(app.screen.query_one("#status-header").render())


async def test_why_not_header_follows_the_engine():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        app.open_why_not(rt.latest().jobs[0].job)
        await wait_until(pilot, lambda: _name(app) == "WhyNotScreen")
        new = rt.update(time=rt.latest().time + 120, engine_state="paused", paused=True)
        await wait_until(pilot, lambda: app.snapshot.seq == new.seq)
        await pilot.pause()
        header = str(app.screen.query_one("StatusHeader").render())
        assert "08:34:05" in header and "engine paused" in header


# -- 4. one keymap ---------------------------------------------------------------------------------


async def test_j_opens_jobs_without_moving_the_cursor():
    app = _app()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("j")
        await wait_until(pilot, lambda: _name(app) == "JobsScreen")
        await pilot.pause()
        await pilot.press("j")
        await pilot.pause()
        assert app.screen.table.cursor == 0


@pytest.mark.slow
async def test_escape_closes_what_is_open_and_never_switches_views():
    app = _app()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        for key, screen in (("j", "JobsScreen"), ("c", "CronScreen"), ("b", "RoutesScreen")):
            await pilot.press(key)
            await wait_until(pilot, lambda screen=screen: _name(app) == screen)
            await pilot.press("slash")
            await pilot.pause()
            await pilot.press("escape")  # closes the filter
            await pilot.pause()
            await pilot.press("escape")  # nothing open: stays on the view
            await pilot.pause()
            assert _name(app) == screen
        await pilot.press("enter")  # a pushed screen: Esc goes back
        await wait_until(pilot, lambda: _name(app) == "RouteDetailScreen")
        await pilot.press("escape")
        await wait_until(pilot, lambda: _name(app) == "RoutesScreen")


async def test_space_pauses_in_every_mode_and_p_is_not_bound():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("p")
        await pilot.pause()
        assert rt.sent == []
        await pilot.press("space")
        await wait_until(pilot, lambda: rt.sent == [C.Pause()])


def test_one_keymap_for_everything():
    """Every screen's bindings are the keymap's; the board's command aliases match its key."""
    for cls, bindings in ((RoutesScreen, keymap.BOARD), (JobsScreen, keymap.JOBS), (CronScreen, keymap.CRON),
                          (RouteDetailScreen, keymap.ROUTE), (WhyNotScreen, keymap.WHY_NOT),
                          (JobTable, keymap.JOB_TABLE)):
        assert cls.BINDINGS is bindings, cls
    assert RouteDeckApp.BINDINGS == [*keymap.APP, *keymap.REPLAY]
    # q quits; it is never "back" on a screen
    for _, bindings in keymap.SECTIONS:
        for b in bindings:
            assert "q" not in b.key.split(",") or b.action == "quit", b
        assert not any("j" in b.key.split(",") for b in bindings if bindings is not keymap.APP)
    assert lookup("b").name == "board" and lookup("r") is None
    assert lookup("j").name == "jobs" and lookup("c").name == "cron"


# -- 6. confirmation of job commands -----------------------------------------------------------------


async def test_remove_asks_names_the_job_and_toasts():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("j")
        await wait_until(pilot, lambda: _name(app) == "JobsScreen")
        await pilot.pause()
        footer = _footer_keys(app)
        assert footer.get("H") == "Hold" and footer.get("L") == "Release" and footer.get("X") == "Remove"
        job = app.screen.table.selected.job
        await pilot.press("X")
        await wait_until(pilot, lambda: _name(app) == "Confirm")
        text = str(app.screen.query_one("#confirm-text").render())
        assert job in text and "removed from the queue" in text
        await pilot.press("n")
        await pilot.pause()
        assert rt.sent == [] and _name(app) == "JobsScreen"
        await pilot.press("X")
        await wait_until(pilot, lambda: _name(app) == "Confirm")
        await pilot.press("y")
        await wait_until(pilot, lambda: rt.sent == [C.RemoveJob(job)])
        assert any(job in t and "remove" in t for t in told(app))


async def test_hold_command_asks_and_says_what_it_did():
    rt = FakeRuntime(make_snapshot(500))
    app = _app(rt)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("colon")
        await _type(pilot, "hold 3.0")
        await pilot.press("enter")
        await wait_until(pilot, lambda: _name(app) == "Confirm")
        assert "3.0" in str(app.screen.query_one("#confirm-text").render())
        await pilot.press("y")
        await wait_until(pilot, lambda: rt.sent == [C.HoldJob("3.0")])
        assert any("hold sent for job 3.0" in t for t in told(app))


# -- 7. the editor asks before discarding ----------------------------------------------------------


async def test_escape_in_the_editor_with_unapplied_edits_asks(tmp_path):
    conf = tmp_path / "routes.conf"
    original = write_routes_conf(conf)
    rt = FakeRuntime(snapshot_for_conf(conf))
    app = _app(rt)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("e")
        await wait_until(pilot, lambda: _name(app) == "EditorScreen" and app.screen.lint is not None)
        editor = app.screen
        editor.query_one("#editor").text = original + "# an edit\n"
        await pilot.press("escape")
        await wait_until(pilot, lambda: _name(app) == "Confirm")
        await pilot.press("n")  # keep editing
        await wait_until(pilot, lambda: app.screen is editor)
        assert editor.text.endswith("# an edit\n")
        await pilot.press("escape")
        await wait_until(pilot, lambda: _name(app) == "Confirm")
        await pilot.press("y")  # discard
        await wait_until(pilot, lambda: _name(app) == "RoutesScreen")
        assert conf.read_text() == original


async def test_escape_in_an_unchanged_editor_just_closes(tmp_path):
    conf = tmp_path / "routes.conf"
    write_routes_conf(conf)
    app = _app(FakeRuntime(snapshot_for_conf(conf)))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("e")
        await wait_until(pilot, lambda: _name(app) == "EditorScreen" and app.screen.lint is not None)
        await pilot.press("escape")
        await wait_until(pilot, lambda: _name(app) == "RoutesScreen")


# -- 8. read-only modes ----------------------------------------------------------------------------


async def test_read_only_modes_offer_view_not_edit(tmp_path):
    conf = tmp_path / "routes.conf"
    write_routes_conf(conf)
    app = _app(FakeRuntime(snapshot_for_conf(conf)), readonly=True, mode="replay")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        footer = _footer_keys(app)
        assert footer.get("e") == "View config" and "Edit" not in footer.values()
        await pilot.press("e")
        await wait_until(pilot, lambda: _name(app) == "EditorScreen" and app.screen.path is not None)
        area = app.screen.query_one("#editor")
        assert area.read_only and "read-only" in area.border_title
        assert "Apply" not in _footer_keys(app).values()


async def test_writable_demo_offers_edit():
    app = _app()
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        footer = _footer_keys(app)
        assert footer.get("e") == "Edit" and "View config" not in footer.values()


async def _burst(pilot, keys: list[tuple[str, str | None]]) -> None:
    """Keys sent as a terminal sends them when typed fast (or pasted): all at once, without the
    pauses ``pilot.press`` makes between keys for the app to settle."""
    app = pilot.app
    for key, char in keys:
        ev = events.Key(key, char)
        ev.set_sender(app)
        app._driver.send_message(ev)
    await pilot.pause()
    await pilot.pause()


async def test_typing_fast_after_colon_loses_no_key():
    """``:jobs alice⏎`` typed in one burst (tmux send-keys, a fast typist, a paste) runs the command
    with every character: the keys that arrive while the ``:`` line opens go into it (they were
    lost, or taken as board keys, before)."""
    app = _app()
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        keys = [("colon", ":")] + [(c if c != " " else "space", c) for c in "jobs alice"] + [("enter", None)]
        await _burst(pilot, keys)
        await wait_until(pilot, lambda: _name(app) == "JobsScreen")
        await wait_until(pilot, lambda: app.screen.query_one("#job-filter").value == "alice")
        assert app.command_history[-1] == "jobs alice"


async def test_colon_typed_into_a_text_box_is_text():
    """``:`` is taken by the app before anything else (so the keys after it are not lost), except
    while a text box has focus: there it is a character (a filter like ``Owner:alice``)."""
    app = _app()
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("j")
        await wait_until(pilot, lambda: _name(app) == "JobsScreen")
        await pilot.press("slash")
        await pilot.pause()
        await _type(pilot, "a:b")
        await pilot.pause()
        assert _name(app) == "JobsScreen" and app.screen.query_one("#job-filter").value == "a:b"


@pytest.mark.parametrize("screen_key, box", [("j", "#job-filter"), ("c", "#cron-filter"), (None, "#route-filter")])
async def test_slash_then_text_typed_fast_filters_and_triggers_no_key(screen_key, box):
    """``/alice`` typed in one burst on a table filters by ``alice``: the keys that arrive before
    the filter box has focus go into it. Before, they went to the table behind: on the jobs screen
    the ``c`` of ``alice`` switched to Crondor."""
    app = _app()
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        if screen_key:
            await pilot.press(screen_key)
            await pilot.pause()
        start = _name(app)
        await _burst(pilot, [("slash", "/")] + [(c, c) for c in "alice"] + [("enter", None)])
        await wait_until(pilot, lambda: bool(app.screen.query(box)) and app.screen.query_one(box).value == "alice")
        assert _name(app) == start


async def test_slash_typed_fast_replaces_the_old_filter_and_slow_keys_add_to_it():
    """A box that selects its text on focus is replaced by what is typed: ``/bob`` typed in one
    burst over an ``alice`` filter gives ``bob`` (as typed slowly), and keys typed after the box
    has focus add to what was typed ahead instead of replacing it."""
    app = _app()
    async with app.run_test(size=NARROW) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("j")
        await wait_until(pilot, lambda: _name(app) == "JobsScreen")
        await _burst(pilot, [("slash", "/")] + [(c, c) for c in "alice"] + [("enter", None)])
        box = app.screen.query_one("#job-filter")
        await wait_until(pilot, lambda: box.value == "alice" and not box.has_focus)  # Enter: back to the table
        await _burst(pilot, [("slash", "/")] + [(c, c) for c in "bo"])
        await wait_until(pilot, lambda: box.has_focus)
        await pilot.press("b")
        await pilot.pause()
        assert box.value == "bob"
