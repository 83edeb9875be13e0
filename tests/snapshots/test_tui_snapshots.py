"""Snapshot tests (pytest-textual-snapshot) of every screen, deterministic by construction:
fixed terminal sizes, canned snapshots at a frozen virtual time (``tui_fixtures.T0``), cursor
blink off, no toasts (events older than the first snapshot are never toasted), and the editor
on a file given by a path relative to the repository root. The app's background prewarm
(tui.shell.prewarm) runs only in the tests marked ``prewarm``, which wait for it before their keys:
one per prewarmed view (route detail, jobs, crondor, editor, help) draws the prewarmed view; the
others draw the view their key builds (tests/conftest.py). Update with ``--snapshot-update`` and
review the SVGs.

One class per feature; one comment per key press in ``run_before`` (posting's habit).
"""

from __future__ import annotations

import dataclasses

import pytest

from tests.helpers.paths import REPO
from tui.app import make_app

from tests.helpers.tui_fixtures import FakeRuntime, make_routes, make_snapshot, wait_prewarmed, wait_until
from engine.contract.snapshot import Diagnostic

ROOT = REPO
CONF = "tests/data/tui/routes.conf"
WIDE, NARROW = (120, 36), (80, 24)


def _app(snap=None, **kw):
    return make_app(FakeRuntime(snap if snap is not None else make_snapshot(100_000)), blink=False, **kw)


async def _ready(pilot):
    await wait_until(pilot, lambda: pilot.app.snapshot is not None)


async def _prewarmed(pilot):
    """Ready, and every view a key reaches built off screen (tui.shell.prewarm): a test marked
    ``prewarm`` draws the prewarmed view; the others draw the one their key builds (tests/conftest.py)."""
    await _ready(pilot)
    await wait_prewarmed(pilot, pilot.app)


class TestRoutesBoard:
    @pytest.mark.slow
    def test_board_wide(self, snap_compare):
        assert snap_compare(_app(), terminal_size=WIDE, run_before=_ready)

    def test_board_narrow(self, snap_compare):
        assert snap_compare(_app(), terminal_size=NARROW, run_before=_ready)

    @pytest.mark.slow
    def test_board_throttled_route_selected(self, snap_compare):
        async def run_before(pilot):
            await _ready(pilot)
            await pilot.press("down", "down")  # select BlackHole: its throttle and re-evaluation time below

        assert snap_compare(_app(), terminal_size=WIDE, run_before=run_before)

    @pytest.mark.prewarm
    def test_route_detail(self, snap_compare, monkeypatch):
        monkeypatch.chdir(ROOT)
        routes, _ = make_routes()
        routes = tuple(dataclasses.replace(r, location=f"{CONF}:3") if r.name == "Site1_Slurm" else r for r in routes)

        async def run_before(pilot):
            await _prewarmed(pilot)
            await pilot.press("enter")  # open Site1_Slurm (prewarmed): its text, history and jobs
            await pilot.pause(0.1)

        assert snap_compare(_app(make_snapshot(5000, routes=routes)), terminal_size=WIDE, run_before=run_before)

    def test_engine_crashed_banner(self, snap_compare):
        rt = FakeRuntime(make_snapshot(1000))

        async def run_before(pilot):
            await _ready(pilot)
            rt.crash("RuntimeError: simulated site table corrupt")  # last snapshot stays, banner on top
            await wait_until(pilot, lambda: pilot.app.engine_error is not None)
            pilot.app.clear_notifications()

        assert snap_compare(make_app(rt, blink=False), terminal_size=WIDE, run_before=run_before)


class TestJobs:
    @pytest.mark.slow
    @pytest.mark.prewarm
    def test_jobs_100k(self, snap_compare):
        async def run_before(pilot):
            await _prewarmed(pilot)
            await pilot.press("j")  # jobs screen over 100,000 rows (prewarmed)

        assert snap_compare(_app(), terminal_size=WIDE, run_before=run_before)

    @pytest.mark.slow
    def test_jobs_filtered_sorted(self, snap_compare):
        async def run_before(pilot):
            await _ready(pilot)
            await pilot.press("j")
            await pilot.press("slash")  # the filter box: it takes focus once laid out
            await pilot.pause()
            await pilot.press(*"held")  # text filter
            await pilot.press("enter")  # back to the table
            await pilot.press("s", "s", "s")  # sort by owner
            await pilot.press("down", "down")  # move the cursor

        assert snap_compare(_app(), terminal_size=WIDE, run_before=run_before)

    def test_jobs_narrow(self, snap_compare):
        async def run_before(pilot):
            await _ready(pilot)
            await pilot.press("j")

        assert snap_compare(_app(make_snapshot(2000)), terminal_size=NARROW, run_before=run_before)

    def test_job_ad(self, snap_compare):
        async def run_before(pilot):
            await _ready(pilot)
            await pilot.press("j", "down", "down")  # a source job
            await pilot.press("enter")  # its full ad

        assert snap_compare(_app(make_snapshot(2000)), terminal_size=WIDE, run_before=run_before)

    def test_why_not(self, snap_compare):
        async def run_before(pilot):
            await _ready(pilot)
            await pilot.press("j", "w")  # why is the first job not routed
            await wait_until(pilot, lambda: getattr(pilot.app.screen, "checks", None) is not None)

        assert snap_compare(_app(make_snapshot(2000)), terminal_size=WIDE, run_before=run_before)


