"""Read the routing-table blocks of a real router's ``JobRouterLog``.

Source: htcondor.md §1.5 (the only place HTCondor publishes per-route figures: once per poll,
``JobRouter::GetCandidateJobs`` writes with one ``dprintf(D_ALWAYS, …)``)::

    <stamp> JobRouter: Checking for candidate jobs. routing table is:
    Route Name               Source      Submitted/Max        Idle/Max     Throttle Recent: Started Succeeded Failed
    <%-24s name> <%-11s source> <%7d>/<%7d> <%7d>/<%7d> <%8s throttle>         <%7d> <%9d> <%6d>

Design decisions and invariants:

- The block is one dprintf call with embedded newlines, so only its first line carries the
  log's time stamp; rows are read with or without a stamp of their own.
- Fixed columns are not trusted: ``%-24s``/``%-11s``/``%8s`` widen for long names and for a
  throttle text such as ``0.00566667 jobs/sec``. A row is matched from the right: three counts
  (absent when the router runs as a tool), the throttle (``none`` or ``<%g> jobs/sec``), two
  ``cur/max`` pairs, one source word, and the rest is the route name.
- A block ends at the first line that is not a row. Anything else in the log (other messages,
  garbage, a truncated last line) is skipped; a malformed row inside a block is reported as a
  problem with its line number and ends the block. Parsing never raises on bad input.
- The stamp is HTCondor's default ``%m/%d/%y %H:%M:%S`` (optionally with fractional seconds,
  ``DEBUG_TIME_FORMAT``'s usual variants and a leading ``(pid:N)``/``(D_…)``); it is local time
  of the router host, read in ``tz`` (default: this machine's zone). An unreadable stamp gives
  ``time=None``; the table is still returned.
- :class:`RouterLogFollower` reads a growing log incrementally (keeps a partial last line for the
  next read; starts over when the file shrinks or is replaced, as on ``JobRouterLog.old``
  rotation). It never sleeps; the caller polls it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

HEADER = "JobRouter: Checking for candidate jobs. routing table is:"

_ROW = re.compile(
    r"^(?P<name>\S.*?)\s+(?P<source>\S+)\s+(?P<cur>-?\d+)/\s*(?P<max>-?\d+)\s+(?P<idle>-?\d+)/\s*(?P<maxidle>-?\d+)"
    r"\s+(?P<throttle>none|[-+0-9.eEinfa]+ jobs/sec)"
    r"(?:\s+(?P<started>-?\d+)\s+(?P<succ>-?\d+)\s+(?P<fail>-?\d+))?\s*$"
)
_STAMP = re.compile(
    r"^\s*(?:\(pid:\d+\)\s*)?(?P<stamp>\d\d/\d\d/\d\d\s+\d\d:\d\d:\d\d(?:\.\d+)?"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:?\d\d|Z)?)\s+(?:\([^)]*\)\s+)*"
)


@dataclass(frozen=True)
class RouterLogRow:
    name: str
    source: str
    submitted: int
    max_jobs: int
    idle: int
    max_idle: int
    throttle: float | None  # jobs per second as printed; None = "none"
    throttle_text: str
    recent_started: int | None  # None when the router ran as a tool (no Recent columns)
    recent_succeeded: int | None
    recent_failed: int | None
    line: int

    @property
    def throttle_per_window(self) -> float | None:
        """Jobs per 600 s window (RouteView.throttle's unit, htcondor.md §1.5)."""
        return None if self.throttle is None else self.throttle * 600


@dataclass(frozen=True)
class RouterLogTable:
    time: float | None
    line: int  # line of the header
    rows: tuple[RouterLogRow, ...]

    def by_name(self) -> dict[str, RouterLogRow]:
        return {r.name: r for r in self.rows}


@dataclass(frozen=True)
class RouterLogProblem:
    line: int
    message: str


def parse_stamp(text: str, tz: str | None = None) -> float | None:
    m = _STAMP.match(text)
    if not m:
        return None
    stamp = m.group("stamp")
    try:
        if "/" in stamp:
            fmt = "%m/%d/%y %H:%M:%S.%f" if "." in stamp else "%m/%d/%y %H:%M:%S"
            moment = datetime.strptime(" ".join(stamp.split()), fmt)
        else:
            moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo(tz)) if tz else moment.astimezone()
    return moment.timestamp()


def _strip_stamp(line: str) -> str:
    m = _STAMP.match(line)
    return line[m.end():] if m else line


