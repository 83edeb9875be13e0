"""The Hooks screen: every hook invocation of the embedded execute node (issue 12 item 4).

Fetch-work (startd), starter and Startd Cron hooks, oldest first, from ``Snapshot.hooks``
(``engine.views.execute``): when it started (engine time), how long the program ran, how it
ended, how much it wrote, and what the startd/starter made of it. ``/`` filters (the shared
filter box); the panel below shows the highlighted run's parsed ad and error; Enter opens its
full stdin, stdout and stderr. The cursor follows new invocations while it is on the last row.

Hook failures (non-zero exit, timeout, flood, garbage output) are toasted by the app as they
first appear in a snapshot (:func:`new_failures`), whichever screen is shown.
"""

from __future__ import annotations

import os

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Input, Static

from engine.contract.snapshot import HookRow, Snapshot
from tui.commands import keymap
from tui.text.format import clock_time
from tui.screens.base import DeckScreen, FittedTable, RowPanel, plain, sync_rows
from tui.widgets.repaint import show_text, show_title
from tui.screens.filter_box import FilterBox
from tui.widgets.chrome import titled
from tui.widgets.column_scroll import ColumnScrollTable

# What an operator reads first fits 80 columns: which hook, for what, how it ended, what came of
# it; when and how long after that.
COLUMNS = (("#", "seq", 3), ("Hook", "hook", 15), ("Target", "target", 8), ("Ended", "ended", 9),
           ("Result", "result", 30), ("Started", "started", 8), ("Family", "family", 7), ("Took", "took", 5),
           ("Out", "out", 5))
FAMILY = {"fetch": "startd", "starter": "starter", "cron": "cron"}
MAX_TOASTS = 3  # per snapshot; the rest are counted in one more toast


def shown_path(path: str) -> str:
    """A hook's path relative to the working directory when it lies below it (shorter rows)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def took(h: HookRow) -> str:
    if h.duration is None:
        return "—"
    return f"{h.duration * 1000:.0f}ms" if h.duration < 10 else f"{h.duration:.0f}s"


def size(n: int) -> str:
    return f"{n}B" if n < 10_000 else f"{n // 1024}K"


def ended_cell(h: HookRow) -> Text:
    if h.withheld:
        return Text("withheld", style="dim")
    if h.exit is not None and h.exit >= 0:
        return Text(f"exit {h.exit}", style="red" if h.exit else "")
    if h.exit is not None:
        return Text(f"signal {-h.exit}", style="bold red")
    failure = h.failure or ""  # engine.views.execute.failure_of: no exit status for these three
    short = next((label for prefix, label in (("timed out", "timed out"), ("flooded", "flooded"),
                                               ("could not run", "not run")) if failure.startswith(prefix)), "killed")
    return Text(short, style="bold red")


def result_text(h: HookRow) -> str:
    """The failure if any (with what was decided, when the exit status was the failure), else
    what the startd/starter/cron made of the output; paths shortened to the hook's file name."""
    if h.failure and h.decision and h.exit:
        text = f"{h.decision} ({h.failure})"
    else:
        text = h.failure or h.decision
    return text.replace(h.path, os.path.basename(h.path))


def hook_cells(h: HookRow, tz: str) -> tuple:
    mark = "✗ " if h.failure else ""
    return (str(h.seq), Text(h.hook, style="bold" if h.family != "cron" else ""), h.target, ended_cell(h),
            Text(mark + result_text(h), style="red" if h.failure else ""), clock_time(h.started, tz, date=False),
            FAMILY.get(h.family, h.family), took(h), size(h.stdout_bytes))


def haystack(h: HookRow) -> str:
    return " ".join((FAMILY.get(h.family, h.family), h.family, h.keyword, h.hook, h.target, os.path.basename(h.path),
                     h.decision, h.failure or "", "failed" if h.failure else "", "withheld" if h.withheld else "")).lower()


def hook_detail(h: HookRow, tz: str) -> Text:
    t = Text()
    t.append(f"#{h.seq} {h.hook}", style="bold")
    t.append(f"  {h.family} · keyword {h.keyword} · {h.target} · started {clock_time(h.started, tz)}\n")
    t.append(f"{shown_path(h.path)} {' '.join(h.args)}".rstrip() + f"  — {h.ended}\n", style="dim")
    if h.failure:
        t.append(f"✗ {h.failure.replace(h.path, shown_path(h.path))}\n", style="red")
    if h.decision:
        t.append("decision: ", style="bold")
        t.append(h.decision + "\n")
    if h.parsed:
        t.append("returned ad:\n", style="bold")
        for k, v in h.parsed.items():
            t.append(f"  {k} = {v}\n")
    elif not h.withheld:
        t.append("returned no ad\n", style="dim")
    t.append("Enter: full stdin / stdout / stderr", style="dim")
    return t


def full_text(h: HookRow) -> str:
    """What Enter shows: the invocation, then its stdin, stdout and stderr in full."""
    head = f"{h.hook} ({h.family}, keyword {h.keyword}) for {h.target}\n{h.path} {' '.join(h.args)}".rstrip()
    parts = [head, f"ended: {h.ended}" + (f"\nfailure: {h.failure}" if h.failure else ""),
             f"── stdin ({len(h.stdin.encode())} bytes) ──\n{h.stdin}",
             f"── stdout ({h.stdout_bytes} bytes) ──\n{h.stdout}", f"── stderr ──\n{h.stderr}"]
    return "\n".join(parts)


