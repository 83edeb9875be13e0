"""The jobs view: a Line API ``ScrollView`` over the engine's job rows (no widget per row).

Why not a ``DataTable``: adding 100,000 rows takes seconds (product.md §7: 8.6 s) and every
refresh would copy them. Here ``render_line`` formats only the rows on screen, straight from the
snapshot's ``JobRow`` tuple through :class:`~tui.widgets.job_model.JobModel`'s index list, so
the cost of a paint or a keypress does not grow with the queue.

The header is line 0 of the widget and does not scroll; row ``k`` of the model is drawn at
line ``1 + k - scroll_y``. The cursor follows the selected *job* across snapshots, not the
position, so new jobs arriving do not move the selection.
"""

from __future__ import annotations

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.actions import SkipAction
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from engine.contract.codes import STATUS_NAMES, JobStatus
from engine.contract.snapshot import JobRow
from tui.commands import keymap
from tui.text.format import duration, fit_widths, month_day
from tui.widgets.column_scroll import ColumnScroll
from tui.widgets.job_model import COLUMNS, JobModel

STATUS_STYLE = {JobStatus.IDLE: Style(color="yellow"), JobStatus.RUNNING: Style(color="green"),
                JobStatus.REMOVED: Style(dim=True), JobStatus.COMPLETED: Style(color="cyan"),
                JobStatus.HELD: Style(color="red", bold=True), JobStatus.SUSPENDED: Style(color="magenta")}
SAMPLE = 500  # rows measured for the column widths (the first ones in view order, and those on screen)
ROUTE, SINCE = (next(i for i, c in enumerate(COLUMNS) if c.key == k) for k in ("route", "since"))
QDATE_LEN = len(month_day(0, "UTC"))  # "%m-%d %H:%M": the same length at any time, in any zone
DAY = 86_400


def _cell(text: str, width: int) -> str:
    return set_cell_size(text, width - 1) + " "


def _status_name(r: JobRow) -> str:
    return STATUS_NAMES.get(r.status, str(r.status))


def _reason(r: JobRow) -> str:
    """The hold reason of a held job, else the command (the same column)."""
    return r.hold_reason if r.status == JobStatus.HELD and r.hold_reason else r.cmd


def _link(r: JobRow) -> str:
    return r.routed_to and f"→{r.routed_to}" or r.routed_from and f"←{r.routed_from}" or ""


