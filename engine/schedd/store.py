"""The schedd's view of the job queue: the few operations it needs, over the foundation's queue.

Design decisions and invariants:

- :class:`Store` is the seam between the schedd and ``engine.queue.jobqueue.JobQueue``: a
  transaction API (``new_cluster``, ``new_proc``, ``set``, ``delete``, ``destroy``; applied
  together at commit) and reads of the *committed* state (``attrs`` merges the cluster ad and the
  proc ad, the proc's own attributes winning, as HTCondor chains them; htcondor.md §3.1 "Keys").
- Reads inside an open transaction do not see its pending changes (as in HTCondor, changes take
  effect at commit; htcondor.md §3.2).
- A status index (job -> JobStatus) is kept so the schedd's per-step scans touch only the jobs
  in the states they care about, which is what makes 50,000-job runs affordable.
- :class:`MemoryStore` keeps everything in dictionaries and writes nothing; it is the reference
  implementation for tests. :class:`QueueStore` (``engine/schedd/queue_store.py``) writes
  through the foundation's ``JobQueue`` and its log writer.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator, Protocol
from engine.classad import make_ad


class Tx(Protocol):
    def new_cluster(self) -> int: ...
    def new_proc(self, cluster: int, proc: int) -> None: ...
    def set(self, key: str, name: str, text: str) -> None: ...
    def set_many(self, key: str, items: Iterable[tuple[str, str]]) -> None: ...  # ``set`` of each, in order
    def delete(self, key: str, name: str) -> None: ...
    def destroy(self, job: str) -> None: ...


class Store(Protocol):
    def transaction(self, now: float, durable: bool = True): ...
    def attrs(self, job: str) -> dict[str, str] | None: ...
    def idle_jobs(self) -> Iterator[tuple[str, dict[str, str]]]: ...
    def policy_jobs(self) -> Iterator[tuple[str, dict[str, str]]]: ...
    def finished_jobs(self) -> Iterator[tuple[str, dict[str, str]]]: ...
    def policy_views(self) -> Iterator[tuple[str, "JobView"]]: ...
    def views(self, states: tuple[int, ...]) -> Iterator[tuple[str, "JobView"]]: ...
    def take_changed(self) -> set[str] | None: ...


class JobView(Protocol):
    """Read access to one job without copying its ad: ``get`` (any case), ``in``, ``classad()``
    (an evaluation ad, cached by the queue until the job changes) and ``attrs`` (a copy)."""

    def get(self, name: str) -> str | None: ...
    def __contains__(self, name: object) -> bool: ...
    def classad(self) -> object: ...
    @property
    def attrs(self) -> dict[str, str]: ...


class DictView:
    def __init__(self, attrs: dict[str, str]) -> None:
        self.attrs = attrs
        self._spelled: dict[str, str] | None = None  # lower-case name -> its spelling in attrs

    def get(self, name: str, default: str | None = None) -> str | None:
        """Any case (:class:`JobView`): the name as given, else any other spelling of it (the
        spellings mapped once per view, when a name first misses)."""
        v = self.attrs.get(name)
        if v is None:
            if self._spelled is None:  # the first spelling of a name, as a scan would find it
                self._spelled = {}
                for k in self.attrs:
                    self._spelled.setdefault(k.lower(), k)
            k = self._spelled.get(name.lower())
            v = None if k is None else self.attrs.get(k)
        return default if v is None else v

    def __contains__(self, name: object) -> bool:
        return name in self.attrs

    def classad(self) -> object:
        return make_ad(self.attrs)


def cluster_key(job: str) -> str:
    return "0" + job.split(".", 1)[0] + ".-1"


class _MemTx:
    def __init__(self, store: "MemoryStore") -> None:
        self.store = store
        self.ops: list[tuple] = []

    def new_cluster(self) -> int:
        self.store.next_cluster += 1
        c = self.store.next_cluster
        self.ops.append(("new", f"0{c}.-1"))
        return c

    def new_proc(self, cluster: int, proc: int) -> None:
        self.ops.append(("new", f"{cluster}.{proc}"))

    def set(self, key: str, name: str, text: str) -> None:
        self.ops.append(("set", key, name, text))

    def set_many(self, key: str, items: Iterable[tuple[str, str]]) -> None:
        for name, text in items:
            self.set(key, name, text)

    def delete(self, key: str, name: str) -> None:
        self.ops.append(("del", key, name))

    def destroy(self, job: str) -> None:
        self.ops.append(("destroy", job))


class StatusQueries:
    """The queries every store answers from its ``status`` index ({job: JobStatus}) and its own
    ``_with(states)`` / ``views(states)``."""

    status: dict[str, int]

    def _with(self, states: tuple[int, ...]) -> Iterator[tuple[str, dict[str, str]]]:
        raise NotImplementedError

    def views(self, states: tuple[int, ...]) -> Iterator[tuple[str, "JobView"]]:
        raise NotImplementedError

    def idle_jobs(self):
        return self._with((1,))

    def policy_jobs(self):
        return self._with((1, 2, 5))

    def finished_jobs(self):
        return self._with((3, 4))

    def policy_views(self):
        return self.views((1, 2, 5))

    # Narrower queries a store may answer from indexes (QueueStore does); each yields a superset
    # of what its caller selects, and the caller filters again.
    def dispatch_views(self):
        return self.views((1,))

    def periodic_views(self, every_policy_job: bool):
        return self.policy_views()

    def cron_idle_jobs(self):
        return self.idle_jobs()

    def cron_jobs(self):
        """Idle, running and held jobs that may be cron jobs (the crondor screen's rows)."""
        return self.policy_jobs()

    def take_changed(self) -> set[str] | None:
        """Jobs added, changed or removed since the last call (and forgets them); None when the
        store does not keep track (the caller then scans everything)."""
        return None

    def view(self, job: str) -> "JobView | None":
        a = self.attrs(job)  # type: ignore[attr-defined]
        return None if a is None else DictView(a)

    def counts(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for st in self.status.values():
            out[st] = out.get(st, 0) + 1
        return out


class MemoryStore(StatusQueries):
    """Dictionaries only; the same semantics as the queue-backed store."""

    def __init__(self) -> None:
        self.ads: dict[str, dict[str, str]] = {}
        self.status: dict[str, int] = {}
        self.next_cluster = 0
        self.commits = 0

    @contextmanager
    def transaction(self, now: float, durable: bool = True):
        tx = _MemTx(self)
        yield tx
        self._apply(tx.ops)
        self.commits += 1

    def _apply(self, ops: list[tuple]) -> None:
        touched: set[str] = set()
        for op in ops:
            kind, key = op[0], op[1]
            if kind == "new":
                self.ads.setdefault(key, {})
            elif kind == "set":
                self.ads.setdefault(key, {})[op[2]] = op[3]
            elif kind == "del":
                self.ads.get(key, {}).pop(op[2], None)
            elif kind == "destroy":
                self.ads.pop(key, None)
                self.status.pop(key, None)
                ck = cluster_key(key)
                prefix = key.split(".", 1)[0] + "."
                if not any(k.startswith(prefix) for k in self.status):
                    self.ads.pop(ck, None)
                continue
            touched.add(key)
        for key in touched:
            if key.endswith(".-1") or key not in self.ads:
                continue
            st = self.ads[key].get("JobStatus")
            if st is not None:
                self.status[key] = int(st)

    def attrs(self, job: str) -> dict[str, str] | None:
        proc = self.ads.get(job)
        if proc is None:
            return None
        merged = dict(self.ads.get(cluster_key(job), {}))
        merged.update(proc)
        return merged

    def jobs(self) -> Iterator[tuple[str, dict[str, str]]]:
        for job in list(self.status):
            a = self.attrs(job)
            if a is not None:
                yield job, a

    def _with(self, states: tuple[int, ...]) -> Iterator[tuple[str, dict[str, str]]]:
        for job, st in list(self.status.items()):
            if st in states:
                a = self.attrs(job)
                if a is not None:
                    yield job, a

    def views(self, states: tuple[int, ...]):
        for job, attrs in self._with(states):
            yield job, DictView(attrs)

