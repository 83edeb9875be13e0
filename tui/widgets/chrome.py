"""The parts every screen shares: the status header, the engine error banner, and titled borders
(:func:`titled`).

The header reads only the snapshot (mode, virtual/real time in the engine's zone, speed, engine
state, totals), never the wall clock, so a frozen snapshot renders identically every time.

The speed is shown where the mode has one to change (``"speed"`` in ``Snapshot.controls``: demo
and replay). Watch has none: it is live, and says so — with the pace of the log's own clock when
that is clearly not real time (``Snapshot.log_rate``: a log written by ``demo --speed 30``), never
a "×1" that the log's clock contradicts; and when the log has not changed for a minute or more
(``Snapshot.log_lag``, on a log written in real time), when it last did ("live, last change 7m ago"), so a schedd or recorder
that stopped writing does not look like a running one.
"""

from __future__ import annotations

from typing import TypeVar

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from engine.contract.snapshot import Snapshot
from tui.text.format import ago, clock_time, count, measured_speed, speed
from tui.widgets.repaint import show_text


QUIET = 60.0  # seconds without a new transaction before watch's header says when the log last changed
W = TypeVar("W", bound=Widget)


def titled(widget: W, title: str, keys: str | None = None) -> W:
    """``widget`` with ``title`` on its top border and, if given, ``keys`` (the keys it takes) on
    its bottom border; returned, to be yielded or used as a container (``with titled(...):``)."""
    widget.border_title = title
    if keys is not None:
        widget.border_subtitle = keys
    return widget




def pace(snap: Snapshot) -> str:
    """``×60`` where the speed can be changed; else ``live``, and the log clock's pace if not real time."""
    if "speed" in snap.controls:
        return speed(snap.speed)
    if snap.log_rate is not None:
        return f"live, log {measured_speed(snap.log_rate)}"
    if snap.clock == "real" and snap.log_lag is not None and snap.log_lag >= QUIET:
        return f"live, last change {ago(snap.log_lag)}"  # a log that stopped growing is not "running"
    return "live"


def header_text(snap: Snapshot | None, readonly: bool, width: int = 120) -> Text:
    if snap is None:
        return Text(" RouteDeck · waiting for the engine…", style="bold")
    # On a narrow terminal the words the operator can do without go first, so the line is never
    # cut ("· engine running ·" lost "read-only" at 80 columns): "engine", then watch's
    # "read-only" (watch is read-only by definition; the mode says it).
    for engine_word, ro in ((True, readonly), (False, readonly), (False, readonly and snap.mode != "watch")):
        left = _left(snap, width, engine_word, ro)
        if left.cell_len <= width:
            break
    active = len(snap.routes)
    right = Text(f"routes {active} · jobs {count(snap.total_jobs)} ")
    gap = width - left.cell_len - right.cell_len
    if gap >= 1:
        return left + Text(" " * gap) + right
    return left


def _left(snap: Snapshot, width: int, engine_word: bool, readonly: bool) -> Text:
    state = snap.engine_state
    state_style = {"running": "green", "paused": "yellow", "crashed": "bold red", "stopped": "red"}.get(state, "")
    left = Text(" RouteDeck", style="bold")
    left.append(f" · {snap.mode} · {snap.clock} {clock_time(snap.time, snap.tz)}")
    if width >= 100:
        left.append(f" {snap.tz}")
    left.append(f" ({pace(snap)}) · " + ("engine " if engine_word else ""))
    left.append(state, style=state_style)
    if readonly:
        left.append(" · read-only", style="yellow")
    return left


class StatusHeader(Static):
    DEFAULT_CSS = """
    StatusHeader { height: 1; background: $primary; color: $text; }
    """

    _shown: tuple | None = None  # (snapshot, readonly, width) last drawn

    def show(self, snap: Snapshot | None, readonly: bool) -> None:
        width = self.size.width or 120
        self._shown = (snap, readonly, width)
        show_text(self, header_text(snap, readonly, width))

    def on_resize(self, event) -> None:
        """A header shown before it had its width (a screen composed off screen, tui.shell.prewarm)
        is redrawn for the width it gets."""
        if self._shown is not None and event.size.width and event.size.width != self._shown[2]:
            self.show(*self._shown[:2])


class EngineBanner(Static):
    """Shown only when the engine has failed; the last snapshot stays on screen under it."""

    DEFAULT_CSS = """
    EngineBanner { height: auto; max-height: 4; background: $error; color: $text; padding: 0 1; display: none; }
    EngineBanner.-shown { display: block; }
    """

    def show(self, error: str | None) -> None:
        self.set_class(bool(error), "-shown")
        if error:
            self.update(f"engine stopped: {error_summary(error)} — showing the last snapshot "
                        "(:error for details, q quits)")


def error_summary(error: str) -> str:
    """The last non-empty line of a traceback (the exception itself), or the text as it is."""
    lines = [ln.strip() for ln in error.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else error
