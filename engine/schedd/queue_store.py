"""The schedd's :class:`~engine.schedd.store.Store` over the foundation's ``JobQueue``.

Every schedd transaction is a ``JobQueue.transaction`` (written through the attached log writer
at commit, one durable ``105 … 106 # <time>`` block; htcondor.md §3.2). A status index is kept
from the queue's change events, so the router's own writes (claims, routed copies, status
mirroring) are seen too, and the schedd's scans touch only jobs in the states they need.

Indexes (issue 14: a step costs what changed, not the queue's size), all kept from the same
events, each a superset of what its pass selects (the pass applies its own filter again, so the
answer is the one a full scan gives):

- jobs by status;
- ``dispatch_views``: idle jobs whose ``JobUniverse`` may be grid (9) or local (12) and that no
  router manages (``Managed`` is not ``"External"``) — what ``Schedd.dispatch`` can start;
- ``periodic_views``: jobs in a policy state (idle, running, held) not managed externally that
  have their own ``PeriodicHold``/``PeriodicRelease``/``PeriodicRemove`` (with system periodic
  expressions every policy job is evaluated, as the schedd does);
- ``cron_idle_jobs``: idle jobs with a ``Cron*`` attribute (``needsCronTab``); ``cron_jobs``: the
  same among idle, running and held jobs (the crondor view's rows).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from engine.contract.codes import JobStatus
from engine.queue.jobqueue import JobAdded, JobChanged, JobQueue, JobRemoved, QueueReloaded
from engine.crondor.fields import ATTRS as CRON_ATTRS
from engine.schedd.store import StatusQueries

IDLE, POLICY_STATES = JobStatus.IDLE, (JobStatus.IDLE, JobStatus.RUNNING, JobStatus.HELD)  # bound once (hot)
_PERIODIC = ("PeriodicHold", "PeriodicRelease", "PeriodicRemove")
_EXTERNAL = '"External"'


def _maybe_dispatchable(job: Any, managed: str | None) -> bool:
    """``managed``: the job's ``Managed`` text (read once by ``_put``)."""
    text = job.get("JobUniverse")
    try:
        if int(text) not in (9, 12):  # type: ignore[arg-type]
            return False
    except (TypeError, ValueError):
        pass  # undefined or an expression: Schedd.dispatch decides
    return managed != _EXTERNAL


def _has_any(job: Any, names: tuple[str, ...]) -> bool:
    for n in names:
        if job.get(n) is not None:
            return True
    return False


# lower-case names of the attributes ``_put`` reads (status, dispatch, periodic and cron indexes)
_INDEXED = frozenset(n.lower() for n in ("JobStatus", "JobUniverse", "Managed", *_PERIODIC, *CRON_ATTRS))
_IRRELEVANT: dict[frozenset[str], bool] = {}  # names of a change -> none of them is indexed


def _irrelevant(names: frozenset[str]) -> bool:
    got = _IRRELEVANT.get(names)
    if got is None:
        got = not any(n.lower() in _INDEXED for n in names)
        if len(_IRRELEVANT) < 4096:  # bounded: an engine changes the same few name sets
            _IRRELEVANT[names] = got
    return got


def _key(jid: tuple[int, int]) -> str:
    return f"{jid[0]}.{jid[1]}"


def _status_of(job: Any) -> int | None:
    return job.status


