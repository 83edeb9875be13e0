"""The dashboard's latency: screen switches and keypresses on the live demo, and the jobs
screen with 100,000 jobs (product.md §7, issue 14 item 3).

Part ``screens`` (issue 14 item 3): the real app at 132x40, headless (``run_test``), on the real
demo engine running in its own thread (``Runtime`` at ×60 after one virtual hour of warm-up, so
snapshots stream in four times a second while keys are pressed). Each screen switch (board →
crondor, jobs, route detail, editor, why-not, help, and back) and each keypress in a table is
timed, once the app has composed its main views, the editor and the selected route's screen
off screen after the first paint (``RouteDeckApp._prewarm``; the wait is printed); the table
gives the first time, median and p95. Targets on the 2-core machine: a screen switch ≤ 50 ms,
a keypress in any table ≤ 16 ms median.

Part ``paint`` (issue 30, not in ``all``): the keys of ``bench/tui_tmux.py`` on the same live demo,
timed from the key to the new screen's paint handed to the terminal (``App._display``), as a terminal
sees it less the terminal: a paint left to a screen's update timer counts with its wait.

Part ``jobs``: the jobs screen on the canned 100,000-job snapshot of ``tests/helpers/tui_fixtures.py``
(120x36). Targets: first paint ≤ 0.5 s, a keypress answered ≤ 50 ms.

Run: ``python bench/tui.py [--part screens|jobs|paint|all] [--jobs N] [--repeat K]``.

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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual import events

from tui.app import make_app
from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until

ROOT = Path(__file__).resolve().parent.parent


UI_CPU: list[float] = []  # the UI thread's CPU time of each ``respond`` (load on the machine aside)
GC_PAUSES: list[float] = []  # each cyclic-GC collection of generation 2 (any thread), seconds
GC_IN_KEY: list[float] = []  # per measured key: seconds of cyclic GC (any generation) inside it
_gc_start = [0.0]
_gc_total = [0.0]  # seconds of cyclic GC (any generation, any thread) since the callback was set


def _gc_callback(phase: str, info: dict) -> None:
    if phase == "start":
        _gc_start[0] = time.perf_counter()
        return
    dt = time.perf_counter() - _gc_start[0]
    _gc_total[0] += dt
    if info.get("generation") == 2:
        GC_PAUSES.append(dt)


async def timed(pilot, *keys: str) -> float:
    """pilot.press + pause: includes the idle wait (reference only)."""
    t = time.perf_counter()
    await pilot.press(*keys)
    await pilot.pause()
    return time.perf_counter() - t


def key_event(app, key: str) -> events.Key:
    """The ``Key`` event a terminal's driver hands ``app`` for ``key`` (its character, if it has one)."""
    event = events.Key(key, "?" if key == "question_mark" else (key if len(key) == 1 else None))
    event.set_sender(app)
    return event


async def respond(pilot, key: str, done, timeout: float = 10.0) -> float:
    """Seconds from handing ``key`` to the driver until ``done()`` holds and the screen is rendered."""
    app = pilot.app
    event = key_event(app, key)
    t, c, g = time.perf_counter(), time.thread_time(), _gc_total[0]
    app._driver.send_message(event)
    while not done():
        if time.perf_counter() - t > timeout:
            raise TimeoutError(key)
        await asyncio.sleep(0)
    app.screen._compositor_refresh()
    dt = time.perf_counter() - t
    UI_CPU.append(time.thread_time() - c)
    GC_IN_KEY.append(_gc_total[0] - g)
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
        # The route detail over the same 100,000 jobs: opening it, and the UI thread's time to
        # take a snapshot whose jobs tuple changed (the split of the jobs by route included when
        # it runs on the UI thread).
        await respond(pilot, "b", lambda: type(app.screen).__name__ == "RoutesScreen")
        opened = await respond(pilot, "enter", lambda: type(app.screen).__name__ == "RouteDetailScreen"
                               and app.screen.is_mounted and getattr(app.screen, "_rows_id", None) is not None)
        print(f"route detail opened with its jobs found ({n_jobs:,} jobs): {opened * 1000:6.1f} ms")
        detail = app.screen
        times = []
        for v in range(5):
            new = make_snapshot(n_jobs, seq=200 + v, jobs=rows[: n_jobs - 1 - v], jobs_version=200 + v)
            gc.collect()
            t = time.perf_counter()
            detail.show_snapshot(new)
            detail._compositor_refresh()
            times.append(time.perf_counter() - t)
            await pilot.pause(0.3)  # a worker, if any, finishes off the UI thread
        print(f"route detail: new jobs tuple, UI thread time     {fmt(times)}")
        all_keys = [x for xs in results.values() for x in xs]
        print(f"keypresses: max {max(all_keys) * 1000:.1f} ms, median {statistics.median(all_keys) * 1000:.1f} ms"
              "   target ≤ 50 ms")


