"""The dashboard's data made readable (issue 11, items 9–14), with Pilot on the real engine's
data (``demo_fixture``: the demo run for a virtual hour)."""

from __future__ import annotations

import pytest
import csv
import json

from engine.contract.codes import JobStatus
from tui.app import make_app

from tests.helpers.demo_fixture import EngineRuntime, demo_engine
from tests.helpers.screen_render import screen_text
from tests.helpers.tui_fixtures import wait_until
from tui.text.legend import BOARD, CRON, JOBS
from tui.screens.ad import AdScreen
from engine.contract.snapshot import CronView
from tui.screens.cron import cron_cells, COLUMNS as CRON_COLUMNS
from tui.text.format import ago
from tui.screens.help import help_sections
from tui.screens.routes import COLUMNS as ROUTE_COLUMNS
from tui.widgets.job_model import COLUMNS as JOB_COLUMNS

pytestmark = pytest.mark.anyio


def _app(runtime=None):
    return make_app(runtime or EngineRuntime(), blink=False, watch_files=False)


async def _ready(pilot):
    await wait_until(pilot, lambda: pilot.app.snapshot is not None and bool(pilot.app.screen.query("#routes")))
    await pilot.pause()


def _text(pilot) -> str:
    return str(pilot.app.screen.query_one("#whynot").render())


class TestWhyNot:
    @pytest.mark.slow
    async def test_board_w_picks_an_idle_candidate_of_the_selected_route(self):
        """Item 13. htcondor.md §1.4: a candidate is an idle job the router does not track that
        passes the umbrella; ``w`` on the board must ask about such a job for the selected route
        (it used to ask about the first idle row, job 2.0, whatever the route)."""
        engine = demo_engine()
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            board = app.screen
            picked = {}
            for _ in range(len(app.snapshot.routes)):
                route = board.selected_name()
                await pilot.press("w")
                await wait_until(pilot, lambda: type(app.screen).__name__ == "WhyNotScreen"
                                 and app.screen.verdict is not None)
                job = app.screen.job
                picked[route] = job
                assert job not in engine.router.jobs  # not tracked: a real question
                ad = engine.queue.get(job)
                assert ad.get("JobStatus") == "1"
                route_obj = next(r for r in engine.table.routes if r.name == route)
                if route_obj.matches(ad.classad(), engine.now):
                    assert f"that {route}'s requirements match" in app.screen.note
                # the fixed umbrella clauses pass (idle, not managed, not a routed copy …): the
                # answer is about routes, not about a job the router could never take
                failed = [c.label for c in app.screen.checks if c.ok is False]
                assert not [f for f in failed if f.startswith("umbrella:") and "requirements" not in f], failed
                assert not [f for f in failed if "SOURCE_JOB_CONSTRAINT" in f], failed
                await pilot.press("escape")
                await wait_until(pilot, lambda: app.screen is board)
                await pilot.press("down")
            # different routes raise different questions (CMS_T2's and Overflow's waiting jobs)
            assert len(set(picked.values())) > 1, picked

    async def test_routed_job_says_where_and_as_which_copy(self):
        """Item 13. htcondor.md §1.4: a job the router tracks is not a candidate again — why-not
        says it is routed, on which route and as which copy, not a failed check."""
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            src = next(r for r in app.snapshot.jobs if r.kind == "source" and r.routed_to)
            app.open_why_not(src.job)
            await wait_until(pilot, lambda: getattr(app.screen, "verdict", None) is not None)
            text = _text(pilot)
            assert f"{src.job} is routed" in text
            assert f"as routed copy {src.routed_to}" in text and src.route in text
            assert "✘" not in text and "not already managed" not in text

    async def test_routed_copy_names_its_source(self):
        """Item 13. A routed copy carries ``RoutedFromJobId`` and ``RoutedBy`` (htcondor.md §1.6);
        asked about, it is named as the copy of its source job."""
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            src = next(r for r in app.snapshot.jobs if r.kind == "source" and r.routed_to)
            app.open_why_not(src.routed_to)
            await wait_until(pilot, lambda: getattr(app.screen, "verdict", None) is not None)
            assert f"routed copy of {src.job}" in _text(pilot)


