"""``DeckScreen``: the frame every main screen shares (header, engine banner, body, footer).

Screens do not subscribe to the engine: the app keeps the latest snapshot and hands it to the
screen on top (``show_snapshot``); a screen coming back into view pulls it (``_on_screen_resume``),
so hidden screens cost nothing while snapshots stream in. A screen that fails to draw a
snapshot says so in a toast (once per distinct error) and keeps the app running.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Input, TextArea
from tui.widgets.footer import DeckFooter
from tui.widgets.repaint import write_cells

from engine.contract.snapshot import Snapshot
from tui.screens.whole_paint import WholePaint
from tui.widgets.chrome import EngineBanner, StatusHeader


TEXT_BOX_ACTIONS = frozenset({"filter", "search"})  # "/" opens a text box (a priority binding)
EDIT_ACTIONS = frozenset({"edit_route", "edit"})  # shown where the config can be written
VIEW_ACTIONS = frozenset({"view_route", "view"})  # shown instead in read-only modes (tui.commands.keymap)


def styled_state(app) -> tuple:
    """What, besides a node's own classes, decides what the CSS gives it: the app's CSS (a theme
    counts it up), its focus and the theme's name."""
    return (app._css_update_count, app.app_focus, app.theme)


def skip_restyle(screen, event) -> None:
    """On a kept screen's ``ScreenResume``: Textual restyles every node of a resumed screen
    (Screen._on_screen_resume, which runs after the screen's handler): 3-10 ms of CPU per switch,
    the most of any part of a warm switch but the render (issue 30). A hidden screen's nodes
    restyle themselves when their classes change; only the app's CSS (a theme), its focus or the
    theme's name can have changed what their rules give while it was hidden, so the restyle is
    skipped when none did (``screen._styled_for``: that state at the last resume, or when a
    screen built off screen was styled: tui.shell.prewarm)."""
    key = styled_state(screen.app)
    if key == getattr(screen, "_styled_for", None):
        event.refresh_styles = False
    screen._styled_for = key