class _Rec(list):
    """A figures list that also files the UI thread's CPU time of each appended measurement."""

    def __init__(self, cpu: list[float]) -> None:
        super().__init__()
        self.cpu = cpu

    def append(self, x: float) -> None:
        super().append(x)
        self.cpu.append(UI_CPU[-1])


def _rec(table: dict, cpu: dict, name: str, _default) -> "_Rec":
    if name not in table:
        cpu[name] = []
        table[name] = _Rec(cpu[name])
    return table[name]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def table_line(name: str, xs: list[float], target: float, by: str) -> str:
    """One row: the first time (a screen's first visit builds it), median, p95, max; ``by`` is
    the figure held against the target ("max" for switches: *any* switch ≤ 50 ms)."""
    ms = [x * 1000 for x in xs]
    fig = {"first": ms[0], "median": statistics.median(ms), "p95": pct(ms, 0.95), "max": max(ms)}
    ok = "ok" if fig[by] <= target else "OVER"
    return (f"| {name:36s} | {fig['first']:7.1f} | {fig['median']:7.1f} | {fig['p95']:7.1f} | {fig['max']:7.1f} "
            f"| {len(ms):3d} | {by} ≤ {target:g} ms {ok:4s} |")


def _painted_flag() -> None:
    """Mark a screen once its body was drawn from a snapshot (``update_body`` returned), so a
    switch is timed until the new screen shows the snapshot's figures, not only its frame."""
    from tui.screens.base import DeckScreen

    if getattr(DeckScreen.show_snapshot, "_bench", False):
        return
    original = DeckScreen.show_snapshot

    def show_snapshot(self, snap):
        original(self, snap)
        if snap is not None and self.is_mounted:
            self._bench_painted = True

    show_snapshot._bench = True
    DeckScreen.show_snapshot = show_snapshot


def live_demo_app(speed: float, hours: float = 1.0):
    """The real app (``make_app``) on the live demo (seed 1) run ``hours`` virtual hours first, at
    ×``speed``, a snapshot every 0.25 s."""
    from engine.clock import VirtualClock
    from engine.feeds.demo import build_demo
    from engine.runtime import Runtime
    import tempfile

    engine = build_demo(None, seed=1, state_dir=tempfile.mkdtemp(prefix="routedeck-bench-tui-"), durable=False)
    engine.run_until(engine.now + hours * 3600)
    return make_app(Runtime(engine, VirtualClock(start=engine.now, speed=speed), snapshot_interval=0.25), blink=False)


