"""The write side of the job queue, shaped like HTCondor's QMGMT calls (htcondor.md §3.1–3.2).

Design decisions and invariants:

- A :class:`Transaction` only collects records; nothing touches the queue or the file until the
  ``with queue.transaction(...)`` block ends without an exception. Then the records are written
  as one ``105 … 106`` block (fsynced by the writer unless the transaction is non-durable, as
  HTCondor's ``CommitNonDurableTransaction``) and applied to memory in one batch. An
  exception inside the block aborts: nothing is written, nothing is applied.
- Checks happen when a call is made, against the queue *as the transaction would leave it*
  (ads created or destroyed earlier in the same transaction count), so a bad call fails at the
  line that made it.
- NewCluster writes ``103 0.0 NextClusterNum <c+1>``, ``101 0<c>.-1 Job Machine`` and
  ``101 <c>.-2 ClusterPvt (empty)`` in that order (htcondor.md §3.6, HTCondor ≥ 24.11).
  Destroying the last proc of a cluster also destroys the cluster ad and its ClusterPvt ad, as
  the schedd does (§3.6, last transactions).
- Values are refused (``ValueError``) when they contain a newline, are blank, or do not parse:
  the schedd checks that a value parses before storing it (§3.1 "Values"). Attributes are stored
  on the ad the caller names; the real log in tests/data shows ClusterId/JobUniverse in a proc ad,
  so no attribute is moved between proc and cluster ads. ``JobStatus``/``ProcId`` belong to procs
  and are refused on a cluster ad.
"""

from __future__ import annotations

import functools
from typing import Any, Protocol

from engine.queue import records as R
from engine.queue.records import cluster_key, cluster_pvt_key, job_key, jobset_key, parse_key



class _Queue(Protocol):
    """What a transaction needs of its queue (:class:`engine.queue.jobqueue.JobQueue`): the ads by
    key, the cluster index, the next cluster number, the writer and ``apply_all``."""

    _ads: dict
    _txn: Any  # the transaction open on it (entered, not yet left), or None
    writer: Any

    def _cluster_index(self) -> dict: ...

    def next_cluster_num(self) -> int: ...

    def apply_all(self, recs: list) -> list[str]: ...

_PROC_ONLY = frozenset({"jobstatus", "procid"})
_PROC_ONLY_LEN = frozenset(len(n) for n in _PROC_ONLY)  # a name of another length is none of them
# value texts ``check_value`` accepted (whether a text is a valid value does not depend on the
# attribute): an engine writes the same few thousand values again and again, and parsing each
# again was a third of ``set_attribute``. Bounded: emptied when full.
_ACCEPTED: set[str] = set()
_ACCEPTED_MAX = 1 << 16


@functools.lru_cache(maxsize=1 << 14)
def _is_word(s: str) -> bool:
    """``s`` is a key or attribute name ``records.format_record`` writes as is (its own check,
    remembered: a router writes the same few hundred names and keys again and again)."""
    try:
        R.format_record(R.destroy_ad(s))
    except R.RecordFormatError:
        return False
    return True


def resolve_key(key_or_id: Any) -> str:
    """``(c, p)`` → the log key (``p`` -1 cluster, -2 ClusterPvt, -100 jobset); strings pass."""
    if isinstance(key_or_id, str):
        return key_or_id
    c, p = key_or_id
    if (c, p) == (0, 0):
        return R.HEADER_KEY
    if c == 0:
        return f"0.{p}"
    if p >= 0:
        return job_key(c, p)
    if p == -1:
        return cluster_key(c)
    if p == -2:
        return cluster_pvt_key(c)
    if p == -100:
        return jobset_key(c)
    raise ValueError(f"no ad key for id {key_or_id!r}")


def check_value(name: str, text: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"value of {name} must be old-ClassAd text, not {type(text).__name__}")
    if "\n" in text or "\0" in text:
        raise ValueError(f"value of {name} contains a newline or NUL; job_queue.log values are one line")
    if not text.strip():
        raise ValueError(f"value of {name} is empty")
    if not R.value_is_valid(text):
        raise ValueError(f"value of {name} does not parse as a ClassAd expression: {text!r}")
    return text


