"""Textual's lines are freed when dropped, not by the cyclic GC (issue 30: tui.widgets.strips)."""

from __future__ import annotations

import gc

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from tui.widgets import strips


def _strip() -> Strip:
    return Strip([Segment("route ", Style(bold=True)), Segment("Site1_Slurm", Style(color="green"))])


def test_a_strip_divided_at_its_end_or_cropped_whole_is_freed_without_the_cyclic_gc():
    strips.install()
    enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        for _ in range(50):
            line = _strip()
            assert line.divide([line.cell_length]) == [line]
            assert line.crop_extend(0, line.cell_length, None) is line
            del line
        assert gc.collect() == 0  # Textual kept each strip in its own cache: 50 cycles to collect
    finally:
        if enabled:
            gc.enable()


def test_strips_divide_and_crop_extend_give_what_textual_gives():
    strips.install()
    divide, crop_extend = strips._installed
    line = _strip()
    n = line.cell_length
    for cuts in ([n], [3, n], [n, n + 4], [4], [2, 5, n]):
        assert Strip.divide(_strip(), cuts) == divide(_strip(), cuts), cuts
    for start, end in ((0, n), (-1, n), (0, n + 3), (2, n), (0, 4), (3, 7)):
        got, want = Strip.crop_extend(_strip(), start, end, None), crop_extend(_strip(), start, end, None)
        assert got == want and got.cell_length == want.cell_length, (start, end)
