"""Applying records to a :class:`engine.queue.jobqueue.JobQueue` without change events.

Replay's step scanner (``engine.queue.steps.scan_steps``), the bulk paths and the recorder's
catch-up (``engine.record.recorder``) apply records to queues nobody subscribes to; these methods
do it with ``JobQueue.apply``'s semantics and none of its event bookkeeping. With subscribers, or
inside a batch, they go through ``apply_all``, so no event is ever lost. A mixin of ``JobQueue``:
they work on its internals (``_ads``, ``_types``, ``_ids``, ``_kinds``, ``_owned``, ...).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from engine.queue import records as R

# the three commonest keys in one match (key_kind's JOB, CLUSTER, CLUSTER_PVT; exact spellings):
# m.lastindex 2 = job <c>.<p>, 3 = cluster ad 0<c>.-1, 4 = ClusterPvt <c>.-2; anything else: key_kind
_COMMON_KEY = re.compile(r"([1-9][0-9]*)\.(0|[1-9][0-9]*)|0([1-9][0-9]*)\.-1|([1-9][0-9]*)\.-2").fullmatch



class QuietApply:
    """``JobQueue``'s event-free appliers (module docstring)."""

    _ads: dict[str, dict[str, str]]
    _types: dict[str, str]
    _ids: dict[tuple[int, int], str]
    _jobs: dict[tuple[int, int], Any]
    _kinds: dict[str, str]
    _canon: dict[str, str]
    _owned: set[str] | None
    _by_cluster: dict[int, set[int]] | None
    _max_cluster: int | None
    _subs: list[Any]
    _batch_subs: list[Any]
    _batch: Any
    _gen: int

    def apply_quiet(self, recs: list) -> int:
        """Apply records given as plain ``(op, key, name, value)`` tuples (or :class:`Record`) with
        :meth:`apply`'s semantics but without change events: replay's step scanner
        (``engine.queue.steps.scan_steps``) on queues nobody subscribes to. Returns how many
        records were ignored (unknown key, a second 101). With subscribers or inside a batch it
        goes through :meth:`apply_all`, so no event is ever lost."""
        if self._subs or self._batch_subs or self._batch is not None:
            return len(self.apply_all([r if isinstance(r, R.Record) else R.Record(*r) for r in recs]))
        ads = self._ads
        owned = self._owned
        canon = self._canon
        ignored = 0
        last = ad = None  # a transaction sets many attributes of one ad: looked up once per run
        for op, key, name, value in recs:
            if op == 103:
                if key != last:
                    ad = ads.get(key) if owned is None or key in owned else self._own(key)
                    last = key
                if ad is None:
                    ignored += 1
                    continue
                n = canon.get(name)
                ad[n if n is not None else self._name(name)] = value
                continue
            last = None  # the ad under a key may be created, destroyed or written here
            if op == 101:
                if not self._add_quiet(key, name):
                    ignored += 1
            elif op == 102:
                if not self._drop_quiet(key):
                    ignored += 1
            elif op == 104:
                ad = ads.get(key) if owned is None or key in owned else self._own(key)
                if ad is None:
                    ignored += 1
                    continue
                n = canon.get(name)
                ad.pop(n if n is not None else self._name(name), None)
        self._gen += 1  # Job.classad() caches are stamped with _gen: none survives unseen changes
        return ignored

    def _add_quiet(self, key: str, mytype: str) -> bool:
        """A 101 of :meth:`apply_quiet` (no event); False when ``key`` exists (ignored)."""
        ads = self._ads
        if key in ads:
            return False
        ads[key] = {}
        self._types[key] = mytype
        if self._owned is not None:
            self._owned.add(key)
        m = _COMMON_KEY(key)
        common = m.lastindex if m is not None else 0
        if common == 2:
            c, p = int(m[1]), int(m[2])  # type: ignore[index]
            self._ids[(c, p)] = key
            if self._max_cluster is not None and c > self._max_cluster:
                self._max_cluster = c
            if self._by_cluster is not None:
                self._by_cluster.setdefault(c, set()).add(p)
        elif common == 4:
            self._kinds[key] = R.CLUSTER_PVT
        elif common != 3:
            kind = R.key_kind(key)
            if kind != R.CLUSTER:
                self._kinds[key] = kind
        return True

    def _drop_quiet(self, key: str) -> bool:
        """A 102 of :meth:`apply_quiet` (no event); False when there is no ad ``key`` (ignored)."""
        if self._ads.pop(key, None) is None:
            return False
        self._types.pop(key, None)
        if self._owned is not None:
            self._owned.discard(key)
        m = _COMMON_KEY(key)
        if m is not None and m.lastindex == 2:
            c, p = int(m[1]), int(m[2])
            self._ids.pop((c, p), None)
            self._jobs.pop((c, p), None)
            if self._by_cluster is not None:
                self._by_cluster.get(c, set()).discard(p)
        else:
            self._kinds.pop(key, None)
        return True

    def apply_plain(self, recs: Iterable) -> None:
        """:meth:`apply_quiet` for a plain transaction's records as ``steps.PLAIN_FIELDS`` gives
        them (op ``"1"``, ``"2"`` or ``"3"``; the recorder's catch-up, ``engine.record.recorder``,
        which gives those of several transactions in order as one iterable), with no record tuple
        made (``records.plain_records`` makes them where events are due)."""
        if self._subs or self._batch_subs or self._batch is not None:
            self.apply_quiet(R.plain_records(recs))
            return
        ads = self._ads
        canon = self._canon
        last = ad = None
        for op, key, name, value in recs:
            if op == "3":
                if key != last:
                    owned = self._owned  # an apply_quiet below may have made one
                    ad = ads.get(key) if owned is None or key in owned else self._own(key)
                    last = key
                if ad is not None:
                    try:
                        ad[canon[name]] = value
                    except KeyError:  # a spelling not seen before (rare after the first records)
                        ad[self._name(name)] = value
            elif op == "1":
                self._add_quiet(key, R.my_type(name))
                last = None
            else:
                self._drop_quiet(key)
                last = None
        self._gen += 1
