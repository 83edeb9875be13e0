"""The UI thread never waits on work (issue 14 item 3): file reads, hashes, lints and job scans
run in thread workers, once per change, and screens paint from the last snapshot at once.

These are RouteDeck's own UI rules (product.md §7, issue 14), not HTCondor behaviour; the
routed-copy/source-job link the route detail follows is htcondor.md §1.6 (a source job's row
names its routed copy, the copy names the route).
"""

from __future__ import annotations

import threading

import pytest
import hashlib

from engine.contract import commands as C
from engine.contract import snapshot as S
from tui.app import make_app
from tui.screens import route_detail
from tui.widgets.job_model import JobModel

from tests.helpers.screen_render import screen_text
from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, snapshot_for_conf, wait_prewarmed, wait_until, write_routes_conf
from tui.screens import editor as editor_mod
from tui.files.config_watch import ConfigFilesChanged

SIZE = (120, 36)
pytestmark = pytest.mark.anyio


def _row(job, route=None, kind="plain", routed_to=None, routed_from=None):
    return S.JobRow(job, 1, "alice", route, kind, routed_to, routed_from, 100, 100, "/bin/true")


class CountingRows(tuple):
    """A jobs tuple that counts the rows read one by one (``rows[i]``)."""

    reads = 0

    def __getitem__(self, i):
        CountingRows.reads += 1
        return super().__getitem__(i)


def test_position_of_finds_the_job_without_a_python_scan_of_the_rows():
    rows = CountingRows(_row(f"{k}.0") for k in range(50_000))
    m = JobModel()
    m.set_rows(rows, 1)
    assert m.position_of("49999.0") == 49_999 and m.position_of("nope.0") is None
    m.set_sort("job", reverse=True)
    assert m.position_of("49999.0") == 0 and m.position_of("0.0") == 49_999
    m.set_filter("4999")  # 4999.0, 49990.0 … 49999.0
    assert m.row(m.position_of("4999.0")).job == "4999.0"
    assert m.position_of("1.0") is None  # not shown
    # a new tuple with a job removed ahead of the selected one: found near its last row
    shifted = CountingRows(rows[1:])
    m.set_filter("")
    m.set_sort(None)
    m.set_rows(shifted, 2)
    CountingRows.reads = 0
    assert m.position_of("49999.0") == 49_998
    assert CountingRows.reads <= 2 * 64 + 1  # the neighbourhood of its last row, not 50,000 rows


def test_jobs_by_route_follows_source_jobs_to_their_copies_route():
    rows = (
        _row("1.0", routed_to="5.0", kind="source"),  # its row lacks the route: the copy names it
        _row("2.0", route="B", kind="source", routed_to="6.0"),
        _row("3.0"),
        _row("5.0", route="A", kind="routed", routed_from="1.0"),
        _row("6.0", route="B", kind="routed", routed_from="2.0"),
    )
    found = route_detail.jobs_by_route(rows, 7)
    assert found.hits == {"A": frozenset({"1.0", "5.0"}), "B": frozenset({"2.0", "6.0"})}
    assert found.order == {"A": [0, 3], "B": [1, 4]} and found.version == 7


def _text_of(screen) -> str:
    """The route definition shown (a rich ``Syntax`` once the file was read)."""
    return getattr(screen.query_one("#route-text").content, "code", "")


