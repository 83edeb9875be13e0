"""What a :class:`engine.queue.jobqueue.JobQueue` tells its subscribers and what a follower tells
about each transaction (moved from ``engine.queue.jobqueue`` as they were; that module re-exports
them). Change events are small frozen dataclasses delivered synchronously; inside a batch they
are coalesced (``JobQueue.batch``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from engine.queue.job import JobId


@dataclass(frozen=True, slots=True)
class JobAdded:
    id: JobId


@dataclass(frozen=True, slots=True)
class JobChanged:
    id: JobId
    names: frozenset[str]


@dataclass(frozen=True, slots=True)
class JobRemoved:
    id: JobId


@dataclass(frozen=True, slots=True)
class QueueReloaded:
    pass


@dataclass(frozen=True, slots=True)
class AdChanged:
    """A non-job ad (header, user record, ClusterPvt, jobset, other) was created, changed or
    destroyed. Cluster-ad changes are reported as :class:`JobChanged` of its procs instead."""

    key: str


class TransactionHook(Protocol):
    """What a follower tells about each transaction it applies (records apply as read, so at
    ``begin`` the queue is as before it, at ``commit`` as after it)."""

    def reloading(self) -> None:
        """A bulk load starts (the queue is emptied, then every transaction of the log told)."""

    def begin(self, end_line: str | None) -> None:
        """A 105; ``end_line`` is its 106 line (with the ``# time`` comment) when already written."""

    def commit(self, end_line: str, keys: set[str]) -> None:
        """Its 106: the transaction touched the ads ``keys``."""
