"""What a recorded queue's snapshot counts, kept from change events (issue 14 item 2).

:func:`engine.views.recorded.settle` (once ``snapshot_of``) once scanned every job for every snapshot: the per-route
counts of the routed copies (``route_counts``), the crondor rows (``cron_views``) and the number
of jobs — about 0.8 s at 100,000 jobs for a snapshot after a one-job change. :class:`RecordedTally`
keeps the same figures from the same change events the jobs table is kept from
(:class:`engine.views.recorded_rows.ReplayRows` forwards them), so a snapshot costs what changed.
The rules are those of :mod:`engine.views.recorded` and the functions there are used as they are:

- a job's contribution to a route is ``(RouteName, seen_status)`` of its effective ad (cluster
  chained); :func:`~engine.views.recorded.seen_status` reads the *source* job too (the router's
  view, htcondor.md §1.5/§1.6), so a change of a source job re-counts the copies that name it
  (``RoutedFromJobId``), whether the source is in the queue or not;
- a change of a cluster ad ``0<c>.-1`` (key ``c.-1`` in an event) re-counts every proc of ``c``;
- a cron job is a proc with any ``Cron*`` attribute, idle, running or held (htcondor.md §2.4).

Invariant (tests/engine/test_snapshot_incremental.py): after any sequence of events, the tally equals the
full scan of the same ads.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from engine.queue.jobqueue import JobAdded, JobChanged, JobRemoved, QueueReloaded
from engine.queue.records import is_proc_key, job_order
from engine.views.recorded import Effective, RouteCounts, is_cron_row, literal_str, seen_status


class RecordedTally:
    def __init__(self) -> None:
        self._reset()
        self.full = True

    def _reset(self) -> None:
        self.full = False
        self.dirty: set[str] = set()
        self.procs: set[str] = set()  # proc keys present
        self.of_cluster: dict[str, set[str]] = {}  # cluster id -> its proc keys present
        self.contrib: dict[str, tuple[str, int | None]] = {}  # copy -> (route, seen status)
        self.source_of: dict[str, str] = {}  # copy -> the source it names
        self.copies_of: dict[str, set[str]] = {}  # source key -> copies naming it
        self.counts: dict[str, RouteCounts] = {}
        self.seen = 0  # routes counted so far (first_seen of the next new one)
        self.cron: set[str] = set()

    # -- events (the same ones the row index gets) ----------------------------------------------
    def on_event(self, ev: Any) -> None:
        if isinstance(ev, QueueReloaded):
            self.full = True
        elif isinstance(ev, (JobAdded, JobChanged, JobRemoved)):
            self.dirty.add(f"{ev.id[0]}.{ev.id[1]}")

    def changed(self, keys: Iterable[str]) -> None:
        self.dirty.update(keys)

    # -- the figures -------------------------------------------------------------------------------
    def update(self, ads: Mapping[str, Mapping[str, str]]) -> None:
        """Bring the figures up to ``ads`` (the state the events led to)."""
        if self.full:
            self._reset()
            keys: Iterable[str] = [k for k in ads if is_proc_key(k)]  # queue order, as a scan
        else:
            keys = sorted(self._widen(self.dirty), key=job_order)  # new routes: first seen in id order
        self.dirty = set()
        for key in keys:
            self._recount(key, ads)

    def _widen(self, dirty: set[str]) -> set[str]:
        """The procs to count again: the changed ones, every proc of a changed cluster ad, and
        the copies that name any of those as their source."""
        procs: set[str] = set()
        for key in dirty:
            if is_proc_key(key):
                procs.add(key)
            else:
                c, _, p = key.partition(".")
                if p == "-1":  # "0<c>.-1" from the log, "<c>.-1" from the queue's events
                    procs.update(self.of_cluster.get(c[1:] if c[:1] == "0" else c, ()))
        for key in list(procs):
            procs.update(self.copies_of.get(key, ()))
        return procs

    def _recount(self, key: str, ads: Mapping[str, Mapping[str, str]]) -> None:
        proc = ads.get(key)
        c = key.partition(".")[0]
        old = self.contrib.pop(key, None)
        if old is not None:
            self._add(old, -1)
        src = self.source_of.pop(key, None)
        if src is not None:
            named = self.copies_of.get(src)
            if named is not None:
                named.discard(key)
                if not named:
                    del self.copies_of[src]
        if proc is None:
            self.procs.discard(key)
            members = self.of_cluster.get(c)
            if members is not None:
                members.discard(key)
                if not members:
                    del self.of_cluster[c]
            self.cron.discard(key)
            return
        self.procs.add(key)
        self.of_cluster.setdefault(c, set()).add(key)
        attrs = Effective(proc, ads.get("0" + c + ".-1"))
        src = literal_str(attrs.get("RoutedFromJobId"))
        if src is not None:
            self.source_of[key] = src
            self.copies_of.setdefault(src, set()).add(key)
        name = literal_str(attrs.get("RouteName"))
        if name is not None:
            new = (name, seen_status(key, attrs, ads))
            self.contrib[key] = new
            self._add(new, 1)
        if is_cron_row(attrs):
            self.cron.add(key)
        else:
            self.cron.discard(key)

    def _add(self, contrib: tuple[str, int | None], n: int) -> None:
        name, status = contrib
        rc = self.counts.get(name)
        if rc is None:
            rc = self.counts[name] = RouteCounts(first_seen=self.seen)
            self.seen += 1
        rc.add(status, n)
        if rc.routed == 0:
            del self.counts[name]  # as a scan would: no copy, no count

    def cron_jobs(self, ads: Mapping[str, Mapping[str, str]]) -> list[tuple[str, Effective]]:
        return [(k, Effective(ads[k], ads.get("0" + k.partition(".")[0] + ".-1")))
                for k in sorted(self.cron, key=job_order)]
