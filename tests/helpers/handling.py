"""Pilot helpers of the handling tests (tests/tui/test_tui_handling.py, issue 11's list, and
tests/tui/test_tui_handling_ce.py, issue 29's): the app over a fake runtime, typing, the ``:`` line."""

from __future__ import annotations

from tui.app import make_app

from tests.helpers.tui_fixtures import FakeRuntime, make_snapshot, wait_until

NARROW = (80, 24)


def _app(rt=None, **kw):
    return make_app(rt or FakeRuntime(make_snapshot(500)), blink=False, watch_files=False, **kw)


async def _type(pilot, text: str) -> None:
    await pilot.press(*[{" ": "space", ":": "colon", ".": "full_stop"}.get(ch, ch) for ch in text])


async def _open_prompt(app, pilot):
    """The ``:`` line opened once the first snapshot is in; its input box."""
    await wait_until(pilot, lambda: app.snapshot is not None)
    await pilot.press("colon")
    return app.screen.query_one("#command-input")


def _name(app) -> str:
    return type(app.screen).__name__