class _QueueTx:
    """A queue :class:`~engine.queue.transaction.Transaction` as a :class:`Tx`, and its block: entered
    and left with it (no generator per commit)."""

    __slots__ = ("tx",)

    def __init__(self, tx: Any) -> None:
        self.tx = tx

    def __enter__(self) -> "_QueueTx":
        self.tx.__enter__()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.tx.__exit__(exc_type, exc, tb)

    def new_cluster(self) -> int:
        return self.tx.new_cluster()

    def new_proc(self, cluster: int, proc: int) -> None:
        got = self.tx.new_proc(cluster)
        if got != (cluster, proc):
            raise RuntimeError(f"new_proc gave {got}, expected {(cluster, proc)}")

    def set(self, key: str, name: str, text: str) -> None:
        self.tx.set_attribute(key, name, text)

    def set_many(self, key: str, items: Iterable[tuple[str, str]]) -> None:
        """``set`` of each (name, text), in order: the same records and refusals, with the ad's
        own checks made once (``Transaction.set_attributes``)."""
        self.tx.set_attributes(key, items)

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
        self._by_status: dict[int, dict[str, Any]] = {}
        self._dispatch: dict[str, Any] = {}
        self._periodic: dict[str, Any] = {}
        self._cron: dict[str, Any] = {}
        self._cron_any: dict[str, Any] = {}  # idle, running or held with a Cron* attribute
        self._changed: set[str] | None = None  # None: everything (not tracked yet, or reloaded)
        self._rebuild()
        self._unsubscribe = queue.subscribe_batch(self._on_event)

    def close(self) -> None:
        self._unsubscribe()

    def _rebuild(self) -> None:
        self.status = {}
        self._jobs = {}
        self._by_status, self._dispatch, self._periodic, self._cron, self._cron_any = {}, {}, {}, {}, {}
        self._changed = None
        for job in self.queue:
            st = _status_of(job)
            if st is not None:
                self._put(job.key, job, st)

    def _drop(self, key: str) -> None:
        if self._changed is not None:
            self._changed.add(key)
        st = self.status.pop(key, None)
        self._jobs.pop(key, None)
        if st is not None:
            self._by_status.get(st, {}).pop(key, None)
        self._dispatch.pop(key, None)
        self._periodic.pop(key, None)
        self._cron.pop(key, None)
        self._cron_any.pop(key, None)

    def _put(self, key: str, job: Any, st: int) -> None:
        if self._changed is not None:
            self._changed.add(key)
        old = self.status.get(key)
        if old is not None and old != st:
            self._by_status.get(old, {}).pop(key, None)
        self.status[key] = st
        self._jobs[key] = job
        self._by_status.setdefault(st, {})[key] = job
        policy = st in POLICY_STATES
        managed = job.get("Managed") if policy else None  # POLICY_STATES holds IDLE
        cron = policy and _has_any(job, CRON_ATTRS)
        for index, member in ((self._dispatch, st == IDLE and _maybe_dispatchable(job, managed)),
                              (self._periodic, policy and managed != _EXTERNAL and _has_any(job, _PERIODIC)),
                              (self._cron, cron and st == IDLE), (self._cron_any, cron)):
            if member:
                index[key] = job
            else:
                index.pop(key, None)

    def _on_event(self, events: list[Any]) -> None:
        """A batch of the queue's events (``JobQueue.subscribe_batch``)."""
        for ev in events:
            if type(ev) is JobChanged:  # the common event first
                key = _key(ev.id)
                if key in self.status and _irrelevant(ev.names):
                    # no attribute an index or the status reads changed: the job stays where it
                    # is (``_put`` would find the same answers); only the change is noted
                    if self._changed is not None:
                        self._changed.add(key)
                    continue
            elif isinstance(ev, QueueReloaded):
                self._rebuild()
                continue
            elif isinstance(ev, JobRemoved):
                self._drop(_key(ev.id))
                continue
            elif not isinstance(ev, JobAdded):
                continue
            job = self.queue.get(ev.id)
            if job is not None:
                st = _status_of(job)
                if st is None:
                    self._drop(job.key)
                else:
                    self._put(job.key, job, st)

    def transaction(self, now: float, durable: bool = True) -> "_QueueTx":
        """``with store.transaction(now) as tx``: the queue's transaction, seen as a :class:`Tx`."""
        return _QueueTx(self.queue.transaction(now=now, durable=durable))

    def _job(self, key: str) -> Any:
        j = self._jobs.get(key)
        return j if j is not None else self.queue.get(key)

    def attrs(self, job: str) -> dict[str, str] | None:
        j = self._job(job)
        return None if j is None else j.attrs

    def _in(self, states: tuple[int, ...]) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        for st in states:
            out.extend(self._by_status.get(st, {}).items())
        return out

    def _with(self, states: tuple[int, ...]) -> Iterator[tuple[str, dict[str, str]]]:
        for key, j in self._in(states):
            yield key, j.attrs

    def views(self, states: tuple[int, ...]):
        for key, j in self._in(states):
            yield key, _JobView(j)

    def dispatch_views(self):
        for key, j in list(self._dispatch.items()):
            yield key, _JobView(j)

    def periodic_views(self, every_policy_job: bool):
        if every_policy_job:
            yield from self.views(POLICY_STATES)
            return
        for key, j in list(self._periodic.items()):
            yield key, _JobView(j)

    def counts(self) -> dict[int, int]:
        return {st: len(jobs) for st, jobs in self._by_status.items() if jobs}

    def take_changed(self) -> set[str] | None:
        out, self._changed = self._changed, set()
        return out

    def view(self, job: str):
        j = self._job(job)
        return None if j is None else _JobView(j)

    def cron_idle_jobs(self):
        for key, j in list(self._cron.items()):
            yield key, j.attrs

    def cron_jobs(self):
        for key, j in list(self._cron_any.items()):
            yield key, j.attrs

