"""A job's full ClassAd (drill-down from the jobs and crondor screens), as ``Name = value``
lines with a note beside the raw value: times as dates and ages, JobStatus and HoldReasonCode by
name, the in-memory DeferralTime of a crondor job (``engine.views.job_ad``).

``/`` searches inside the ad (names and values; ``n`` next match), ``y`` copies the value of the
matched (or first) line, ``Y`` the job id.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from engine.contract.snapshot import JobRow
from tui.commands import keymap
from tui.engine_api import AdLine, job_ad_lines
from tui.commands.typeahead import open_text_box


def render_ad(lines: list[AdLine], search: str = "", current: int | None = None) -> Text:
    t = Text()
    width = max((len(ln.name) for ln in lines), default=0)
    needle = search.lower()
    for k, ln in enumerate(lines):
        hit = bool(needle) and (needle in ln.name.lower() or needle in ln.value.lower() or needle in ln.note.lower())
        name_style = "bold reverse" if k == current else "bold yellow" if hit else "bold cyan"
        t.append(ln.name.ljust(width), style=name_style)
        t.append(f" = {ln.value}")
        if ln.note:
            t.append(f"  ← {ln.note}", style="green" if ln.name == "DeferralTime" else "dim")
        t.append("\n")
    return t


class AdScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    AdScreen #ad-search { display: none; height: 3; }
    AdScreen #ad-search.-shown { display: block; }
    """
    BINDINGS = keymap.AD

    def __init__(self, row: JobRow) -> None:
        super().__init__()
        self.row = row
        self.lines: list[AdLine] | None = None
        self.search = ""
        self.current: int | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="ad-box", classes="dialog") as box:
            box.border_title = f"Job {self.row.job}"
            box.border_subtitle = "Esc close · / search · n next · y copy value · Y copy id · w why not"
            yield Input(placeholder="search names and values (Enter: next match, Esc: done)", id="ad-search")
            yield Static(Text("reading the job's ad …", style="dim"), id="ad-text")

    def on_mount(self) -> None:
        self.loader = self._load()  # the Worker: tests await it

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        # The full ad comes from the engine thread (Runtime.query), which may take as long as one
        # engine step: wait for it in a worker, never on the UI thread.
        snap = self.app.snapshot
        now, tz = (snap.time, snap.tz) if snap is not None else (0.0, "UTC")
        try:
            lines = job_ad_lines(self.app.runtime, self.row, now, tz)
        except Exception as exc:  # noqa: BLE001 - the engine's query failed: say so, keep the screen
            self.app.call_from_thread(self.query_one("#ad-text", Static).update,
                                      Text(f"could not read the job's ad: {exc}", style="red"))
            return
        self.app.call_from_thread(self._show, lines)

    def _show(self, lines: list[AdLine]) -> None:
        self.lines = lines
        self._redraw()

    def _redraw(self) -> None:
        if self.lines is not None:
            self.query_one("#ad-text", Static).update(render_ad(self.lines, self.search, self.current))

    # -- search ------------------------------------------------------------------------------
    def matches(self) -> list[int]:
        needle = self.search.lower()
        if not needle or self.lines is None:
            return []
        return [k for k, ln in enumerate(self.lines)
                if needle in ln.name.lower() or needle in ln.value.lower() or needle in ln.note.lower()]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "search" and isinstance(self.app.focused, Input):
            return False  # "/" typed into the search box is text (the key is a priority binding)
        return True

    def action_search(self) -> None:
        box = self.query_one("#ad-search", Input)
        open_text_box(self, box)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.search = event.value
        hits = self.matches()
        self.current = hits[0] if hits else None
        self._redraw()
        self._scroll_to_current()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_next_match()

    def action_next_match(self) -> None:
        hits = self.matches()
        if not hits:
            return
        later = [k for k in hits if self.current is None or k > self.current]
        self.current = later[0] if later else hits[0]
        self._redraw()
        self._scroll_to_current()

    def _scroll_to_current(self) -> None:
        if self.current is not None:
            box = self.query_one("#ad-box", VerticalScroll)
            box.scroll_to(y=max(0, self.current - 3), animate=False)

    def action_close(self) -> None:
        box = self.query_one("#ad-search", Input)
        if box.has_focus:
            box.remove_class("-shown")
            self.query_one("#ad-box").focus()
            return
        self.dismiss()

    # -- copy --------------------------------------------------------------------------------
    def action_copy_value(self) -> None:
        if not self.lines:
            return
        line = self.lines[self.current if self.current is not None else 0]
        self.app.copy_to_clipboard(line.value)
        self.notify(f"copied {line.name} = {line.value}")

    def action_copy_job(self) -> None:
        self.app.copy_to_clipboard(self.row.job)
        self.notify(f"copied job id {self.row.job}")

    # Why-not and the trace open on top of the ad, so Esc comes back to it (issue 29: the ad was
    # dismissed first and Esc landed on the table behind it).
    def action_why_not(self) -> None:
        self.app.open_why_not(self.row.job)

    def action_trace(self) -> None:
        self.app.open_trace(self.row.job)

    def action_chain(self) -> None:
        self.app.open_chain(self.row.job)
