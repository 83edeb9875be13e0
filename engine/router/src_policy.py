"""The router's policy on the source jobs it manages: ``EvalAllSrcJobPeriodicExprs`` (htcondor.md
§1.6), incremental like the schedd's periodic pass; mixed into :class:`engine.router.router.JobRouter`."""

from __future__ import annotations

import heapq
from typing import Any

from engine.contract.codes import HoldCode, JobStatus
from engine.router import events as ev
from engine.router import schedd_ops as ops
from engine.router.lifecycle import State, _lower_index
from engine.router.settled import in_order
from engine.router.schedd_ops import S, View
from engine.lang.user_policy import SystemPolicy, analyze_periodic, policy_ad, policy_roots, time_deadline
from engine.lang.user_policy import Decision


class SourcePolicy:
    """``EvalAllSrcJobPeriodicExprs``; needs the router's jobs, table and source queue."""

    def eval_periodic(self, now: float) -> None:
        """``EvalAllSrcJobPeriodicExprs`` for the jobs this router manages.

        Incremental, as the schedd's ``periodic`` is: a job whose router copy of the source ad
        (``job.src``) is equal to the one of its last evaluation, whose last result did nothing,
        and whose time deadline (``user_policy.time_deadline``, and ``TimerRemove``) has not come
        gives the same non-acting result again, so it is not evaluated; a change of the system
        policy knobs evaluates every job. The live source's ``TimerRemove`` and
        ``x509UserProxyExpiration`` are copied in again only when the source changed since the
        last pass or they were not literal integers (an expression may depend on the time).

        The pass looks only at the jobs it may evaluate (:meth:`_periodic_jobs`): those whose
        source changed, those a poll visited or whose copy was edited since the last pass
        (``Settled.touched``: a job's state, claim and copy change only then), those whose
        deadline has come (a heap) and those whose live TimerRemove or x509UserProxyExpiration
        was not a literal; the others would be passed over as unchanged."""
        system = SystemPolicy.from_knobs(lambda n: _knob(self.table.config, n))
        roots = policy_roots(system)  # once per pass (each job's policy ad starts from them)
        ads = self._periodic_ads
        if system != self._periodic_system:
            ads, self._periodic_system = {}, system
        dirty, self._periodic_dirty = self._periodic_dirty, (set() if self._watching else None)
        jobs, kept = self._periodic_jobs(ads, dirty, now)
        self._periodic_ads = kept  # only the jobs still managed stay cached
        again, heap, queued = self._periodic_again, self._periodic_heap, self._periodic_queued
        for job in jobs:
            if not job.is_claimed or job.state is State.RETIRED:
                kept.pop(job.src_key, None)
                continue
            cached = ads.get(job.src_key)
            static = True
            src = job.src
            if dirty is None or cached is None or not cached[2] or job.src_key in dirty:
                live = View.of(ops.get(self.src_q, job.src_key))
                if live is not None:
                    for name in ("TimerRemove", "x509UserProxyExpiration"):
                        value = live.int(name)
                        if value is not None:
                            spelled, text = live.name(name) or name, str(value)
                            if src.get(spelled) != text:  # (the same text: no write, no new version)
                                src[spelled] = text
                        static = static and (value is None or live.get(name) == str(value))
            # the copy evaluated: unchanged since (the same SrcAttrs at the same version), or equal
            version = src.version
            same = cached is not None and ((cached[3] is src and cached[4] == version)
                                           or cached[0] == src)
            if same and (cached[1] is None or (cached[1] != "now" and cached[1] > now)):
                kept[job.src_key] = (cached if cached[2] == static and cached[3] is src and cached[4] == version
                                     else (cached[0], cached[1], static, src, version))
                if not static:
                    again.add(job.src_key)
                continue  # same ad, same non-acting result (docstring)
            local = View(job.src)
            status = local.int("JobStatus")
            if status is None:
                continue
            self.periodic_evaluations += 1
            decision = _timer_remove(local, now) or analyze_periodic(self._policy_ad(job, roots), job.src, status,
                                                                     system, now)
            if decision.action == "none":
                due = time_deadline(local.get, job.src.values(), system, now, status)
                timer = local.int("TimerRemove")
                if timer is not None and timer >= 0:
                    due = timer if due is None else min(due, timer)
            else:
                due = "now"
            texts = cached[0] if same else dict(job.src)  # the copy evaluated (cached[0] is never edited)
            kept[job.src_key] = (texts, due, static, src, version)
            if not static or due == "now":
                again.add(job.src_key)
            elif due is not None and queued.get(job.src_key) != due:  # (queued already: no new entry)
                queued[job.src_key] = due
                heapq.heappush(heap, (due, job.src_key))
            if decision.action == "hold" and status not in (JobStatus.HELD, JobStatus.REMOVED, JobStatus.COMPLETED):
                changes: dict[str, Any] = {
                    "JobStatus": JobStatus.HELD, "EnteredCurrentStatus": int(now), "HoldReason": S(decision.reason),
                    "HoldReasonCode": decision.code, "HoldReasonSubCode": decision.subcode,
                }
                rr = local.str("ReleaseReason")
                if rr is not None:
                    changes["LastReleaseReason"] = S(rr)
                changes["ReleaseReason"] = S("Undefined")
                changes["NumSystemHolds"] = (local.int("NumSystemHolds") or 0) + 1
            elif decision.action == "remove" and status != JobStatus.REMOVED:
                changes = {"JobStatus": JobStatus.REMOVED, "EnteredCurrentStatus": int(now), "RemoveReason": S(decision.reason)}
            else:
                continue
            self._push_src(job, changes, now)
            self._emit(ev.PolicyFired(now, f"{job.src_key} {decision.action}: {decision.reason}",
                                      job.route_name, job.src_key, action=decision.action))
        if len(heap) > 2 * len(queued) + 64:  # stale entries (deadlines that moved): rebuilt
            heap[:] = [(due, key) for key, due in queued.items()]
            heapq.heapify(heap)

    def _periodic_jobs(self, ads: dict[str, tuple], dirty: set[str] | None, now: float) -> tuple[list[Any], dict]:
        """The jobs this pass looks at, in the order they were tracked, and the cache it fills:
        every job and a new cache when the pass cannot tell which ones changed (no change
        events, a reload, new system knobs, jobs edited behind the router: ``Settled.holds``);
        else the jobs named in :meth:`eval_periodic`'s docstring, and the cache kept."""
        settled, tracked = self._settled, self.jobs
        touched = set(settled.touched)
        settled.touched.clear()
        if dirty is None or ads is not self._periodic_ads or not settled.holds(tracked):
            # (the heap stays: an entry whose job is passed over as unchanged still holds; one
            # that no longer matches its job's cache is dropped when it comes up)
            self._periodic_again = set()
            queued = self._periodic_queued
            for key in [k for k in queued if k not in tracked]:
                del queued[key]  # forgotten jobs' deadlines go (their heap entries when rebuilt)
            return list(tracked.values()), {}
        keys, self._periodic_again = self._periodic_again, set()
        keys |= touched
        keys.update(k for k in dirty if k in tracked)
        heap, queued = self._periodic_heap, self._periodic_queued
        while heap and heap[0][0] <= now:
            due, key = heapq.heappop(heap)
            if queued.get(key) == due:
                del queued[key]  # no longer queued: the next evaluation may queue it again
            cached = ads.get(key)
            if cached is not None and cached[1] == due:  # else a stale entry: evaluated since
                keys.add(key)
        for key in keys:
            if key not in tracked:
                ads.pop(key, None)  # forgotten: the job's cache goes (a full pass drops it too)
                queued.pop(key, None)
        return in_order(tracked[k] for k in keys if k in tracked), ads

    def _policy_ad(self, job: Any, roots: tuple[str, ...]) -> Any:
        """The ad the policy reads of the router's copy of the source (``user_policy.policy_ad``:
        the attributes its expressions reach), else the job's kept evaluation ad of the whole
        copy (``Lifecycle.src_ad``). A name spelled twice takes the later text in both."""
        ad = reached_ad(job.src, roots)
        return self.src_ad(job) if ad is None else ad

    def _failure_ad(self, job: Any, route: Any) -> Any:
        """The ad an old-syntax ``JobFailureTest`` reads (``Lifecycle.finish_finalize``), made as
        the policy's is (:meth:`_policy_ad`) from the test's text."""
        text = None if route.syntax == "classad" and route.route_ad is not None else route.job_failure_test
        return self._policy_ad(job, (text,)) if text else self.src_ad(job)