async def test_route_detail_reads_its_file_once_and_scans_jobs_once_per_change(tmp_path, monkeypatch):
    conf = tmp_path / "routes.conf"
    write_routes_conf(conf)
    rt = FakeRuntime(snapshot_for_conf(conf, n_jobs=3000))
    reads, scans, threads = [], [], set()
    real_text, real_split = route_detail.route_text, route_detail.jobs_by_route

    def counting_text(location):
        reads.append(location)
        threads.add(threading.current_thread() is threading.main_thread())
        return real_text(location)

    def counting_split(rows, version):
        scans.append(version)
        threads.add(threading.current_thread() is threading.main_thread())
        return real_split(rows, version)

    monkeypatch.setattr(route_detail, "route_text", counting_text)
    monkeypatch.setattr(route_detail, "jobs_by_route", counting_split)
    app = make_app(rt, blink=False, watch_files=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("enter")  # the board's first route
        await wait_until(pilot, lambda: type(app.screen).__name__ == "RouteDetailScreen"
                         and app.screen._rows_id is not None and reads)
        screen = app.screen
        await wait_until(pilot, lambda: "MaxJobs" in _text_of(screen))
        shown = len(screen.query_one("#route-jobs").model)
        assert shown > 0
        for k in range(5):  # snapshots whose jobs did not change: no read, no scan
            rt.update(time=rt.latest().time + k + 1)
        await wait_until(pilot, lambda: app.snapshot.seq == rt.latest().seq)
        await pilot.pause()
        assert len(reads) == 1 and len(scans) == 1
        jobs = rt.latest().jobs
        rt.update(jobs=jobs[:-1], jobs_version=rt.latest().jobs_version + 1)  # the queue changed
        await wait_until(pilot, lambda: len(scans) == 2 and screen._rows_id == rt.latest().jobs_version)
        assert len(reads) == 1  # same table: the text is not read again
        rt.update(table_version=rt.latest().table_version + 1)  # a new table: read again
        await wait_until(pilot, lambda: len(reads) == 2)
        await pilot.press("escape")
        await pilot.press("enter")  # reopened: text and jobs from what the app kept, at once
        await wait_until(pilot, lambda: type(app.screen).__name__ == "RouteDetailScreen")
        again = app.screen
        await wait_until(pilot, lambda: again._rows_id is not None)
        assert len(reads) == 2 and len(scans) == 2
        assert "MaxJobs" in _text_of(again)
    assert threads == {False}  # every read and scan ran off the UI thread (3,000 jobs: above SPLIT_INLINE_BELOW)


async def test_editor_apply_says_checking_while_the_lint_runs_in_a_worker(tmp_path, monkeypatch):
    conf = tmp_path / "routes.conf"
    original = write_routes_conf(conf)
    rt = FakeRuntime(snapshot_for_conf(conf))
    app = make_app(rt, blink=False, watch_files=False)
    gate, on_main = threading.Event(), []
    real = editor_mod.lint_config

    def slow_lint(*args, **kwargs):
        on_main.append(threading.current_thread() is threading.main_thread())
        if "base_text" not in kwargs:  # the apply's lint (the typing lint passes base_text)
            gate.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(editor_mod, "lint_config", slow_lint)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("e")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "EditorScreen" and app.screen.lint is not None)
        editor = app.screen
        editor.query_one("#editor").text = original.replace("MaxIdleJobs = 50", "MaxIdleJobs = 20")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "checking…" in str(editor.query_one("#lint").render())  # the UI answered at once
        assert type(app.screen).__name__ == "EditorScreen"
        gate.set()
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmApply")
        assert "+  MaxIdleJobs = 20" in app.screen.diff
    assert on_main and not any(on_main)


