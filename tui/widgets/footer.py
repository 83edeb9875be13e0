"""``DeckFooter``: Textual's footer, but the essential keys never fall off a narrow terminal.

At 80 columns the full list of a screen's keys does not fit, and Textual's footer simply clips
it at the right, where ``q Quit`` is (issue 11 item 9). This footer always shows the essential
keys (``ESSENTIAL``: quit, help, the ``:`` line), then as many of the others as fit, the most
useful first (``PRIORITY``, as k9s puts a view's own commands first: what acts on the selected
row — hold, release, remove, open it — then filter, why-not, sort; the view keys ``b`` ``j`` ``c``
and the rest after), shown in the keymap's order, and drops the Ctrl+P hint when anything had to
go (``:`` does the same). ``?`` still lists every key.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Resize
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

ESSENTIAL = ("quit", "help", "command_line")
PALETTE_WIDTH = 13  # "▏^p palette" docked on the right
# Chosen first when not all keys fit (after ESSENTIAL); the others follow in the keymap's order.
PRIORITY = ("hold", "release", "remove", "select", "open_ad", "open_route", "open_io", "open_hooks",
            "filter", "why_not", "apply", "close", "back", "cycle_sort", "edit_route", "view_route")


def _rank(binding: Binding) -> int:
    action = binding.action.split("(")[0].removeprefix("screen.").removeprefix("app.")
    return PRIORITY.index(action) if action in PRIORITY else len(PRIORITY)


def key_width(app, binding: Binding) -> int:
    """Cells one key takes: " key description " (FooterKey's padding and gap)."""
    return len(app.get_key_display(binding)) + len(binding.description) + 3


def fit(app, bindings: list[tuple[Binding, bool, str]], width: int) -> tuple[list[tuple[Binding, bool, str]], bool]:
    """The bindings to show in ``width`` cells, and whether all of them fit."""
    total = sum(key_width(app, b) for b, _, _ in bindings)
    if total + PALETTE_WIDTH <= width:
        return bindings, True
    essential = [x for x in bindings if x[0].action in ESSENTIAL]
    budget = width - sum(key_width(app, b) for b, _, _ in essential)
    keep = {id(x) for x in essential}
    for x in sorted(bindings, key=lambda x: _rank(x[0])):  # stable: keymap order within a rank
        if id(x) in keep:
            continue
        w = key_width(app, x[0])
        if w <= budget:
            keep.add(id(x))
            budget -= w
    return [x for x in bindings if id(x) in keep], False


class DeckFooter(Footer):
    """Textual's ``Footer`` recomposes (removes and mounts every key) each time the screen's
    bindings are refreshed: on every focus change and screen switch, several times per switch,
    mostly with the same keys. This one recomposes only when what it would show changed
    (``_signature``), and gives each key its ``-compact`` class at construction instead of a data
    binding (whose watcher restyles every key on mount): issue 14 item 3."""

    _shown_width = -1
    _shown: tuple | None = None

    def _key_bindings(self) -> list[tuple[Binding, bool, str]]:
        seen: set[str] = set()
        bindings = []
        for _, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.show and binding.action not in seen:  # one key per action, as Footer
                seen.add(binding.action)
                bindings.append((binding, enabled, tooltip))
        return bindings

    def _signature(self, bindings, width: int) -> tuple:
        palette = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            entry = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
            palette = entry and (entry[1].key, entry[1].description, entry[2])
        return (width, self.compact, palette,
                tuple((b.key, b.action, b.description, enabled, tooltip) for b, enabled, tooltip in bindings))

    def bindings_changed(self, screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        """Recompose if the keys to show changed; a footer under another screen waits (the app's
        focus is then on that screen's widgets, so its bindings would be wrong here) until its
        screen resumes (``DeckScreen._on_screen_resume``)."""
        if not self.is_attached or self.screen is not self.app.screen:
            return
        width = self.size.width or self.app.size.width
        if self._signature(self._key_bindings(), width) != self._shown:
            await self.recompose()

    def watch_compact(self, compact: bool) -> None:
        if self.is_attached and self._bindings_ready:
            self.call_after_refresh(self._recompose_if_changed)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        active = self.screen.active_bindings
        bindings = self._key_bindings()
        width = self.size.width or self.app.size.width
        self._shown_width = width
        self._shown = self._signature(bindings, width)
        shown, all_fit = fit(self.app, bindings, width)
        self.styles.grid_size_columns = len(shown)
        compact = "-compact" if self.compact else ""
        for binding, enabled, tooltip in shown:
            key = FooterKey(binding.key, self.app.get_key_display(binding), binding.description,
                            binding.action, disabled=not enabled, tooltip=tooltip, classes=compact)
            key.set_reactive(FooterKey.compact, self.compact)
            yield key
        if all_fit and self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            entry = active.get(self.app.COMMAND_PALETTE_BINDING)
            if entry is not None:
                _, binding, enabled, tooltip = entry
                yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description,
                                binding.action, classes="-command-palette", disabled=not enabled,
                                tooltip=binding.tooltip or binding.description)

    def on_resize(self, event: Resize) -> None:
        if event.size.width != self._shown_width and self._bindings_ready:
            self.call_after_refresh(self._recompose_if_changed)
