"""Scrollbars drawn in whole cells.

Textual's ``ScrollBarRender`` draws the thumb's ends in eighths of a cell with partial-block
glyphs (``▏▎▍▌▋▊▉``, ``▁▂▃▄▅▆▇``); in a terminal they read as stray characters beside a table
("│ … ▏│" at the end of the board's scrollbar row), and their look depends on the font. Here the
thumb is a run of whole cells: as long as the window's share of the bar (at least one cell), at
the bar's start when scrolled home and at its end when scrolled to the end.

``install`` sets it as the renderer of every scrollbar; the app calls it once at start-up.
"""

from __future__ import annotations

from rich.color import Color
from rich.segment import Segment, Segments
from rich.style import Style
from textual.scrollbar import ScrollBar, ScrollBarRender


def thumb_cells(size: int, virtual_size: float, window_size: float, position: float) -> tuple[int, int]:
    """``(first cell, cells)`` of the thumb on a bar ``size`` cells long, for a window of
    ``window_size`` over ``virtual_size`` scrolled to ``position``."""
    length = min(size, max(1, round(size * window_size / virtual_size)))
    room = size - length
    span = virtual_size - window_size
    start = round(room * position / span) if span > 0 else 0
    return max(0, min(room, start)), length


class WholeCellScrollBarRender(ScrollBarRender):
    @classmethod
    def render_bar(cls, size: int = 25, virtual_size: float = 50, window_size: float = 20, position: float = 0,
                   thickness: int = 1, vertical: bool = True, back_color: Color = Color.parse("#555555"),
                   bar_color: Color = Color.parse("bright_magenta")) -> Segments:
        if not (window_size and size and virtual_size and size != virtual_size):
            # no thumb: Textual's plain bar (no partial glyphs there)
            return super().render_bar(size, virtual_size, window_size, position, thickness, vertical,
                                      back_color, bar_color)
        start, length = thumb_cells(size, virtual_size, window_size, position)
        blank = cls.BLANK_GLYPH * (thickness if vertical else 1)
        # the same styles and mouse actions as Textual's bar: click before / after the thumb
        # pages, the thumb is grabbed
        before = Segment(blank, Style(bgcolor=back_color, meta={"@mouse.down": "scroll_up"}))
        thumb = Segment(blank, Style(color=bar_color, reverse=True, meta={"@mouse.down": "grab"}))
        after = Segment(blank, Style(bgcolor=back_color, meta={"@mouse.down": "scroll_down"}))
        segments = [before] * start + [thumb] * length + [after] * (size - start - length)
        if vertical:
            return Segments(segments, new_lines=True)
        return Segments((segments + [Segment.line()]) * thickness, new_lines=False)


def install() -> None:
    """Every scrollbar of the app draws whole cells (``ScrollBar.renderer`` is a class-wide setting)."""
    ScrollBar.renderer = WholeCellScrollBarRender
