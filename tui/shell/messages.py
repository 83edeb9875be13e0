"""Every app-wide message of the dashboard, as dataclasses (one module, like toolong's).

Design decisions:

- The engine side never touches widgets: the bridge thread posts :class:`SnapshotArrived`
  with ``post_message`` (thread-safe, never blocks). ``call_from_thread`` is not used because
  it blocks the engine until the UI has run, and raises once the app is closing.
- ``SnapshotArrived.can_replace`` lets a newer snapshot replace an older one still queued, so
  a slow UI sees fewer snapshots, never a growing backlog; events are not lost because each
  snapshot carries the ring of recent events with sequence numbers.
- Facts are past tense (``EngineCrashed``), requests imperative (``RunCommandLine``).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from engine.contract.snapshot import Snapshot


@dataclass
class SnapshotArrived(Message):
    """A new engine snapshot (posted from the bridge thread)."""

    snapshot: Snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotArrived)


@dataclass
class EngineCrashed(Message):
    """The engine (or the bridge to it) stopped with an error; the last snapshot stays shown."""

    error: str


@dataclass
class EventsSeen(Message):
    """New engine events (by sequence number) since the previous snapshot; ``missed`` counts a gap."""

    kinds: tuple[str, ...]
    missed: int = 0


@dataclass
class CommandSent(Message):
    """A command went to the engine (tests assert on these)."""

    command: object


@dataclass
class RoutesApplied(Message):
    """The editor wrote a new routing table file (``backup`` is the previous version)."""

    path: str
    backup: str | None


@dataclass
class RoutesUndone(Message):
    path: str
    restored_from: str


@dataclass
class FilterChanged(Message):
    """The jobs view's filter changed; ``shown`` rows match out of ``total``."""

    text: str
    shown: int
    total: int
