"""Start-up work done off the critical path, once the first snapshot is on screen: the main views
one key reaches are composed in the background (their first visit only resumes them), then the
start-up heap is frozen out of the cyclic GC's reach. Mixed into :class:`tui.app.RouteDeckApp`.
"""

from __future__ import annotations

import asyncio
import gc

from textual._time import get_time
from textual.geometry import Region
from textual.screen import Screen

from tui.screens.base import keeping_lines, styled_state
from tui.screens.whole_paint import WholePaint

_FROZEN = False


def freeze_startup_heap() -> None:
    """Once per process, after the first snapshot is on screen: what is alive now (Textual, the
    engine's tables, the loaded config — tens of thousands of objects that live as long as the
    app) goes to the permanent generation, so the cyclic GC's full collections no longer scan it.
    Measured with ``bench/tui.py --part screens``: a full collection paused the UI thread for a
    median 131 ms (max 186 ms, on any screen switch it landed on); after ``gc.freeze()`` 36 ms."""
    global _FROZEN
    if _FROZEN:
        return
    _FROZEN = True
    gc.collect()
    gc.freeze()


def draw_off_screen(screen: Screen, size) -> None:
    """Lay ``screen`` out again until its widgets keep their sizes (a scroll container's scrollbar
    appears on the second layout and narrows what is inside it), then have each widget on it draw
    its lines once, so its first visit finds them in the widgets' line caches. The help's keys
    table (a long Rich table) was drawn on the first ``?``: 50 ms of the UI thread's CPU at 132x40
    (issue 30). The screen itself is not drawn (a dialog draws the screen under it: that is only
    known when it is shown)."""
    for _ in range(3):
        sizes = {w: w.size for w in screen.walk_children()}
        screen._refresh_layout(size)
        if all(w.size == old for w, old in sizes.items()):
            break
    for widget in screen.walk_children():
        # A widget whose virtual size the last layout changed has forgotten its content height
        # (the change refreshes it, which clears that cache) and the next layout reuses its
        # arrangement, so the first visit measured it again: for the help's keys table, a long
        # Rich table, 60-70 ms of the first ``?`` at 132x40 (issue 30). Measured here instead, at
        # the width the layout gives it (kept: a later ask at that width is a cache hit).
        if not widget.is_container and widget.size:
            widget.get_content_height(widget.container_size, size, widget.content_size.width)
    for widget, (region, _clip) in screen._compositor.visible_widgets.items():
        if widget is not screen and region:
            widget.render_lines(Region(0, 0, region.width, region.height))


def pull_before_paint(screen: Screen, size) -> None:
    """A built screen about to be shown (``switch_mode``, ``push_screen``) does what it does as it
    is shown first (``WholePaint.prepare_paint``: a main view draws the latest snapshot,
    ``DeckScreen.pull``), and what that changed is handed to the screen now, not when each
    widget's message queue next runs empty (``Widget._check_refresh``): the containers of a widget
    whose size may have changed forget their arrangement, so the layout that follows has it
    right. The whole screen is marked to paint, so the paint that follows that layout draws all
    of it (:func:`painted_now`)."""
    if not isinstance(screen, WholePaint):
        return
    screen.prepare_paint()
    for widget in screen.walk_children(with_self=False):
        if widget._layout_required or widget._repaint_required or widget._scroll_required:
            widget._check_refresh()
    screen._compositor._dirty_regions.add(size.region)
    screen._switch_paint = True  # (that paint takes the widgets' repaints: WholePaint._compositor_refresh)


def painted_now(app, screen: Screen) -> None:
    """After ``switch_mode`` to a built screen, or the push of one: the screen is painted whole, at
    once, as :func:`pull_before_paint` prepared it. Textual's ``switch_mode`` lays the new screen
    out and paints only its changed regions (none, as a rule: an empty paint), ``push_screen``
    paints nothing; the screen was drawn after its ``ScreenResume``, once the screen's message
    queue and update timer had run (up to 1/60 s and a turn of the loop later), with a second
    layout and a full repaint that drew every line of the screen's own background again (issue
    30). That repaint, and the widgets' repaints asked for before this paint, are skipped
    (``DeckScreen._on_screen_resume``, ``HelpScreen._on_screen_resume``, ``WholePaint``)."""
    screen._switch_paint = False  # (painted, or Textual's path paints it)
    if (screen is not app.screen or app._batch_count or not screen.is_attached
            or not isinstance(screen, WholePaint)):
        return  # not shown now (a batch holds paints): the resume repaints it, as Textual does
    if not screen.stack_updates:
        screen._refresh_layout(app.size)  # never resumed: switch_mode did not lay it out (nor paint)
    screen._repaint_required = False  # (set when the screen was last suspended: painted now)
    screen._painted_at_switch = True
    screen._painted_time = get_time()  # what widgets asked for before this is on screen