def new_failures(snap: Snapshot, last_seq: int) -> tuple[int, list[HookRow]]:
    """Invocations after ``last_seq`` that failed, and the newest number seen."""
    if not snap.hooks:
        return last_seq, []
    fresh: list[HookRow] = []
    for h in reversed(snap.hooks):
        if h.seq <= last_seq:
            break
        if h.failure:
            fresh.append(h)
    fresh.reverse()
    return max(last_seq, snap.hooks[-1].seq), fresh


def _dropped(old: list[int], new: list[int]) -> int | None:
    """How many rows left the front when ``new`` is ``old`` minus some oldest plus some newest;
    None when the change is anything else (a new filter): then the table is rebuilt."""
    if not old or not new:
        return None
    try:
        i = old.index(new[0])
    except ValueError:
        return None
    kept = len(old) - i
    return i if new[:kept] == old[i:] else None


def failure_toast(h: HookRow) -> str:
    return f"{h.hook} for {h.target}: {(h.failure or '').replace(h.path, os.path.basename(h.path))}"


class HooksTable(ColumnScrollTable, DataTable):
    """The hooks table: its Enter shows in the footer (keymap.HOOKS_TABLE);
    its columns scroll a whole column at a time (``ColumnScrollTable``)."""

    BINDINGS = keymap.HOOKS_TABLE


class HooksScreen(RowPanel, FittedTable, FilterBox, DeckScreen):
    TABLE = AUTO_FOCUS = "#hooks"
    FIT_COLUMNS = COLUMNS
    FILTER_INPUT = "#hooks-filter"
    BINDINGS = keymap.HOOKS

    def __init__(self) -> None:
        super().__init__()
        self._keys: list[int] = []
        self._pending_filter: str | None = None

    def compose_body(self) -> ComposeResult:
        yield Input(placeholder="filter hooks (hook, keyword, slot, job, failed, …)", id="hooks-filter",
                    classes="filter")
        yield titled(HooksTable(id="hooks", cursor_type="row", zebra_stripes=True, fixed_columns=1), "Hooks")
        yield Static(id="hooks-detail")

    def on_mount(self) -> None:
        self.fit_table()
        self.query_one("#hooks", DataTable).focus()
        if self._pending_filter is not None:
            box = self.query_one("#hooks-filter", Input)
            box.add_class("-shown")
            box.value, self._pending_filter = self._pending_filter, None
        super().on_mount()

    def set_filter(self, text: str) -> None:
        """Filter by ``text`` (``:hooks TEXT``, Enter on a slot); before the screen is mounted
        the text waits for :meth:`on_mount`."""
        self.filter_text = text
        boxes = self.query("#hooks-filter") if self.is_mounted else []
        for box in boxes:
            box.add_class("-shown")
            box.value = text  # Input.Changed applies it
        if not boxes:
            self._pending_filter = text

    def visible(self, snap: Snapshot) -> list[HookRow]:
        words = self.filter_text.lower().split()
        rows = list(snap.hooks)
        if words:
            rows = [h for h in rows if all(w in haystack(h) for w in words)]
        return rows

    def update_body(self, snap: Snapshot) -> None:
        table = self.query_one("#hooks", DataTable)
        failed = sum(1 for h in snap.hooks if h.failure)
        show_title(table, f"Hooks ── {len(snap.hooks)} invocations · {failed} failed")
        rows = self.visible(snap)
        keys = [h.seq for h in rows]
        if keys != self._keys:
            follow = not self._keys or table.cursor_row >= len(self._keys) - 1
            dropped = _dropped(self._keys, keys)
            if dropped is not None:
                # the usual change: the runner's bounded deque dropped its oldest, new ones came
                for seq in self._keys[:dropped]:
                    table.remove_row(str(seq))
                for h in rows[len(self._keys) - dropped:]:
                    table.add_row(*hook_cells(h, snap.tz), key=str(h.seq))
            else:  # rows made again, the cursor kept on its row number (the newest: below)
                sync_rows(table, None, [(str(h.seq), hook_cells(h, snap.tz)) for h in rows],
                          [k for _t, k, _w in COLUMNS])
            self._keys = keys
            if follow and keys:
                table.move_cursor(row=len(keys) - 1, animate=False)
        self._detail(snap)

    def row_for(self, snap: Snapshot, key: int) -> HookRow | None:
        return next((h for h in snap.hooks if h.seq == key), None)

    def row_id(self, row: HookRow) -> str:
        return str(row.seq)

    def _detail(self, snap: Snapshot) -> None:
        h = self.selected(snap)
        panel = self.query_one("#hooks-detail", Static)
        empty = "no hook has run yet" if not snap.hooks else "no invocation matches the filter"
        show_text(panel, hook_detail(h, snap.tz) if h is not None else Text(empty, style="dim"))

    def on_data_table_row_selected(self, event) -> None:
        self.action_open_io()

    def action_open_io(self) -> None:
        """The highlighted invocation's full stdin/stdout/stderr (the shared long-text dialog)."""
        from tui.screens.help import TextScreen  # noqa: PLC0415

        h = self.selected_now()
        if h is not None:
            self.app.push_screen(TextScreen(f"#{h.seq} {h.hook} · {h.target}", full_text(h)))

    def table_export(self):
        from tui.files.export import Table, records_of  # noqa: PLC0415

        snap = self.app.snapshot
        shown = self.visible(snap)
        rows = [plain(hook_cells(h, snap.tz)) for h in shown]
        return Table("hooks", [t for t, _k, _w in COLUMNS], rows, records_of(shown))
