"""The replay bar (product.md §6: "position, time, speed, play/pause/step/seek, bookmarks").

Design decisions:

- The bar draws only from the snapshot (``Snapshot.replay``, the time-source diagnostic the
  replay feed adds) and the app's bookmark list, never from the wall clock, so a frozen
  snapshot renders the same bar every time (snapshot tests).
- Positions are shown 1-based ("transaction 12/19,455"; 0 = before the first), as the headless
  ``routedeck replay`` prints them; ``:seek #N`` takes the same number.
- The recorded time says where it came from when it is not a ``106 #`` commit comment, in words
  a user reads ("estimated: from the job times it set" / "estimated: no time stamp, last known
  time"; "(est.)" at 80 columns), and "times inferred" when the log has no comments at all.
- An archive's generation boundaries (a schedd compaction: ``┊``) and gaps (records the
  recorder missed: ``✕``, red, and "N gaps" after the bar) are marked on the bar at their
  times (``ReplayPosition.marks``); a gap wins a cell it shares with a boundary.
- :func:`parse_seek` turns ``:seek``'s argument into a ``Seek`` command; it raises
  ``ValueError`` with the accepted forms, which the command line shows as an error toast.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from engine.contract import commands as C
from engine.contract import snapshot as S
from tui.engine_api import MOMENT_FORMS, parse_moment
from tui.text.format import clock_time, count, duration, speed

KEYS = ". , step  [ ] { } seek  m mark  ' marks "
SOURCE_PREFIX = "time of this transaction: "
SEEK_FORMS = "give " + MOMENT_FORMS
# A transaction without a ``106 #`` commit comment has no time of its own (engine.queue.timeline):
# what the bar says of the time shown instead ("(carried)" told a user nothing; issue 29).
ESTIMATED = {"inferred": "from the job times it set", "carried": "no time stamp, last known time"}


def time_source(snap: S.Snapshot) -> str | None:
    """"comment" / "inferred" / "carried" / "start", from the replay feed's diagnostic."""
    for d in snap.diagnostics:
        if d.message.startswith(SOURCE_PREFIX):
            return d.message[len(SOURCE_PREFIX):]
    return None


def bar_text(snap: S.Snapshot | None, bookmarks: list[tuple[str, int, float]] = (), width: int = 120) -> Text:
    if snap is None or snap.replay is None:
        return Text(" replay · waiting for the engine…", style="dim")
    pos = snap.replay
    narrow = width < 100  # 80 columns: symbols, no date, shorter words
    t = Text(" ")
    if snap.paused or snap.engine_state in ("paused", "stopped"):
        t.append("⏸" if narrow else "⏸ paused ", style="bold yellow")
    else:
        t.append("▶" if narrow else "▶ playing", style="bold green")
    t.append(f" · {'tx' if narrow else 'transaction'} {count(pos.transaction + 1)}/{count(pos.transactions)}")
    t.append(f" · {clock_time(pos.time, snap.tz, date=not narrow)}")
    source = time_source(snap)
    if pos.times_inferred:
        t.append(" (times inferred)", style="yellow")
    elif source in ESTIMATED:
        t.append(" (est.)" if narrow else f" (estimated: {ESTIMATED[source]})", style="yellow")
    t.append(f" · {speed(snap.speed)}")
    span = pos.end - pos.start
    done = (pos.time - pos.start) / span if span > 0 else 1.0
    t.append(f" · +{duration(pos.time - pos.start)}{'/' if narrow else ' of '}{duration(span)} ")
    gaps = sum(1 for m in pos.marks if m.kind == "gap")
    gap_words = f" {gaps} gap{'s' if gaps != 1 else ''}" if gaps else ""
    room = width - t.cell_len - 2 - (8 + 4 * len(bookmarks) if bookmarks else 0) - len(gap_words)
    bar_w = max(0, min(30, room - (len(KEYS) + 1 if room - len(KEYS) - 1 >= 10 else 0)))
    if bar_w >= 5:
        filled = int(round(max(0.0, min(1.0, done)) * bar_w))
        cells = [("━", "cyan")] * filled + [("─", "dim")] * (bar_w - filled)
        for m in pos.marks:
            i = min(bar_w - 1, max(0, int((m.time - pos.start) / span * bar_w))) if span > 0 else bar_w - 1
            if m.kind == "gap":
                cells[i] = ("✕", "bold red")
            elif cells[i][0] != "✕":
                cells[i] = ("┊", "bold blue")
        for ch, style in cells:
            t.append(ch, style=style)
    if gap_words:
        t.append(gap_words, style="red")
    if bookmarks:
        names = " ".join(name for name, _step, _t in bookmarks)
        t.append(f" · marks {names}", style="magenta")
    if width - t.cell_len >= len(KEYS) + 1:
        t.append(" " * (width - t.cell_len - len(KEYS)) + KEYS, style="dim")
    return t


def parse_seek(arg: str, snap: S.Snapshot | None) -> C.Seek:
    """``:seek`` argument → ``Seek``, by the engine's parser that ``routedeck replay --at`` uses
    (:func:`engine.feeds.replay.moment.parse_moment`; naive times in the snapshot's zone)."""
    text = arg.strip()
    if not text:
        raise ValueError(f"seek where? {SEEK_FORMS}")
    if snap is None or snap.replay is None:
        raise ValueError("no replay position yet")
    pos = snap.replay
    return parse_moment(text, start=pos.start, end=pos.end, transactions=pos.transactions, tz=snap.tz)


class ReplayBar(Static):
    DEFAULT_CSS = """
    ReplayBar { height: 1; background: $panel; color: $text; }
    """

    def show(self, snap: S.Snapshot | None, bookmarks: list[tuple[str, int, float]]) -> None:
        self.update(bar_text(snap, bookmarks, self.size.width or 120))

    def on_mount(self) -> None:
        app = self.app
        self.show(getattr(app, "snapshot", None), getattr(app, "bookmarks", []))