async def run_screens(repeat: int, speed: float, hours: float = 1.0, gc_freeze: bool = False) -> None:
    _painted_flag()
    t = time.perf_counter()
    app = live_demo_app(speed, hours)
    print(f"demo engine built and run {hours:g} virtual hour(s) in {time.perf_counter() - t:.1f} s (not part of the figures)")
    rows: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}

    def on(name: str, extra=lambda s: True):
        def done():
            s = app.screen
            return (type(s).__name__ == name and s.is_mounted
                    and (getattr(s, "_bench_painted", False) or not hasattr(s, "update_body")) and extra(s))
        return done

    def editor_loaded(s):
        from textual.widgets import TextArea

        return bool(s.query(TextArea)) and bool(s.query_one(TextArea).text)

    def unpainted(name: str, extra=lambda s: True):
        """``on`` after clearing every screen's painted mark (kept screens too: a screen resumed
        from the route-screen cache or a mode must paint again to count)."""
        screens = {id(s): s for st in app._screen_stacks.values() for s in st}
        screens.update({id(s): s for s in app._installed_screens.values() if not callable(s)})
        for s in screens.values():
            s._bench_painted = False
        return on(name, extra)

    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.total_jobs > 0, timeout=30)
        t = time.perf_counter()
        # the main views are composed in the background after the first paint (RouteDeckApp._prewarm)
        await wait_until(pilot, lambda: getattr(app, "prewarmed", True), timeout=30)
        print(f"main views composed in the background {time.perf_counter() - t:.2f} s after the first snapshot")
        snap = app.snapshot
        if gc_freeze:
            gc.collect()
            gc.freeze()  # what is alive now is never scanned again by the cyclic GC
            print(f"gc.freeze(): {gc.get_freeze_count():,} objects moved to the permanent generation")
        gc.callbacks.append(_gc_callback)
        print(f"live demo: {snap.total_jobs:,} jobs, {len(snap.routes)} routes, {len(snap.cron_jobs)} cron jobs, "
              f"×{speed:g}, snapshots every 0.25 s")
        for _ in range(repeat):
            _rec(rows, cpu, "board → crondor (c)", []).append(await respond(pilot, "c", unpainted("CronScreen")))
            _rec(rows, cpu, "crondor → jobs (j)", []).append(await respond(
                pilot, "j", unpainted("JobsScreen", lambda s: len(s.table.model.rows) > 0)))
            _rec(rows, cpu, "jobs → why-not (w)", []).append(await respond(pilot, "w", unpainted("WhyNotScreen")))
            _rec(rows, cpu, "why-not → jobs (esc)", []).append(await respond(pilot, "escape", unpainted("JobsScreen")))
            _rec(rows, cpu, "jobs → board (b)", []).append(await respond(pilot, "b", unpainted("RoutesScreen")))
            _rec(rows, cpu, "board → route detail (enter)", []).append(await respond(
                pilot, "enter", unpainted("RouteDetailScreen", lambda s: s._rows_id is not None)))
            _rec(rows, cpu, "route detail → board (esc)", []).append(await respond(pilot, "escape", unpainted("RoutesScreen")))
            _rec(rows, cpu, "board → editor (e)", []).append(await respond(pilot, "e", unpainted("EditorScreen", editor_loaded)))
            _rec(rows, cpu, "editor → board (esc)", []).append(await respond(pilot, "escape", unpainted("RoutesScreen")))
            _rec(rows, cpu, "board → help (?)", []).append(await respond(pilot, "question_mark", unpainted("HelpScreen")))
            _rec(rows, cpu, "help → board (esc)", []).append(await respond(pilot, "escape", unpainted("RoutesScreen")))
        # keypresses in each table: the cursor moves one row (down, then up, alternating)
        keys: dict[str, list[float]] = {}
        kcpu: dict[str, list[float]] = {}

        async def table_keys(label: str, get_cursor) -> None:
            for k in range(repeat * 2):
                key = "down" if k % 2 == 0 else "up"
                before = get_cursor()
                _rec(keys, kcpu, label, []).append(await respond(pilot, key, lambda: get_cursor() != before))

        from textual.widgets import DataTable

        await table_keys("board table (down/up)", lambda: app.screen.query_one("#routes", DataTable).cursor_row)
        await respond(pilot, "j", on("JobsScreen", lambda s: len(s.table.model.rows) > 0))
        await table_keys("jobs table (down/up)", lambda: app.screen.table.cursor)
        await respond(pilot, "c", on("CronScreen"))
        await table_keys("crondor table (down/up)", lambda: app.screen.query(DataTable).first().cursor_row)
        await respond(pilot, "b", on("RoutesScreen"))
        await respond(pilot, "enter", on("RouteDetailScreen", lambda s: s._rows_id is not None))
        from tui.widgets.job_table import JobTable

        await table_keys("route detail jobs (down/up)", lambda: app.screen.query_one(JobTable).cursor)
        await respond(pilot, "escape", on("RoutesScreen"))
        head = (f"| {'what (ms)':36s} | {'first':>7s} | {'median':>7s} | {'p95':>7s} | {'max':>7s} | {'n':>3s} "
                f"| target                |")
        print(head)
        print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
        for name, xs in rows.items():
            print(table_line("switch " + name, xs, 50, "max"))
        for name, xs in keys.items():
            print(table_line("key " + name, xs, 16, "median"))
        print("UI thread CPU time of the same (what the UI thread itself spent; other load on the machine aside):")
        for name, xs in rows.items():
            print(table_line("switch " + name, cpu[name], 50, "max"))
        for name, xs in keys.items():
            print(table_line("key " + name, kcpu[name], 16, "median"))
        gc.callbacks.remove(_gc_callback)
        if GC_PAUSES:
            print(f"generation-2 GC collections during the run (any thread; each stops the UI thread): {len(GC_PAUSES)},"
                  f" median {statistics.median(GC_PAUSES) * 1000:.1f} ms, max {max(GC_PAUSES) * 1000:.1f} ms")
        collector = getattr(app, "idle_collector", None)
        if collector is not None:
            print(f"idle collector (tui.shell.idle_gc): {collector.collections}, longest (UI thread CPU): "
                  + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in collector.longest.items()))
        print(f"cyclic GC inside the timed keys: {sum(1 for g in GC_IN_KEY if g > 0)} of {len(GC_IN_KEY)} keys,"
              f" max {max(GC_IN_KEY) * 1000:.1f} ms")
        switches = [x for xs in rows.values() for x in xs]
        switch_cpu = [x for xs in cpu.values() for x in xs]
        print(f"all switches, UI thread CPU: median {statistics.median(switch_cpu) * 1000:.1f} ms,"
              f" max {max(switch_cpu) * 1000:.1f} ms, over 50 ms: {sum(1 for x in switch_cpu if x > 0.05)}")
        presses = [x for xs in keys.values() for x in xs]
        print(f"all switches: median {statistics.median(switches) * 1000:.1f} ms, p95 {pct(switches, 0.95) * 1000:.1f} ms,"
              f" max {max(switches) * 1000:.1f} ms; all table keys: median {statistics.median(presses) * 1000:.1f} ms,"
              f" p95 {pct(presses, 0.95) * 1000:.1f} ms")
        over = [x for x in switches if x > 0.050]
        print(f"switches over 50 ms: {len(over)} of {len(switches)}"
              + (f" ({', '.join(f'{x * 1000:.0f}' for x in over)} ms)" if over else ""))