def paint_shown(app, screen: Screen) -> None:
    """``screen``, shown by a push or a pop (``Prewarm.push_screen``, ``pop_screen``), prepared
    (:func:`pull_before_paint`), laid out as ``switch_mode`` lays out a resumed screen (that paints
    it) and marked painted whole (:func:`painted_now`)."""
    pull_before_paint(screen, app.size)
    screen._screen_resized(app.size)
    painted_now(app, screen)


def startup_heap_thawed() -> None:
    """The frozen heap was given back to the GC (an app's idle collector at its exit,
    tui.shell.idle_gc): the next app's start-up heap is frozen again."""
    global _FROZEN
    _FROZEN = False


class Prewarm:
    prewarmed = False  # every main view a key reaches is composed (bench/tui.py waits for it)
    _switching_to_built = False  # inside switch_mode to a mode whose screen is mounted

    def switch_mode(self, mode: str):
        """Textual's, without its 50 ms hold on every repaint when the mode's screen is already
        mounted (prewarmed or visited): Textual's ``switch_mode`` calls ``delay_update()`` to hide
        a new screen being composed, and a built screen has nothing to hide, so the switch painted
        50 ms late on every ``b``, ``c``, ``j`` (more under load: it is a timer; issue 30). A built
        screen draws the latest snapshot before the switch and is painted whole within it
        (:func:`pull_before_paint`, :func:`painted_now`)."""
        stack = self._screen_stacks.get(mode)
        self._switching_to_built = bool(stack) and stack[-1].is_mounted
        built = self._switching_to_built and mode != self.current_mode
        leaving = self.screen_stack[-1] if self.screen_stack and mode != self.current_mode else None
        try:
            if built:
                pull_before_paint(stack[-1], self.size)
            with keeping_lines(leaving, repaint=False):  # (Textual refreshes the screen it leaves)
                result = super().switch_mode(mode)
            if built:
                painted_now(self, stack[-1])
            return result
        finally:
            self._switching_to_built = False

    def push_screen(self, screen, *args, **kwargs):
        """Textual's; the screen it covers keeps its own lines (:func:`keeping_lines`). A built
        screen pushed that says so (``WholePaint.PAINTED_ON_PUSH``: the kept help,
        ``tui.screens.help.help_screen``) is laid out and painted whole within it, as
        :meth:`switch_mode` paints a built main view: Textual painted it from its update timer
        once its ``ScreenResume`` had run (the first ``?`` of a run was the slowest switch in a
        terminal, 78-86 ms; issue 30)."""
        stack = self.screen_stack
        built = screen if isinstance(screen, WholePaint) and screen.PAINTED_ON_PUSH and screen.is_mounted else None
        with keeping_lines(stack[-1] if stack else None, repaint=False):
            result = super().push_screen(screen, *args, **kwargs)
        if built is not None and built is self.screen:
            paint_shown(self, built)
        return result

    def pop_screen(self):
        """Textual's; after a screen painted within its push (``WholePaint.PAINTED_ON_PUSH``: the
        help), the screen shown again (the board after ``Esc`` on the help), if built, is painted
        whole within the pop, as :meth:`switch_mode` paints a built main view: Textual painted it
        from its update timer once its ``ScreenResume`` had run (issue 30). Not after other
        screens: the jobs view after its why-not (a whole screen) was painted whole twice more
        after such a paint (focus and footer), once more than by Textual's path."""
        popped = self.screen_stack[-1] if self.screen_stack else None
        result = super().pop_screen()
        shown = self.screen
        if (getattr(popped, "PAINTED_ON_PUSH", False) and isinstance(shown, WholePaint) and shown.is_mounted
                and shown.stack_updates and not self._batch_count):
            paint_shown(self, shown)
            self._painted_on_pop = shown if shown._painted_at_switch else None
        return result

    _painted_on_pop: Screen | None = None  # painted whole by the last pop_screen, until _replace_screen

    async def _replace_screen(self, screen: Screen) -> Screen:
        """Textual's (after a ``pop_screen``: the popped screen suspended, removed unless kept); the
        screen shown again keeps its own lines through the refresh this starts with
        (:func:`keeping_lines`; its ``ScreenResume`` keeps them too, tui.screens.base), and is not
        painted whole again if the pop painted it (:meth:`pop_screen`). That refresh is Textual's
        first statement, before its first ``await``: the window (``times=1``) is used up
        synchronously (tests/tui/test_tui_switch_paint.py pins it), and a screen not mounted
        gets none."""
        stack = self.screen_stack
        shown = stack[-1] if stack else None
        painted, self._painted_on_pop = shown is not None and shown is self._painted_on_pop, None
        with keeping_lines(shown, repaint=not painted):
            return await super()._replace_screen(screen)

    def delay_update(self, delay: float = 0.05) -> None:
        if not self._switching_to_built:
            super().delay_update(delay)

    def prewarm_modes(self) -> list[str]:
        """The main views one key reaches that are built in the background: jobs and crondor,
        hooks and slots where the feed has an execute node (``Snapshot.controls``); the editor
        (``e``), the board's selected route (``enter``) and the board's help (``?``) are built after them."""
        modes = ["jobs", "cron"] + (["hooks", "slots"] if self.offers("execute") else [])
        return [m for m in modes if m not in self._screen_stacks]

    def _prewarm_start(self) -> None:
        self.run_worker(self._prewarm(), name="prewarm", group="prewarm", exclusive=True, exit_on_error=False)

    async def _prewarm(self) -> None:
        """After the first snapshot is on screen, compose the other main views' top screens off
        screen, one at a time, so their first visit only resumes them (issue 14 item 3: the
        first ``c`` and ``j`` took 52 and 76 ms, Textual composing the screen). Each screen gets
        what :meth:`switch_mode` would give a new mode's screen (its CSS, registered, the app's
        size) except the resume: it is not shown, and becomes the mode's stack, so
        ``switch_mode`` later finds it and only resumes it. The app renders only the current
        screen, so nothing of this is seen. An async worker on the UI loop (Textual's widgets
        are built there), awaiting each screen's mount before the next, so a key is never
        delayed by more than one screen's build; the start-up heap is frozen after the last."""
        from textual.widget import AwaitMount  # noqa: PLC0415

        from tui.screens.editor import editor_screen  # noqa: PLC0415

        async def build(screen: Screen) -> None:
            self._load_screen_css(screen)
            widgets = self._register(self, screen)
            screen._screen_resized(self.size)
            await AwaitMount(screen, widgets)
            # Its widgets were styled by the current stylesheet as they were registered, so it is
            # as up to date as Textual's CSS refresh would make it: without the mark, its first
            # ``switch_mode`` ran ``App.refresh_css`` (the whole stylesheet reparsed and the app
            # restyled, 15-20 ms of the first ``c``/``j``). A CSS change after this (a theme)
            # counts up the app's number, and the refresh runs then as before.
            screen._css_update_count = self._css_update_count
            # For the same reason its first resume need not restyle every node (tui.screens.base
            # skip_restyle: 20-40 ms of the first ``c``, ``j`` or ``?``; issue 30), unless the
            # app's CSS, focus or theme changed before it (the key then differs).
            screen._styled_for = styled_state(self)
            await asyncio.sleep(0)  # keys and snapshots waiting go first
            if screen is not self.screen and screen.is_mounted:
                # laid out now for the app's size (only the current screen is otherwise): the first
                # visit finds its widgets sized and arranged
                screen._refresh_layout(self.size)
                await asyncio.sleep(0)
                draw_off_screen(screen, self.size)
                await asyncio.sleep(0)

        board = self._screen_stacks["routes"][0]
        if board.is_mounted and board._css_update_count == -1:
            # The board's first switch_mode ran refresh_css before it was mounted, so Textual never
            # marked it; its widgets were styled by that stylesheet as they were registered. Marked
            # now, the first ``b`` back to it does not reparse the stylesheet (15-20 ms) either.
            board._css_update_count = self._css_update_count
        try:
            for mode in self.prewarm_modes():
                if not self.is_running:
                    # The app is shutting down: Textual's _close_all iterates the screen stacks
                    # while it awaits each screen's close, so a new stack now would break it
                    # ("dictionary changed size during iteration", seen on quick quits under load).
                    return
                if mode in self._screen_stacks:
                    continue  # the user got there first
                screen = self._modes[mode]()
                self._screen_stacks[mode] = [screen]
                await build(screen)
            if getattr(self, "_editor_screen", None) is None:
                # ``e`` on the board: the kept editor (tui.screens.editor.editor_screen), built
                # now, opened (file read, lint) only when pushed
                await build(editor_screen(self, None))
            selected = getattr(self._screen_stacks["routes"][0], "selected_name", lambda: None)()
            if selected and selected not in getattr(self, "_route_screens", {}):
                # ``enter`` on the board: the selected route's kept screen (route_detail_screen)
                from tui.screens.route_detail import route_detail_screen  # noqa: PLC0415

                await build(route_detail_screen(self, selected))
            # ``?`` on the board: its kept help (tui.screens.help.help_screen)
            from tui.screens.help import help_screen  # noqa: PLC0415

            helper = help_screen(self, over=self._screen_stacks["routes"][0])
            if not helper.is_mounted and helper in self._help_screens.values():  # (a kept one, not yet built)
                await build(helper)
        finally:
            self.prewarmed = True
            freeze_startup_heap()
            self.idle_gc_start()  # full collections from now on when the UI is idle (tui.shell.idle_gc)
