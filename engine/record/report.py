"""What one ``Recorder.poll`` did (:class:`Report`): filled by the recorder and by the chunk
cutter it calls (``engine.record.chunks``), read by ``routedeck record``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Report:
    """What one ``poll`` did."""

    archived: int = 0
    gaps: list = field(default_factory=list)
    generations: list = field(default_factory=list)  # sequences of the new generations read
    problems: list = field(default_factory=list)  # "file:line: message"
    missing: str | None = None  # the log cannot be read: why
    # file read → the offset of the first line in what was read that the schedd's reader finds
    # corrupt (steps.first_corrupt): ``record --once`` asks load_log for its verdict only then
    corrupt: dict = field(default_factory=dict)

    def saw_corrupt(self, path: Path, offset: int) -> None:
        if offset < self.corrupt.get(path, offset + 1):
            self.corrupt[path] = offset