async def test_config_watcher_hashes_off_the_ui_thread_and_own_writes_are_not_resent(tmp_path):
    """The digest travels with ``ConfigFilesChanged``; the app compares, it does not read."""
    conf = tmp_path / "routes.conf"
    text = write_routes_conf(conf)
    rt = FakeRuntime(snapshot_for_conf(conf))
    app = make_app(rt, blink=False, watch_files=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        mine = hashlib.sha256(text.encode()).hexdigest()
        app.own_writes[str(conf)] = mine
        conf.unlink()  # the app must not read the file: the message carries the digest
        app.post_message(ConfigFilesChanged((str(conf),), (mine,)))
        await pilot.pause()
        assert rt.sent == []
        app.post_message(ConfigFilesChanged((str(conf),), ("0" * 64,)))
        await wait_until(pilot, lambda: len(rt.sent) == 1)
        assert isinstance(rt.sent[0], C.ApplyRoutes)


@pytest.mark.prewarm
async def test_main_views_are_composed_in_the_background_and_resumed_on_first_visit(tmp_path):
    """After the first snapshot is on screen, the jobs and crondor views (and hooks, slots where
    the feed has an execute node), the editor and the selected route's screen are composed off
    screen; the board stays shown with its focus, and the first ``j``/``c``/``e``/``enter``
    resumes the very screen built then, the
    views already filled from the snapshot, the editor opened only then (issue 14 item 3: a
    first visit composed the screen, 52-76 ms)."""
    conf = tmp_path / "routes.conf"
    write_routes_conf(conf)
    rt = FakeRuntime(snapshot_for_conf(conf, n_jobs=50))
    app = make_app(rt, blink=False, watch_files=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        board = app.screen
        focused = app.focused
        await wait_prewarmed(pilot, app)
        await pilot.pause()
        built = {m: app._screen_stacks[m][0] for m in ("jobs", "cron")}
        for screen in built.values():
            assert screen.is_mounted and screen.query("DataTable, JobTable")
        assert app.screen is board and app.focused is focused and app.current_mode == "routes"
        await wait_until(pilot, lambda: len(built["jobs"].table.model.rows) == 50)  # filled while hidden
        assert app.screen is board and app.focused is focused
        offers_execute = app.offers("execute")
        assert ("hooks" in app._screen_stacks) == offers_execute
        await pilot.press("j")
        await wait_until(pilot, lambda: app.current_mode == "jobs")
        assert app.screen is built["jobs"] and app.focused is built["jobs"].table
        await pilot.press("c")
        await wait_until(pilot, lambda: app.current_mode == "cron")
        assert app.screen is built["cron"]
        await pilot.press("b")
        await wait_until(pilot, lambda: app.screen is board)
        editor = app._editor_screen  # built too, but not opened (no file read, no lint) while hidden
        assert editor.is_mounted and editor.path is None and editor.lint is None
        await pilot.press("e")
        await wait_until(pilot, lambda: app.screen is editor and editor.lint is not None)
        assert editor.path == str(conf) and editor.query_one("#editor").text == conf.read_text()
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is board)
        detail = app._route_screens[board.selected_name()]  # the selected route's, built too
        assert detail.is_mounted
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is detail)


@pytest.mark.slow
async def test_editor_is_kept_between_opens_and_reset_on_reopen(tmp_path, monkeypatch):
    """The editor screen is built once and reset on every reopen (issue 14 item 3: rebuilding it
    was 45-79 ms of board → editor): the file is read again from disk, unapplied edits and their
    undo history are gone, lint and what-if start over (a lint still running from the last visit
    is dropped), read-only is checked again, and the cursor goes to the route asked for."""
    conf = tmp_path / "routes.conf"
    original = write_routes_conf(conf)
    rt = FakeRuntime(snapshot_for_conf(conf))
    app = make_app(rt, blink=False, watch_files=False)
    gate, new_gate, real = threading.Event(), threading.Event(), editor_mod.lint_config
    slow = []

    def lint(text, *args, **kwargs):
        if "slow lint" in text:  # the edit left behind: its lint finishes after the reopen
            slow.append(text)
            gate.wait(10)
        if "MaxIdleJobs = 40" in text:  # the reopened file's: held until the reset is checked
            new_gate.wait(10)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(editor_mod, "lint_config", lint)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        await pilot.press("e")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "EditorScreen" and app.screen.lint is not None)
        editor = app.screen
        area = editor.query_one("#editor")
        area.text = original + "# slow lint\n"
        await wait_until(pilot, lambda: slow)  # its lint is running (held by the gate)
        await pilot.press("escape")  # unapplied edits: asked, and discarded
        await wait_until(pilot, lambda: type(app.screen).__name__ == "Confirm")
        await pilot.press("y")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "RoutesScreen")
        changed = original.replace("MaxIdleJobs = 50", "MaxIdleJobs = 40")
        conf.write_text(changed)  # changed outside RouteDeck meanwhile
        seq = rt.update(controls=rt.latest().controls - {"routes"}).seq  # the feed stops taking routes
        await wait_until(pilot, lambda: app.snapshot.seq == seq)
        await pilot.press("colon", *"edit Site2_PBS", "enter")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "EditorScreen")
        assert app.screen is editor  # the same screen, resumed
        assert editor.lint is None and "checking…" in str(editor.query_one("#lint").render())
        assert area.text == changed and editor.disk_text == changed
        assert area.read_only and "(read-only)" in area.border_title
        assert area.cursor_location == (8, 0)  # Site2_PBS's line (snapshot_for_conf: :9)
        assert not area.history.undo_stack  # the discarded edit cannot be undone back in
        new_gate.set()
        await wait_until(pilot, lambda: editor.lint is not None)
        current = editor.lint
        gate.set()  # the old lint reports now: dropped (an older generation)
        await wait_until(pilot, lambda: not any(w.group == "lint" and not w.is_finished for w in editor.workers))
        await pilot.pause()
        assert editor.lint is current and "slow lint" not in area.text


