"""Small text formatters shared by the screens: times in a zone, durations, counts.

All of them take the time to show and the "now" of the snapshot; none reads the wall clock,
so the same snapshot always renders the same text (snapshot tests depend on it).
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache
from itertools import accumulate
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from engine.clock import duration  # noqa: F401 - one duration format for the screens and the headless commands


@lru_cache(maxsize=32)
def zone(name: str):
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return timezone.utc


def clock_time(t: float, tz: str = "UTC", *, date: bool = True, seconds: bool = True) -> str:
    dt = datetime.fromtimestamp(t, zone(tz))
    fmt = ("%Y-%m-%d " if date else "") + ("%H:%M:%S" if seconds else "%H:%M")
    return dt.strftime(fmt)


def month_day(t: float, tz: str) -> str:
    return datetime.fromtimestamp(t, zone(tz)).strftime("%m-%d %H:%M")


def zoned(t: float, tz: str) -> str:
    """``2026-11-21 16:00 CST``: absolute time with the zone's abbreviation."""
    dt = datetime.fromtimestamp(t, zone(tz))
    return dt.strftime("%Y-%m-%d %H:%M ") + (dt.tzname() or tz)


def ago(seconds: float) -> str:
    """How long ago, in at most 9 cells (a countdown column): ``35s ago``, ``9m59s ago``,
    ``15m ago``, ``5h32m ago``, ``14h ago``, ``3d4h ago``, ``12d ago``: the two largest units while
    they fit, then the largest alone."""
    s = max(0, int(seconds))
    for size, unit, sub, subunit in ((86_400, "d", 3600, "h"), (3600, "h", 60, "m"), (60, "m", 1, "s")):
        if s >= size:
            big, rest = divmod(s, size)
            small = rest // sub
            return f"{big}{unit}{small}{subunit} ago" if big < 10 and small else f"{big}{unit} ago"
    return f"{s}s ago"


def short(seconds: float) -> str:
    """Round durations for limits and windows: ``5m``, ``90s``, ``2h``, ``0s``."""
    s = int(seconds)
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if s and s % size == 0:
            return f"{s // size}{unit}"
    return f"{s}s"


def count(n: int) -> str:
    return f"{n:,}"


def speed(x: float) -> str:
    return f"×{x:g}"


def measured_speed(x: float) -> str:
    """A measured pace to two significant figures: ``×30``, ``×600``, ``×2.5``, ``×0.05``."""
    return f"×{float(f'{x:.2g}'):g}"


def fit_widths(widths, room: int, padding: int = 0) -> list[int]:
    """Column widths for a table ``room`` cells wide: when they do not all fit, the last column
    that fits whole takes the leftover width, so the first column that does not fit starts at the
    right edge and none shows cut (a cut column misreads: "9" for 9/20, "1h29m5" for 1h29m58s).
    ``padding``: the cells a column takes besides its width (DataTable's cell padding, both sides)."""
    widths = list(widths)
    used, last = 0, None
    for i, w in enumerate(widths):
        if used + w + padding > room:
            break
        used, last = used + w + padding, i
    if last is not None and last + 1 < len(widths):
        widths[last] += room - used
    return widths


def fit_columns(cols, room: int, padding: int = 2) -> tuple:
    """:func:`fit_widths` for table columns ``(title, key, width)``."""
    cols = list(cols)
    widths = fit_widths((w for _t, _k, w in cols), room, padding)
    return tuple((t, k, w) for (t, k, _w), w in zip(cols, widths))


def column_starts(widths) -> list[int]:
    """Where each of columns this wide starts, the first at 0."""
    return list(accumulate(widths, initial=0))[:-1]


def farthest_scroll(widths, view: int) -> int:
    """The widest scroll of scrolling columns this wide in ``view`` cells: the first column start
    from which all the rest fits, so the table scrolled to its end shows its first scrolled column
    whole (the last start when even the last column alone is wider than the view); 0 when all fit."""
    starts = column_starts(widths)
    total = sum(widths)
    if not starts or total <= view:
        return 0
    return next((s for s in starts if s + view >= total), starts[-1])


def column_snap(widths, x: float, previous: float, limit: float) -> int:
    """The column start a scroll to ``x`` rests at, so no column shows cut beside the pinned ones:
    moving right (``x`` > ``previous``) the first start at or after ``x``, moving left the last at
    or before it, staying put the nearest; never past ``limit`` (the widest scroll, itself a start:
    :func:`farthest_scroll`). A wheel step of a few cells therefore moves a whole column."""
    starts = [s for s in column_starts(widths) if s <= limit] or [0]
    if x > previous:
        return next((s for s in starts if s >= x), starts[-1])
    if x < previous:
        return next((s for s in reversed(starts) if s <= x), starts[0])
    return min(starts, key=lambda s: (abs(s - x), s))


def column_step(widths, x: float, delta: int, limit: float) -> float | None:
    """Where a table scrolled to ``x`` goes when → (``delta`` 1) or ← (-1) moves it a whole column:
    the next / previous start of a scrolling column (``widths``: theirs, pinned ones left out),
    at most ``limit`` (the widest scroll); None when there is no column to go to."""
    starts = column_starts(widths)
    if delta > 0:
        if x >= limit:
            return None
        nxt = next((s for s in starts if s > x), None)
        return None if nxt is None else min(nxt, limit)
    return next((s for s in reversed(starts) if s < x), None)
