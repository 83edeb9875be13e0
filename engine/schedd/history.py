"""The schedd's history file, in HTCondor's format, and a reader for it.

Format (the schedd's ``AppendHistory`` / ``condor_history -file``): each job that leaves the
queue is appended as its full ad in old syntax, one ``Name = value`` line per attribute, then a
banner line::

    *** Offset = <byte offset of the ad's first line> ClusterId = <c> ProcId = <p> Owner = "<o>" CompletionDate = <d>

(``Owner`` is ``"?"`` and the numbers are -1 when missing, as HTCondor writes them.)

Invariants: the writer appends and flushes each record whole (one ``write`` call), so a reader
never sees half an ad followed by a banner; a torn last record (no banner) is ignored by
:func:`read_history`, like condor_history. Attribute lines are sorted case-insensitively so the
file is deterministic for a deterministic run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping

from engine.classad_text import integer_of
from engine.classad import ClassAdError, format_ad
from engine.classad_ads import parse_old_ad


_WHERE = re.compile(r"^.*?:\d+: ")


def _strip_where(exc: Exception) -> str:
    """The message of a ClassAd error without its own ``source:line:`` prefix."""
    return _WHERE.sub("", str(exc))


class HistoryError(ValueError):
    pass


def _int_text(attrs: Mapping[str, str], name: str) -> int:
    value = integer_of(attrs.get(name))
    return -1 if value is None else value


def banner(attrs: Mapping[str, str], offset: int) -> str:
    owner = attrs.get("Owner")
    owner_s = owner[1:-1] if owner and owner.startswith('"') and owner.endswith('"') else "?"
    return (f"*** Offset = {offset} ClusterId = {_int_text(attrs, 'ClusterId')} "
            f"ProcId = {_int_text(attrs, 'ProcId')} Owner = \"{owner_s}\" "
            f"CompletionDate = {_int_text(attrs, 'CompletionDate')}\n")


class HistoryWriter:
    """Appends finished jobs to a history file (created on first use)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._offset = self.path.stat().st_size if self.path.exists() else 0
        self.count = 0
        # the queue log's pending grouped sync (QueueLogWriter.barrier, issue 30) is flushed
        # before a history line can show a commit's effect
        self.barrier: Callable[[], None] = lambda: None

    def append(self, attrs: Mapping[str, str]) -> None:
        self.append_many([attrs])

    def append_many(self, ads: list[Mapping[str, str]]) -> None:
        """Append several records with one write and a flush, as the schedd's ``AppendHistory``
        (classadHistory.cpp: ``fflush``, no fsync): a killed process loses nothing written; only
        a crash of the machine can lose the last records, as it can for HTCondor."""
        if not ads:
            return
        self.barrier()
        parts = []
        offset = self._offset
        for attrs in ads:
            data = (format_ad(attrs) + banner(attrs, offset)).encode()
            parts.append(data)
            offset += len(data)
        with open(self.path, "ab") as f:
            f.write(b"".join(parts))
            f.flush()
        self._offset = offset
        self.count += len(ads)


@dataclass(frozen=True)
class HistoryRecord:
    attrs: dict[str, str]
    line: int  # first line of the ad in the file (1-based)


def iter_history(text: str, source: str = "<history>") -> Iterator[HistoryRecord]:
    """Ads of a history file, in file order. Lines are ``Name = value``; ``***`` ends an ad."""
    block: list[str] = []
    start = 1
    for n, raw in enumerate(text.split("\n"), 1):
        if raw.startswith("***"):
            if block:
                try:
                    attrs = parse_old_ad("\n".join(block), source)
                except ClassAdError as exc:
                    line = start + (exc.line or 1) - 1
                    raise HistoryError(f"{source}:{line}: {_strip_where(exc)}") from None
                yield HistoryRecord(attrs, start)
            block = []
            start = n + 1
        else:
            if not block and not raw.strip():
                start = n + 1
                continue
            block.append(raw)


def read_history(path: str | Path) -> list[HistoryRecord]:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise HistoryError(f"{p}: cannot read: {exc.strerror}") from None
    return list(iter_history(text, str(p)))