class DeckScreen(WholePaint, Screen):
    _draw_error: str | None = None
    _styled_for: tuple | None = None  # the app's CSS state at the last resume (_on_screen_resume)
    _drawn_before_paint: Snapshot | None = None  # drawn as the app switched to it (pull)
    _keep_lines = 0  # how many bare refreshes still keep the screen's own lines (keeping_lines)
    _keep_repaint = True  # and whether they paint it whole again
    _keep_styles = -1  # the screen's styles (``styles._cache_key``) as the window opened

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``e`` is "Edit" or "View config" (tui.commands.keymap): read-only modes, and feeds that cannot
        apply routes (``Snapshot.controls``), never advertise Edit; keys of controls the feed does
        not offer are hidden (the app refuses them with a toast if typed)."""
        if action in TEXT_BOX_ACTIONS and isinstance(self.app.focused, (Input, TextArea)):
            return False  # "/" typed into a text box is text (the opening keys are priority bindings)
        if action in EDIT_ACTIONS:
            return self.app.can_apply_routes
        if action in VIEW_ACTIONS:
            return not self.app.can_apply_routes
        if not self.app.offers_action(action):
            return False
        return True

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="status-header")
        yield EngineBanner(id="engine-banner")
        yield from self.compose_body()
        yield DeckFooter()

    def compose_body(self) -> ComposeResult:
        return iter(())

    def on_mount(self) -> None:
        self.call_after_refresh(self.pull)

    def _on_screen_resume(self, event) -> None:
        """The latest snapshot pulled, the footer recomposed if its keys changed, then Textual's
        handler (``Screen._on_screen_resume``; a subclass's ``on_screen_resume`` runs before this),
        but without its full repaint when the switch to this screen painted all of it already
        (``tui.shell.prewarm.painted_now``): that repaint laid the screen out again and drew every
        line of its own background once more. Without a restyle, a resume that still has to paint
        (back from a dialog) keeps the screen's own lines (:func:`keeping_lines`). A restyle (the
        theme changed while it was hidden) repaints as before."""
        skip_restyle(self, event)
        self.pull()
        for footer in self.query(DeckFooter):
            footer.call_after_refresh(footer._recompose_if_changed)
        painted, self._painted_at_switch = self._painted_at_switch, False
        if event.refresh_styles:
            Screen._on_screen_resume(self, event)
        else:
            with keeping_lines(self, repaint=not painted):  # (the one bare refresh it ends with)
                Screen._on_screen_resume(self, event)
        event.prevent_default()  # (Screen's own handler has run)

    def refresh(self, *regions, repaint: bool = True, layout: bool = False, recompose: bool = False):
        """Textual's; within :func:`keeping_lines`, a bare refresh keeps the screen's own lines,
        unless the screen's own styles changed since the window opened (a restyle's refresh is a
        bare one too: ``StylesBase.refresh``); that closes the window."""
        if self._keep_lines and repaint and not (regions or layout or recompose) and self.is_mounted:
            if self.styles._cache_key != self._keep_styles:
                self._keep_lines = 0
                return super().refresh()
            self._keep_lines -= 1
            return repaint_keeping_lines(self) if self._keep_repaint else self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def _on_timer_update(self) -> None:
        """Textual's; under a dialog, the widgets that asked for a repaint are painted too. Each
        compositor refresh of a screen under a dialog marks the regions it painted on the screen
        itself and sets ``_repaint_required``; Textual's next update then paints only those marked
        regions and drops the widgets' own. After a scrollbar's repaint under the job's ad (``j``,
        Enter, Esc, Enter) that was the scrollbar's strip, and no snapshot repainted the header
        and rows behind the dialog (review of s16-switch, side note)."""
        if self._repaint_required and self._dirty_widgets and self.app.screen is not self:
            self._compositor.update_widgets(self._dirty_widgets)  # (their regions, exchanged now)
        Screen._on_timer_update(self)

    def prepare_paint(self) -> None:
        """The switch to this screen paints it next (tui.shell.prewarm.pull_before_paint)."""
        self.pull(before_paint=True)

    def pull(self, before_paint: bool = False) -> None:
        """Show the app's latest snapshot. ``before_paint``: the app is switching to this screen
        and paints it next (tui.shell.prewarm.pull_before_paint); the ``ScreenResume`` that
        follows then finds that snapshot drawn and only the header is shown again."""
        snap = self.app.snapshot
        if before_paint:
            self._drawn_before_paint = snap
            self.show_snapshot(snap)
            return
        drawn, self._drawn_before_paint = self._drawn_before_paint, None
        if drawn is not None and drawn is snap:
            self.show_header(snap)
            return
        self.show_snapshot(snap)

    def show_snapshot(self, snap: Snapshot | None) -> None:
        if not self.is_mounted:
            return
        self.show_header(snap)
        if snap is None:
            return
        try:
            self.update_body(snap)
        except Exception as exc:  # noqa: BLE001 - one odd snapshot must not take the dashboard down
            text = f"{type(exc).__name__}: {exc}"
            if text != self._draw_error:
                self._draw_error = text
                self.notify(f"could not draw this snapshot on {type(self).__name__}: {text}",
                            severity="error", timeout=10)

    def show_header(self, snap: Snapshot | None) -> None:
        headers, banners = self._chrome()
        for header in headers:
            header.show(snap, self.app.readonly)
        for banner in banners:
            banner.show(self.app.engine_error)

    _chrome_found: tuple | None = None  # (headers, banners) once composed (_chrome)

    def _chrome(self) -> tuple:
        """The screen's header and engine banner, looked up once they are there: a query matches
        every node of the screen against the selector (two per snapshot and per switch; issue 30).
        A query, not query_one: a snapshot can arrive while the screen is mounted but its children
        are still being composed (seen under load in the replay Pilot test)."""
        found = self._chrome_found
        if found is not None and all(w.is_attached for ws in found for w in ws):
            return found
        found = (list(self.query(StatusHeader)), list(self.query(EngineBanner)))
        if found[0] and found[1]:
            self._chrome_found = found
        return found

    def update_body(self, snap: Snapshot) -> None:
        """Redraw from ``snap``; screens override."""


@contextmanager
def keeping_lines(screen: Screen | None, times: int = 1, repaint: bool = True) -> Iterator[None]:
    """Within: the next ``times`` bare ``refresh()`` of ``screen`` (a DeckScreen) keep its own lines
    (its background: 40 lines at 132x40, ~2.5 ms of the UI thread; issue 30): with ``repaint``
    the screen is still painted whole again (:func:`repaint_keeping_lines`), without it nothing is
    done. For Textual's refresh of a screen it covers or leaves (``push_screen``,
    ``switch_mode``: ``repaint=False``; what it shows is unchanged, and a screen under a dialog
    repainted whole marked all its own lines to draw again) and of a screen resumed without a
    restyle (painted whole, as Textual does). A change of the screen's styles or size forgets
    its lines as before (a change of its styles since the window opened closes it,
    ``DeckScreen.refresh``; a new size clears them in ``Widget._size_updated``). Windows nest:
    an inner one's exit gives the outer one back. A screen not mounted gets no window."""
    if not isinstance(screen, DeckScreen) or not screen.is_mounted:
        yield
        return
    outer = screen._keep_lines, screen._keep_repaint, screen._keep_styles
    screen._keep_lines, screen._keep_repaint, screen._keep_styles = times, repaint, screen.styles._cache_key
    try:
        yield
    finally:
        screen._keep_lines, screen._keep_repaint, screen._keep_styles = outer


