"""Screens kept alive between opens (issue 14 item 3, issue 30): building a screen (compose, mount,
style, the footer's keys) is most of the time of opening it; a kept screen resumes as the main
views do. Kept screens are installed on the app (Textual removes a popped screen otherwise)."""

from __future__ import annotations

from typing import Callable, Hashable, TypeVar

S = TypeVar("S")


def kept_screen(app, kept: dict, key: Hashable, make: Callable[[], S], name: str, keep: int) -> S:
    """The screen kept under ``key`` in ``kept`` (an insertion-ordered dict of the app's), else a
    new one from ``make``, installed as ``name:<id>`` and kept; past ``keep`` screens the least
    recently opened is dropped. A kept screen already on a stack gives a fresh, unkept one."""

    def stacked(screen) -> bool:
        return any(screen in stack for stack in app._screen_stacks.values())

    screen = kept.get(key)
    if screen is not None and stacked(screen):
        return make()
    if screen is None:
        screen = make()
        app.install_screen(screen, f"{name}:{id(screen)}")
    kept.pop(key, None)
    kept[key] = screen  # most recently opened last
    for old_key in list(kept)[:-keep]:
        old = kept[old_key]
        if not stacked(old):
            del kept[old_key]
            app.uninstall_screen(old)
            if old.is_attached:
                old.remove()
    return screen