async def _open_jobs(app, pilot) -> None:
    """The demo ready, then the jobs screen open with its rows."""
    await _ready(pilot)
    await pilot.press("j")
    await wait_until(pilot, lambda: bool(app.screen.query("#jobs")) and len(app.screen.table.model) > 0)
    await pilot.pause()


def _screen_text(app) -> str:
    """What the terminal shows, line by line (the compositor's output)."""
    return "\n".join(screen_text(app.screen))


class TestLayout:
    async def test_board_at_80x24_keeps_route_state_throttle_and_failure_rate_in_view(self):
        """Item 9: at 80×24 the operator's columns are on screen; scrolled right, the route name
        stays (pinned)."""
        app = _app()
        async with app.run_test(size=(80, 24)) as pilot:
            await _ready(pilot)
            text = _screen_text(app)
            header = next(line for line in text.splitlines() if "Route" in line and "State" in line)
            for title in ("#", "Route", "State", "Throttle", "Fail/s", "St/Ok/Fail"):
                assert title in header, header
            table = app.screen.query_one("#routes")
            table.scroll_to(x=table.max_scroll_x, animate=False)
            await pilot.pause()
            text = _screen_text(app)
            assert "Re-eval" in text
            for r in app.snapshot.routes:
                assert r.name in text  # the pinned route column

    async def test_board_at_80x24_shows_no_column_cut_and_scrolls_by_whole_columns(self):
        """At 80×24 the last column that fits takes the leftover width, so no column is cut at the
        right edge (a cut Idle/MaxIdle showed "9" for 9/20); → and ← scroll a whole column at a
        time, so none is cut beside the pinned route column ("CMS_T2  g" was "accepting")."""
        titles = [t for t, _k, _w in ROUTE_COLUMNS]
        app = _app()
        async with app.run_test(size=(80, 24)) as pilot:
            await _ready(pilot)

            def header() -> list[str]:
                line = next(x for x in _screen_text(app).splitlines() if "Route" in x and "#" in x)
                return line.strip("│ ").split()

            words = header()
            assert words == titles[:len(words)] and "Idle/MaxIdle" not in words, words
            table = app.screen.query_one("#routes")
            table.focus()
            seen = []
            for _ in range(len(titles)):
                await pilot.press("right")
                words = header()
                assert words[:2] == ["#", "Route"], words  # pinned
                assert all(w in titles for w in words[:-1]), words  # whole beside the pinned ones
                assert any(t.startswith(words[-1]) for t in titles), words  # (scrolled: the right edge may cut)
                seen.append(words[2])
            assert seen[0] == "Throttle" and "Re-eval" in header()
            x = table.scroll_x
            await pilot.press("left")
            starts = [sum(table.scroll_widths()[:i]) for i in range(len(table.scroll_widths()))]
            assert table.scroll_x < x and table.scroll_x in starts
            assert titles.index(header()[2]) <= titles.index(seen[-1])

    async def test_crondor_at_80x24_shows_no_column_cut(self):
        """The crondor table at 80×24 fits its columns the board's way (``tui.text.format.fit_columns``):
        the Window column, which does not fit whole, is not shown cut ("−1m … +")."""
        titles = [t for t, _k, _w in CRON_COLUMNS if t]
        app = _app()
        async with app.run_test(size=(80, 24)) as pilot:
            await _ready(pilot)
            await pilot.press("c")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "CronScreen" and app.screen._keys)
            line = next(x for x in _screen_text(app).splitlines() if "Job" in x and "State" in x)
            words = line.strip("│ ").replace("Next run", "Next_run").split()
            assert words == [t.replace(" ", "_") for t in titles][:len(words)], words
            assert len(words) < len(titles)  # the rest is off screen, not cut
            assert "Window" not in words and " … +" not in _screen_text(app).split("╰")[0]  # no cut window cell
            await pilot.resize_terminal(132, 40)
            await pilot.pause()
            line = next(x for x in _screen_text(app).splitlines() if "Job" in x and "State" in x)
            assert "Window" in line and "Schedd pick" in line
            assert " … +" in _screen_text(app).split("╰")[0]

    async def test_jobs_at_80x24_shows_no_column_cut_and_scrolls_by_whole_columns(self):
        """The jobs table at 80×24: the time in status fits whole after the hold reason (it read
        "1h29m5" for 1h29m58s, cut), nothing after it shows cut, and → steps a whole column."""
        titles = [c.title for c in JOB_COLUMNS]
        app = _app()
        async with app.run_test(size=(80, 24)) as pilot:
            await _open_jobs(app, pilot)

            def header() -> str:
                return next(x for x in _screen_text(app).splitlines() if x.lstrip("│").startswith("Job "))

            line = header()
            assert line.rstrip(" │").endswith("In status"), line
            for t in titles[:titles.index("In status") + 1]:
                assert t in line
            table = app.screen.table
            for _ in range(3):
                await pilot.press("right")
                assert table.scroll_x in [sum(table.widths[1:i]) for i in range(1, len(table.widths))] \
                    or table.scroll_x == table.max_scroll_x

    async def test_jobs_columns_take_the_width_they_need(self):
        """Item 10: at 200 columns the hold reason, owner and route are as wide as their values
        (not cut at fixed widths); at 80 the hold reason still has room, after job, status,
        owner and route."""
        app = _app()
        async with app.run_test(size=(200, 50)) as pilot:
            await _open_jobs(app, pilot)
            table = app.screen.table
            rows = [table.model.row(i) for i in range(min(500, len(table.model)))]
            longest_owner = max(len(r.owner) for r in rows)
            assert table.widths[2] > longest_owner
            held = [r for r in rows if r.status == 5 and r.hold_reason]
            assert held and table.widths[4] > max(len(r.hold_reason) for r in held)
            assert held[0].hold_reason in _screen_text(app)
            await pilot.resize_terminal(80, 24)
            await pilot.pause(0.2)
            header = _screen_text(app).splitlines()[2]
            assert "Cmd / hold reason" in header and header.index("Status") < header.index("Cmd / hold reason")
            assert table.widths[4] >= 24

    async def test_status_is_coloured_on_every_row(self):
        """Item 10: the status cell has its colour on idle and running rows, not only held ones."""
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            await pilot.press("j")
            await wait_until(pilot, lambda: bool(app.screen.query("#jobs")) and len(app.screen.table.model) > 3)
            table = app.screen.table
            seen = {}
            for y in range(2, min(30, len(table.model) + 1)):
                row = table.model.row(round(table.scroll_y) + y - 1)
                status_seg = [s for s in table.render_line(y) if s.text.strip()][1]
                seen.setdefault(row.status, status_seg.style.color)
            assert seen.get(1) is not None and seen.get(2) is not None and seen[1] != seen[2], seen