def parse_row(text: str, line: int) -> RouterLogRow | None:
    m = _ROW.match(_strip_stamp(text).rstrip())
    if not m:
        return None
    thr = m.group("throttle")
    try:
        throttle = None if thr == "none" else float(thr.split()[0])
    except ValueError:
        return None
    g = m.group

    def opt(name: str) -> int | None:
        return None if g(name) is None else int(g(name))

    return RouterLogRow(
        name=g("name").strip(), source=g("source"), submitted=int(g("cur")), max_jobs=int(g("max")),
        idle=int(g("idle")), max_idle=int(g("maxidle")), throttle=throttle, throttle_text=thr,
        recent_started=opt("started"), recent_succeeded=opt("succ"), recent_failed=opt("fail"), line=line,
    )


class RouterLogParser:
    """Line-at-a-time parser (shared by the whole-file reader and the follower)."""

    def __init__(self, tz: str | None = None) -> None:
        self.tz = tz
        self.tables: list[RouterLogTable] = []
        self.problems: list[RouterLogProblem] = []
        self.line = 0
        self._open: tuple[float | None, int, list, bool] | None = None  # time, line, rows, header seen

    def feed(self, text: str) -> None:
        self.line += 1
        if HEADER in text:
            self._close()
            self._open = (parse_stamp(text, self.tz), self.line, [], False)
            return
        if self._open is None:
            return
        body = _strip_stamp(text).strip()
        if body.startswith("Route Name") and not self._open[3]:
            self._open = (self._open[0], self._open[1], self._open[2], True)
            return
        row = parse_row(text, self.line) if self._open[3] else None
        if row is not None:
            self._open[2].append(row)
            return
        if self._open[3] and body and not _STAMP.match(text):
            self.problems.append(RouterLogProblem(self.line, f"not a routing-table row: {body[:60]!r}"))
        self._close()

    def _close(self) -> None:
        if self._open is not None:
            t, line, rows, _ = self._open
            self.tables.append(RouterLogTable(t, line, tuple(rows)))
            self._open = None

    def finish(self) -> None:
        self._close()


def parse_router_log(text: str, tz: str | None = None) -> tuple[list[RouterLogTable], list[RouterLogProblem]]:
    """Every routing table in a JobRouterLog text, oldest first, and the problems found."""
    p = RouterLogParser(tz)
    for line in text.split("\n"):
        p.feed(line)
    p.finish()
    return p.tables, p.problems


def read_router_log(path: str | os.PathLike, tz: str | None = None):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    return parse_router_log(text, tz)


class RouterLogFollower:
    """Follow a growing JobRouterLog; :meth:`poll` returns the tables completed since last time.

    A table is complete when a read ends on a line end: the router writes the whole block with
    one dprintf (one write)."""

    def __init__(self, path: str | os.PathLike, tz: str | None = None, *, keep_lines: bool = False) -> None:
        """``keep_lines``: every complete line read is also kept in ``lines`` for the caller to
        take (``routedeck record --router-log`` archives them)."""
        self.path = os.fspath(path)
        self.tz = tz
        self._ino: int | None = None
        self._offset = 0
        self._partial = b""
        self._parser = RouterLogParser(tz)
        self.latest: RouterLogTable | None = None
        self.lines: list[str] | None = [] if keep_lines else None

    @property
    def position(self) -> dict:
        """Where the complete lines read end (``resume`` takes it back after a restart)."""
        return dict(path=self.path, ino=self._ino, offset=self._offset - len(self._partial))

    def resume(self, position: dict) -> None:
        """Read on from ``position`` (same file, same inode; else from the start, as on rotation)."""
        if position.get("path") == self.path and position.get("ino") is not None:
            self._ino, self._offset = position["ino"], int(position["offset"])

    def poll(self) -> list[RouterLogTable]:
        try:
            st = os.stat(self.path)
        except OSError:
            return []
        if st.st_ino != self._ino or st.st_size < self._offset:
            self._ino, self._offset, self._partial = st.st_ino, 0, b""
            self._parser = RouterLogParser(self.tz)
        if st.st_size == self._offset:
            return []
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                chunk = f.read(st.st_size - self._offset)
        except OSError:
            return []
        self._offset += len(chunk)
        data = self._partial + chunk
        cut = data.rfind(b"\n") + 1
        self._partial = data[cut:]
        before = len(self._parser.tables)
        for line in data[:cut].decode("utf-8", "replace").split("\n")[:-1]:
            self._parser.feed(line)
            if self.lines is not None:
                self.lines.append(line)
        if not self._partial:
            # One dprintf = one write: a read that ends on a line end has the whole block.
            self._parser.finish()
        new = self._parser.tables[before:]
        del self._parser.tables[:-1]  # keep memory flat on a long-running follow
        if new:
            self.latest = new[-1]
        return new
