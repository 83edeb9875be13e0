"""Every command the UI (or a file watcher) sends to the engine, and the control each needs.

Commands are imperative, frozen dataclasses put on the runtime's thread-safe queue
(:meth:`engine.runtime.Runtime.send`). The runtime handles ``Pause``/``Resume``/``Step``/``SetSpeed``/
``Stop`` itself; the feed handles the rest (``handle(command)``). A feed lists the controls it
takes (``Snapshot.controls``, :data:`engine.contract.snapshot.CONTROLS`); :func:`control_of` names the
one a command needs, and the runtime refuses a command whose control the feed does not list.
"""

from __future__ import annotations

from dataclasses import dataclass

@dataclass(frozen=True)
class Pause:
    pass


@dataclass(frozen=True)
class Resume:
    pass


@dataclass(frozen=True)
class Step:
    """Advance one engine cycle (demo) or one transaction (replay) while paused."""

    count: int = 1


@dataclass(frozen=True)
class SetSpeed:
    speed: float


@dataclass(frozen=True)
class HoldJob:
    job: str
    reason: str = "via RouteDeck"


@dataclass(frozen=True)
class ReleaseJob:
    job: str


@dataclass(frozen=True)
class RemoveJob:
    job: str
    reason: str = "via RouteDeck"


@dataclass(frozen=True)
class ApplyRoutes:
    """Switch the routing table to the config text/files given (validated first; atomic)."""

    config_files: tuple[str, ...]
    reason: str = "applied"


@dataclass(frozen=True)
class Seek:
    """Replay only: go to a time (epoch) or a transaction index."""

    time: float | None = None
    transaction: int | None = None


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class EditJob:
    """condor_qedit: set one attribute of a job to an expression (old-syntax text)."""

    job: str
    name: str
    value: str


# ------------------------------------------------------------------------------------------
# replay only (control "seek")


@dataclass(frozen=True)
class AddBookmark:
    name: str | None = None


@dataclass(frozen=True)
class GotoBookmark:
    name: str


# ------------------------------------------------------------------------------------------
# watch only: sent by the file watcher, taken by every feed that polls


@dataclass(frozen=True)
class WakeUp:
    """Command: the log changed (sent by the file watcher); poll now."""


def control_of(command: object) -> str | None:
    """The control (``CONTROLS``) a command needs; None for commands every feed takes (Stop)."""
    if isinstance(command, (Pause, Resume)):
        return "pause"
    if isinstance(command, SetSpeed):
        return "speed"
    if isinstance(command, Step):
        return "step"
    if isinstance(command, Seek):
        return "seek"
    if isinstance(command, (HoldJob, ReleaseJob, RemoveJob, EditJob)):
        return "jobs"
    if isinstance(command, ApplyRoutes):
        return "routes"
    return None
