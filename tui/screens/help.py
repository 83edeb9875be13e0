"""``?`` help: the keys of the screen it is opened on and of the app, and the ``:`` commands of the mode.

Built from ``tui.commands.keymap`` (where every screen's bindings come from) and the command table, so it cannot fall out of date.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from tui.commands import keymap
from tui.text.legend import legend_sections
from tui.commands.palette import COMMANDS
from tui.screens.backdrop import TintedBackdrop
from tui.screens.base import skip_restyle
from tui.screens.kept import kept_screen
from tui.screens.whole_paint import WholePaint
from tui.widgets.chrome import titled


def screen_sections(over) -> list[tuple[str, list]]:
    """The keymap sections of the screen ``over`` and of the widgets on it: those whose binding list
    is the one the screen's or a widget's class binds (``keymap.SECTIONS`` holds the same lists)."""
    if over is None:
        return []
    bound = {id(type(over).BINDINGS)} | {id(type(w).BINDINGS) for w in over.walk_children()}
    return [(title, bindings) for title, bindings in keymap.SECTIONS[1:]
            if id(bindings) in bound and title != "Replay"]


def help_sections(app, over=None) -> list[tuple[str, list[tuple[str, str]]]]:
    """Help for the screen ``over`` (the one help was opened on; by default the screen under help):
    its own keys first, then the keys that work everywhere, the replay keys in replay, the ``:``
    commands this mode offers, what the columns of its table mean, and where the other screens are.
    (Help listed every screen's keys and every command at once; issue 29.)"""
    if over is None:
        stack = app.screen_stack
        over = stack[-2] if len(stack) > 1 and isinstance(stack[-1], HelpScreen) else app.screen
    own = screen_sections(over)
    sections = [(f"{title} (this screen)", keymap.rows(bindings)) for title, bindings in own]
    sections.append(("Everywhere", keymap.rows(keymap.APP) + [("ctrl+p", "command palette")]))
    if getattr(app, "mode", "") == "replay":
        sections.append(("Replay", keymap.rows(keymap.REPLAY)))
    offers = getattr(app, "offers", lambda control: True)
    sections.append((": commands", [(f":{c.name} {c.arg}".strip()
                                     + (f"  (:{', :'.join(c.aliases)})" if c.aliases else ""), c.help)
                                    for c in COMMANDS if offers(c.control)]))
    titles = {title for title, _ in own}
    sections.extend(s for s in legend_sections() if s[0].removesuffix(" columns") in titles)
    others = [title for title, _ in keymap.SECTIONS[1:] if title not in titles and title != "Replay"]
    sections.append(("Other screens", [("?", "on a screen lists its own keys: " + ", ".join(others))]))
    return sections


KEEP_HELP = 6  # help screens kept alive between opens, one per distinct help text (the most recent)


def help_screen(app, over=None) -> "HelpScreen":
    """The help to push over ``over`` (by default the current screen): the one kept for the same
    help text if any, else a new one, kept. Building it (compose, the styles, laying out and
    drawing the long keys table) took 100-150 ms of the UI thread's CPU on every ``?`` in the demo
    (issue 30); a kept one resumes as the main views do. Kept screens are installed on the app
    (Textual removes a popped screen otherwise, as for ``route_detail_screen``); past ``KEEP_HELP``
    the least recently opened is dropped. The text is what :func:`help_sections` gives now, so a
    kept screen never shows another screen's, mode's or feed's keys."""
    over = app.screen if over is None else over
    sections = help_sections(app, over)
    key = tuple((title, tuple(rows)) for title, rows in sections)
    kept: dict[tuple, HelpScreen] | None = getattr(app, "_help_screens", None)
    if kept is None:
        kept = app._help_screens = {}
    return kept_screen(app, kept, key, lambda: HelpScreen(sections), "help", KEEP_HELP)


class HelpScreen(TintedBackdrop, WholePaint, ModalScreen[None]):
    BINDINGS = keymap.HELP
    PAINTED_ON_PUSH = True  # (its opening, prepare_paint, is done before the push's paint)

    def __init__(self, sections: list[tuple[str, list[tuple[str, str]]]]) -> None:
        super().__init__()
        self.sections = sections  # help_sections(app, over) of the screen it is opened over (help_screen)

    def compose(self) -> ComposeResult:
        yield titled(VerticalScroll(Static(self.render_help(), id="help-text"), id="help-box", classes="dialog"),
                     "RouteDeck help", "Esc close")

    def _on_screen_resume(self, event) -> None:
        """Textual's handler, after the opening (:meth:`prepare_paint`) unless the push painted the
        help whole with it (``tui.shell.prewarm.Prewarm.push_screen``); then also without the
        repaint of the whole screen that Textual's handler ends with (its lines are on screen)."""
        skip_restyle(self, event)  # a kept help, as the main views (tui.screens.base)
        painted, self._painted_at_switch = self._painted_at_switch, False
        if not painted:
            self.prepare_paint()
        Screen._on_screen_resume(self, event)
        if painted and not event.refresh_styles:
            self._repaint_required = False
        event.prevent_default()  # (Screen's own handler has run)

    def prepare_paint(self) -> None:
        """What an open of the help shows: its keys from the top, and no toasts. Toasts stack at
        the bottom right, above every screen: at 80×24 they covered the help's keys (issue 29).
        What they said is in the Events pane; help is what the user asked for. (On every open: a
        kept help screen is mounted once.) The tinted board behind it is drawn as it is now
        (``TintedBackdrop.redraw_backdrop``): it is the help's own content, kept in its render
        cache, which Textual draws again only while the help's dirty regions are not empty; a
        repaint while it was open (a snapshot under it, a resize) emptied them, and the board
        changed after the help was closed was painted as it was (review of s16-switch, F1)."""
        self.redraw_backdrop()
        self.app.clear_notifications()
        for box in self.query("#help-box"):
            box.scroll_home(animate=False, immediate=True)  # a kept one opens at the top, as a new one

    def render_help(self) -> Table:
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold cyan", no_wrap=True)
        grid.add_column()
        for title, rows in self.sections:
            grid.add_row(Text(title, style="bold underline"), "")
            for key, what in rows:
                grid.add_row(key, what)
            grid.add_row("", "")
        return grid


class TextScreen(ModalScreen[None]):
    """A long text in a scrollable dialog (the engine's traceback after a crash)."""

    BINDINGS = keymap.DIALOG

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text, self.text = title, text

    def compose(self) -> ComposeResult:
        yield titled(VerticalScroll(Static(Text(self.text), id="text-body"), classes="dialog"),
                     self.title_text, "Esc close")
