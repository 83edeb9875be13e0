"""Pilot tests of each screen's behaviour: keys, filter, sort, drill-down, why-not, crondor,
and the editor's lint, apply (diff, atomic write, backup, ApplyRoutes) and undo.

Route and cron figures are the canned ones of ``tui_fixtures`` (product.md §6 sketches); the
lints shown in the editor come from the real router (``engine.router.lints``: MaxIdleJobs >
MaxJobs and NAMES listed but undefined, htcondor.md §1.3) and config reader (file:line errors).
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
import contextlib

from engine.contract import commands as C
from engine.contract import snapshot as S
from tui.app import make_app
from tui.files.config_files import backups_of
from tui.shell.messages import FilterChanged, RoutesApplied, RoutesUndone

from tests.helpers.tui_fixtures import FakeRuntime, make_routes, make_snapshot, snapshot_for_conf, wait_until, write_routes_conf
from tests.helpers.toasts import told
import tui.screens.jobs as jobs_screen

SIZE = (120, 36)
pytestmark = pytest.mark.anyio


async def _start(pilot, app):
    await wait_until(pilot, lambda: app.snapshot is not None)


def _name(app):
    return type(app.screen).__name__


# ------------------------------------------------------------------------------------ routes board


async def test_board_rows_in_match_order_with_inactive_routes_flagged():
    app = make_app(FakeRuntime(make_snapshot(500)), blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        board = app.screen
        assert board.names == ["Site1_Slurm", "Site2_PBS", "BlackHole", "Overflow", "GPU_Site", "OldSite"]
        table = board.query_one("#routes")
        old = table.get_row(board.row_key("OldSite"))
        assert str(old[0]) == "─" and str(old[2]) == "unlisted"
        assert str(table.get_row(board.row_key("BlackHole"))[2]) == "THROTTLED"
        await pilot.press("down", "down")
        detail = str(board.query_one("#route-detail").render())
        assert "throttle 3.4 jobs/600 s" in detail and "re-evaluated" in detail


async def test_board_updates_cells_in_place_and_keeps_the_cursor():
    rt = FakeRuntime(make_snapshot(500))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("down", "down")
        routes = tuple(dataclasses.replace(r, running=r.running + 5) for r in rt.latest().routes)
        rt.update(routes=routes)
        await wait_until(pilot, lambda: app.snapshot.seq == 2)
        board = app.screen
        table = board.query_one("#routes")
        assert table.cursor_row == 2 and str(table.get_cell(board.row_key("Site1_Slurm"), "running")) == "199"


async def test_board_filter_and_enter_opens_route_with_its_jobs():
    app = make_app(FakeRuntime(make_snapshot(2000)), blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("slash", *"black", "enter")
        assert app.screen.names == ["BlackHole"]
        await pilot.press("enter")
        await pilot.pause()
        assert _name(app) == "RouteDetailScreen" and app.screen.route_name == "BlackHole"
        await pilot.pause(0.1)
        jobs = app.screen.query_one("#route-jobs")
        assert len(jobs.model) > 0
        assert all(jobs.model.row(i).route == "BlackHole" for i in range(len(jobs.model)))
        await pilot.press("escape")
        await pilot.pause()
        assert _name(app) == "RoutesScreen"


# ------------------------------------------------------------------------------------ jobs


@pytest.mark.slow
async def test_jobs_filter_sort_and_drill_into_the_ad():
    rt = FakeRuntime(make_snapshot(5000))
    app = make_app(rt, blink=False)
    seen = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await _start(pilot, app)
        await pilot.press("j")
        await pilot.pause()
        screen = app.screen
        table = screen.table
        assert len(table.model) == 5000
        await pilot.press("slash", *"icecube")
        await pilot.pause()
        expected = [r.job for r in rt.latest().jobs if r.owner == "icecube"]
        assert [table.model.row(i).job for i in range(len(table.model))] == expected
        assert [m for m in seen if isinstance(m, FilterChanged)][-1].shown == len(expected)
        await pilot.press("enter")  # leave the filter box
        await pilot.press("s", "S")  # sort by job, then reverse
        await pilot.pause()
        jobs = [table.model.row(i).job for i in range(len(table.model))]
        assert jobs == sorted(expected, key=lambda j: tuple(map(int, j.split("."))), reverse=True)
        assert "sorted by job desc" in str(screen.query_one("#jobs-status").render())
        await pilot.press("down", "enter")
        await pilot.pause()
        assert _name(app) == "AdScreen" and app.screen.row.job == jobs[1]
        await app.screen.loader.wait()  # the ad is read in the screen's own worker, off the UI thread
        await pilot.pause()
        assert "Owner" in str(app.screen.query_one("#ad-text").render())
        await pilot.press("escape", "escape")  # close the ad, then clear the filter
        await pilot.pause()
        assert len(table.model) == 5000


async def _filter(pilot, text: str) -> None:
    """Open the filter box and submit ``text`` (set at once: Pilot spends ~60 ms per typed key)."""
    await pilot.press("slash")
    await pilot.pause()
    pilot.app.screen.query_one("#job-filter").value = text
    await pilot.press("enter")


@pytest.mark.slow
async def test_jobs_classad_constraint_filter_and_bad_constraint():
    rt = FakeRuntime(make_snapshot(3000))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("j")
        await _filter(pilot, '=Owner == "alice" && JobStatus == 5')
        table = app.screen.table
        expected = [r.job for r in rt.latest().jobs if r.owner == "alice" and r.status == 5]
        await wait_until(pilot, lambda: len(table.model) == len(expected))
        assert sorted(table.model.row(i).job for i in range(len(table.model))) == sorted(expected)
        # the full ad (the engine's job_ad) is used: RequestMemory is not in the job rows
        await pilot.press("escape")
        await _filter(pilot, "=RequestMemory >= 7000")
        big = [r.job for r in rt.latest().jobs if 1000 + int(r.job.split(".")[0]) % 7 * 1000 >= 7000]
        await wait_until(pilot, lambda: app.screen.where == "RequestMemory >= 7000" and len(table.model) == len(big))
        await pilot.press("escape")
        await _filter(pilot, "=Owner ==")
        await wait_until(pilot, lambda: any("does not parse" in t for t in told(app)))
        assert app.screen.where is None


async def test_jobs_cursor_follows_the_selected_job_across_snapshots():
    rt = FakeRuntime(make_snapshot(3000))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("j", "down", "down", "down")
        table = app.screen.table
        job = table.selected.job
        rows = rt.latest().jobs
        rt.update(jobs=rows[1:], jobs_version=2)  # the first job left the queue
        await wait_until(pilot, lambda: table.model.version == 2)
        assert table.selected.job == job and table.cursor == 2


async def test_why_not_lists_the_router_checks_in_order():
    rt = FakeRuntime(make_snapshot(500))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("j", "w")
        await wait_until(pilot, lambda: _name(app) == "WhyNotScreen" and app.screen.checks is not None)
        checks = app.screen.checks
        assert [c.label for c in checks] == [c.label for c in rt.feed.why_not("x", 0.0).checks]
        text = str(app.screen.query_one("#whynot").render())
        assert "idle 50 >= MaxIdleJobs 50" in text
        assert "First failing check: route 1 Site1_Slurm requirements" in text


async def test_job_hold_key_sends_the_selected_job():
    rt = FakeRuntime(make_snapshot(500))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("j", "down", "H")
        await pilot.pause()
        assert rt.sent == []  # asks first (issue 11 item 6)
        await pilot.press("y")
        await pilot.pause()
        assert rt.sent == [C.HoldJob(rt.latest().jobs[1].job)]


# ------------------------------------------------------------------------------------ crondor


async def test_cron_screen_shows_countdown_window_and_schedd_difference():
    rt = FakeRuntime(make_snapshot(100))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("c")
        await pilot.pause()
        table = app.screen.query_one("#cron")

        def cell(job, col):
            return str(table.get_cell(job, col))

        assert cell("12.0", "next") == "2026-11-21 10:00 CST" and cell("12.0", "in") == "1h27m55s"
        assert cell("12.0", "window") == "−5m … +0s"
        assert str(table.get_row("14.0")[7]) == "2026-11-30 00:02 CST"  # the schedd's pick differs
        assert str(table.get_row("13.0")[7]) == "same"
        rt.update(time=rt.latest().time + 60)  # the countdown follows the engine's clock
        await wait_until(pilot, lambda: cell("12.0", "in") == "1h26m55s")
        await pilot.press("down", "down")
        detail = str(app.screen.query_one("#cron-detail").render())
        assert "CronTab::nextRunTime" in detail and "schedd picks" in detail
        assert "held: 1 missed run, 0 invalid schedule" in detail and "1 waiting" in detail
        # a held job has no next run (issue 29: "Next run" showed the missed, past one): the schedd
        # computes one from the release time (htcondor.md §2.4); the detail says which, as of now
        assert cell("16.0", "next") == "on release" and "ago" in cell("16.0", "in")
        table.move_cursor(row=table.get_row_index("16.0"))
        await pilot.pause()
        detail = str(app.screen.query_one("#cron-detail").render())
        assert "the run due 2026-11-21 03:00 CST was missed" in detail
        assert "released now, its next run would be 2026-11-22 03:00 CST" in detail


# ------------------------------------------------------------------------------------ editor


async def test_editor_lints_while_typing(tmp_path):
    conf = tmp_path / "routes.conf"
    write_routes_conf(conf)
    app = make_app(FakeRuntime(snapshot_for_conf(conf)), blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("e")
        await wait_until(pilot, lambda: _name(app) == "EditorScreen" and app.screen.lint is not None)
        editor = app.screen
        assert editor.path == str(conf) and editor.query_one("#editor").cursor_location == (2, 0)
        assert [d for d in editor.lint.diagnostics if d.level != "info"] == []
        area = editor.query_one("#editor")
        area.text = area.text.replace("MaxIdleJobs = 50", "MaxIdleJobs = 900") + "broken line\n"
        await wait_until(pilot, lambda: any(d.level == "error" for d in (editor.lint.diagnostics if editor.lint else ())))
        msgs = [str(d) for d in editor.lint.diagnostics]
        assert any("MaxIdleJobs (900) > MaxJobs (500)" in m for m in msgs)
        assert any(":13:" in m and "missing '='" in m for m in msgs)  # file:line of the parse error
        await pilot.press("ctrl+s")  # refused: errors (the apply's lint runs in a worker)
        await wait_until(pilot, lambda: any(t.startswith("not applied:") for t in told(app)))
        assert _name(app) == "EditorScreen" and "broken line" not in conf.read_text()


@pytest.mark.slow
async def test_editor_apply_writes_atomically_with_backup_and_undo_restores(tmp_path):
    conf = tmp_path / "routes.conf"
    original = write_routes_conf(conf)
    rt = FakeRuntime(snapshot_for_conf(conf))
    app = make_app(rt, blink=False)
    seen = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await _start(pilot, app)
        await pilot.press("colon", *"edit Site1_Slurm", "enter")
        await wait_until(pilot, lambda: _name(app) == "EditorScreen" and app.screen.lint is not None)
        editor = app.screen
        editor.query_one("#editor").text = original.replace("MaxIdleJobs = 50", "MaxIdleJobs = 20")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: _name(app) == "ConfirmApply")
        assert "-  MaxIdleJobs = 50" in app.screen.diff and "+  MaxIdleJobs = 20" in app.screen.diff
        await pilot.press("y")
        await wait_until(pilot, lambda: any(isinstance(m, RoutesApplied) for m in seen))
        assert "MaxIdleJobs = 20" in conf.read_text()
        assert [b.read_text() for b in backups_of(conf)] == [original]
        assert rt.sent == [C.ApplyRoutes((str(conf),), reason="edited in RouteDeck (routes.conf)")]
        await wait_until(pilot, lambda: app.snapshot.table_version == 4)  # the engine switched tables
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: any(isinstance(m, RoutesUndone) for m in seen))
        assert conf.read_text() == original
        assert rt.sent[-1] == C.ApplyRoutes((str(conf),), reason="undo in RouteDeck")
        assert editor.query_one("#editor").text == original
        await pilot.press("ctrl+r")  # nothing left to undo
        await pilot.pause()
        assert any("nothing to undo" in t for t in told(app))


async def test_editor_cancel_apply_leaves_the_file(tmp_path):
    conf = tmp_path / "routes.conf"
    original = write_routes_conf(conf)
    rt = FakeRuntime(snapshot_for_conf(conf))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("e")
        await wait_until(pilot, lambda: _name(app) == "EditorScreen" and app.screen.lint is not None)
        app.screen.query_one("#editor").text = original.replace("500", "400")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: _name(app) == "ConfirmApply")
        await pilot.press("n")
        await pilot.pause()
        assert conf.read_text() == original and rt.sent == [] and backups_of(conf) == []


async def test_editor_what_if_counts_idle_jobs_per_route(tmp_path):
    conf = tmp_path / "routes.conf"
    original = write_routes_conf(conf)
    rt = FakeRuntime(snapshot_for_conf(conf, n_jobs=300))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("e")
        await wait_until(pilot, lambda: _name(app) == "EditorScreen" and app.screen.lint is not None)
        editor = app.screen
        idle_alice = sum(1 for r in rt.latest().jobs
                         if r.status == 1 and r.kind != "routed" and not r.routed_to and r.owner == "alice")
        assert editor.lint.what_if.before.get("Site1_Slurm", 0) == idle_alice
        editor.query_one("#editor").text = original.replace('"alice"', '"nobody"')
        await wait_until(pilot, lambda: editor.lint.what_if is not None and editor.lint.what_if.moved == idle_alice)
        assert editor.lint.what_if.after.get("Site1_Slurm", 0) == 0
        assert f"{idle_alice} job(s) would change route" in str(editor.query_one("#whatif").render())


SHADOWED = S.Diagnostic("warning", "route Overflow is shadowed: Site2_PBS, earlier in the route order, has the "
                        "same REQUIREMENTS (true)", "/etc/condor/routes.conf", 33)


async def test_same_name_active_and_disabled_routes_both_show():
    """With both syntaxes loaded a name can be an active ClassAd route and a disabled transform
    route at once (the demo's --classad-routes); rows must not collide."""
    routes, inactive = make_routes()
    twin = dataclasses.replace(routes[0], index=0, state="disabled", reason="replaced by the ClassAd route",
                               source_label="JOB_ROUTER_ROUTE_Site1_Slurm")
    routes = (dataclasses.replace(routes[0], source_label="entries:1", syntax="classad"),) + routes[1:]
    app = make_app(FakeRuntime(make_snapshot(200, routes=routes, inactive_routes=inactive + (twin,))), blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        board = app.screen
        assert board.names.count("Site1_Slurm") == 2
        await pilot.press(*["down"] * 6)  # the last row
        assert board.selected_route().state == "disabled"
        assert "disabled: replaced by the ClassAd route" in str(board.query_one("#route-detail").render())


async def test_board_flags_routes_with_lints_and_uses_a_wide_terminal():
    """Lint texts as ``engine.router.lints`` words them ("route NAME is shadowed …", htcondor.md §1.4)."""
    app = make_app(FakeRuntime(make_snapshot(200, diagnostics=(SHADOWED,))), blink=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await _start(pilot, app)
        board = app.screen
        table = board.query_one("#routes")
        assert str(table.get_row(board.row_key("Overflow"))[1]) == "Overflow ⚠"
        assert str(table.get_row(board.row_key("Site2_PBS"))[1]) == "Site2_PBS"
        assert str(table.get_row(board.row_key("Site2_PBS"))[12]) == "idle jobs 50 >= MaxIdleJobs 50"  # the reason column
        await pilot.press("down", "down", "down")
        assert "is shadowed" in str(app.screen.query_one("#route-detail").render())
    app = make_app(FakeRuntime(make_snapshot(200)), blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await _start(pilot, app)
        assert len(app.screen.query_one("#routes").columns) == 12  # no room for the reason column


async def test_editor_hands_the_text_to_editor_and_takes_it_back(tmp_path, monkeypatch):
    conf = tmp_path / "routes.conf"
    write_routes_conf(conf)
    tool = tmp_path / "fake-editor.sh"
    tool.write_text("#!/bin/sh\nsed -i 's/MaxJobs = 500/MaxJobs = 450/' \"$1\"\n")
    tool.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(tool))
    app = make_app(FakeRuntime(snapshot_for_conf(conf)), blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("e")
        await wait_until(pilot, lambda: _name(app) == "EditorScreen" and app.screen.lint is not None)
        await pilot.press("ctrl+o")  # the headless driver cannot suspend: said, not crashed
        await pilot.pause()
        assert any("cannot hand over to $EDITOR" in t for t in told(app))
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # as a real terminal would
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: "MaxJobs = 450" in app.screen.text)
        assert "MaxJobs = 500" in conf.read_text()  # nothing written until apply


async def test_board_w_explains_the_first_idle_unrouted_job():
    rt = FakeRuntime(make_snapshot(500))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("w")
        await wait_until(pilot, lambda: _name(app) == "WhyNotScreen")
        first = next(r for r in rt.latest().jobs if r.status == 1 and r.kind != "routed" and not r.routed_to)
        assert app.screen.job == first.job


async def test_large_changing_queue_is_refiltered_at_a_bounded_rate(monkeypatch):
    # The screen's pacing clock stands still: a loaded machine taking over HEAVY_EVERY between two
    # updates must not turn "not on the spot" into "at once" (seen under load). Only the real timer
    # that re-filters "soon after" runs on the wall clock.
    monkeypatch.setattr(jobs_screen, "time", SimpleNamespace(monotonic=lambda: 1000.0))
    monkeypatch.setattr(jobs_screen, "HEAVY_EVERY", 0.0)
    rt = FakeRuntime(make_snapshot(25_000))
    app = make_app(rt, blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("j")
        await _filter(pilot, "alice")
        table = app.screen.table
        await wait_until(pilot, lambda: table.model.text == "alice")
        monkeypatch.setattr(jobs_screen, "HEAVY_EVERY", 4.0)  # the real timer: well over a loaded machine's pause
        rows = rt.latest().jobs
        rt.update(jobs=rows[:21_000], jobs_version=2)  # the queue changed: adopted (none for a while)
        await wait_until(pilot, lambda: table.model.version == 2)
        rt.update(jobs=rows[:20_000], jobs_version=3)  # and changed again at once
        await wait_until(pilot, lambda: app.snapshot.jobs_version == 3)
        assert table.model.version == 2  # not re-filtered on the spot…
        await wait_until(pilot, lambda: table.model.version == 3, timeout=20)  # …but soon after
        assert len(table.model.rows) == 20_000
        assert all("alice" in table.model.row(i).owner for i in range(min(50, len(table.model))))


async def test_clicking_a_column_header_sorts_and_again_reverses():
    app = make_app(FakeRuntime(make_snapshot(500)), blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await _start(pilot, app)
        await pilot.press("j")
        await pilot.pause()
        table = app.screen.table
        owner_x = 11 + 9 + 2  # Job and Status columns, then into Owner
        await pilot.click(table, offset=(owner_x + 1, 1))  # +1: the border
        assert (table.model.sort_key, table.model.reverse) == ("owner", False)
        await pilot.click(table, offset=(owner_x + 1, 1))
        assert (table.model.sort_key, table.model.reverse) == ("owner", True)
        owners = [table.model.row(i).owner for i in range(len(table.model))]
        assert owners == sorted(owners, reverse=True)
