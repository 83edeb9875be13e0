"""The router's crash recovery: ``AdoptOrphans`` (htcondor.md §1.7) — tracked jobs rebuilt from
job attributes alone; mixed into :class:`engine.router.router.JobRouter`."""

from __future__ import annotations

from typing import Any

from engine.queue.records import job_key
from engine.router import events as ev
from engine.router import schedd_ops as ops
from engine.router.lifecycle import RoutedJob, State
from engine.router.schedd_ops import View


class Recovery:
    """``AdoptOrphans``; needs the router's queues, jobs, index sets and events."""

    _counted: bool  # JobRouter: the book's counts are the tracked jobs' (JobRouter.poll)
    _settled: Any  # JobRouter: the jobs a poll may skip (engine.router.settled)

    def _orphan_candidates(self, queue: Any, index: set[Any], dirty: set[Any] | None, attr: str,
                           quoted: str) -> list[Any]:
        """The ids of the jobs of ``queue`` whose ``attr`` may be ``quoted`` (``_may_be``): a full
        scan the first time, after a reload or a table switch, or when the queues do not report
        changes; otherwise the index, brought up to date with the jobs changed since the last
        pass, in job-id order (the order the queue's ads appeared in, unless a log wrote them out
        of order; HTCondor walks its mirror in hash order). The caller looks each job up when it needs
        it (``queue.get``: None for one gone since)."""
        if dirty is None:
            index.clear()
            out = [job.id for job in queue if _may_be(job.get(attr), quoted)]
            index.update(out)
            return out
        for jid in dirty:
            job = queue.get(jid)
            if job is not None and _may_be(job.get(attr), quoted):
                index.add(jid)
            else:
                index.discard(jid)
        return sorted(index)

    def adopt_orphans(self, now: float) -> None:
        """``AdoptOrphans`` (htcondor.md §1.7): rebuild tracked jobs from job attributes alone.

        Costs the routed copies and claimed jobs, not the queue: both scans read an index of the
        jobs that may qualify, kept from the queues' change events (``_orphan_candidates``)."""
        quoted = '"' + self.name + '"'
        # changes made from here on (this pass's own included) are seen by the next pass
        dirty, self._adopt_dirty = self._adopt_dirty, (set() if self._watching else None)
        own, self._adopt_own = self._adopt_own, {}
        get_dest = self.dst_q.get
        for dest_id in self._orphan_candidates(self.dst_q, self._adopt_dst, dirty, "RoutedBy", quoted):
            if dirty is not None and dest_id not in dirty:
                # unchanged since the last pass, where it was the copy ``dest_key`` of tracked job
                # ``was``: still so while that job is tracked with it (its attributes cannot have
                # changed); the job itself is not looked up
                was = own.get(dest_id)
                if was is not None:
                    known = self.jobs.get(was[0])
                    if known is not None and known.dest_key == was[1]:
                        self._adopt_own[dest_id] = was
                        continue
            dest_job = get_dest(dest_id)  # None: removed by this pass (it has no RoutedBy then)
            if dest_job is None or not _may_be(dest_job.get("RoutedBy"), quoted):
                continue
            d = View.of(dest_job)
            src_key = d.str("RoutedFromJobId")
            if src_key is None:
                continue  # "no routing information found in routed job"
            known = self.jobs.get(src_key)
            if known is not None and known.dest_key == dest_job.key:
                self._adopt_own[dest_id] = (src_key, dest_job.key)
                continue  # the copy of a tracked job (the common case: checked first, same result)
            if not ((d.int("ProcId") or 0) >= 0 and d.str("RoutedBy") == self.name and d.get("Owner") is not None
                    and d.str("Owner") is not None):
                continue
            route_name = d.str("RouteName")
            if route_name is None:
                continue  # "no routing information found in routed job"
            src_job = ops.get(self.src_q, src_key)
            if src_job is None:
                ops.remove_job(self.dst_q, dest_job.key, "JobRouter orphan", now)
                self._emit(ev.OrphanRemoved(now, f"removed orphaned routed job {dest_job.key}: source {src_key} is gone",
                                            route_name, src_key, dest=dest_job.key))
                continue
            if known is not None:  # AddJob fails: the source is tracked with another copy
                ops.remove_job(self.dst_q, dest_job.key, "JobRouter orphan", now)
                self._emit(ev.OrphanRemoved(now, f"removed routed job {dest_job.key}: {src_key} is already routed",
                                            route_name, src_key, dest=dest_job.key))
                continue
            rj = RoutedJob(src_key=src_key, route_name=route_name, src=dict(src_job.attrs),
                           state=State.SUBMITTED, dest_key=dest_job.key, dest_live=True,
                           dest=dict(d.attrs), is_claimed=True, submission_time=now)
            rj.is_sandboxed = d.str("SUBMIT_Iwd") is not None
            self._settled.added(rj)
            dict.__setitem__(self.jobs, src_key, rj)  # (filed by Settled.added above: settled.Tracked)
            self._counted = False  # a new tracked job: the route counts change
            self._emit(ev.OrphanAdopted(now, f"adopted {dest_job.key} (routed from {src_key} on {route_name})",
                                        route_name, src_key, dest=dest_job.key))
        get_src, tracked = self.src_q.get, self.jobs
        for src_id in self._orphan_candidates(self.src_q, self._adopt_src, dirty, "Managed", '"External"'):
            if job_key(*src_id) in tracked:  # a job's key is its id's "c.p" (Job.key)
                continue
            src_job = get_src(src_id)  # None: removed by this pass (it has no Managed then)
            if src_job is None or not _may_be(src_job.get("Managed"), '"External"'):
                continue
            s = View.of(src_job)
            if s.str("Managed") != "External" or s.str("ManagedManager") != self.name or s.get("Owner") is None:
                continue
            ok, _keep, detail = ops.yield_job(self.src_q, src_job.key, self.name, False, True, now)
            self._emit(ev.OrphanYielded(now, f"yielded {src_job.key}: claimed by {self.name} with no routed copy"
                                             + ("" if ok else f" (failed: {detail})"), None, src_job.key))


def _may_be(text: str | None, quoted: str) -> bool:
    """Cheap pre-filter: could this attribute text evaluate to the string ``quoted``?"""
    if text is None:
        return False
    return text == quoted or not (text.startswith('"') and text.endswith('"') and '\\' not in text)