class JobTable(ColumnScroll, ScrollView, can_focus=True):
    COMPONENT_CLASSES = {"jobtable--header", "jobtable--cursor", "jobtable--held", "jobtable--running",
                         "jobtable--column"}
    DEFAULT_CSS = """
    JobTable { height: 1fr; }
    JobTable > .jobtable--header { text-style: bold; background: $panel; }
    JobTable > .jobtable--cursor { background: $accent; color: $text; }
    JobTable > .jobtable--held { color: $error; }
    JobTable > .jobtable--running { color: $success; }
    JobTable > .jobtable--column { text-style: bold reverse; }
    """
    BINDINGS = keymap.JOB_TABLE

    cursor = reactive(0, always_update=True)
    column = reactive(0)  # the focused column (its legend is shown under the table)
    _styles_now: tuple | None = None  # the lines' styles while render_lines draws them (_line_styles)

    class ColumnFocused(Message):
        def __init__(self, title: str) -> None:
            super().__init__()
            self.title = title

    class Selected(Message):
        def __init__(self, job: JobRow) -> None:
            super().__init__()
            self.job = job

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = JobModel()
        self.now = 0.0
        self.tz = "UTC"
        self._selected_job: str | None = None
        self.widths: list[int] = [len(c.title) + 3 for c in COLUMNS]
        self._width = sum(self.widths)
        self._measured: tuple | None = None
        self._lengths: dict = {}  # id(row) -> (row, its row-only value lengths), the rows measured last

    # -- data ------------------------------------------------------------------------------
    def set_rows(self, rows, version: int, now: float, tz: str) -> None:
        was_now, was_tz = self.now, self.tz
        self.now, self.tz = now, tz
        if self.model.set_rows(rows, version):
            self._after_change(keep_job=True)
        elif tz != was_tz:
            self.refresh()
        elif now != was_now:
            self._refresh_since(was_now)

    def _refresh_since(self, before: float) -> None:
        """The same rows at a new time: repaint only the lines on screen whose time in status reads
        differently than at ``before`` (none while a replay is paused; issue 30)."""
        m = self.model
        top = round(self.scroll_y)
        width = self.size.width
        for pos in range(top, min(len(m), top + max(0, self.size.height - 1))):
            entered = m.row(pos).entered_status
            if entered and duration(before - entered) != duration(self.now - entered):
                self.refresh(Region(0, 1 + pos - top, width, 1))

    def apply(self, change) -> None:
        """Run ``change(model)`` (a filter or sort) and keep the selected job if still shown."""
        change(self.model)
        self._after_change(keep_job=True)

    def _after_change(self, keep_job: bool) -> None:
        self._layout()
        n = len(self.model)
        self.virtual_size = Size(self._width, n + 1)
        pos = None
        if keep_job and self._selected_job is not None and self.cursor > 0:
            pos = self.model.position_of(self._selected_job)
        if pos is None:
            pos = min(self.cursor, max(0, n - 1))
        self.cursor = pos
        self.refresh()

    @property
    def selected(self) -> JobRow | None:
        if 0 <= self.cursor < len(self.model):
            return self.model.row(self.cursor)
        return None

    # -- movement --------------------------------------------------------------------------
    def watch_cursor(self, value: int) -> None:
        row = self.selected
        self._selected_job = row.job if row else None
        body = max(1, self.size.height - 1)
        top = round(self.scroll_y)
        if value < top:
            self.scroll_to(y=value, animate=False, immediate=True)
        elif value >= top + body:
            self.scroll_to(y=value - body + 1, animate=False, immediate=True)
        self.refresh()

    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(len(self.model) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 2))

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = max(0, len(self.model) - 1)

    def action_select(self) -> None:
        if self.selected is not None:
            self.post_message(self.Selected(self.selected))

    class HeaderClicked(Message):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def column_at(self, x: int) -> str | None:
        first = self.widths[0]
        if x >= first:
            x += round(self.scroll_x)
        for c, w in zip(COLUMNS, self.widths):
            if x < w:
                return c.key
            x -= w
        return None

    def action_column(self, delta: int) -> None:
        self.column = max(0, min(len(COLUMNS) - 1, self.column + delta))

    def action_scroll_right(self) -> None:
        """→ / ← scroll a whole column at a time (a cell at a time showed "tus" of "Status" beside
        the pinned job column); with nothing to scroll the key goes on (a paused replay steps)."""
        self._column_scroll(1)

    def action_scroll_left(self) -> None:
        self._column_scroll(-1)

    def _column_scroll(self, delta: int) -> None:
        if not self.column_scroll(delta) and not self.allow_horizontal_scroll:
            raise SkipAction()  # as the cell-wise scroll did: the app's binding takes the key

    def watch_column(self, value: int) -> None:
        # bring the focused column into view (the job column is pinned, the rest scroll)
        if value > 0:
            self.scroll_column_into_view(value - 1)
        self.post_message(self.ColumnFocused(COLUMNS[value].title))
        self.refresh()

    def scroll_widths(self) -> list[int]:
        return self.widths[1:]

    def pinned_width(self) -> int:
        return self.widths[0]

    # -- widths ----------------------------------------------------------------------------
    def on_resize(self, event) -> None:
        self._measured = None
        self._layout()
        self.refresh()

    def _layout(self) -> None:
        """Column widths: what the values need (measured on the first SAMPLE rows in view order
        and the rows on screen) up to each column's cap, the hold reason up to the terminal's
        width. Measured once per rows version, filter, sort and terminal width."""
        m = self.model
        width = self.size.width or 120
        key = (id(m.rows), m.version, len(m), m.sort_key, m.text, width)
        if key == self._measured:
            return
        self._measured = key
        top = round(self.scroll_y)
        # the rows on screen past the sample (those within it are in it already)
        rows = m.rows_between(0, SAMPLE) + m.rows_between(max(top, SAMPLE), top + max(1, self.size.height))
        most = self._most_lengths(rows)
        # title, a sort mark and a gap; a value and a gap
        need = [max(len(c.title) + 3, v + 1) for c, v in zip(COLUMNS, most)]
        widths = [min(n, c.width) for n, c in zip(need, COLUMNS)]
        # The columns up to the hold reason must be on screen: the reason takes what the others
        # leave (at least its least width); if even that does not fit, the route and the owner
        # narrow first. The columns after it scroll in from the right.
        reason = next(i for i, c in enumerate(COLUMNS) if c.key == "cmd")
        room = width - 1  # the vertical scrollbar
        before = sum(widths[:reason])
        least_reason = COLUMNS[reason].least
        for i in (3, 2):  # route, owner
            over = before + least_reason - room
            if over <= 0:
                break
            cut = min(over, widths[i] - max(COLUMNS[i].least, len(COLUMNS[i].title) + 1))
            if cut > 0:
                widths[i] -= cut
                before -= cut
        widths[reason] = max(least_reason, min(widths[reason], room - before))
        # the time in status right after it, when the reason can give up the cells it needs
        over = before + widths[reason] + widths[reason + 1] - room
        if 0 < over <= widths[reason] - least_reason:
            widths[reason] -= over
        # the last column that fits whole takes the leftover width: none is shown cut at the
        # right edge (a cut "In status" read "1h29m5" for 1h29m58s); the rest scrolls in
        self.widths = widths = fit_widths(widths, room)
        self._width = sum(widths)
        self.virtual_size = Size(self._width, len(m) + 1)
        self.columns_changed()

    def _row_lengths(self, r: JobRow) -> tuple[int, ...]:
        """``len`` of each of ``values(r)`` that depends on nothing but the row: all but the
        time in status (0 here) and a source job's route taken from its routed copy (-1 here;
        ``route_of``). None of them depends on the zone: a queue date is always ``QDATE_LEN``."""
        route = -1 if JobModel.from_copy(r) else len(r.route or "")
        return (len(r.job), len(_status_name(r)), len(r.owner), route, len(_reason(r)), 0, len(r.kind),
                len(_link(r)), QDATE_LEN if r.qdate else 0)

    def _most_lengths(self, rows: list[JobRow]) -> list[int]:
        """The longest value of each column over ``rows``. The row-only lengths are kept per row
        object for the rows measured last time (the engine reuses an unchanged job's ``JobRow``
        across snapshots, so a new jobs tuple measures only the rows that changed; issue 14 item
        3); the route of a source job is looked up, and the time in status comes from the rows'
        extreme times (:meth:`_since_length`), not from formatting every row (issue 30)."""
        kept, now_kept = self._lengths, {}
        lengths = []
        for r in rows:
            hit = kept.get(id(r))
            if hit is None or hit[0] is not r:
                hit = (r, self._row_lengths(r))
            now_kept[id(r)] = hit
            lengths.append(hit[1])
        self._lengths = now_kept
        if not lengths:
            return [0] * len(COLUMNS)
        columns = list(zip(*lengths))
        most = list(map(max, columns))
        if min(columns[ROUTE]) < 0:
            route_of = self.model.route_of
            most[ROUTE] = max(n[ROUTE] if n[ROUTE] >= 0 else len(route_of(r) or "") for r, n in zip(rows, lengths))
        most[SINCE] = self._since_length(rows)
        return most

    def _since_length(self, rows: list[JobRow]) -> int:
        """The longest time in status of ``rows`` as :func:`duration` writes it. Under a day either
        way its length only grows with the time's size, so the two extreme times decide it; past
        a day (``1d0h`` is shorter than ``23h59m59s``) every distinct time is written."""
        entered = [e for e in (r.entered_status for r in rows) if e]
        if not entered:
            return 0
        least, most = self.now - max(entered), self.now - min(entered)
        if -DAY < least and most < DAY:
            return max(len(duration(least)), len(duration(most)))
        return max(len(duration(self.now - e)) for e in set(entered))

    def on_click(self, event) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return  # on the border or a scrollbar
        x, y = offset
        if y == 0:
            key = self.column_at(x)
            if key is not None:
                self.post_message(self.HeaderClicked(key))
        elif y >= 1:
            pos = round(self.scroll_y) + y - 1
            if pos < len(self.model):
                self.cursor = pos

    # -- drawing ---------------------------------------------------------------------------
    def header_cells(self) -> list[str]:
        out = []
        for c in COLUMNS:
            mark = ""
            if self.model.sort_key == c.key:
                mark = " ▼" if self.model.reverse else " ▲"
            out.append(c.title + mark)
        return out

    def header_text(self) -> str:
        return "".join(_cell(v, w) for v, w in zip(self.header_cells(), self.widths))

    def _since(self, r: JobRow) -> str:
        return duration(self.now - r.entered_status) if r.entered_status else ""

    def values(self, r: JobRow) -> tuple[str, ...]:
        return (
            r.job, _status_name(r), r.owner, self.model.route_of(r) or "", _reason(r), self._since(r), r.kind,
            _link(r), month_day(r.qdate, self.tz) if r.qdate else "",
        )

    def shown_rows(self) -> list[JobRow]:
        """Every row passing the filter, in the shown order."""
        return [self.model.row(i) for i in range(len(self.model))]

    def export_rows(self) -> tuple[list[str], list[list[str]]]:
        """Every row passing the filter, in the shown order, as the cells show them (uncut)."""
        return [c.title for c in COLUMNS], [list(self.values(row)) for row in self.shown_rows()]

    def _line_styles(self) -> tuple[Style, Style, Style, Style, Style]:
        """The styles of a line: the widget's own (``rich_style`` walks every ancestor's styles),
        the header's, the focused column's header cell, the cursor row's and a held job's row."""
        base = self.rich_style
        focused = self.has_focus
        component = self.get_component_rich_style
        return (base, base + component("jobtable--header"),
                component("jobtable--column") if focused else Style(underline=True),
                base + (component("jobtable--cursor") if focused else Style(reverse=True)),
                base + component("jobtable--held"))

    def render_lines(self, crop: Region) -> list[Strip]:
        """Textual's, with the lines' styles worked out once for all the lines drawn now, not once
        per line: a third of a line's cost, and a switch to the jobs view draws every line of it
        (issue 30)."""
        self._styles_now = self._line_styles()
        try:
            return super().render_lines(crop)
        finally:
            self._styles_now = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x = round(self.scroll_x)
        base, header, focused_column, cursor, held = self._styles_now or self._line_styles()
        styles: list[Style | None]
        if y == 0:
            style = header
            texts = self.header_cells()
            styles = [focused_column if i == self.column else None for i in range(len(COLUMNS))]
        else:
            pos = round(self.scroll_y) + y - 1
            if pos >= len(self.model):
                return Strip.blank(width, base)
            r = self.model.row(pos)
            texts = list(self.values(r))
            style = base
            styles = [None] * len(COLUMNS)
            if pos == self.cursor:
                style = cursor
            else:
                # the status is coloured on every row; a held job's whole row is, too
                styles[1] = STATUS_STYLE.get(r.status)
                if r.status == JobStatus.HELD:
                    style = held
        segs = [Segment(_cell(t, w), style + s if s else style) for t, w, s in zip(texts, self.widths, styles)]
        pinned = Strip(segs[:1], self.widths[0]).crop_extend(0, min(width, self.widths[0]), style)
        rest_width = max(0, width - self.widths[0])
        rest = Strip(segs[1:], self._width - self.widths[0]).crop_extend(scroll_x, scroll_x + rest_width, style)
        return Strip.join([pinned, rest])
