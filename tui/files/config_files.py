"""Writing routing-table files safely: atomic replace, versioned backups, diffs.

Invariants:

- A config file is never left half-written: the new text goes to a temporary file in the same
  directory (same filesystem), is flushed and fsynced, keeps the old file's permissions, and
  replaces the old one with ``os.replace`` — readers (and the engine's watcher) see either the
  old or the new file.
- Before every write the current contents are kept as ``.routedeck-backups/<name>.<N>`` beside
  the file, ``N`` increasing, so every applied version can be restored (undo) and none is lost.
"""

from __future__ import annotations

import difflib
import os
import re
import tempfile
from pathlib import Path

BACKUP_DIR = ".routedeck-backups"


def atomic_write(path: str | os.PathLike, text: str) -> None:
    path = Path(path)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def backups_of(path: str | os.PathLike) -> list[Path]:
    """Existing backups of ``path``, oldest first."""
    path = Path(path)
    folder = path.parent / BACKUP_DIR
    if not folder.is_dir():
        return []
    pat = re.compile(re.escape(path.name) + r"\.(\d+)$")
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := pat.match(p.name))]
    return [p for _, p in sorted(found)]


def make_backup(path: str | os.PathLike) -> Path | None:
    path = Path(path)
    if not path.exists():
        return None
    existing = backups_of(path)
    n = int(existing[-1].name.rsplit(".", 1)[1]) + 1 if existing else 1
    folder = path.parent / BACKUP_DIR
    folder.mkdir(exist_ok=True)
    target = folder / f"{path.name}.{n}"
    atomic_write(target, path.read_text(encoding="utf-8"))
    return target


def write_with_backup(path: str | os.PathLike, text: str) -> Path | None:
    """Back up the current file, then replace it atomically. Returns the backup's path."""
    backup = make_backup(path)
    atomic_write(path, text)
    return backup


def unified_diff(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"{path} (on disk)", tofile=f"{path} (edited)"))
