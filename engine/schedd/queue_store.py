"""The schedd's :class:`~engine.schedd.store.Store` over the foundation's ``JobQueue``.

Every schedd transaction is a ``JobQueue.transaction`` (written through the attached log writer
at commit, one durable ``105 … 106 # <time>`` block; htcondor.md §3.2). A status index is kept
from the queue's change events, so the router's own writes (claims, routed copies, status
mirroring) are seen too, and the schedd's scans touch only jobs in the states they need.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from engine.queue.jobqueue import JobAdded, JobChanged, JobQueue, JobRemoved, QueueReloaded
from engine.schedd.store import StatusQueries


def _key(jid: tuple[int, int]) -> str:
    return f"{jid[0]}.{jid[1]}"


def _status_of(job: Any) -> int | None:
    return job.status


class _QueueTx:
    def __init__(self, tx: Any) -> None:
        self.tx = tx

    def new_cluster(self) -> int:
        return self.tx.new_cluster()

    def new_proc(self, cluster: int, proc: int) -> None:
        got = self.tx.new_proc(cluster)
        if got != (cluster, proc):
            raise RuntimeError(f"new_proc gave {got}, expected {(cluster, proc)}")

    def set(self, key: str, name: str, text: str) -> None:
        self.tx.set_attribute(key, name, text)

    def delete(self, key: str, name: str) -> None:
        self.tx.delete_attribute(key, name)

    def destroy(self, job: str) -> None:
        self.tx.destroy(job)


class _JobView:
    """A JobQueue ``Job`` as a :class:`~engine.schedd.store.JobView` (no copy of its ad)."""

    __slots__ = ("job",)

    def __init__(self, job: Any) -> None:
        self.job = job

    def get(self, name: str, default: str | None = None) -> str | None:
        v = self.job.get(name)
        return default if v is None else v

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.job.get(name) is not None

    def classad(self) -> Any:
        return self.job.classad()

    @property
    def attrs(self) -> dict[str, str]:
        return self.job.attrs


class QueueStore(StatusQueries):
    def __init__(self, queue: JobQueue) -> None:
        self.queue = queue
        self.status: dict[str, int] = {}
        # the queue's Job views by key, kept with ``status``: the schedd's passes look jobs up by
        # "c.p" hundreds of thousands of times, and the queue parses such a key on every get
        self._jobs: dict[str, Any] = {}
        self._rebuild()
        self._unsubscribe = queue.subscribe(self._on_event)

    def close(self) -> None:
        self._unsubscribe()

    def _rebuild(self) -> None:
        self.status = {}
        self._jobs = {}
        for job in self.queue:
            st = _status_of(job)
            if st is not None:
                self.status[job.key] = st
                self._jobs[job.key] = job

    def _on_event(self, ev: Any) -> None:
        if isinstance(ev, QueueReloaded):
            self._rebuild()
        elif isinstance(ev, JobRemoved):
            key = _key(ev.id)
            self.status.pop(key, None)
            self._jobs.pop(key, None)
        elif isinstance(ev, (JobAdded, JobChanged)):
            job = self.queue.get(ev.id)
            if job is not None:
                st = _status_of(job)
                if st is None:
                    self.status.pop(job.key, None)
                    self._jobs.pop(job.key, None)
                else:
                    self.status[job.key] = st
                    self._jobs[job.key] = job

    @contextmanager
    def transaction(self, now: float):
        with self.queue.transaction(now=now) as tx:
            yield _QueueTx(tx)

    def _job(self, key: str) -> Any:
        j = self._jobs.get(key)
        return j if j is not None else self.queue.get(key)

    def attrs(self, job: str) -> dict[str, str] | None:
        j = self._job(job)
        return None if j is None else j.attrs

    def _with(self, states: tuple[int, ...]) -> Iterator[tuple[str, dict[str, str]]]:
        for key, st in list(self.status.items()):
            if st in states:
                j = self._job(key)
                if j is not None:
                    yield key, j.attrs

    def views(self, states: tuple[int, ...]):
        for key, st in list(self.status.items()):
            if st in states:
                j = self._job(key)
                if j is not None:
                    yield key, _JobView(j)

