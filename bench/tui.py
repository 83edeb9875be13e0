"""Jobs screen with 100,000 jobs: first paint and keypress times (product.md §7).

Targets on the 2-core dev machine: first paint ≤ 0.5 s, a keypress answered ≤ 50 ms.

Run: ``python bench/tui.py [--jobs N] [--repeat K]``. The app runs headless (Textual's
``run_test``, 120x36) on the canned snapshot of ``tests/tui_fixtures.py``.

What is timed: a key event is handed to the app's driver, the event loop runs until the key's
effect is visible in the app's state (cursor moved, filter applied, sort changed, jobs screen
mounted with all rows), then the screen's compositor renders the update — so each figure is
Textual's dispatch + our handler + layout + drawing the changed lines. Textual paints at most
60 times a second, so a real terminal may show it up to 1/60 s later. (``pilot.press`` +
``pilot.pause`` is not used for timing: it waits for the event loop to look idle, a fixed
~60 ms on this machine even for a key that does nothing — printed as a reference.)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from textual import events  # noqa: E402

from tui.app import make_app  # noqa: E402
from tui_fixtures import FakeRuntime, make_snapshot, wait_until  # noqa: E402


async def timed(pilot, *keys: str) -> float:
    """pilot.press + pause: includes the idle wait (reference only)."""
    t = time.perf_counter()
    await pilot.press(*keys)
    await pilot.pause()
    return time.perf_counter() - t


async def respond(pilot, key: str, done, timeout: float = 10.0) -> float:
    """Seconds from handing ``key`` to the driver until ``done()`` holds and the screen is rendered."""
    app = pilot.app
    char = key if len(key) == 1 else None
    event = events.Key(key, char)
    event.set_sender(app)
    t = time.perf_counter()
    app._driver.send_message(event)
    while not done():
        if time.perf_counter() - t > timeout:
            raise TimeoutError(key)
        await asyncio.sleep(0)
    app.screen._compositor_refresh()
    dt = time.perf_counter() - t
    await pilot.pause()  # settle before the next measurement
    return dt


def fmt(xs: list[float]) -> str:
    xs_ms = [x * 1000 for x in xs]
    return f"median {statistics.median(xs_ms):6.1f} ms  max {max(xs_ms):6.1f} ms  (n={len(xs)})"


async def run(n_jobs: int, repeat: int) -> None:
    t = time.perf_counter()
    snap = make_snapshot(n_jobs)
    print(f"canned snapshot with {snap.total_jobs:,} jobs built in {time.perf_counter() - t:.2f} s (not part of the figures)")
    app = make_app(FakeRuntime(snap), blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        t = time.perf_counter()
        await wait_until(pilot, lambda: app.snapshot is not None)
        print(f"app start → routes board painted:          {time.perf_counter() - t:6.3f} s")
        print(f"reference: pilot.press+pause of a key bound to nothing: {await timed(pilot, 'f12') * 1000:6.1f} ms")
        first = await respond(pilot, "j", lambda: type(app.screen).__name__ == "JobsScreen"
                              and app.screen.is_mounted and len(app.screen.table.model.rows) == n_jobs
                              and app.screen.table.virtual_size.height == n_jobs + 1)
        table = app.screen.table
        print(f"first paint of the jobs screen ({n_jobs:,} jobs): {first:6.3f} s   target ≤ 0.5 s")
        t = time.perf_counter()
        for y in range(36):
            table.render_line(y)
        print(f"  drawing one screenful (36 lines) directly:  {(time.perf_counter() - t) * 1000:6.2f} ms")

        results: dict[str, list[float]] = {}

        def moved(before: int):
            return lambda: table.cursor != before

        for _ in range(repeat):
            results.setdefault("down (cursor one row)", []).append(await respond(pilot, "down", moved(table.cursor)))
        for _ in range(repeat):
            results.setdefault("pagedown", []).append(await respond(pilot, "pagedown", moved(table.cursor)))
        results["end (last of 100k)"] = [await respond(pilot, "end", moved(table.cursor))]
        results["home"] = [await respond(pilot, "home", moved(table.cursor))]
        box = app.screen.query_one("#job-filter")
        await respond(pilot, "slash", lambda: box.has_focus)
        typed = ""
        for ch in "alice":  # each keystroke re-filters; the first one builds the search text
            typed += ch
            results.setdefault("filter keystroke", []).append(
                await respond(pilot, ch, lambda t=typed: table.model.text == t))
        for k in range(5):
            results.setdefault("filter backspace", []).append(
                await respond(pilot, "backspace", lambda t=typed[: 4 - k]: table.model.text == t))
        await respond(pilot, "enter", lambda: table.has_focus)
        results["sort: first time by a column (s)"] = [await respond(pilot, "s", lambda: table.model.sort_key == "job")]
        results["sort: next column (s)"] = [await respond(pilot, "s", lambda: table.model.sort_key == "status")]
        results["sort: reverse (S)"] = [await respond(pilot, "S", lambda: table.model.reverse)]
        for name, xs in results.items():
            print(f"keypress {name:34s} {fmt(xs)}")
        # A new snapshot whose jobs tuple changed (the engine bumps jobs_version): UI-thread time
        # to adopt it on the jobs screen and redraw. Garbage is collected first and background
        # work finished, so the figure is the adoption itself.
        screen = app.screen
        rows = snap.jobs
        screen.query_one("#job-filter").remove_class("-shown")  # filter box closed
        for label, setup in (("no filter", lambda m: (m.set_filter(""), m.set_sort(None))),
                             ("filter 'alice' + sort by owner", lambda m: (m.set_filter("alice"), m.set_sort("owner")))):
            table.apply(setup)
            times = []
            for v in range(3):
                new = make_snapshot(n_jobs, seq=100 + v, jobs=rows[: n_jobs - 1 - v], jobs_version=100 + v)
                while any(w.group == "prepare" and not w.is_finished for w in app.workers):
                    await asyncio.sleep(0.01)  # background search-text building done
                gc.collect()
                t = time.perf_counter()
                screen._adopt(new)
                app.screen.refresh()
                app.screen._compositor_refresh()
                times.append(time.perf_counter() - t)
            print(f"new jobs tuple adopted, {label:31s} {fmt(times)}")
        print("  (with a filter or sort on, a changing queue of >= 20,000 jobs is adopted at most every 2 s)")
        all_keys = [x for xs in results.values() for x in xs]
        print(f"keypresses: max {max(all_keys) * 1000:.1f} ms, median {statistics.median(all_keys) * 1000:.1f} ms"
              "   target ≤ 50 ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    asyncio.run(run(args.jobs, args.repeat))


if __name__ == "__main__":
    main()
