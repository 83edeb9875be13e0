"""Fixtures the whole suite shares."""
from __future__ import annotations

import compileall
import contextlib
import gc
import os
from pathlib import Path

import pytest

from tests.helpers.gc_kept import keep_for_the_process
from tests.helpers.real_prometheus import two_watchers

SHARED_SCOPES = frozenset({"module", "class", "package"})


@pytest.fixture
def anyio_backend():
    """Textual's `App.run_test()` runs under anyio; the suite runs it on asyncio only."""
    return "asyncio"


@pytest.fixture(autouse=True)
def _every_toast_kept(monkeypatch):
    """Tests read what an app told from ``tests.helpers.toasts.told``, which a toast's 5 s expiry
    on a loaded machine cannot empty (see that module)."""
    from tests.helpers.toasts import keep_every_notification  # noqa: PLC0415 - textual only when tests run

    keep_every_notification(monkeypatch)


@pytest.fixture(autouse=True)
def _css_parsed_once(monkeypatch):
    """Every app of the process takes its parsed CSS from one cache (tests/helpers/css_cache.py):
    a Pilot start parsed the whole stylesheet again (12% of a TUI test's CPU)."""
    from tests.helpers.css_cache import share_parsed_css  # noqa: PLC0415 - textual only when tests run

    share_parsed_css(monkeypatch)


PREWARM_OFF_UNDER = ("tests/tui/", "tests/snapshots/")


@pytest.fixture(autouse=True)
def _prewarm_where_tested(request, monkeypatch):
    """The app composes its other main views in the background after its first snapshot
    (tui.shell.prewarm): ~17% of a Pilot test's CPU (tests/tui/test_tui_handling.py, serial: 46.7
    -> 38.8 s), paid by every test whether it visits them or not. Under tests/tui and
    tests/snapshots it runs only in tests marked ``prewarm`` (those of the prewarm and of what it
    starts: the frozen heap, the idle GC, the kept help; and one snapshot per prewarmed view, which
    waits for the prewarm before its keys). A snapshot test raced the prewarm before: which of a
    view's two paths (built by the prewarm, or built by the key) it drew depended on the load; now
    each is drawn every time by the tests that take it. Other app starts (tests/engine/cli's
    ``routedeck`` processes) run it as the real app does."""
    nodeid = request.node.nodeid
    if request.node.get_closest_marker("prewarm") is not None or not any(p in nodeid for p in PREWARM_OFF_UNDER):
        return
    from tui.app import RouteDeckApp  # noqa: PLC0415 - textual only when tests run

    monkeypatch.setattr(RouteDeckApp, "prewarm_at_start", False)


# The test process's young-generation threshold: CPython's 700 ran ~1,450 collections in
# tests/tui/test_tui_readable.py, each scanning what a Pilot test keeps alive for a while (a frame
# of the app, its DOM, Rich segments); at 20,000 there are ~325 and the collector's CPU in that file
# is 0.23-0.29 s instead of 0.90-1.01 s (tests/engine/feeds/test_replay_stats.py: 0.12-0.14 ->
# 0.07-0.10 s; gc.callbacks around each collection, load 10-14); those two files and
# tests/tui/test_tui_controls.py in one process, paired with the parent commit: best of 3
# 11.39 -> 10.95 s CPU, collector 1.11-1.42 -> 0.54-0.67 s (load 4-6). The same objects are freed: only
# how often the cyclic collector looks. Apps and engines started as new processes keep CPython's.
TEST_GC_THRESHOLD = (20_000, 20, 10)


def pytest_configure(config):
    """Before any worker starts: compile engine/ and tui/ to bytecode once. The suite starts
    ``routedeck`` in a new interpreter at some 26 places; where PYTHONDONTWRITEBYTECODE is set (as
    on the machine this was measured on) each of them compiled ~200 modules from source, about
    0.4 s of CPU each (tests/engine/cli: 38.6-41.8 s without, 35.7 s with). Up-to-date files are
    skipped; ``__pycache__`` is git-ignored."""
    gc.set_threshold(*TEST_GC_THRESHOLD)
    if hasattr(config, "workerinput"):  # an xdist worker: the controller compiled already
        return
    root = Path(__file__).resolve().parents[1]
    for package in ("engine", "tui"):
        compileall.compile_dir(root / package, quiet=2, workers=1)
    _tmp_path_in_memory(config)