def repaint_keeping_lines(screen: Screen) -> Screen:
    """``screen.refresh()`` (Textual's: the whole screen is painted again) with the screen's own
    lines kept in its styles cache: the refresh clears a throwaway cache instead (textual 8.2.8's
    ``Widget._set_dirty``; tests/tui/test_tui_switch_paint.py checks it)."""
    kept = screen._styles_cache
    screen._styles_cache = type(kept)()
    try:
        return Screen.refresh(screen)
    finally:
        screen._styles_cache = kept


def sync_rows(table: DataTable, known: list | None, rows: Sequence[tuple[Any, tuple]], columns: Sequence[str]) -> list:
    """Show ``rows`` (``(key, cells)`` in order) in ``table``, which shows the rows of ``known``
    keys (None: unknown): when the keys are the same, only the changed cells are written and only
    their rows repainted (``tui.widgets.repaint.write_cells``); otherwise the rows are made again
    and the cursor stays on its row number (clamped). Returns the keys now shown. ``columns``: the column keys, in the cells' order."""
    keys = [k for k, _ in rows]
    if keys != known:
        row = table.cursor_row
        table.clear()
        for key, cells in rows:
            table.add_row(*cells, key=key)
        if keys:
            table.move_cursor(row=min(max(row, 0), len(keys) - 1), animate=False)
    else:
        write_cells(table, rows, columns)
    return keys


class FittedTable:
    """A screen mixin for one ``ColumnScrollTable`` (``TABLE``, a query) whose columns
    (``FIT_COLUMNS``) fit the terminal's width, none cut at the right edge; the screen's
    ``update_body`` shows the rows of ``self._keys`` (emptied when the columns change, so the rows
    are added again). Call :meth:`fit_table` from ``on_mount``; a resize refits."""

    TABLE = ""  # css selector of the screen's table, e.g. "#cron" (one name for every mixin)
    FIT_COLUMNS: tuple = ()

    def fit_table(self) -> bool:
        table = self.query_one(self.TABLE)  # type: ignore[attr-defined]
        if not table.fit_columns_to(self.FIT_COLUMNS, self.app.size.width - 2):  # type: ignore[attr-defined]
            return False  # (the table's border takes a cell on each side)
        self._keys = []
        return True

    def on_resize(self, event) -> None:
        snap = self.app.snapshot  # type: ignore[attr-defined]
        if self.fit_table() and snap is not None:
            self.update_body(snap)  # type: ignore[attr-defined]


def plain(cells: Sequence[Any]) -> list[str]:
    """A table row's cells as plain text (``:export``)."""
    return [c.plain if isinstance(c, Text) else str(c) for c in cells]


class RowPanel:
    """A screen mixin for a table of snapshot rows (``TABLE``, a query; ``self._keys``: the
    keys of the rows shown, in order) over a panel that follows the cursor (``_detail(snapshot)``).
    The screen says how to find a row of a snapshot by key (:meth:`row_for`) and what a row's id
    is (:meth:`row_id`, for ``:copy`` and ``:export``)."""

    TABLE = ""  # css selector of the screen's table, e.g. "#cron"

    def row_for(self, snap: Snapshot, key: Any) -> Any:
        raise NotImplementedError

    def row_id(self, row: Any) -> str:
        raise NotImplementedError

    def selected(self, snap: Snapshot) -> Any:
        """The row of ``snap`` under the table's cursor (None: no row)."""
        table = self.query_one(self.TABLE, DataTable)  # type: ignore[attr-defined]
        keys = self._keys  # type: ignore[attr-defined]
        if not keys or not 0 <= table.cursor_row < len(keys):
            return None
        return self.row_for(snap, keys[table.cursor_row])

    def selected_now(self) -> Any:
        """The row under the cursor in the app's latest snapshot (None: no row, or no snapshot yet)."""
        snap = self.app.snapshot  # type: ignore[attr-defined]
        return self.selected(snap) if snap is not None else None

    def selected_id(self) -> str | None:
        row = self.selected_now()
        return self.row_id(row) if row is not None else None

    def on_data_table_row_highlighted(self, event) -> None:
        if self.app.snapshot is not None:  # type: ignore[attr-defined]
            self._detail(self.app.snapshot)  # type: ignore[attr-defined]
