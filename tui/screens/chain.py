"""The source → routed copy → grid job chain (issue 29; k9s's xray as the anchor): ``x`` on a job
or ``:chain [JOB]``.

Per source job one line each for the source, its routed copy (route, status) and the grid job the
gridmanager submitted (``GridJobId``, ``GridJobStatus``, the batch system's own id), with the hops
that lag against ``MAX_JOB_MIRROR_UPDATE_LAG`` (``engine.views.chain``); without a job, every
routed job, then the orphans (a copy without its source, a managed source without its copy) and
totals that count each job once. The ads are read in a thread worker (one engine query).
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from engine.contract.codes import STATUS_NAMES
from tui.commands import keymap
from tui.engine_api import job_chains
from tui.text.format import duration
from tui.widgets.chrome import StatusHeader
from tui.widgets.footer import DeckFooter

SHOWN = 500  # chains drawn at most (the totals count them all)


def _status(code: int | None) -> str:
    return STATUS_NAMES.get(code, "?") if code is not None else "?"


def render_chains(found, job: str | None = None) -> Text:
    t = Text()
    if not found.links:
        t.append(f"{job} is not a routed job (no routed copy, not managed by the router)\n" if job
                 else "no routed jobs\n", style="dim")
    for link in found.links[:SHOWN]:
        t.append(f"{link.source}", style="bold")
        t.append(f"  source · {_status(link.source_status)}\n")
        if link.copy is None:
            t.append("  └─ no routed copy in the queue (orphan: the router manages it)\n", style="red")
            continue
        t.append(f"  └─ {link.copy}", style="bold cyan")
        t.append(f"  routed copy · {_status(link.copy_status)} · route {link.route or '?'}\n")
        if link.grid_job_id:
            t.append("      └─ ")
            t.append(link.grid_job_id, style="bold magenta")
            t.append(f"  {link.grid_status or '?'}")
            if link.batch_id:
                t.append(f" · batch id {link.batch_id}")
            t.append("\n")
        else:
            t.append(f"      └─ not submitted to {link.grid_resource or 'the grid'} yet\n", style="yellow")
        for lag in link.lags:
            what = ("the source has not mirrored the copy's status" if lag.hop == "mirror"
                    else "the gridmanager has not submitted the copy")
            t.append(f"      {what} for {duration(lag.seconds)}", style="red" if lag.over else "dim")
            t.append(" (over MAX_JOB_MIRROR_UPDATE_LAG)\n" if lag.over else "\n", style="red" if lag.over else "dim")
    if len(found.links) > SHOWN:
        t.append(f"… {len(found.links) - SHOWN} more chains\n", style="dim")
    if found.orphan_copies or found.orphan_sources:
        t.append("\nOrphans\n", style="bold red")
        if found.orphan_copies:
            t.append(f"  routed copies without their source: {', '.join(found.orphan_copies[:50])}\n")
        if found.orphan_sources:
            t.append(f"  managed sources without their copy: {', '.join(found.orphan_sources[:50])}\n")
    n = found.totals
    def count(k: int, one: str, many: str) -> str:
        return f"{k} {one if k == 1 else many}"

    orphans = n["orphan_copies"] + n["orphan_sources"]
    t.append("\n" + " · ".join((count(n["sources"], "source job", "source jobs"),
                                 count(n["copies"], "routed copy", "routed copies"),
                                 count(n["grid_jobs"], "grid job", "grid jobs"), f"{n['lagging']} lagging",
                                 count(orphans, "orphan", "orphans"))), style="bold")
    return t


class ChainScreen(Screen):
    BINDINGS = keymap.CHAIN

    class Found(Message):
        def __init__(self, found, error: str | None) -> None:
            super().__init__()
            self.found, self.error = found, error

    def __init__(self, job: str | None = None) -> None:
        super().__init__()
        self.job = job
        self.found = None

    def compose(self) -> ComposeResult:
        yield StatusHeader()
        with VerticalScroll(id="chain-box") as box:
            box.border_title = f"Chain · {self.job}" if self.job else "Chains · every routed job"
            yield Static(Text("reading the ads…", style="dim"), id="chain")
        yield DeckFooter()

    def on_mount(self) -> None:
        self.query_one(StatusHeader).show(self.app.snapshot, self.app.readonly)
        self.action_refresh_chain()

    def action_refresh_chain(self) -> None:
        snap = self.app.snapshot
        if snap is not None:
            self._find(snap.jobs, snap.time)

    @work(thread=True, exclusive=True)
    def _find(self, rows, now: float) -> None:
        try:
            found = job_chains(self.app.runtime, rows, now, [self.job] if self.job else None)
        except Exception as exc:  # noqa: BLE001 - engine stopped or busy: shown, not raised
            self.post_message(self.Found(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Found(found, None))

    def on_chain_screen_found(self, event: Found) -> None:
        box = self.query_one("#chain", Static)
        if event.error:
            box.update(Text(f"no chain: {event.error}", style="red"))
            return
        self.found = event.found
        box.update(render_chains(event.found, self.job))
