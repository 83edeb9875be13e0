"""Fixtures the whole suite shares."""
from __future__ import annotations

import pytest

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


@pytest.fixture(scope="session")
def prometheus_fleet(tmp_path_factory):
    """A real Prometheus scraping two ``watch --metrics`` (tests/helpers/real_prometheus.py), started
    once per test process: its tests only query it, and share the ``xdist_group`` "prometheus" so
    ``--dist loadgroup`` runs them in the same process."""
    with two_watchers(tmp_path_factory.mktemp("prometheus-fleet")) as fleet:
        yield fleet


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
