"""A screen shown by a key is painted whole within the key (issue 30): the switch to a built main
view (``tui.shell.prewarm.Prewarm.switch_mode``) and the push of a kept dialog (``push_screen``,
the help) lay the screen out and paint all of it at once (``tui.shell.prewarm.pull_before_paint``,
``painted_now``). Textual paints a screen shown again from its update timer, once its message queue
has run (up to 1/60 s and a turn of the loop later, more under load), with a layout and a full
repaint of the screen.

:class:`WholePaint`, mixed into such a screen (before ``Screen``), keeps that paint the only one:
what its widgets asked for before it is on screen already.
"""

from __future__ import annotations

from textual.screen import Screen


class WholePaint:
    # A built one pushed (``Prewarm.push_screen``) is painted within the push too: the help. Not the
    # editor nor a route's screen, which do their opening work in their ScreenResume (the editor
    # reads the route's file there): painted before it, they would show the last open's lines first.
    PAINTED_ON_PUSH = False
    _painted_at_switch = False  # painted whole by the switch to it (tui.shell.prewarm.painted_now)
    _painted_time = -1.0  # when (textual._time.get_time) the last switch to it painted it whole
    _switch_paint = False  # the next paint is the switch's whole paint (tui.shell.prewarm.pull_before_paint)

    def prepare_paint(self) -> None:
        """What the screen does as it is shown, before the whole paint (the main views draw the
        latest snapshot: ``DeckScreen.pull``; the help opens at the top)."""

    def _compositor_refresh(self) -> None:
        """Textual's; the switch's whole paint (``tui.shell.prewarm.pull_before_paint``) also takes
        the widgets' repaints asked for before it (a scrollbar whose thumb the switch's layout
        moved): painted now, they would have painted their lines once more after it, e.g. 34 of 40
        lines after each ``j`` (issue 30)."""
        if self._switch_paint and self is self.app.screen and not self.app._batch_count:  # type: ignore[attr-defined]
            self._switch_paint = False
            for widget in self._compositor.visible_widgets:  # type: ignore[attr-defined]  # (the layout's, scrollbars too)
                widget._repaint_required = False  # (the whole screen is dirty: each is drawn now)
        Screen._compositor_refresh(self)  # type: ignore[arg-type]

    async def _on_update(self, message) -> None:
        """Textual's, except for a widget's repaint asked for before the switch painted the whole
        screen (``tui.shell.prewarm.painted_now``): it is on screen already."""
        await self._unless_painted(Screen._on_update, message)

    async def _on_layout(self, message) -> None:
        """Textual's, except for a layout asked for before the switch laid out and painted the
        whole screen (``tui.shell.prewarm``: the changes were handed over before that layout)."""
        await self._unless_painted(Screen._on_layout, message)

    async def _unless_painted(self, handler, message) -> None:
        """Screen's ``handler`` for ``message``, unless it was sent before the switch's whole paint."""
        if message.time > self._painted_time:
            await handler(self, message)
        else:
            message.stop()
        message.prevent_default()  # (Screen's own handler has run, or is not to)
