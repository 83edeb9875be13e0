"""The real engine, frozen: the embedded demo run for a virtual hour (seed 1, manual stepping,
no wall clock), wrapped in a runtime whose snapshot never changes. Screens built on it show the
engine's real data shapes (routes with their limits and throttle, source jobs and routed
copies, crondor jobs), and queries (why-not, a job's ad) run on the same engine objects.

The engine is built once per test process (about 3 s) and never advanced after that; queries
only read it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from tests.helpers.gc_kept import keep_for_the_process
from tests.helpers.paths import REPO
from engine.contract import snapshot as S
from engine.feeds.demo import build_demo
from engine.runtime import feed_controls

HOURS = 1.0
ROOT = REPO


@lru_cache(maxsize=1)
def demo_engine():
    # the config by its path relative to the repository, so route locations ("file:line") read
    # the same in every checkout (snapshot tests show them)
    here = os.getcwd()
    os.chdir(ROOT)
    state_dir = tempfile.mkdtemp(prefix="routedeck-test-demo-")
    atexit.register(shutil.rmtree, state_dir, True)  # kept for the test process's life, then removed
    try:
        engine = build_demo("sample_configs/demo", state_dir=state_dir,
                            seed=1, durable=False, stage=False)  # nothing edits it: no copy to show
    finally:
        os.chdir(here)
    engine.run_until(engine.now + HOURS * 3600)
    engine.advance()  # what its snapshots show (a snapshot only reads: issue 26)
    keep_for_the_process()  # kept to the process's end (lru_cache): out of the GC's full scans
    return engine


class EngineRuntime:
    """``Runtime``'s methods over a frozen demo feed: ``query`` runs the function on it directly."""

    def __init__(self, engine=None) -> None:
        self.feed = engine if engine is not None else demo_engine()
        self._snap = self.feed.snapshot(1, speed=60.0, paused=True, engine_state="paused")
        self.sent: list[object] = []
        self.publish = None  # set by the app before start (Runtime's publish callback)

    @property
    def controls(self) -> frozenset[str]:
        return feed_controls(self.feed)

    def start(self) -> None:
        if self.publish:
            self.publish(self._snap)

    def stop(self) -> None:
        pass

    def latest(self) -> S.Snapshot:
        return self._snap

    def send(self, command: object) -> None:
        self.sent.append(command)

    def query(self, fn, timeout: float | None = None):
        return fn(self.feed)


def make_config_dir(tmp: Path) -> Path:
    """The sample condor_config (routes) with the test sites and workload (tests/data/demo_small)."""
    d = tmp / "config"
    d.mkdir()
    shutil.copy(ROOT / "sample_configs/demo/condor_config", d / "condor_config")
    for f in ("sites.toml", "workload.toml"):
        shutil.copy(ROOT / "tests/data/demo_small" / f, d / f)
    return d


def _copies_per_source(queue) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for j in queue.jobs():
        src = j.get("RoutedFromJobId")
        if src is not None and j.status not in (3, 4):  # live copies only
            out.setdefault(src.strip('"'), []).append(j.key)
    return out


def _guard_single_copy(engine) -> list[str]:
    """After every router poll: no source job has two live routed copies."""
    problems: list[str] = []
    poll = engine.router.poll

    def checked(now):
        poll(now)
        for src, copies in _copies_per_source(engine.queue).items():
            if len(copies) > 1:
                problems.append(f"{now}: {src} has copies {copies}")

    engine.router.poll = checked
    return problems