class TestLegendAndSort:
    async def test_sort_by_header_names(self):
        """Item 11: ``:sort Submitted`` and ``:sort In status`` name columns by their headers."""
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            app.run_command_line("sort Submitted desc")
            await wait_until(pilot, lambda: bool(app.screen.query("#jobs")) and app.screen.table.model.sort_key == "qdate")
            m = app.screen.table.model
            qdates = [m.row(i).qdate or 0 for i in range(len(m))]
            assert qdates == sorted(qdates, reverse=True) and m.reverse
            app.run_command_line("sort in status")
            await wait_until(pilot, lambda: app.screen.table.model.sort_key == "since")
            app.run_command_line("sort hold reason")
            await wait_until(pilot, lambda: app.screen.table.model.sort_key == "cmd")

    async def test_focused_column_legend_and_help(self):
        """Item 11: ``>`` moves the column focus and the line under the table explains it; ``?``
        lists every column of the board, jobs and crondor tables."""
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            await pilot.press("greater_than_sign")  # State -> Throttle
            await pilot.pause()
            assert "Throttle: jobs the route may start" in str(app.screen.query_one("#board-legend").render())
            await pilot.press("j")
            await wait_until(pilot, lambda: bool(app.screen.query("#jobs-legend")))
            await pilot.press("greater_than_sign")
            await pilot.pause()
            assert str(app.screen.query_one("#jobs-legend").render()).startswith("Status: JobStatus by name")
            await pilot.press("question_mark")
            await pilot.pause()
            assert type(app.screen).__name__ == "HelpScreen"
            shown = {section: dict(rows) for section, rows in help_sections(app)}
            for title, what in JOBS.items():  # help on the jobs screen: what its columns mean
                assert shown["Jobs columns"][title or "⚠"] == what
            assert "Routes board columns" not in shown and "Crondor columns" not in shown
            for key, name, table in (("b", "Routes board", BOARD), ("c", "Crondor", CRON)):
                await pilot.press("escape", key)
                await pilot.pause()
                await pilot.press("question_mark")
                await pilot.pause()
                rows = dict(dict(help_sections(app))[f"{name} columns"])
                for title, what in table.items():
                    assert rows[title or "⚠"] == what


