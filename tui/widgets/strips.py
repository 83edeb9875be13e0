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

Each ``Strip`` also made its seven caches (``FIFOCache``s, each with a dict) when it was built: 15
objects and ~6 us of the UI thread per line, for caches most lines never use (a switch builds
400-500 lines; issue 30). After :func:`install` a strip makes a cache when it first uses it (an
unset slot of the class reaches ``__getattr__``); sizes as Textual's (``CACHE_SIZES``).
"""

from __future__ import annotations

from textual.cache import FIFOCache
from textual.strip import Strip

_installed: list = []  # Textual's two methods once install() has run (the app calls it at start-up)
_textual_init: list = []  # and Textual's Strip.__init__
# Strip's own caches and their sizes (textual 8.2.8's Strip.__init__, the pinned version)
CACHE_SIZES = {"_divide_cache": 4, "_crop_cache": 16, "_style_cache": 16, "_filter_cache": 4,
               "_line_length_cache": 4, "_crop_extend_cache": 4, "_offsets_cache": 4}


# every slot Strip has in that version: the five set when a strip is built, and the caches
STRIP_SLOTS = frozenset(CACHE_SIZES) | {"_segments", "_cell_length", "_render_cache", "_link_ids", "_cell_count"}


def caches_on_first_use_fit(strip_class=Strip) -> bool:
    """Whether this Textual's Strip has exactly the slots the lazy caches were written for: another
    (an upgrade past the pin) keeps its own ``__init__``, so no slot it adds is left unset."""
    return frozenset(getattr(strip_class, "__slots__", ())) == STRIP_SLOTS


def _init_without_caches(self: Strip, segments, cell_length: int | None = None) -> None:
    self._segments = list(segments)
    self._cell_length = cell_length
    self._render_cache = None
    self._link_ids = None
    self._cell_count = None


def _cache_on_first_use(self: Strip, name: str) -> FIFOCache:
    """Only reached for an attribute not set: one of the caches the first time it is used."""
    size = CACHE_SIZES.get(name)
    if size is None:
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
    cache: FIFOCache = FIFOCache(size)
    setattr(self, name, cache)
    return cache


def install() -> None:
    if _installed:
        return
    divide, crop_extend = Strip.divide, Strip.crop_extend
    _installed.extend((divide, crop_extend))
    _textual_init.append(Strip.__init__)

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
    if caches_on_first_use_fit():
        Strip.__init__ = _init_without_caches  # type: ignore[method-assign]
        Strip.__getattr__ = _cache_on_first_use  # type: ignore[attr-defined]
