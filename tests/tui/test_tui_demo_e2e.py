"""End to end on the real engine: in ``routedeck demo``, edit CMS_T2's ``MaxIdleJobs`` in the
editor and apply — the config file on disk changes, the board shows the new limit, and the
router routes accordingly (idle copies on the route go past the old limit, never past the new
one: htcondor.md §1.5, a route accepts jobs only while idle < MaxIdleJobs).

The demo's configuration is copied to ``tmp_path`` so the repository's sample is never edited.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from tui.app import make_app
from engine.launch.demo import demo_runtime
from engine.launch.options import DemoOptions
from tui.shell.messages import RoutesApplied

from tests.helpers.tui_fixtures import wait_until
from tests.helpers.toasts import told_notes

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SPEED = 600.0  # virtual seconds per real second: the router polls every 10 virtual seconds
LONG = 90.0  # seconds; on an idle machine each wait takes a few (the engine is CPU-bound)
DEMO = REPO / "sample_configs" / "demo"


def _route(app, name):
    return next(r for r in app.snapshot.routes if r.name == name)


async def test_edit_max_idle_jobs_in_the_demo(tmp_path):
    conf_dir = tmp_path / "demo"
    shutil.copytree(DEMO, conf_dir)
    args = DemoOptions(config_dir=str(conf_dir), state_dir=str(tmp_path / "state"), seed=1, speed=SPEED)
    runtime = demo_runtime(args)
    app = make_app(runtime, mode="demo", blink=False)
    seen = []
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        # the demo fills CMS_T2 to its idle limit of 20
        await wait_until(pilot, lambda: app.snapshot is not None and _route(app, "CMS_T2").idle >= 20, timeout=LONG)
        assert _route(app, "CMS_T2").max_idle == 20
        await pilot.press("e")  # the board's first row is CMS_T2: edit it
        await wait_until(pilot, lambda: type(app.screen).__name__ == "EditorScreen" and app.screen.lint is not None)
        editor = app.screen
        conf = Path(editor.path)
        # the editor edits the state directory's copy, never the configuration the demo came from
        # (issue 11 item 7: it used to write into the checkout's sample_configs/demo)
        assert conf.parent == tmp_path / "state" / "config" and conf.name == "condor_config"
        original = (conf_dir / "condor_config").read_text()
        area = editor.query_one("#editor")
        assert "MaxIdleJobs = 20" in area.document.get_line(area.cursor_location[0] + 4)
        area.text = area.text.replace("  MaxIdleJobs = 20\n", "  MaxIdleJobs = 40\n", 1)
        await wait_until(pilot, lambda: editor.lint is not None and "40" in editor.text)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmApply")
        await pilot.press("y")
        await wait_until(pilot, lambda: any(isinstance(m, RoutesApplied) for m in seen))
        assert "MaxIdleJobs = 40" in conf.read_text() and "MaxIdleJobs = 20\n  # a copy" not in conf.read_text()
        assert (conf_dir / "condor_config").read_text() == original
        assert not (conf_dir / ".routedeck-backups").exists()
        await wait_until(pilot, lambda: _route(app, "CMS_T2").max_idle == 40, timeout=LONG)
        await pilot.press("escape")  # back to the board
        await wait_until(pilot, lambda: type(app.screen).__name__ == "RoutesScreen")
        cell = str(app.screen.query_one("#routes").get_cell(app.screen.row_key("CMS_T2"), "idle"))
        assert "/40" in cell
        # the router now keeps up to 40 idle copies on CMS_T2, more than the old limit allowed
        peak = 0

        def above_old_limit():
            nonlocal peak
            peak = max(peak, _route(app, "CMS_T2").idle)
            return peak > 20

        await wait_until(pilot, above_old_limit, timeout=LONG)
        assert peak <= 40
    assert runtime.done.is_set() or runtime._thread is None or not runtime._thread.is_alive()


async def test_broken_file_on_disk_is_an_error_and_the_last_good_table_stays(tmp_path):
    """The file is changed outside RouteDeck (watchfiles sees it): a route that no longer parses
    makes the engine refuse the new table (the previous one stays in force, as HTCondor keeps
    its table when a reconfig fails) and the UI shows the error."""
    conf_dir = tmp_path / "demo"
    shutil.copytree(DEMO, conf_dir)
    args = DemoOptions(config_dir=str(conf_dir), state_dir=str(tmp_path / "state"), seed=1, speed=60.0)
    runtime = demo_runtime(args)
    app = make_app(runtime, mode="demo", blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app._watching, timeout=LONG)
        version = app.snapshot.table_version
        await pilot.pause(0.5)  # let the watcher start
        # the demo runs on its state directory's copy of the config (issue 11 item 7): break that one
        conf = Path(app.snapshot.config_files[0])
        assert conf.parent == tmp_path / "state" / "config"
        text = conf.read_text()
        conf.write_text(text.replace('REQUIREMENTS (VO == "cms") && (RequestMemory <= 8000)',
                                     'REQUIREMENTS (VO == "cms") && (RequestMemory <= ', 1))
        await wait_until(pilot, lambda: any(n.severity == "error" for n in told_notes(app)), timeout=LONG)
        errors = [n.message for n in told_notes(app) if n.severity == "error"]
        assert any("CMS_T2" in m for m in errors), errors
        assert app.snapshot.table_version == version
        assert [r.name for r in app.snapshot.routes][0] == "CMS_T2" and _route(app, "CMS_T2").max_idle == 20
