"""Reload the routing table when its files change outside RouteDeck.

A thread worker watches the *directories* of the table's config files with watchfiles (an
editor's atomic save arrives as ``added``/``deleted`` of the file, so watching the file itself
would miss it), and posts :class:`ConfigFilesChanged` for changes to those files. The app then
asks the engine to apply the files again; the engine validates them, and a broken file is
reported as an error event while the last good table stays in force.

Writes made by RouteDeck's own editor are recognised by content digest and not reloaded a
second time (the editor already sent ``ApplyRoutes``). The digests are taken here, in the
watcher's thread, and travel with the message: the UI thread never reads or hashes a file.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from textual.message import Message


def digest(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


@dataclass
class ConfigFilesChanged(Message):
    files: tuple[str, ...]
    digests: tuple[str | None, ...] = ()  # sha256 of each file's content when seen (None: unreadable)


def watch_config(app, files: tuple[str, ...], worker) -> None:
    """Body of the watcher thread; returns when the worker is cancelled."""
    from watchfiles import watch  # noqa: PLC0415

    wanted = {os.path.realpath(f): f for f in files}
    dirs = sorted({os.path.dirname(p) for p in wanted if os.path.isdir(os.path.dirname(p))})
    if not dirs:
        return
    for changes in watch(*dirs, stop_event=worker.cancelled_event, yield_on_timeout=True,
                         rust_timeout=500, debounce=200, recursive=False):
        if worker.is_cancelled:
            return
        touched = sorted({wanted[rp] for _, p in changes if (rp := os.path.realpath(p)) in wanted})
        if touched:
            app.post_message(ConfigFilesChanged(tuple(touched), tuple(digest(f) for f in touched)))