SHM = Path("/dev/shm")
SHM_FREE = 4 << 30  # a test session writes well under 1 GiB; a small /dev/shm (Docker's 64 MiB) is left alone


def _tmp_path_in_memory(config) -> None:
    """``tmp_path`` directories on the RAM file system where there is one with room: the engine
    fsyncs what it commits (a demo run in a test: one fdatasync per transaction, ~6,500 in
    tests/engine/feeds/test_demo_restart.py), and on a disk each waits for it (1-7 ms here, 32 of
    that file's 38 s of wall time at load 10), on tmpfs not (2 µs). The same system calls run;
    only the wait goes. pytest's own numbered directories (one session kept: pyproject.toml) under
    /dev/shm instead of /tmp; workers get theirs under the controller's. Not where ``--basetemp`` or
    PYTEST_DEBUG_TEMPROOT says where."""
    if config.option.basetemp or os.environ.get("PYTEST_DEBUG_TEMPROOT") or not SHM.is_dir():
        return
    try:
        fs = os.statvfs(SHM)
    except OSError:
        return
    if fs.f_bavail * fs.f_frsize >= SHM_FREE and os.access(SHM, os.W_OK):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(SHM)


FLEET = "prometheus_fleet"
_fleet_users = pytest.StashKey[int]()  # this session's tests that use the fleet and have not ended
_fleet_stop = pytest.StashKey[contextlib.ExitStack]()


@pytest.fixture(scope="session")
def prometheus_fleet(request, tmp_path_factory):
    """A real Prometheus scraping two ``watch --metrics`` (tests/helpers/real_prometheus.py), started
    once per test process: its tests only query it, and share the ``xdist_group`` "prometheus" so
    ``--dist loadgroup`` runs them in the same process. Stopped when the last of them ends (see
    ``pytest_runtest_teardown``), not at the end of the session: its processes would keep
    scraping and polling beside the rest of the suite."""
    with contextlib.ExitStack() as stack:
        request.session.stash[_fleet_stop] = stack
        yield stack.enter_context(two_watchers(tmp_path_factory.mktemp("prometheus-fleet")))


def pytest_collection_finish(session):
    session.stash[_fleet_users] = sum(FLEET in getattr(item, "fixturenames", ()) for item in session.items)
    keep_for_the_process()  # the modules the tests imported: out of every full collection's scan (tests/helpers/gc_kept.py)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    """After the session's last test that uses the fleet, the fleet's processes are stopped."""
    if FLEET not in getattr(item, "fixturenames", ()) or _fleet_users not in item.session.stash:
        return
    item.session.stash[_fleet_users] -= 1
    if item.session.stash[_fleet_users] <= 0 and _fleet_stop in item.session.stash:
        item.session.stash[_fleet_stop].close()


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups into the node ids
def pytest_collection_modifyitems(items):
    """``--dist loadgroup`` hands out a test with no ``xdist_group`` on its own, so a module whose
    tests share a module- (or class-) scoped fixture would build it in each worker that gets one
    of them. Such a test, unless grouped already, is grouped by its module: one worker builds
    the fixture once. Tests without a shared fixture stay one by one (the finest balance)."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        if any(defs[-1].scope in SHARED_SCOPES for defs in info.name2fixturedefs.values() if defs):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


@pytest.fixture
def shipped_index():
    """``shipped_index(tz=None)``: the shipped recording's index, one per process and time zone
    (tests/helpers/shipped_index.py), for tests that only read it. After the test, what
    ``build_index`` wrote and every checkpoint built before the test are as they were (a test
    that wrote to the shared index fails here); the checkpoints it built are checked after the
    next tests."""
    from tests.helpers import shipped_index as shipped  # noqa: PLC0415 - imports the engine's replay index

    seen = {id(ix): shipped.digest(ix) for ix in shipped.shipped_indexes()}
    yield shipped.shipped_index
    for ix in shipped.shipped_indexes():
        text, built = shipped.digest(ix)
        if id(ix) in seen:
            before_text, before_built = seen[id(ix)]
            assert text == before_text, "a test wrote to the shared index of the shipped recording"
            assert {s: built.get(s) for s in before_built} == before_built, "a test wrote to a shared checkpoint"
