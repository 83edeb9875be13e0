"""What a Textual screen shows, as the compositor draws it: its text, or its cells with their
styles, from the widgets' cached lines or drawn afresh (every line cache of the screen cleared
first, as a freshly composed screen draws it)."""

from __future__ import annotations

from rich.console import Console
from rich.segment import ControlType
from textual._context import visible_screen_stack
from textual.app import App
from textual.screen import Screen
from textual.strip import Strip


def screen_text(screen: Screen) -> list[str]:
    """The screen's lines of text (what the terminal shows of it)."""
    return [strip.text for strip in screen._compositor.render_strips()]


def strip_cells(line: Strip | list[Strip]) -> list[tuple]:
    """``(character, style)`` of each cell of ``line``: a Strip, or the Strips of one line of a
    ``LayoutUpdate`` (what ``App._display`` is given)."""
    segments = line if isinstance(line, Strip) else [seg for strip in line for seg in strip]
    return [(ch, seg.style) for seg in segments if not seg.control for ch in seg.text]


def screen_cells(screen: Screen) -> list[list[tuple]]:
    """The screen's cells, line by line, with their styles, from the widgets' cached lines."""
    return [strip_cells(strip) for strip in screen._compositor.render_strips()]


def fresh_cells(screen: Screen) -> list[list[tuple]]:
    """:func:`screen_cells` with every line cache of the screen (its own and its widgets') cleared
    first: what the screen draws afresh. The caches hold the fresh lines afterwards. A dialog on
    top of the app draws the screens under it as its backdrop (Textual's compositor hands them
    over as it paints: ``visible_screen_stack``); their line caches are cleared too."""
    under = screen.app._background_screens if screen is screen.app.screen else []
    for shown in (*under, screen):
        for node in shown.walk_children(with_self=True):
            node._styles_cache.clear()
    visible_screen_stack.set(list(under))
    return screen_cells(screen)


def stale_lines(shown: list[list[tuple]], screen: Screen) -> list[int]:
    """The line numbers where ``shown`` (cells) differs from what ``screen`` draws afresh."""
    fresh = fresh_cells(screen)
    return [y for y in range(max(len(shown), len(fresh)))
            if y >= len(shown) or y >= len(fresh) or shown[y] != fresh[y]]


def on_paint(monkeypatch, call) -> None:
    """For one test: every paint an app hands the terminal (``App._display(screen, update)``) is
    given to ``call(screen, update)`` first."""
    display = App._display
    monkeypatch.setattr(App, "_display", lambda self, screen, update: (
        call(screen, update), display(self, screen, update))[1])


class Terminal:
    """The cells a terminal shows, from every paint the app sends it (``App._display``'s updates:
    a whole ``LayoutUpdate`` or a ``ChopsUpdate`` of the lines that changed), applied in order."""

    def __init__(self, width: int, height: int) -> None:
        self.console = Console(width=width, height=height, legacy_windows=False)
        self.cells = [[(" ", None)] * width for _ in range(height)]

    def paint(self, update) -> None:
        x = y = 0
        height, width = len(self.cells), len(self.cells[0])
        for seg in update.__rich_console__(self.console, self.console.options):
            if seg.control:
                for control in seg.control:
                    if control[0] == ControlType.CURSOR_MOVE_TO:
                        x, y = control[1], control[2]
                continue
            if seg.text == "\n":
                continue
            for ch in seg.text:
                if 0 <= y < height and 0 <= x < width:
                    self.cells[y][x] = (ch, seg.style)
                x += 1
