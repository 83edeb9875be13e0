"""Textual's Pilot waits for an app to go idle in 5 ms steps instead of 20 ms (tests only).

After each key it sends, and in ``pilot.pause()``, Textual's Pilot calls
``textual._wait.wait_for_idle``: it sleeps 20 ms at a time until a 20 ms step in which the process
used under 1 ms of CPU. A key so costs at least two idle steps (40 ms of wall time) in which
nothing runs: the process waits to see that it is idle.

The step is that long for the screen's update timer (60 a second): a widget made dirty is drawn at
its next tick, up to 16.7 ms later, and what waits for the draw (``call_after_refresh``: the
footer's keys, say) after it. A 5 ms step alone returns in that gap, before the draw. So here a
step is idle when the process used under 5 % of it in CPU, as Textual's, *and* the current screen
has no draw pending (its update timer is paused, no after-refresh callback queued): the wait ends as
soon as the work and the draws it caused are done, and never between a change and its draw, which
Textual's 20 ms steps did not promise either (a draw late on a loaded machine ended them too).
Nothing a test checks changes: events are processed in the same order, ``Pilot._wait_for_screen``
runs where it did; only the wall time the idle test sleeps goes (~0.15 s per Pilot test).
"""

from __future__ import annotations

import asyncio
from time import monotonic, process_time

import pytest
import textual._wait as textual_wait
import textual.app as textual_app
import textual.pilot as textual_pilot
from textual._context import active_app

STEP = 0.005  # Textual's own: 1/50 s
IDLE_CPU = STEP / 20.0  # idle: under 5 % of a step in CPU, Textual's ratio (SLEEP_IDLE / SLEEP_GRANULARITY)


def _draw_pending() -> bool:
    """The active app's current screen has a draw to make: its update timer runs (it runs only
    while something is dirty), or callbacks wait for the next draw."""
    try:
        screen = active_app.get().screen
    except Exception:  # noqa: BLE001 - no app, or no screen (starting, exiting): nothing to draw
        return False
    timer = getattr(screen, "_Screen__update_timer", None)  # made on first use (Screen._update_timer)
    return bool(screen._callbacks) or (timer is not None and timer._active.is_set())


async def wait_for_idle(min_sleep: float = textual_wait.SLEEP_GRANULARITY, max_sleep: float = 1) -> None:
    """``textual._wait.wait_for_idle`` in ``STEP`` steps, a step idle only with no draw pending."""
    start = monotonic()
    while True:
        cpu = process_time()
        await asyncio.sleep(STEP)
        busy = process_time() - cpu
        elapsed = monotonic() - start
        if elapsed >= max_sleep:
            break
        if elapsed > min_sleep and busy < IDLE_CPU and not _draw_pending():
            break


def idle_in_short_steps(monkeypatch) -> None:
    """For one test: Pilot (keys, ``pause()``) and the app's key presses wait with :func:`wait_for_idle`.
    ``monkeypatch`` fails the test if Textual no longer has these names (the app pins Textual 8.2.8)."""
    monkeypatch.setattr(textual_pilot, "wait_for_idle", wait_for_idle)
    monkeypatch.setattr(textual_app, "wait_for_idle", wait_for_idle)


@pytest.fixture(autouse=True)
def pilot_idle_in_short_steps(monkeypatch):
    """Pilot's wait for an idle app in 5 ms steps, not 20 ms: autouse in the Pilot test folders'
    conftests (tests/tui, tests/snapshots), which import it."""
    idle_in_short_steps(monkeypatch)
