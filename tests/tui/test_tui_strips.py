"""Textual's lines are freed when dropped, not by the cyclic GC (issue 30: tui.widgets.strips)."""

from __future__ import annotations

import gc

import pytest

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


def test_a_strip_makes_its_caches_when_it_first_uses_them_and_answers_as_textuals():
    """Issue 30: a Strip built its seven caches up front (~6 us a line, 15 objects); now each is made
    on first use, and every method answers as a strip built by Textual's __init__."""
    strips.install()
    line = _strip()
    for name in strips.CACHE_SIZES:  # not made yet: the slot is empty
        with pytest.raises(AttributeError):
            Strip.__dict__[name].__get__(line, Strip)
    textual = Strip.__new__(Strip)
    strips._textual_init[0](textual, list(line), None)
    for name, size in strips.CACHE_SIZES.items():
        assert getattr(textual, name)._maxsize == size  # the sizes are Textual's
    assert line.crop(2, 9) == textual.crop(2, 9) and line.crop(2, 9) is line.crop(2, 9)  # cached once made
    assert line.divide([3, 8]) == textual.divide([3, 8])
    assert line.apply_style(Style(italic=True)) == textual.apply_style(Style(italic=True))
    assert line.extend_cell_length(30) == textual.extend_cell_length(30)
    assert line.crop_extend(1, 20, None) == textual.crop_extend(1, 20, None)
    assert line.cell_length == textual.cell_length and line.text == textual.text
    with pytest.raises(AttributeError):
        line.no_such_attribute  # an unknown name is still an AttributeError


def test_the_lazy_caches_are_installed_only_over_the_strip_they_were_written_for():
    """The pinned Textual's Strip has exactly the slots the lazy caches set or make; a Strip with
    another set of slots (an upgrade past the pin) keeps Textual's own ``__init__``."""
    assert strips.caches_on_first_use_fit()

    class Other:
        __slots__ = (*strips.STRIP_SLOTS, "_new_cache")

    assert not strips.caches_on_first_use_fit(Other)