@pytest.mark.prewarm
async def test_first_visit_of_a_prewarmed_view_skips_the_css_refresh_and_looks_the_same(monkeypatch):
    """A view composed off screen (tui.shell.prewarm) was styled by the current stylesheet as its
    widgets were registered, so its first ``switch_mode`` does not run ``App.refresh_css`` (the
    whole stylesheet reparsed: 15-20 ms of the first ``c``/``j``/``b``); nor does the first return
    to the board, whose first switch ran the refresh before it was mounted. Oracle: the slow path — a
    full ``refresh_css`` afterwards changes no widget's style and no line on screen."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_prewarmed(pilot, app)
        refreshed = []
        original = type(app).refresh_css
        monkeypatch.setattr(type(app), "refresh_css", lambda self, *a, **k: (refreshed.append(1), original(self, *a, **k)))
        for key, mode in (("c", "cron"), ("j", "jobs"), ("b", "routes")):
            await pilot.press(key)
            await wait_until(pilot, lambda: app.current_mode == mode)
            await pilot.pause()
            assert refreshed == [], key
            screen = app.screen
            styles = {w: (w.rich_style, w.styles.css) for w in screen.walk_children(with_self=True)}
            lines = screen_text(screen)
            original(app)  # the slow path, as Textual's first switch_mode ran it
            await pilot.pause()
            assert {w: (w.rich_style, w.styles.css) for w in screen.walk_children(with_self=True)} == styles
            assert screen_text(screen) == lines


def _record_restyles(app, monkeypatch) -> list:
    """The nodes ``App.update_styles`` restyles from now on, in a list."""
    restyled: list = []
    original = type(app).update_styles
    monkeypatch.setattr(type(app), "update_styles",
                        lambda self, node, *a, **k: (restyled.append(node), original(self, node, *a, **k)))
    return restyled


async def _restyle_changes_nothing(pilot, screen) -> None:
    """The slow path, as Textual's resume ran it: restyling ``screen`` changes no widget's style
    and no line on screen."""
    styles = {w: (w.rich_style, w.styles.css) for w in screen.walk_children(with_self=True)}
    lines = screen_text(screen)
    screen.update_node_styles(animate=False)
    await pilot.pause()
    assert {w: (w.rich_style, w.styles.css) for w in screen.walk_children(with_self=True)} == styles
    assert screen_text(screen) == lines


@pytest.mark.prewarm
async def test_first_visit_of_a_prewarmed_view_or_help_is_not_restyled_and_looks_the_same(monkeypatch):
    """Issue 30: a view (or the board's help) composed off screen was styled as its widgets were
    registered, so its first visit skips the restyle of every node, as a later resume does (it
    was 20-40 ms of the first ``c``, ``j`` or ``?``). Oracle: the slow path — restyling afterwards
    changes no widget's style and no line on screen."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_prewarmed(pilot, app)
        restyled = _record_restyles(app, monkeypatch)
        for key, shown in (("c", "CronScreen"), ("j", "JobsScreen"), ("b", "RoutesScreen"), ("question_mark", "HelpScreen")):
            await pilot.press(key)
            await wait_until(pilot, lambda: type(app.screen).__name__ == shown)
            await pilot.pause()
            assert app.screen not in restyled, key
            await _restyle_changes_nothing(pilot, app.screen)


@pytest.mark.prewarm
async def test_a_view_resumed_with_nothing_changed_is_not_restyled_and_looks_the_same(monkeypatch):
    """Issue 30: Textual restyles every node of a resumed screen (3-10 ms of a warm switch); a main
    view coming back with the app's CSS, focus and theme as they were skips it. Oracle: the slow
    path — restyling afterwards changes no widget's style and no line on screen. A theme change
    while it was hidden restyles it as before."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_prewarmed(pilot, app)
        for key, mode in (("c", "cron"), ("j", "jobs"), ("b", "routes")):  # each resumed once
            await pilot.press(key)
            await wait_until(pilot, lambda: app.current_mode == mode)
        restyled = _record_restyles(app, monkeypatch)
        for key, mode in (("c", "cron"), ("j", "jobs"), ("b", "routes")):
            await pilot.press(key)
            await wait_until(pilot, lambda: app.current_mode == mode)
            await pilot.pause()
            assert app.screen not in restyled, key
            await _restyle_changes_nothing(pilot, app.screen)
        app._invalidate_css()  # a theme change, say
        await pilot.press("c")
        await wait_until(pilot, lambda: app.current_mode == "cron")
        await pilot.pause()
        assert app.screen in restyled


@pytest.mark.prewarm
async def test_a_switch_to_a_built_view_is_not_held_back_but_a_first_build_is():
    """Issue 30: Textual's ``switch_mode`` holds every repaint for 50 ms (``delay_update``, a
    timer: longer under load) to hide a new screen being composed; a view that is already built
    (prewarmed or visited) has nothing to hide, so ``c``/``j``/``b`` paint at once. A mode whose
    screen is not built yet is still held, as before."""
    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_prewarmed(pilot, app)
        for action, mode in ((app.action_show_cron, "cron"), (app.action_show_jobs, "jobs"),
                             (app.action_show_routes, "routes")):
            action()
            assert app.current_mode == mode and app._batch_count == 0, mode
            await pilot.pause()
        from textual.screen import Screen  # noqa: PLC0415 - only this test adds a mode

        app.add_mode("probe", Screen)  # a mode never visited: its screen is built on the switch
        app.switch_mode("probe")
        assert app._batch_count == 1  # Textual's hold while the new screen is composed
        await wait_until(pilot, lambda: app._batch_count == 0 and app.screen.is_mounted)


@pytest.mark.prewarm
async def test_the_prewarmed_help_draws_its_keys_table_before_the_first_question_mark(monkeypatch):
    """Issue 30: the board's help is built off screen and also drawn there, laid out until its sizes
    settle (its scrollbar narrows the keys table on a second layout), so the first ``?`` finds the
    long keys table in its line cache (it was drawn on the first ``?``: 50 ms at 132x40) and its
    height measured for its width: that layout's change of its virtual size clears the kept
    height, and the first ``?``'s layout measured the table again through Rich (60-70 ms)."""
    from textual.widgets import Static  # noqa: PLC0415 - only this test spies on Static

    app = make_app(FakeRuntime(make_snapshot(50)), blink=False, watch_files=False)
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_prewarmed(pilot, app)
        await pilot.pause()
        helper = next(iter(app._help_screens.values()))
        text = helper.query_one("#help-text", Static)
        rendered: list = []  # drawn (_render_content) or measured (get_content_height): both render it
        original = Static._render
        monkeypatch.setattr(Static, "_render", lambda self: (rendered.append(self), original(self))[1])
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: app.screen is helper)
        await pilot.pause()
        assert text not in rendered
        lines = screen_text(helper)
        assert any("RouteDeck help" in line for line in lines) and any("Everywhere" in line for line in lines)

