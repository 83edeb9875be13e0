"""A dialog's tinted backdrop, tinted again only where the screen under it changed (issue 30).

A ``ModalScreen`` with a translucent background draws the screen under it, tinted, as its own
content (Textual's ``Screen.render`` returns a ``BackgroundScreen``): on every repaint of the
dialog — each snapshot changes the live board under the help, four times a second — Textual
renders the whole screen under it through Rich and tints every segment again. That was the
largest part of opening ``?`` (17-35 ms of the UI thread's CPU of a 132×40 screen) and of each
snapshot while help is open. :class:`TintedBackdrop` builds the same lines from the lines of the
screen under it (``Compositor.render_strips``: its widgets' cached lines) and keeps each tinted
line with the line it was tinted from, so only the lines that changed are tinted again. The
segments are Textual 8.2.8's (``BackgroundScreen.process_segments`` under the screen's own style,
as ``RichVisual`` and ``_Styled`` apply it); anything else (a text selection, a size not the
screen's, an opaque background) takes Textual's own path.
"""

from __future__ import annotations

from rich.segment import Segment
from textual._context import visible_screen_stack
from textual.renderables.background_screen import BackgroundScreen
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import _RenderCache


class TintedBackdrop:
    """Mixed into a ``ModalScreen`` (before it): its backdrop tinted line by line, kept per line."""

    _backdrop: dict[int, tuple[Strip, Strip]] | None = None  # line -> (line under, tinted line)

    def _render_content(self) -> None:
        lines = self._backdrop_lines()
        if lines is None:
            self._backdrop = None
            super()._render_content()  # type: ignore[misc]
            return
        self._render_cache = _RenderCache(self.size, lines)  # type: ignore[attr-defined]
        self._dirty_regions.clear()  # type: ignore[attr-defined]

    def redraw_backdrop(self) -> None:
        """Have the next paint draw the screen under this one as it is now: the lines whose tinted
        line changed since this screen last drew its content are drawn again, the others are kept
        (what ``_set_dirty()`` would do, without drawing every line of the screen again: 4 ms of
        the UI thread's CPU on each ``?`` at 132x40)."""
        old = self._render_cache  # type: ignore[attr-defined]
        lines = None
        if self._backdrop is not None and old is not None:
            token = visible_screen_stack.set(list(self.app._background_screens))  # type: ignore[attr-defined]
            try:  # (as the compositor hands them over as it paints)
                lines = self._backdrop_lines()
            finally:
                visible_screen_stack.reset(token)
        if lines is None or old.size != self.size:  # type: ignore[attr-defined]
            self._set_dirty()  # type: ignore[attr-defined]
            return
        self._render_cache = _RenderCache(self.size, lines)  # type: ignore[attr-defined]
        width = self.size.width  # type: ignore[attr-defined]
        self._styles_cache.set_dirty(*(Region(0, y, width, 1) for y, (was, now) in  # type: ignore[attr-defined]
                                       enumerate(zip(old.lines, lines)) if was is not now))

    def _backdrop_lines(self) -> list[Strip] | None:
        """The tinted lines of the screen under this one, or None where Textual's path must run."""
        color = self.styles.background  # type: ignore[attr-defined]
        size = self.size  # type: ignore[attr-defined]
        if color.a >= 1 or self.text_selection is not None:  # type: ignore[attr-defined]
            return None
        try:
            stack = visible_screen_stack.get()
        except LookupError:
            return None
        if not stack or stack[-1] is self:
            return None
        base = stack.pop()  # as Screen.render takes it (the screen under it draws its own backdrop next)
        if base._compositor.size != size:
            stack.append(base)
            return None
        style = self.visual_style.rich_style  # type: ignore[attr-defined]
        apply = style.__add__ if style else None
        kept = self._backdrop if self._backdrop is not None else {}
        lines: list[Strip] = []
        for y, line in enumerate(base._compositor.render_strips(size)):
            old = kept.get(y)
            if old is not None and old[0] == line:
                lines.append(old[1])
                continue
            tinted = BackgroundScreen.process_segments(line, color)
            if apply is not None:
                tinted = [Segment(text, apply(seg_style), None) for text, seg_style, _control in tinted]
            strip = Strip(tinted, line.cell_length)
            kept[y] = (line, strip)
            lines.append(strip)
        self._backdrop = kept
        return lines