class Transaction:
    def __init__(self, queue: _Queue, now: float | None, durable: bool = True) -> None:
        self._q = queue
        self.now = now
        self.durable = durable  # False: HTCondor's CommitNonDurableTransaction (htcondor.md §3.2)
        self.records: list[R.Record] = []
        self._lines: list[str] = []  # each record's line, formatted (and so checked) when added
        self._alive: dict[str, bool] = {}  # keys created (True) / destroyed (False) here
        # the same for proc ads, by cluster: {cluster: {proc: alive}}, so proc lookups do not scan
        # every key this transaction touched (a 50,000-job transaction was quadratic)
        self._proc_alive: dict[int, dict[int, bool]] = {}
        self._proc_max: dict[int, int] = {}  # highest proc id used here, per cluster
        self._proc_max_committed: dict[int, int] = {}
        self._live: dict[int, int] = {}  # live proc count per touched cluster
        self._next_cluster: int | None = None

    # ------------------------------------------------------------ the pending view
    def exists(self, key_or_id: Any) -> bool:
        key = resolve_key(key_or_id)
        if key in self._alive:
            return self._alive[key]
        return key in self._q._ads

    def _procs(self, cluster: int) -> set[int]:
        procs = set(self._q._cluster_index().get(cluster, ()))
        for p, alive in self._proc_alive.get(cluster, {}).items():
            (procs.add if alive else procs.discard)(p)
        return procs

    def _mark(self, key: str, alive: bool) -> None:
        self._alive[key] = alive
        ids = parse_key(key)
        if ids and ids[1] >= 0 and key == job_key(*ids):
            c, p = ids
            touched = self._proc_alive.setdefault(c, {})
            before = touched[p] if p in touched else p in self._committed_procs(c)
            touched[p] = alive
            if before != alive:
                self._live[c] = self._live_count(c) + (1 if alive else -1)
            if p > self._proc_max.get(c, -1):
                self._proc_max[c] = p

    def _committed_procs(self, cluster: int) -> set[int] | tuple:
        return self._q._cluster_index().get(cluster, ())

    def _live_count(self, cluster: int) -> int:
        """Procs of ``cluster`` alive in the pending view (committed, plus created, minus destroyed)."""
        if cluster not in self._live:
            self._live[cluster] = len(self._committed_procs(cluster))
        return self._live[cluster]

    def _highest_proc(self, cluster: int) -> int:
        if cluster not in self._proc_max_committed:  # once per cluster and transaction
            self._proc_max_committed[cluster] = max(self._q._cluster_index().get(cluster, ()), default=-1)
        return max(self._proc_max_committed[cluster], self._proc_max.get(cluster, -1))

    def _add(self, rec: R.Record) -> None:
        self._lines.append(R.format_record(rec))  # refuse anything that cannot be written, now
        self.records.append(rec)

    # ------------------------------------------------------------ QMGMT calls
    def new_ad(self, key_or_id: Any, mytype: str) -> str:
        key = resolve_key(key_or_id)
        if self.exists(key):
            raise KeyError(f"ad {key} already exists")
        self._add(R.new_ad(key, mytype))
        self._mark(key, True)
        return key

    def new_cluster(self) -> int:
        c = self._next_cluster if self._next_cluster is not None else self._q.next_cluster_num()
        if not self.exists(R.HEADER_KEY):
            self.new_ad(R.HEADER_KEY, "Job")
        self._add(R.set_attr(R.HEADER_KEY, "NextClusterNum", str(c + 1)))
        self.new_ad(cluster_key(c), "Job")
        self.new_ad(cluster_pvt_key(c), "ClusterPvt")
        self._next_cluster = c + 1
        return c

    def new_proc(self, cluster: int) -> tuple[int, int]:
        if not self.exists(cluster_key(cluster)):
            raise KeyError(f"cluster {cluster} does not exist")
        # Proc ids are never reused, not even for one destroyed earlier in this transaction.
        p = self._highest_proc(cluster) + 1
        self.new_ad(job_key(cluster, p), "Job")
        return (cluster, p)

    def set_attribute(self, key_or_id: Any, name: str, text: str) -> None:
        key = key_or_id if type(key_or_id) is str else resolve_key(key_or_id)
        alive = self._alive.get(key)
        if not (alive if alive is not None else key in self._q._ads):
            raise KeyError(f"no ad {key} to set {name} in")
        if name.lower() in _PROC_ONLY and R.key_kind(key) == R.CLUSTER:
            raise ValueError(f"{name} belongs in a proc ad, not the cluster ad {key}")
        if type(text) is not str or text not in _ACCEPTED:
            check_value(name, text)  # raises with the attribute's name
            if len(_ACCEPTED) >= _ACCEPTED_MAX:
                _ACCEPTED.clear()
            _ACCEPTED.add(text)
        rec = R.set_attr(key, name, text)
        if type(key) is str and type(name) is str and _is_word(key) and _is_word(name):
            # format_record's line for a 103 whose value check_value accepted (no newline, NUL,
            # or blank value) and whose key and name are words (test_transaction_line_fast_path)
            self._lines.append(f"103 {key} {name} {text}")
            self.records.append(rec)
        else:
            self._add(rec)  # format_record refuses it with its own message

    def set_attributes(self, key_or_id: Any, items: Any) -> None:
        """``set_attribute(key, name, text)`` for each ``(name, text)`` of ``items``, in order,
        with the ad's own checks made once (a routed copy's submit sets ~50 attributes of one
        ad). The same records, lines and refusals as the calls one by one
        (test_set_attributes_is_set_attribute_in_a_loop)."""
        key = key_or_id if type(key_or_id) is str else resolve_key(key_or_id)
        alive = self._alive.get(key)
        exists = alive if alive is not None else key in self._q._ads
        if not exists or type(key) is not str or not _is_word(key):
            for name, text in items:  # the general path (and its messages)
                self.set_attribute(key, name, text)
            return
        cluster = R.key_kind(key) == R.CLUSTER
        lines, records, accepted, make = self._lines, self.records, _ACCEPTED, R.set_attr
        for name, text in items:
            if (type(name) is not str or not _is_word(name) or type(text) is not str or text not in accepted
                    or (cluster and len(name) in _PROC_ONLY_LEN and name.lower() in _PROC_ONLY)):
                self.set_attribute(key, name, text)
                continue
            lines.append(f"103 {key} {name} {text}")
            records.append(make(key, name, text))

    def delete_attribute(self, key_or_id: Any, name: str) -> None:
        key = resolve_key(key_or_id)
        if not self.exists(key):
            raise KeyError(f"no ad {key} to delete {name} from")
        self._add(R.delete_attr(key, name))

    def destroy(self, key_or_id: Any) -> None:
        """Destroy an ad. A proc takes its cluster (and ClusterPvt) along when it is the last one;
        a cluster id ``(c, -1)`` destroys all its procs first."""
        key = resolve_key(key_or_id)
        if not self.exists(key):
            raise KeyError(f"no ad {key} to destroy")
        kind = R.key_kind(key)
        if kind == R.CLUSTER:
            c = parse_key(key)[0]  # type: ignore[index]
            for p in sorted(self._procs(c)):
                self._destroy_one(job_key(c, p))
            self._destroy_cluster(c)
            return
        self._destroy_one(key)
        if kind == R.JOB:
            c = parse_key(key)[0]  # type: ignore[index]
            if not self._live_count(c):
                self._destroy_cluster(c)

    def _destroy_one(self, key: str) -> None:
        self._add(R.destroy_ad(key))
        self._mark(key, False)

    def _destroy_cluster(self, c: int) -> None:
        for key in (cluster_key(c), cluster_pvt_key(c)):
            if self.exists(key):
                self._destroy_one(key)

    # ------------------------------------------------------------ the block (``with queue.transaction(...)``)
    def __enter__(self) -> "Transaction":
        q = self._q
        if q._txn is not None:
            raise RuntimeError("a transaction is already open on this queue")
        q._txn = self
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        """Commit when the block ended without an exception; an exception aborts (it propagates)."""
        try:
            if exc_type is None:
                self._commit()
        finally:
            self._q._txn = None

    # ------------------------------------------------------------ commit
    def _commit(self) -> None:
        if not self.records:
            return
        q = self._q
        if q.writer is not None:
            q.writer.write_transaction(self.records, now=self.now, lines=self._lines, durable=self.durable)
        q.apply_all(self.records)