class TestAdView:
    async def _open_ad(self, pilot, app, job):
        row = next(r for r in app.snapshot.jobs if r.job == job)
        app.push_screen(AdScreen(row))
        await wait_until(pilot, lambda: getattr(app.screen, "lines", None) is not None)
        return app.screen

    async def test_dates_codes_search_and_copy(self):
        """Item 12: EnteredCurrentStatus as a date and an age, JobStatus by name next to its code;
        ``/`` finds a line, ``y`` copies its value, ``Y`` the job id."""
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            row = next(r for r in app.snapshot.jobs if r.status == 2)
            ad = await self._open_ad(pilot, app, row.job)
            text = str(ad.query_one("#ad-text").render())
            assert "JobStatus" in text and "= 2  ← Running" in text
            assert "EnteredCurrentStatus" in text and " ago" in text and "2026-11-21" in text
            await pilot.press("slash", *"qdate")
            await pilot.pause()
            assert ad.lines[ad.current].name == "QDate"
            await pilot.press("enter", "escape")  # next match (the same one), leave the search box
            await pilot.press("y")
            await pilot.pause()
            assert app.clipboard == str(row.qdate)
            await pilot.press("Y")
            await pilot.pause()
            assert app.clipboard == row.job

    async def test_crondor_row_opens_the_ad_with_its_in_memory_deferral_time(self):
        """Item 12, htcondor.md §2.4: Enter on a crondor row opens the job's ad, and it shows the
        DeferralTime the schedd holds in memory (the job queue log never has it)."""
        engine = demo_engine()
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            await pilot.press("c")
            await wait_until(pilot, lambda: bool(app.screen.query("#cron")) and app.screen._keys)
            await pilot.pause()
            job = app.screen._keys[0]
            await pilot.press("enter")
            await wait_until(pilot, lambda: getattr(app.screen, "lines", None) is not None)
            assert app.screen.row.job == job
            line = next(ln for ln in app.screen.lines if ln.name == "DeferralTime")
            assert line.value == str(engine.schedd.cron.deferral[job]) and "schedd's memory" in line.note
            assert "DeferralTime" not in engine.queue.get(job).attrs  # not in the queue (log)


