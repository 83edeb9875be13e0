"""The replay's jobs table, rebuilt only for jobs that changed (the demo's row reuse, shared).

:class:`engine.views.build.RowIndex` keeps the demo's table from the queue's change events: only
changed jobs get a new :class:`~engine.contract.snapshot.JobRow`, jobs that come or go are placed into or
taken out of the id order by bisection, and a snapshot's table is a
:class:`~engine.rowseq.RowSeq` sharing the chunks no change touched with the previous one (no
copy of the table per snapshot). Replay and watch use that class as it is, with :class:`ReplayRows`
as its :class:`~engine.views.build.JobSource`, which turns the replay's moves into the same change
events. Design decisions and invariants:

- The player reports what changed: for a forward move, the keys of the records it applied
  (:meth:`touched`); for a checkpoint restore, the keys whose ad differs between the old and
  the new state (:meth:`restored`; identical dicts are skipped by identity first, so it costs
  one pass over the keys, not a row per job).
- A change to a cluster ad ``0<c>.-1`` dirties every proc of cluster ``c``.
- Row semantics are the demo's (``engine.views.build._row``) with the replay's one addition: a
  source job's route is the route of its routed copy (``RouteName`` is looked up through the
  copy), and its ``DeferralTime`` is read from its ad.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from engine.rowseq import RowSeq
from engine.views.build import RowIndex
from engine.queue.jobqueue import JobAdded, JobChanged, JobRemoved
from engine.queue.records import is_proc_key
from engine.views.recorded import Effective, literal_int, literal_str
from engine.views.recorded_tally import RecordedTally


class _SourceAd:
    """A source job's ad whose ``RouteName`` is its routed copy's."""

    __slots__ = ("ad", "route")

    def __init__(self, ad: Effective, route: str) -> None:
        self.ad = ad
        self.route = route

    def get(self, name: str, default: Any = None) -> Any:
        if name == "RouteName":
            return '"' + self.route + '"'
        return self.ad.get(name, default)


class ReplayRows:
    """A recorded queue as the jobs table's source (:class:`engine.views.build.JobSource`): fed by
    the player's moves or the watched queue's events, it keeps the :class:`RowIndex` and the tally."""

    def __init__(self, ads: Mapping[str, Mapping[str, str]]) -> None:
        self.ads = ads
        self.jobs_version = 0
        self.index = RowIndex(self)
        self.index.full = True
        self.tally = RecordedTally()  # route counts, cron jobs, job count: from the same events

    def on_event(self, ev: Any) -> None:
        """A queue change event (the watch feed's queue, or the player's moves below)."""
        self.index.on_event(ev)
        self.tally.on_event(ev)

    # -- the JobSource RowIndex reads ----------------------------------------------------------
    def job_keys(self) -> Iterable[str]:
        return [k for k in self.ads if is_proc_key(k)]

    def deferral(self, job: str) -> int | None:
        """The ``DeferralTime`` of the recorded ad (a recording has no schedd memory beside it)."""
        ad = self.effective(job)
        return literal_int(ad.get("DeferralTime")) if ad is not None else None

    def tracked_route(self, job: str) -> str | None:
        return None  # no live router: a source's route comes from its copy (``attrs``)

    def effective(self, job: str) -> Effective | None:
        proc = self.ads.get(job)
        if proc is None or not is_proc_key(job):
            return None
        return Effective(proc, self.ads.get("0" + job.partition(".")[0] + ".-1"))

    def attrs(self, job: str) -> Any:
        ad = self.effective(job)
        if ad is None:
            return None
        if ad.get("RouteName") is None:
            to = literal_str(ad.get("RoutedToJobId"))
            copy = self.effective(to) if to else None
            route = literal_str(copy.get("RouteName")) if copy is not None else None
            if route is not None:
                return _SourceAd(ad, route)
        return ad

    # -- what the player tells -----------------------------------------------------------------
    def rebind(self, ads: Mapping[str, Mapping[str, str]]) -> None:
        self.ads = ads

    def _changed(self, keys: Iterable[str], old: Mapping | None = None) -> None:
        procs: set[str] = set()
        clusters: set[str] = set()
        for key in keys:
            if is_proc_key(key):
                procs.add(key)
            elif key[:1] == "0" and key.endswith(".-1"):
                clusters.add(key[1:-3])
        if clusters:
            procs.update(k for k in self.ads if is_proc_key(k) and k.partition(".")[0] in clusters)
        on_event = self.on_event
        for key in procs:
            c, _, p = key.partition(".")
            if key not in self.ads:
                on_event(JobRemoved((c, p)))
            elif old is not None and key not in old:
                on_event(JobAdded((c, p)))
            else:
                on_event(JobChanged((c, p), frozenset()))
        self.jobs_version += 1

    def touched(self, keys: Iterable[str]) -> None:
        """Records on ``keys`` were applied to the current ads (a forward move)."""
        self._changed(keys, old={})

    def restored(self, old: Mapping[str, Mapping[str, str]], new: Mapping[str, Mapping[str, str]]) -> None:
        """The player swapped its state for another (a checkpoint restore)."""
        self.ads = new
        changed = [k for k in old.keys() | new.keys() if old.get(k) is not new.get(k) and old.get(k) != new.get(k)]
        self._changed(changed, old=old)

    def table(self) -> RowSeq:
        return self.index.table()
