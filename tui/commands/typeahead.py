"""Type-ahead: keys typed right after the key that opens a text box go into it.

A key that opens a box (``/`` filter or search) runs as a priority binding, but the box gets its
focus only after the next refresh; keys that arrive in between (typed fast, sent by tmux, pasted)
would go to the table behind it (where ``c`` of ``/alice`` switched to Crondor). The app routes
them into the box instead; mixed into :class:`tui.app.RouteDeckApp`.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class TypeAhead:
    _typeahead: Input | None = None

    def type_ahead(self, box: Input) -> None:
        """``box`` was just opened by a key and gets focus after the next refresh: the keys that
        arrive before that (typed fast, sent by tmux, pasted) go into it, not to the table behind
        it (where ``c`` of ``/alice`` switched to Crondor). The opening key must be a priority
        binding so that it runs before the following keys are handed to the focused widget.
        As when typed slowly into a box that selects its text on focus, the first key replaces
        the old text; the focus that follows then does not select what was typed ahead."""
        self._typeahead = box
        self._typed_ahead = False

    def _type_into(self, box: Input, text: str) -> None:
        if not self._typed_ahead:
            self._typed_ahead = True
            if box.select_on_focus:
                box.value = ""
                box.select_on_focus = False  # restored when it loses focus (on_descendant_blur)
                self._no_select = self._no_select | {box}
        box.insert_text_at_cursor(text)

    _no_select: frozenset = frozenset()  # boxes whose select-on-focus type-ahead turned off

    _submit_on_focus: Input | None = None

    async def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if event.widget is self._submit_on_focus:
            self._submit_on_focus = None
            await event.widget.action_submit()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        widget = event.widget
        if widget in self._no_select:
            self._no_select = self._no_select - {widget}
            widget.select_on_focus = True

    async def on_event(self, event: events.Event) -> None:
        box = self._typeahead
        if box is not None and isinstance(event, events.Key) and not event.is_forwarded:
            if not box.is_attached or box.has_focus or not box.display:
                self._typeahead = None
            elif event.key == "enter":
                # submitted once the box has its focus (the focus it was opened with would otherwise
                # land after the submit and take the focus back from the table)
                self._typeahead = None
                self._submit_on_focus = box
                return
            elif event.key == "backspace":
                box.value = box.value[:-1]
                box.cursor_position = len(box.value)
                return
            elif event.is_printable and event.character:
                self._type_into(box, event.character)
                return
        await super().on_event(event)


def open_text_box(screen, box: Input, blink: bool | None = None) -> None:
    """Show ``box`` (a ``/`` filter or search, display:none until its ``-shown`` class lands),
    focus it once it is laid out, and route the keys typed before then into it (``type_ahead``)."""
    box.add_class("-shown")
    if blink is not None:
        box.cursor_blink = blink
    screen.call_after_refresh(box.focus)
    type_ahead = getattr(screen.app, "type_ahead", None)  # an app without TypeAhead (tests)
    if type_ahead is not None:
        type_ahead(box)
