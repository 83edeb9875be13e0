"""The in-memory job queue: the ads of a schedd's ``job_queue.log`` (htcondor.md §3.1, §3.5).

Design decisions and invariants:

- Ads are stored by their log key exactly as written (``"1.0"``, ``"01.-1"``, ``"1.-2"``, ``"0.0"``,
  ``"0.1"``); attribute values are kept as old-ClassAd TEXT exactly as read and are never parsed
  while loading. Attribute names are case-insensitive (ClassAd rules): every spelling maps to the
  first spelling seen (``_canon``/``_lower``), which also interns names across ads.
- Proc ads chain to their cluster ad ``0<c>.-1`` at lookup time (proc attributes win), so the order
  in which a rewrite lists cluster and proc ads does not matter (htcondor.md §3.5 consumer). The
  header (``0.0``), user records (``0.<n>``, MyType Owner), ClusterPvt (``<c>.-2``), jobsets
  (``<c>.-100``) and anything else are kept apart from jobs.
- ``apply(record)`` applies one record at once (the follower's rule: transaction boundaries are the
  caller's business). The bulk loader in ``engine.queue.reader`` fills the same internals
  directly for speed and then announces :class:`QueueReloaded`; the event-free appliers of the
  step scanner and the recorder (``apply_quiet``, ``apply_plain``) are ``engine.queue.quiet``.
- Change events (``engine.queue.events``) are small frozen dataclasses delivered synchronously to subscribers. Inside a
  batch (``with queue.batch():``, one follower poll, one committed transaction) they are
  coalesced: additions and removals in order, then one :class:`JobChanged` per job that still
  exists and was not added in the batch; after a reload only :class:`QueueReloaded` is sent.
- Writing (``queue.transaction(now=...)``) mirrors QMGMT: records collect in the transaction and are
  written (if a writer is attached) and applied to memory only at commit; an exception aborts
  with nothing written or applied. ``NextClusterNum`` in the header is maintained as the schedd
  does. Values are checked at the QMGMT level: a newline, an empty or an unparsable value is
  refused with ``ValueError`` before anything is written.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping

from engine.queue import records as R
from engine.queue.job import _EMPTY, Job, JobId, _int_of  # Job, JobId: part of this API
from engine.queue.quiet import QuietApply
from engine.queue.transaction import Transaction
from engine.queue.events import (  # used here, and imported from here by the queue's users
    AdChanged, JobAdded, JobChanged, JobRemoved, QueueReloaded, TransactionHook,
)
from engine.queue.records import (  # noqa: F401  (re-exported: the keys are part of this API)
    HEADER_KEY, cluster_key, cluster_pvt_key, job_key, jobset_key, key_kind, parse_key,
)

@functools.lru_cache(maxsize=65536)
def _classify(key: str) -> tuple[str, int, int]:
    """(kind, cluster, proc) of a key; remembered per key (every record of a commit asks, and an
    engine writes the same few thousand keys again and again)."""
    kind = key_kind(key)
    ids = parse_key(key) if kind != R.OTHER else None
    return (kind, ids[0], ids[1]) if ids else (kind, 0, 0)


class _Batch:
    __slots__ = ("ordered", "changed", "added", "reloaded")

    def __init__(self) -> None:
        self.ordered: list[Any] = []
        self.changed: dict[JobId, set[str]] = {}
        self.added: set[JobId] = set()
        self.reloaded = False


def _end_run(ver: dict[str, int], changed: dict[Any, set[str]], key: Any, jids: Any, names: list[str]) -> None:
    """The end of ``JobQueue._apply_all``'s run of 103s on ``key``: its version goes up by one per
    record, and each job it changes notes the names set."""
    ver[key] = ver.get(key, 0) + len(names)
    for jid in jids:
        got = changed.get(jid)
        if got is None:
            changed[jid] = set(names)
        else:
            got.update(names)


class JobQueue(QuietApply):
    """Ads of one job_queue.log, with views of jobs and change events."""

    def __init__(self) -> None:
        self._subs: list[Callable[[Any], None]] = []  # told each event
        self._batch_subs: list[Callable[[list[Any]], None]] = []  # told each batch's events at once
        self._batch: _Batch | None = None
        self._txn: Any = None
        self.writer: Any = None  # engine.queue.writer.QueueLogWriter, attached by open_queue
        # told of each transaction a follower applies (begin with its 106 line, commit with the
        # keys it touched): watch rebuilds the router's figures and the schedd's crondor from it
        self.transaction_hook: TransactionHook | None = None
        self._gen = 0
        self._reset()

    # ---------------------------------------------------------------- internals shared with the loader
    def _reset(self) -> None:
        self._ads: dict[str, dict[str, str]] = {}
        self._types: dict[str, str] = {}
        self._ids: dict[JobId, str] = {}
        # highest cluster id seen, kept as a running maximum (None = recompute once): NewCluster must
        # not scan every job (it did, and dominated the router's submit path on large queues)
        self._max_cluster: int | None = None
        self._kinds: dict[str, str] = {}  # non-job, non-cluster keys → kind
        self._canon: dict[str, str] = {}
        self._lower: dict[str, str] = {}
        self._ver: dict[str, int] = {}
        self._jobs: dict[JobId, Job] = {}
        self._by_cluster: dict[int, set[int]] | None = None
        self.seq: int | None = None
        self.created: int | None = None
        # copy-on-write (``fork``): the keys whose attribute dict this queue owns; None = all of them
        self._owned: set[str] | None = None

    def _name(self, name: str) -> str:
        n = self._canon.get(name)
        if n is None:
            n = self._lower.get(name.lower())
            if n is None:
                n = self._lower[name.lower()] = R.canonical_name(name)
            self._canon[name] = n
        return n

    def _finish_bulk(self) -> None:
        """After the loader filled the internals: drop caches, tell subscribers."""
        self._gen += 1
        self._jobs = {}
        self._by_cluster = None
        self._ver = {}
        self._event_reloaded()

    # ---------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self._ids)

    def spelling(self, name: str) -> str | None:
        """How this queue's ads spell ``name`` (attribute names are case-insensitive; an ad keeps
        the first spelling the queue saw), or None if no ad has ever had it."""
        return self._lower.get(name.lower())

    @property
    def names_stamp(self) -> tuple[int, int]:
        """Changes whenever :meth:`spelling` may answer differently (a new name, or a reload that
        forgot them all), so a caller can keep what it looked up until then."""
        return id(self._lower), len(self._lower)

    def __contains__(self, jid: object) -> bool:
        return jid in self._ids

    def __iter__(self) -> Iterator[Job]:
        """Jobs in the order their ads appeared (cheap); use :meth:`jobs` for id order."""
        for jid in list(self._ids):
            yield self._job(jid)

    def jobs(self) -> list[Job]:
        return [self._job(jid) for jid in sorted(self._ids)]

    def ids(self) -> list[JobId]:
        return sorted(self._ids)

    def get(self, jid: JobId | str) -> Job | None:
        if isinstance(jid, str):
            ids = parse_key(jid)
            if ids is None:
                return None
            jid = ids
        return self._job(jid) if jid in self._ids else None

    def _job(self, jid: JobId) -> Job:
        job = self._jobs.get(jid)
        if job is None:
            job = self._jobs[jid] = Job(self, jid)
        return job

    def ad(self, key: str) -> Mapping[str, str] | None:
        """The raw ad stored under ``key`` (no chaining), read-only."""
        a = self._ads.get(key)
        return None if a is None else MappingProxyType(a)

    def my_type(self, key: str) -> str | None:
        return self._types.get(key)

    def keys(self) -> list[str]:
        return list(self._ads)

    @property
    def header(self) -> Mapping[str, str]:
        return MappingProxyType(self._ads.get(HEADER_KEY, {}))

    def _of_kind(self, kind: str, mytype: str | None = None) -> dict[str, Mapping[str, str]]:
        out = {}
        for key, k in self._kinds.items():
            if k == kind and (mytype is None or self._types.get(key, "").lower() == mytype):
                out[key] = MappingProxyType(self._ads[key])
        return out

    def record_kinds(self) -> dict[str, int]:
        """Non-job records held, by kind (``engine.queue.records.record_kinds``)."""
        return R.record_kinds(self._types.items())

    @property
    def users(self) -> dict[str, Mapping[str, str]]:
        """User records ``0.<n>`` with MyType Owner (htcondor.md §3.1)."""
        return self._of_kind(R.USER, "owner")

    @property
    def jobsets(self) -> dict[str, Mapping[str, str]]:
        return self._of_kind(R.JOBSET)

    @property
    def cluster_private(self) -> dict[str, Mapping[str, str]]:
        return self._of_kind(R.CLUSTER_PVT)

    @property
    def other_ads(self) -> dict[str, Mapping[str, str]]:
        """Everything that is not a job, cluster, header, user, ClusterPvt or jobset ad
        (e.g. project records ``0.<n>`` with MyType Project)."""
        out = self._of_kind(R.OTHER)
        for key, k in self._kinds.items():
            if k == R.USER and self._types.get(key, "").lower() != "owner":
                out[key] = MappingProxyType(self._ads[key])
        return out

    def clusters(self) -> list[int]:
        return sorted({c for c, _ in self._ids})

    def procs_of(self, cluster: int) -> list[int]:
        return sorted(self._cluster_index().get(cluster, ()))

    def _cluster_index(self) -> dict[int, set[int]]:
        if self._by_cluster is None:
            idx: dict[int, set[int]] = {}
            for c, p in self._ids:
                idx.setdefault(c, set()).add(p)
            self._by_cluster = idx
        return self._by_cluster

    def counts_by_status(self) -> dict[int | None, int]:
        """{JobStatus: number of jobs}; ``None`` counts jobs whose JobStatus is missing or not an int."""
        js = self._canon.get("JobStatus") or self._lower.get("jobstatus")
        out: dict[int | None, int] = {}
        ads = self._ads
        for (c, _p), key in self._ids.items():
            v = ads[key].get(js) if js else None
            if v is None and js:
                v = ads.get(cluster_key(c), _EMPTY).get(js)
            s = _int_of(v)
            out[s] = out.get(s, 0) + 1
        return out

    def next_cluster_num(self) -> int:
        """The cluster id the next NewCluster gets: the header's NextClusterNum, never below an
        existing cluster."""
        name = self._canon.get("NextClusterNum") or self._lower.get("nextclusternum") or ""
        try:
            n = int(self.header.get(name, "1"))
        except ValueError:
            n = 1
        top = self._max_cluster
        if top is None:
            top = self._max_cluster = max((c for c, _ in self._ids), default=0)
        return max(n, top + 1, 1)

    @property
    def table(self) -> dict[str, dict[str, str]]:
        """The live key → {attribute: value text} table, for views that read many ads fast
        (``engine.views.recorded``). Read it, never write it: writes go through records."""
        return self._ads

    def fork(self) -> "JobQueue":
        """A copy-on-write copy (replay's checkpoints, ``engine.feeds.replay.index``): both queues
        share every ad dict and each copies one on its first write to it, so a fork costs the
        key tables, not the ads. Subscribers, writer and hook are not carried over."""
        other = JobQueue()
        other._ads = dict(self._ads)
        other._types = dict(self._types)
        other._ids = dict(self._ids)
        other._kinds = dict(self._kinds)
        other._canon, other._lower = self._canon, self._lower  # spellings only grow, the same everywhere
        other._max_cluster = self._max_cluster
        other.seq, other.created = self.seq, self.created
        other._owned = set()
        self._owned = set()
        self._gen += 1
        return other

    def copy(self) -> "JobQueue":
        """A copy sharing no ad dict with this queue, whose writes change its ads in place (a
        pass keeping references to ads it read, as replay's stats do, sees their last values).
        This queue writes as it did before: sharing nothing, it need not copy an ad on a write
        (a pass copying its own queue midway goes on changing its ads in place)."""
        owned = self._owned
        other = self.fork()
        self._owned = owned
        other._ads = {k: dict(a) for k, a in self._ads.items()}
        other._owned = None
        return other

    def _own(self, key: str) -> dict[str, str] | None:
        """The ad under ``key`` for writing (copied first if shared with a fork)."""
        ad = self._ads.get(key)
        owned = self._owned
        if ad is not None and owned is not None and key not in owned:
            ad = self._ads[key] = dict(ad)
            owned.add(key)
        return ad

    def snapshot_state(self) -> dict[str, tuple[str, dict[str, str]]]:
        """{key: (MyType, attrs)}: a plain copy for comparisons and tests."""
        return {k: (self._types.get(k, ""), dict(a)) for k, a in self._ads.items()}

    # ---------------------------------------------------------------- events
    def subscribe(self, callback: Callable[[Any], None]) -> Callable[[], None]:
        """``callback(event)`` for each change event (module docstring); returns an unsubscribe."""
        return self._add_sub(self._subs, callback)

    def subscribe_batch(self, callback: Callable[[list[Any]], None]) -> Callable[[], None]:
        """``callback(events)`` once per batch with its events in order (the events ``subscribe``
        gives one call each; a committed transaction brings ~2): one call per commit instead of one
        per event. The list is the queue's: read it, do not keep or change it. Batch subscribers are
        told after the per-event ones, each in subscription order; a batch without events calls none."""
        return self._add_sub(self._batch_subs, callback)

    @staticmethod
    def _add_sub(subs: list[Any], callback: Callable[[Any], None]) -> Callable[[], None]:
        subs.append(callback)

        def unsubscribe() -> None:
            if callback in subs:
                subs.remove(callback)

        return unsubscribe

    @contextmanager
    def batch(self) -> Iterator[None]:
        if self._batch is not None:
            yield
            return
        b = self._batch = _Batch()
        try:
            yield
        finally:
            self._batch = None
            self._flush(b)

    def _flush(self, b: _Batch) -> None:
        if not self._subs and not self._batch_subs:
            return
        if b.reloaded:
            events: list[Any] = [QueueReloaded()]
        else:
            events = list(b.ordered)
            for jid, names in b.changed.items():
                if jid in self._ids and jid not in b.added:
                    events.append(JobChanged(jid, frozenset(names)))
        if not events:
            return
        if self._subs:
            for ev in events:
                for cb in list(self._subs):
                    cb(ev)
        for cb in list(self._batch_subs):
            cb(events)

    def _event_reloaded(self) -> None:
        with self.batch():
            self._batch.reloaded = True  # type: ignore[union-attr]

    def _changed(self, key: str, names: set[str] | frozenset[str]) -> None:
        self._ver[key] = self._ver.get(key, 0) + 1
        b = self._batch
        if b is None or b.reloaded:
            return
        kind, c, p = _classify(key)
        if kind == R.JOB:
            jid = (c, p)
            b.changed.setdefault(jid, set()).update(names)
        elif kind == R.CLUSTER:
            for proc in self._cluster_index().get(c, ()):
                b.changed.setdefault((c, proc), set()).update(names)
        else:
            b.ordered.append(AdChanged(key))

    def _note(self, event: Any) -> None:
        b = self._batch
        if b is None or b.reloaded:
            return
        b.ordered.append(event)
        if isinstance(event, JobAdded):
            b.added.add(event.id)

    # ---------------------------------------------------------------- applying records
    def apply(self, rec: R.Record) -> str | None:
        """Apply one record now. Returns a warning when the record was ignored (unknown key,
        a second 101 for an existing key); 105/106/107 change nothing here."""
        with self.batch():
            return self._apply(rec)

    def apply_all(self, recs: list[R.Record]) -> list[str]:
        """:meth:`apply` of each record in one batch; the warnings of those ignored.

        A 103 on a proc or cluster ad (most of every transaction the engine commits) is applied here
        inline: the same steps as ``_apply`` + ``_changed``, without their calls and without a
        set made per record (``test_apply_all_matches_apply`` holds the two to the same result).
        The batch is opened here as :meth:`batch` does (one per commit: without its generator)."""
        b = self._batch
        if b is not None:  # inside an open batch: its end sends the events
            return self._apply_all(recs, b)
        b = self._batch = _Batch()
        try:
            return self._apply_all(recs, b)
        finally:
            self._batch = None
            self._flush(b)

    def _apply_all(self, recs: list[R.Record], b: _Batch) -> list[str]:
        if b.reloaded:  # no events to collect: the general path
            return [w for w in (self._apply(r) for r in recs) if w]
        out: list[str] = []
        ads, ver, canon, changed, owned = self._ads, self._ver, self._canon, b.changed, self._owned
        set_attr, job, cluster = R.SET_ATTR, R.JOB, R.CLUSTER
        # a run of 103s on one key (a transaction sets many attributes of one ad) looks the ad and
        # the jobs it changes up once; any other record may create or destroy ads: looked up again
        # a run's version bump and change notes are made once, when it ends (before any other
        # record: the same versions, name sets and first-change order as record by record)
        last: str | None = None
        ad: dict[str, str] | None = None
        jids: Any = ()
        run: list[str] = []
        for rec in recs:
            if rec.op == set_attr and owned is None:
                key = rec.key
                if key != last:
                    if run:
                        _end_run(ver, changed, last, jids, run)
                        run = []
                    last, ad = key, ads.get(key)
                    kind, c, p = _classify(key)
                    if ad is not None and (kind == job or kind == cluster):
                        # a cluster ad's change is a change of each of its procs
                        jids = ((c, p),) if kind == job else [(c, q) for q in self._cluster_index().get(c, ())]
                    else:
                        ad = None
                if ad is not None:
                    n = canon.get(rec.name) or self._name(rec.name)
                    ad[n] = rec.value
                    run.append(n)
                    continue
            if run:
                _end_run(ver, changed, last, jids, run)
                run = []
            last = None
            w = self._apply(rec)
            if w:
                out.append(w)
        if run:
            _end_run(ver, changed, last, jids, run)
        return out

    def _apply(self, rec: R.Record) -> str | None:
        op = rec.op
        ads = self._ads
        if op == R.SET_ATTR:
            ad = ads.get(rec.key) if self._owned is None else self._own(rec.key)
            if ad is None:
                return f"SetAttribute {rec.name} on unknown ad {rec.key} ignored"
            n = self._name(rec.name)
            ad[n] = rec.value
            self._changed(rec.key, {n})
        elif op == R.NEW_AD:
            if rec.key in ads:
                return f"NewClassAd for existing ad {rec.key} ignored"
            ads[rec.key] = {}
            self._types[rec.key] = rec.name
            if self._owned is not None:
                self._owned.add(rec.key)
            kind, c, p = _classify(rec.key)
            self._ver[rec.key] = self._ver.get(rec.key, 0) + 1
            if kind == R.JOB:
                self._ids[(c, p)] = rec.key
                if self._max_cluster is not None and c > self._max_cluster:
                    self._max_cluster = c
                if self._by_cluster is not None:
                    self._by_cluster.setdefault(c, set()).add(p)
                self._note(JobAdded((c, p)))
            elif kind == R.CLUSTER:
                self._changed(rec.key, set())
            else:
                self._kinds[rec.key] = kind
                self._note(AdChanged(rec.key))
        elif op == R.DESTROY_AD:
            ad = ads.pop(rec.key, None)
            if ad is None:
                return f"DestroyClassAd of unknown ad {rec.key} ignored"
            self._types.pop(rec.key, None)
            if self._owned is not None:
                self._owned.discard(rec.key)
            kind, c, p = _classify(rec.key)
            if kind == R.JOB:
                self._ids.pop((c, p), None)
                self._jobs.pop((c, p), None)
                if self._by_cluster is not None:
                    self._by_cluster.get(c, set()).discard(p)
                self._ver[rec.key] = self._ver.get(rec.key, 0) + 1
                self._note(JobRemoved((c, p)))
            else:
                self._kinds.pop(rec.key, None)
                self._changed(rec.key, set(ad))
        elif op == R.DELETE_ATTR:
            ad = ads.get(rec.key) if self._owned is None else self._own(rec.key)
            if ad is None:
                return f"DeleteAttribute {rec.name} on unknown ad {rec.key} ignored"
            n = self._name(rec.name)
            if ad.pop(n, None) is not None:
                self._changed(rec.key, {n})
        elif op == R.HIST_SEQ:
            self.seq, self.created = int(rec.key), int(rec.value)
        return None

    def clear(self) -> None:
        """Forget every ad (subscribers get :class:`QueueReloaded`)."""
        self._reset()
        self._finish_bulk()

    # ---------------------------------------------------------------- writing (QMGMT-like)
    def transaction(self, now: float | None = None, durable: bool = True) -> Transaction:
        """Collect changes; write and apply them at the end of the block (``with queue.transaction(...)
        as t``; the transaction is its own context manager: one commit pays no generator). ``now`` only
        feeds the ``106 # <timestamp>`` commit comment. ``durable=False`` is the schedd's
        ``CommitNonDurableTransaction`` (htcondor.md §3.2): written, not fdatasync'ed, and the
        comment says ``NONDURABLE``; the next durable commit's fdatasync covers it. Entering one while
        another is open on this queue raises ``RuntimeError``."""
        return Transaction(self, now, durable)

    def log_untransacted(self, recs: list[R.Record]) -> None:
        """Write records outside a transaction (each one fsynced, htcondor.md §3.2) and apply them."""
        if self.writer is not None:
            self.writer.write_records(recs)
        self.apply_all(recs)
