"""Gauges and sparklines as Rich ``Text`` so they fit in table cells.

A gauge shows ``value / limit`` as a few block characters; a negative or zero limit means "no
limit" (MaxIdleJobs < 0, htcondor.md §1.5) and draws no bar. Sparklines scale to the larger of
the data's maximum and a reference (the failure threshold), so a rate below threshold stays low.
"""

from __future__ import annotations

from rich.text import Text

BLOCKS = " ▁▂▃▄▅▆▇█"


def gauge(value: int, limit: int, width: int = 4, digits: int = 9) -> Text:
    text = Text(f"{value}/{limit if limit >= 0 else '∞'}".rjust(digits) + " ")
    if limit <= 0:
        return text + Text(" " * width)
    frac = min(1.0, value / limit)
    full = frac * width
    cells = []
    for i in range(width):
        part = max(0.0, min(1.0, full - i))
        # a sliver still shows: any part of a cell draws at least the lowest block
        cells.append("█" if part >= 1 else BLOCKS[max(1, int(part * 8))] if part > 0 else "·")
    style = "red" if frac >= 1 else "yellow" if frac >= 0.8 else "green"
    return text + Text("".join(cells), style=style)


def sparkline(values: tuple[float, ...] | list[float], reference: float = 0.0, width: int = 6) -> Text:
    values = list(values)[-width:]
    if not values:
        return Text(" " * width)
    top = max(max(values), reference) or 1.0
    chars = "".join(BLOCKS[1 + min(7, int(v / top * 7.999))] if v > 0 else BLOCKS[1] for v in values)
    style = "red" if reference and values[-1] > reference else "cyan"
    return Text(chars.ljust(width), style=style)
