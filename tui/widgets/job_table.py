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
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from engine.snapshot import STATUS_NAMES, JobRow
from tui import keymap
from tui.format import duration, month_day
from tui.widgets.job_model import COLUMNS, JobModel


def _cell(text: str, width: int) -> str:
    return set_cell_size(text, width - 1) + " "


class JobTable(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {"jobtable--header", "jobtable--cursor", "jobtable--held", "jobtable--running"}
    DEFAULT_CSS = """
    JobTable { height: 1fr; }
    JobTable > .jobtable--header { text-style: bold; background: $panel; }
    JobTable > .jobtable--cursor { background: $accent; color: $text; }
    JobTable > .jobtable--held { color: $error; }
    JobTable > .jobtable--running { color: $success; }
    """
    BINDINGS = keymap.JOB_TABLE

    cursor = reactive(0, always_update=True)

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
        self._width = sum(c.width for c in COLUMNS)

    # -- data ------------------------------------------------------------------------------
    def set_rows(self, rows, version: int, now: float, tz: str) -> None:
        self.now, self.tz = now, tz
        if self.model.set_rows(rows, version):
            self._after_change(keep_job=True)
        else:
            self.refresh()

    def apply(self, change) -> None:
        """Run ``change(model)`` (a filter or sort) and keep the selected job if still shown."""
        change(self.model)
        self._after_change(keep_job=True)

    def _after_change(self, keep_job: bool) -> None:
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
        x += round(self.scroll_x)
        for c in COLUMNS:
            if x < c.width:
                return c.key
            x -= c.width
        return None

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
    def header_text(self) -> str:
        parts = []
        for c in COLUMNS:
            mark = ""
            if self.model.sort_key == c.key:
                mark = " ▼" if self.model.reverse else " ▲"
            parts.append(_cell(c.title + mark, c.width))
        return "".join(parts)

    def row_text(self, r: JobRow) -> str:
        link = r.routed_to and f"→{r.routed_to}" or r.routed_from and f"←{r.routed_from}" or ""
        since = duration(self.now - r.entered_status) if r.entered_status else ""
        values = (
            r.job, STATUS_NAMES.get(r.status, str(r.status)), r.owner, r.kind, self.model.route_of(r) or "", link,
            month_day(r.qdate, self.tz) if r.qdate else "", since,
            r.hold_reason if r.status == 5 and r.hold_reason else r.cmd,
        )
        return "".join(_cell(v, c.width) for v, c in zip(values, COLUMNS))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x = round(self.scroll_x)
        base = self.rich_style
        if y == 0:
            style = base + self.get_component_rich_style("jobtable--header")
            text = self.header_text()
        else:
            pos = round(self.scroll_y) + y - 1
            if pos >= len(self.model):
                return Strip.blank(width, base)
            r = self.model.row(pos)
            text = self.row_text(r)
            style = base
            if pos == self.cursor and self.has_focus:
                style = base + self.get_component_rich_style("jobtable--cursor")
            elif pos == self.cursor:
                style = base + Style(reverse=True)
            elif r.status == 5:
                style = base + self.get_component_rich_style("jobtable--held")
        text = text.ljust(self._width)
        strip = Strip([Segment(text, style)], len(text))
        return strip.crop_extend(scroll_x, scroll_x + width, style)