PAINTS: list[tuple[float, str]] = []  # (perf_counter, screen class) of each paint handed to the terminal


async def painted_after(pilot, key: str, name: str, timeout: float = 10.0) -> tuple[float, float]:
    """Seconds (wall, UI thread CPU) from handing ``key`` to the driver until the app hands the
    terminal a paint of a ``name`` screen (``App._display``): what a terminal waits for, less the
    terminal. Unlike :func:`respond`, nothing is painted by the bench: a paint Textual leaves to a
    screen's update timer counts with its wait."""
    app = pilot.app
    event = key_event(app, key)
    PAINTS.clear()
    t, c = time.perf_counter(), time.thread_time()
    app._driver.send_message(event)
    while not any(shown == name for _, shown in PAINTS):
        if time.perf_counter() - t > timeout:
            raise TimeoutError(key)
        await asyncio.sleep(0)
    dt, cpu = next(at for at, shown in PAINTS if shown == name) - t, time.thread_time() - c
    await pilot.pause(0.3)  # the screen settles, as a person reads it (bench/tui_tmux.py)
    return dt, cpu


async def run_paint(repeat: int, speed: float) -> None:
    """Part ``paint``: each key of bench/tui_tmux.py (c, j, b, ?, Esc) on the live demo at 132x40,
    timed from the key to the new screen's paint (:func:`painted_after`), first visit included;
    with the UI thread's CPU time of the same, which the machine's other load leaves as it is.
    The anchor, in the same run: a fixed piece of work on the UI thread, wall and CPU."""
    from textual.app import App

    import os

    app = live_demo_app(speed)
    display = App._display

    def spy(self, screen, update):
        if update is not None:
            PAINTS.append((time.perf_counter(), type(screen).__name__))
        return display(self, screen, update)

    App._display = spy
    keys = [("c", "CronScreen", "board → crondor (c)"), ("j", "JobsScreen", "crondor → jobs (j)"),
            ("b", "RoutesScreen", "jobs → board (b)"), ("question_mark", "HelpScreen", "board → help (?)"),
            ("escape", "RoutesScreen", "help → board (esc)")]
    wall: dict[str, list[float]] = {k[2]: [] for k in keys}
    cpu: dict[str, list[float]] = {k[2]: [] for k in keys}
    async with app.run_test(size=(132, 40)) as pilot:
        await wait_until(pilot, lambda: app.snapshot is not None and app.snapshot.total_jobs > 0, timeout=30)
        await wait_until(pilot, lambda: getattr(app, "prewarmed", True), timeout=60)
        await pilot.pause(0.5)
        print("load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
        for _ in range(repeat):
            for key, name, label in keys:
                dt, c = await painted_after(pilot, key, name)
                wall[label].append(dt)
                cpu[label].append(c)
        anchor = []
        for _ in range(repeat * 5):
            t, c = time.perf_counter(), time.thread_time()
            sum(range(100_000))  # a fixed piece of work on the UI thread
            anchor.append((time.perf_counter() - t, time.thread_time() - c))
            await asyncio.sleep(0.01)
    App._display = display
    print(f"| {'key → paint (ms)':24s} | {'first':>6s} | {'median':>6s} | {'max':>6s} | "
          f"{'CPU first':>9s} | {'CPU median':>10s} | {'CPU max':>7s} |")
    for label in wall:
        w, c = [x * 1000 for x in wall[label]], [x * 1000 for x in cpu[label]]
        print(f"| {label:24s} | {w[0]:6.1f} | {statistics.median(w):6.1f} | {max(w):6.1f} | "
              f"{c[0]:9.1f} | {statistics.median(c):10.1f} | {max(c):7.1f} |")
    print(f"anchor: sum(range(100_000)) on the UI thread, wall median {statistics.median(a for a, _ in anchor) * 1000:.2f} ms"
          f" (CPU {statistics.median(c for _, c in anchor) * 1000:.2f} ms; the machine's load stretches wall over CPU);"
          " load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("screens", "jobs", "paint", "all"), default="all")
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--speed", type=float, default=60.0, help="the live demo's speed in part screens")
    ap.add_argument("--hours", type=float, default=1.0, help="virtual hours the demo runs before part screens")
    ap.add_argument("--gc-freeze", action="store_true",
                    help="part screens: gc.freeze() once the app runs (what it does to the GC pauses)")
    args = ap.parse_args()
    if args.part in ("screens", "all"):
        asyncio.run(run_screens(max(3, args.repeat // 2), args.speed, args.hours, args.gc_freeze))
    if args.part == "paint":
        asyncio.run(run_paint(args.repeat, args.speed))
    if args.part in ("jobs", "all"):
        asyncio.run(run(args.jobs, args.repeat))


if __name__ == "__main__":
    main()