class TestCron:
    @pytest.mark.prewarm
    def test_cron_wide(self, snap_compare):
        async def run_before(pilot):
            await _prewarmed(pilot)
            await pilot.press("c", "down", "down")  # crondor (prewarmed); select the job with the weekday lint

        assert snap_compare(_app(make_snapshot(100)), terminal_size=WIDE, run_before=run_before)

    def test_cron_narrow(self, snap_compare):
        async def run_before(pilot):
            await _ready(pilot)
            await pilot.press("c")

        assert snap_compare(_app(make_snapshot(100)), terminal_size=NARROW, run_before=run_before)


class TestEditor:
    def _snap(self):
        routes, _ = make_routes()
        routes = tuple(dataclasses.replace(r, location=f"{CONF}:3" if r.name == "Site1_Slurm" else f"{CONF}:9")
                       for r in routes[:2])
        return make_snapshot(300, routes=routes, inactive_routes=(), config_files=(CONF,))

    @pytest.mark.prewarm
    def test_editor_with_lint_and_what_if(self, snap_compare, monkeypatch):
        monkeypatch.chdir(ROOT)

        async def run_before(pilot):
            await _prewarmed(pilot)
            await pilot.press("e")  # edit Site1_Slurm (the kept editor, prewarmed)
            await wait_until(pilot, lambda: getattr(pilot.app.screen, "lint", None) is not None)
            area = pilot.app.screen.query_one("#editor")
            area.text = area.text.replace("MaxIdleJobs = 50", "MaxIdleJobs = 900").replace('"alice"', '"bob"')
            await wait_until(pilot, lambda: any("900" in d.message for d in pilot.app.screen.lint.diagnostics))

        assert snap_compare(_app(self._snap()), terminal_size=WIDE, run_before=run_before)

    def test_editor_confirm_diff(self, snap_compare, monkeypatch):
        monkeypatch.chdir(ROOT)

        async def run_before(pilot):
            await _ready(pilot)
            await pilot.press("e")
            await wait_until(pilot, lambda: getattr(pilot.app.screen, "lint", None) is not None)
            area = pilot.app.screen.query_one("#editor")
            area.text = area.text.replace("MaxIdleJobs = 50", "MaxIdleJobs = 20")
            await pilot.press("ctrl+s")  # apply: shows the diff, nothing written yet
            await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "ConfirmApply")

        assert snap_compare(_app(self._snap()), terminal_size=WIDE, run_before=run_before)


class TestShell:
    @pytest.mark.prewarm
    def test_help(self, snap_compare):
        async def run_before(pilot):
            await _prewarmed(pilot)
            await pilot.press("question_mark")  # every binding and command (the kept help, drawn off screen)

        assert snap_compare(_app(make_snapshot(100)), terminal_size=WIDE, run_before=run_before)

    def test_readonly_header(self, snap_compare):
        assert snap_compare(_app(make_snapshot(100), readonly=True), terminal_size=NARROW, run_before=_ready)


class TestWide:
    def test_board_very_wide_with_lint(self, snap_compare):
        lint = Diagnostic("warning", "route Overflow is shadowed: Site2_PBS, earlier in the route order, has the "
                          "same REQUIREMENTS (true)", "/etc/condor/routes.conf", 33)
        assert snap_compare(_app(make_snapshot(1000, diagnostics=(lint,))), terminal_size=(160, 40),
                            run_before=_ready)


class TestCommandLine:
    """The ``:`` prompt with typed text (issue 11 item 1): docked at the bottom, the text and the
    command's help visible, the completion in grey, the board live behind it."""

    async def _typed(self, pilot):
        await _ready(pilot)
        await pilot.press("colon")  # the prompt opens at the bottom
        await pilot.press(*"speed 120")  # typed, not yet run: the hint shows :speed's help

    async def _completing(self, pilot):
        await _ready(pilot)
        await pilot.press("colon")
        await pilot.press(*"edit Si")  # two routes start with Si: both listed, the first in grey

    def test_typed_narrow(self, snap_compare):
        assert snap_compare(_app(make_snapshot(100)), terminal_size=NARROW, run_before=self._typed)

    def test_typed_132x40(self, snap_compare):
        assert snap_compare(_app(make_snapshot(100)), terminal_size=(132, 40), run_before=self._typed)

    def test_completion_narrow(self, snap_compare):
        assert snap_compare(_app(make_snapshot(100)), terminal_size=NARROW, run_before=self._completing)

    def test_completion_132x40(self, snap_compare):
        assert snap_compare(_app(make_snapshot(100)), terminal_size=(132, 40), run_before=self._completing)
