"""Textual's lines (``Strip``) freed when they are dropped, not by the cyclic GC (issue 30).

A ``Strip`` keeps what it computes from itself in small caches of its own, and two of them keep the
strip itself: ``divide`` at a single cut at its end (the compositor divides every widget's line
that no other widget overlaps so) answers ``[self]``, and ``crop_extend`` over its whole length
answers ``self``. Each such strip is a reference cycle (with its seven caches), so it is not freed
when a widget drops the line but only by a collection of the generation it has reached: the lines
a screen keeps between snapshots reach the oldest one. A full collection found ~6,000 such objects
every few seconds in the demo (Strips and their ``FIFOCache``s: all of its garbage) and took
50-60 ms of the UI thread's CPU (``tui.shell.idle_gc``). :func:`install` answers those two cases
without caching them (the same strips); every other case is Textual's.
"""

from __future__ import annotations

from textual.strip import Strip

_installed: list = []  # Textual's two methods once install() has run (the app calls it at start-up)


def install() -> None:
    if _installed:
        return
    divide, crop_extend = Strip.divide, Strip.crop_extend
    _installed.extend((divide, crop_extend))

    def divide_without_cycle(self: Strip, cuts) -> list[Strip]:
        cuts = [cut for cut in cuts if cut <= self.cell_length]  # Textual's own first step
        if cuts == [self.cell_length]:
            return [self]  # what Textual answers, not kept in the strip's own cache
        return divide(self, cuts)

    def crop_extend_without_cycle(self: Strip, start: int, end: int, style) -> Strip:
        if start <= 0 and end == self.cell_length:
            return self
        return crop_extend(self, start, end, style)

    Strip.divide = divide_without_cycle  # type: ignore[method-assign]
    Strip.crop_extend = crop_extend_without_cycle  # type: ignore[method-assign]
