"""The optional abilities a feed (demo, watch, replay) may offer the runtime, with typed
"not offered" defaults: a feed subclasses :class:`FeedBase` and overrides what it offers, so the
runtime reads attributes instead of probing with ``getattr``/``hasattr`` (issue 26)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.contract import snapshot as S


@dataclass(frozen=True)
class Check:
    """One step of the router's decision for a job, normalised for display."""

    label: str
    ok: bool | None  # None = informational
    detail: str


class FeedBase:
    """Defaults for what a feed does not offer: the full command set, no embedded execute node
    (``startd``), no failed write (``write_error``)."""

    controls: frozenset[str] = frozenset(S.CONTROLS)
    startd: Any = None  # the embedded execute node, None when the feed has none
    write_error: str | None = None  # set while stalled on a failed write, None otherwise

    def sync_log(self, speed: float, monotonic: Any) -> None:
        """Sync what the feed's own queue log holds before a snapshot is published (the demo's
        grouped fdatasync above real time, issue 30); ``monotonic`` is the runtime's wall clock.
        A feed that writes no log has nothing to sync."""

    def advance(self) -> None:
        """Bring the state a snapshot reads up to the feed's now (windows closed, change events taken
        into the jobs table, events published), so that ``snapshot()`` only reads and changes
        nothing (issue 26); the runtime calls it before each snapshot. A feed whose snapshot reads
        its state as it is has nothing to do."""
