"""Benchmark: the execute node's rows in a snapshot and the Hooks screen with a full invocation
history (``hooks.MAX_INVOCATIONS`` = 2,000), issue 12 item 4.

Prints, best of ``REPEAT`` (the machine is shared):
- ``execute_views``: the first build of 2,000 hook rows, and a steady-state build (4 new
  invocations, 4 dropped: what a snapshot costs while hooks keep running);
- the Hooks screen: the first fill of 2,000 rows, and the update for that steady-state snapshot
  (drop 4 rows, append 4), measured inside a headless app (``App.run_test``).

Invocations are real ``engine.execute.hooks.Invocation`` objects from a ``HookRunner`` without
``allow_run`` (withheld: nothing is spawned; the row shape is the same).

Run: ``python bench/hooks_screen.py [REPEAT]``. Prints figures only; not a test.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.execute.hooks import MAX_INVOCATIONS, HookRunner
from engine.lang.config import Config
from engine.views.execute import HookIndex

T0 = 1795271525.0


def runner_with(n: int) -> HookRunner:
    r = HookRunner(Config.from_text(""), allow_run=False)
    for i in range(n):
        more(r, i)
    return r


def more(r: HookRunner, i: int) -> None:
    r.invoke_path("fetch", "Q", "FETCH_WORK", f"slot{i % 4 + 1}", "/bin/true", 'State = "Unclaimed"\n' * 40,
                  T0 + i)


def best(fn, repeat: int) -> float:
    return min(_timed(fn) for _ in range(repeat))


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def views(repeat: int) -> None:
    r = runner_with(MAX_INVOCATIONS)
    first = best(lambda: HookIndex().rows(r.invocations), repeat)
    index = HookIndex()
    index.rows(r.invocations)
    steady = []
    for k in range(repeat):
        for j in range(4):
            more(r, MAX_INVOCATIONS + 4 * k + j)
        steady.append(_timed(lambda: index.rows(r.invocations)))
    print(f"execute_views: first build of {MAX_INVOCATIONS} hook rows {first * 1000:.1f} ms; "
          f"steady state (4 new, 4 dropped) {min(steady) * 1000:.2f} ms")


async def screen(repeat: int) -> None:
    from tui.app import make_app
    from tui.screens.hooks import HooksScreen
    from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until

    r = runner_with(MAX_INVOCATIONS)
    index = HookIndex()
    rt = FakeRuntime(make_snapshot(50, hooks=index.rows(r.invocations), controls=frozenset({"execute"})))
    app = make_app(rt, blink=False, watch_files=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None)
        t = time.perf_counter()
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, HooksScreen) and len(app.screen._keys) == MAX_INVOCATIONS,
                         timeout=60)
        fill = time.perf_counter() - t
        scr = app.screen
        steady = []
        for k in range(repeat):
            for j in range(4):
                more(r, MAX_INVOCATIONS + 4 * k + j)
            snap = dataclasses.replace(app.snapshot, hooks=index.rows(r.invocations), seq=app.snapshot.seq + 1)
            t = time.perf_counter()
            scr.update_body(snap)
            steady.append(time.perf_counter() - t)
    print(f"Hooks screen: first fill of {MAX_INVOCATIONS} rows {fill * 1000:.0f} ms (key press to drawn); "
          f"steady-state update (drop 4, append 4) {min(steady) * 1000:.1f} ms best, "
          f"{sorted(steady)[len(steady) // 2] * 1000:.1f} ms median")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    views(n)
    asyncio.run(screen(n))