class TestExport:
    async def test_export_csv_and_json_of_what_is_shown(self, tmp_path):
        """Item 14: ``:export`` writes the table shown — the jobs with the filter applied, in the
        shown order, with the header titles — as CSV, and as JSON."""
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            app.run_command_line("jobs cmsuser")
            await wait_until(pilot, lambda: bool(app.screen.query("#jobs")) and app.screen.table.model.text == "cmsuser")
            app.run_command_line("sort Submitted desc")
            await pilot.pause()
            m = app.screen.table.model
            shown = [m.row(i).job for i in range(len(m))]
            assert 0 < len(shown) < len(app.snapshot.jobs)
            app.run_command_line(f"export {tmp_path / 'jobs.csv'}")
            rows = list(csv.reader((tmp_path / "jobs.csv").open()))
            assert rows[0][:5] == ["Job", "Status", "Owner", "Route", "Cmd / hold reason"]
            assert [r[0] for r in rows[1:]] == shown
            app.run_command_line(f"export json {tmp_path / 'jobs.out'}")
            data = json.loads((tmp_path / "jobs.out").read_text())
            assert [d["job"] for d in data] == shown and {d["owner"] for d in data} == {"cmsuser"}
            # as data, not display strings (issue 29): the status code with its name, epoch times
            first = app.snapshot.jobs[[j.job for j in app.snapshot.jobs].index(shown[0])]
            assert data[0]["status"] == first.status and data[0]["status_name"] == JobStatus(first.status).display
            assert data[0]["qdate"] == first.qdate and isinstance(data[0]["qdate"], int)
            await pilot.press("b")
            await _ready(pilot)
            app.run_command_line(f"export-json {tmp_path / 'routes.json'}")
            routes = json.loads((tmp_path / "routes.json").read_text())
            assert [r["name"] for r in routes] == [r.name for r in app.snapshot.routes]
            view = app.snapshot.routes[0]
            assert routes[0]["failure_rate"] == view.failure_rate and isinstance(routes[0]["routed"], int)

    async def test_screenshot_and_copy(self, tmp_path):
        """Item 14: ``:screenshot`` saves the screen as SVG; ``y`` / ``:copy`` copy the selected
        route name or job id."""
        app = _app()
        async with app.run_test(size=(132, 40)) as pilot:
            await _ready(pilot)
            app.run_command_line(f"screenshot {tmp_path / 'board.svg'}")
            svg = (tmp_path / "board.svg").read_text()
            assert svg.startswith("<svg") and "CMS_T2" in svg
            await pilot.press("down", "y")
            assert app.clipboard == app.snapshot.routes[1].name
            await pilot.press("j")
            await wait_until(pilot, lambda: bool(app.screen.query("#jobs")) and app.screen.table.selected is not None)
            await pilot.press("down", "down")
            app.run_command_line("copy")
            assert app.clipboard == app.screen.table.selected.job


def test_cron_countdown_of_a_running_job_says_how_long_ago_it_started():
    """A running cron job started at its DeferralTime (htcondor.md §2.4): its "In" cell says how
    long ago, not a red negative countdown, which stays for a job whose time has come but which
    has not started (overdue)."""
    base = dict(job="4.0", fields=("45", None, None, None, None), status=2, deferral_time=1000,
                window=0, prep_time=0, next_runs=(4600,), schedd_runs=(4600,), tz="UTC")
    running = cron_cells(CronView(state="running", **base), now=1035)[2]
    assert running.plain == "35s ago" and running.style == "dim"
    overdue = cron_cells(CronView(state="idle", **dict(base, status=1)), now=1035)[2]
    assert overdue.plain.startswith("-") and overdue.style == "red"


def test_cron_countdown_of_a_job_held_for_a_missed_run_says_how_long_ago_it_was_due():
    """htcondor.md §2.4: a job whose DeferralTime (plus window) passed before it could start is
    held; it will not run at that time, so its "In" cell says how long ago the missed run was due
    (red), not a negative countdown as if it were still to come."""
    base = dict(job="4.0", fields=("45", None, None, None, None), status=5, deferral_time=1000,
                window=0, prep_time=0, next_runs=(4600,), schedd_runs=(4600,), tz="UTC")
    held = cron_cells(CronView(state="held", **base), now=1898)[2]
    assert held.plain == "14m ago" and held.style == "red"


def test_ago_fits_the_countdown_column():
    """The "In" column is 9 cells wide: every "ago" text fits, keeps the largest unit exact, and
    reads in the units of ``duration``."""
    assert [ago(s) for s in (0, 35, 65, 599, 600, 898, 3600, 19925, 36000, 86400 + 4 * 3600, 12 * 86400)] == [
        "0s ago", "35s ago", "1m5s ago", "9m59s ago", "10m ago", "14m ago", "1h ago", "5h32m ago", "10h ago",
        "1d4h ago", "12d ago"]
    for s in range(0, 40 * 86400, 997):
        text = ago(s)
        assert len(text) <= 9, text
        big = next(u for u, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)) if s >= size or size == 1)
        assert text.split(big)[0].isdigit() and int(text.split(big)[0]) == s // {"d": 86400, "h": 3600, "m": 60, "s": 1}[big]