def reached_ad(src: Any, roots: tuple[str, ...]) -> Any | None:
    """``user_policy.policy_ad_of`` of the router's copy ``src`` (None: the whole ad is needed, as
    when a name is spelled twice), looking names up through the copy's kept lower-case index
    (``lifecycle._lower_index``) instead of lower-casing every name of the copy per evaluation."""
    lower = _lower_index(src)
    if lower is None:
        return None
    return policy_ad(lambda n: None if (k := lower.get(n.lower())) is None else src[k], roots)


def _knob(config: Any, name: str) -> str | None:
    try:
        return config.get(name)
    except Exception:  # noqa: BLE001 - a knob that does not expand is treated as unset
        return None


def _timer_remove(local: View, now: float):
    """``AnalyzePolicy`` checks ``TimerRemove`` before the periodic expressions."""
    text = local.get("TimerRemove")
    if text is None:
        return None
    value = local.int("TimerRemove")
    if value is None:
        return Decision("hold", "TimerRemove", "job attribute", -1, text,
                        f"The job attribute TimerRemove expression '{text}' evaluated to UNDEFINED",
                        HoldCode.JobPolicyUndefined, 0)
    if 0 <= value < now:
        return Decision("remove", "TimerRemove", "job attribute", 1, text,
                        f"The job attribute TimerRemove expression '{text}' evaluated to TRUE", 0, 0)
    return None
