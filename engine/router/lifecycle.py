"""The life of one routed job: a state table and the steps of ``JobRouter::Poll`` (htcondor.md §1.6).

States (``RoutedJob.h``): UNCLAIMED → CLAIMED → SUBMITTED → FINISHED → CLEANUP → RETIRED.
:data:`STEPS` is the table: on every poll each tracked job goes through the steps in order and a
step acts only when the job is in its state, so a job can go from UNCLAIMED to SUBMITTED (and,
on failure, to RETIRED) in one poll, as in HTCondor. Any failure path goes to CLEANUP
(``GracefullyRemoveJob``); the outcome counted in the route statistics is decided there:
success (``is_success``), interrupted (``is_interrupted``, not counted) or failure (the rest).

Invariants:

- ``src`` (the router's copy of the source ad, {name: text}) starts as the source ad at the time
  the job became a candidate and only changes by what the router itself pushes to the source
  (status mirroring, hook output, policy) — like HTCondor's ``job->src_ad``.
- Every write goes through :mod:`engine.router.schedd_ops`; a routed copy's status changes only
  because the destination queue changed.
- A hook that is still running (background runner) leaves the job in its state; the step is
  retried on the next poll.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Self

from engine.classad import AdMirror, is_true, quote
from engine.contract.codes import JobStatus
from engine.router import events as ev
from engine.router import hooks as hk
from engine.router import schedd_ops as ops
from engine.router.schedd_ops import View
from engine.router.table import SubmitRejected


class _NotedDict(dict):
    """A dict that calls ``_changed()`` before each write made through its own methods (the
    subclass says what a change does); ``dict.__setitem__(d, ...)`` and the like write unnoted.
    Pickle and copy give a new instance built from the items alone (``__init__``'s state)."""

    __slots__ = ()

    def _changed(self) -> None:
        raise NotImplementedError

    def __reduce__(self) -> tuple[Any, tuple[dict[Any, Any]]]:
        # the default restores the items through __setitem__ before the slots, and a copy
        # would share the slots' objects (SrcAttrs: the router's ``watch``)
        return type(self), (dict(self),)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._changed()
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        self._changed()
        dict.__delitem__(self, key)

    def __ior__(self, other: Any) -> Self:
        self._changed()
        dict.update(self, other)
        return self

    def pop(self, *args: Any) -> Any:
        self._changed()
        return dict.pop(self, *args)

    def popitem(self) -> tuple[Any, Any]:
        self._changed()
        return dict.popitem(self)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._changed()
        return dict.setdefault(self, key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._changed()
        dict.update(self, *args, **kwargs)

    def clear(self) -> None:
        self._changed()
        dict.clear(self)


class SrcAttrs(_NotedDict):
    """The router's copy of a source ad ({name: text}, ``RoutedJob.src``) with ``version``, a
    count of the calls that changed it (any write counts, even of the same text): a copy whose
    object and version are those seen before holds the same texts, which the source policy pass
    tells without comparing the two ads (``SourcePolicy.eval_periodic``). Each change also adds
    ``key`` to ``watch`` when set (the router's ``Settled.touched``: the pass looks at it again).
    Pickle and copy give a new unwatched copy at version 0."""

    __slots__ = ("version", "watch", "key", "lower")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.version = 0
        self.watch: set[str] | None = None  # ``key`` is added to it at each change (Settled.touched)
        self.key = ""
        # (version, {lower-case name: name}): :func:`_lower_index` of this copy at that version
        self.lower: tuple[int, dict[str, str]] | None = None

    def _changed(self) -> None:
        self.version += 1
        if self.watch is not None:
            self.watch.add(self.key)


class State(enum.Enum):
    UNCLAIMED = "unclaimed"
    CLAIMED = "claimed"
    SUBMITTED = "submitted"
    FINISHED = "finished"
    CLEANUP = "cleanup"
    RETIRED = "retired"


@dataclass(eq=False, slots=True)
class RoutedJob:
    src_key: str
    route_name: str
    src: SrcAttrs  # _set_src wraps whatever is assigned
    state: State = State.UNCLAIMED
    target_universe: int = 9
    grid_resource: str | None = None
    is_sandboxed: bool = False
    edit_in_place: bool = False
    dest_key: str | None = None  # "c.p" of the routed copy once submitted
    dest_live: bool = False  # dest_proc_id.cluster != -1 (not yet removed by us)
    dest: dict[str, str] | None = None  # last seen routed ad (None: none seen yet)
    is_claimed: bool = False
    is_done: bool = False
    is_running: bool = False
    is_held: bool = False
    is_success: bool = False
    is_interrupted: bool = False
    saw_dest: bool = False
    submission_time: float = 0.0
    retirement_time: float = 0.0
    last_route: str = ""  # route_name is cleared at retirement; this keeps it for the UI
    reason: str = ""  # why it left the router (last failure / interruption)
    # router-set source attrs not pushed yet; None when there are none
    dirty: dict[str, Any] | None = None
    hook_attempts: dict[str, int] | None = None  # None until a hook is retried
    keyword: tuple[str | None] | None = None  # the hook keyword, once looked up (HookKeyword or knob)
    # the evaluation ad of ``src`` (JobRouter.cpp ``job->src_ad``), kept from the first evaluation
    # until retirement and updated by what changed in ``src`` (Lifecycle.src_ad)
    src_eval: AdMirror | None = None
    seq: int = 0  # the order it was tracked in (engine.router.settled: a poll's order)

    @property
    def outcome(self) -> str:
        if self.is_success:
            return "success"
        return "interrupted" if self.is_interrupted else "failure"


_SRC_SLOT = RoutedJob.__dict__["src"]  # the slot's own descriptor (its getter: no Python call)


def _set_src(job: RoutedJob, value: dict[str, str]) -> None:
    """``job.src = value``: the copy is a :class:`SrcAttrs` (a plain dict is wrapped), and a new
    copy of a job's source is a change of it: it takes the old copy's ``watch`` and ``key`` (the
    router's ``Settled.touched``) and counts (``SrcAttrs._changed``), so the source policy pass
    looks at the job again."""
    # getattr with a default: in the dataclass __init__ the slot is unset (nothing to replace);
    # the AttributeError is made and dropped in C, not raised into this frame (a try/except here
    # built a traceback and the frame's object for each new job: ~2,000 instructions, several
    # per cent of a choice cycle that places 88,000 jobs, bench/router.py part 1)
    old = getattr(job, "src", None)
    if value is old:
        return
    if type(value) is not SrcAttrs:
        value = SrcAttrs(value)
    _SRC_SLOT.__set__(job, value)
    if old is not None:
        value.watch, value.key = old.watch, old.key
        value._changed()


RoutedJob.src = property(_SRC_SLOT.__get__, _set_src, doc="The router's copy of the source ad (a SrcAttrs).")


class Lifecycle:
    """The per-job steps; mixed into :class:`engine.router.router.JobRouter`."""

    # provided by JobRouter
    src_q: Any
    dst_q: Any
    name: str
    hooks: hk.HookManager
    translate_failures: dict[str, int]

    # -------------------------------------------------------------------------------- helpers

    def _fail(self, job: RoutedJob, now: float, reason: str, *, interrupted: bool = False, event: bool = True) -> None:
        """``GracefullyRemoveJob``: to CLEANUP, remembering why."""
        job.state = State.CLEANUP
        job.reason = reason
        if interrupted:
            job.is_interrupted = True
        elif event:
            self._emit(ev.JobRoutingFailed(now, f"{job.src_key} on {job.route_name or job.last_route}: {reason}",
                                           job.route_name or job.last_route, job.src_key))

    def _hook(self, job: RoutedJob, kind: str, key: str, stdin_fn, now: float) -> hk.HookResult | str | None:
        """Run the job's hook of ``kind`` if configured: a result, ``None`` (not configured),
        ``"pending"`` (still running in the background) or ``"withheld"`` (configured, but hook
        programs may not run: recorded as "would run", reported once per program)."""
        path = self.hooks.path(kind, self._keyword(job))
        for message in self.hooks.take_rejections():  # validateHookPath: logged once, then "not defined"
            self._hook_failed(job, kind, now, f"{message} The hook is treated as not defined.")
        if path is None:
            return None
        if not self.hooks.allow_run:
            if self.hooks.withhold(kind, path, job.src_key):
                what = ("jobs it would translate are not routed" if kind == hk.TRANSLATE
                        else "the router goes on as if it were not defined")
                self._emit(ev.HookWithheld(now, f"{kind} hook would run: {path} (not run: needs "
                                                f"{hk.ALLOW_FLAG}); {what}",
                                           job.route_name or job.last_route, job.src_key, hook=kind, path=path))
            return "withheld"
        result = self.hooks.run(key, kind, path, stdin_fn())
        return "pending" if result is None else result

    def _seen(self, *keys: str | None) -> None:
        """The job's ads as they are now have been checked: their changes so far do not call
        for another check (the skip in ``JobRouter.poll``)."""
        changed = getattr(self, "_changed", None)
        if changed is not None:
            for key in keys:
                changed.discard(key)

    @staticmethod
    def src_ad(job: RoutedJob) -> Any:
        """The evaluation ad of the router's copy of the source (``job->src_ad``, which the
        periodic expressions and ``JobFailureTest`` read, htcondor.md §1.6): built once per routed
        job, then only the attributes changed in ``job.src`` since are set again."""
        if job.src_eval is None:
            job.src_eval = AdMirror()
        return job.src_eval.sync(job.src)

    def _keyword(self, job: RoutedJob) -> str | None:
        if job.keyword is None:
            job.keyword = (self.hooks.keyword(job.src),)
        return job.keyword[0]

    def _hook_failed(self, job: RoutedJob, kind: str, now: float, message: str) -> None:
        self._emit(ev.HookFailed(now, f"{kind} hook for {job.src_key}: {message}",
                                 job.route_name or job.last_route, job.src_key, hook=kind))

    def _push_src(self, job: RoutedJob, changes: dict[str, Any], now: float) -> bool:
        """Push changes (plus anything still dirty) to the live source; keep the local copy in step."""
        allc = {**job.dirty, **changes} if job.dirty else changes
        if not allc:
            return True
        try:
            written = ops.push(self.src_q, job.src_key, allc, now)
        except KeyError:
            return False
        job.dirty = None
        src = job.src
        lower = _lower_index(src)  # (asked before the change is counted: the one kept may still hold)
        src._changed()  # one change for the whole push (counted=True below)
        for name, value in allc.items():
            text = ops.text_of(value)
            if name == "JobStatus" and name not in written:
                continue
            _set_local(src, name, text, lower, counted=True)
        if lower is not None:
            src.lower = (src.version, lower)  # _set_local kept it up to date
        return True

    def _set_job_idle(self, job: RoutedJob, now: float) -> None:
        """``SetJobIdle``: the source back to Idle (an evict event in HTCondor if it ran)."""
        status = View(job.src).int("JobStatus")
        if status is not None and status != JobStatus.IDLE:
            self._push_src(job, {"JobStatus": JobStatus.IDLE}, now)

    def _reroute(self, job: RoutedJob, now: float, reason: str) -> None:
        self._set_job_idle(job, now)
        self._emit(ev.JobRerouted(now, f"{job.src_key}: {reason}; source back to idle", job.route_name, job.src_key))
        self._fail(job, now, reason, event=False)

    # -------------------------------------------------------------------------------- steps

    def take_over(self, job: RoutedJob, now: float) -> None:
        """``TakeOverJob``: claim the source (``Managed``/``ManagedManager``), unless editing in place."""
        if job.edit_in_place:
            job.state = State.CLAIMED
            return
        result, detail = ops.claim_job(self.src_q, job.src_key, self.name, now)
        if result == "ok":
            job.state = State.CLAIMED
            job.is_claimed = True
        else:
            self._fail(job, now, f"candidate job could not be claimed ({result}): {detail}")

    def submit(self, job: RoutedJob, now: float) -> None:
        """``SubmitJob``: the translate hook (if any), then ``FinishSubmitJob``."""
        route = self.table.route(job.route_name)
        if route is None:
            self._fail(job, now, "route has been removed before the job could be submitted")
            return
        base = job.src
        res = self._hook(job, hk.TRANSLATE, job.src_key, lambda: hk.translate_stdin(
            hk.route_description(route.name, job.target_universe, job.grid_resource), job.src), now)
        if res == "pending":
            return
        if res == "withheld":  # claimed before the hook applied (a table switch): give the job back
            self._fail(job, now, hk.withheld_reason(self.hooks.path(hk.TRANSLATE, self._keyword(job)) or "?"),
                       interrupted=True)
            return
        if isinstance(res, hk.HookResult):
            # Translate attempts that gave no routed ad are counted per source job across claims
            # and bounded by max_attempts (a RouteDeck departure, product.md §4). HTCondor has no
            # limit: JobRouterHookMgr.cpp TranslateClient::hookExited leaves a "returned no data"
            # job CLAIMED, so JobRouter.cpp SubmitJob runs the hook again on every poll, and a
            # failing hook ends in GracefullyRemoveJob -> FinishCleanupJob (yield, RETIRED) ->
            # CleanupRetiredJob forgets the job, which is a candidate again on a later poll.
            out = hk.translate_outcome(res)
            if out.action == "replace":
                base = dict(out.attrs)
                self.translate_failures.pop(job.src_key, None)
            else:
                limit = self.hooks.max_attempts
                n = self.translate_failures[job.src_key] = self.translate_failures.get(job.src_key, 0) + 1
                if out.action == "no-data":
                    if n < limit:
                        self._hook_failed(job, hk.TRANSLATE, now, f"{out.message}; will run it again ({n}/{limit})")
                        return
                    self._hook_failed(job, hk.TRANSLATE, now, f"{out.message} {n} times; giving up")
                    self._fail(job, now, "translate hook returned no data", event=False)
                    return
                tail = f"; not routed again after {n} failed attempts" if n >= limit else f" ({n}/{limit})"
                self._hook_failed(job, hk.TRANSLATE, now, out.message + tail)
                self._fail(job, now, f"translate hook failed: {out.message}", event=False)
                return
        self.finish_submit(job, route, base, now)

    def finish_submit(self, job: RoutedJob, route: Any, base: dict[str, str], now: float) -> None:
        try:
            routed = self._build(route, base, job, now)
        except SubmitRejected as exc:  # built, but the schedd refuses it (qmgmt.cpp IsValidAttrName)
            self._fail(job, now, f"failed to {'edit' if job.edit_in_place else 'submit'} job: {exc}")
            return
        except Exception as exc:  # noqa: BLE001 - RoutingError and anything the transform raises fails this job only
            self._fail(job, now, f"failed to apply route modifications: {exc}")
            return
        if job.edit_in_place:
            diff = {k: v for k, v in routed.items() if job.src.get(k) != v}
            lower = {k.lower() for k in routed}
            diff.update({k: None for k in job.src if k.lower() not in lower})
            try:
                ops.push(self.src_q, job.src_key, diff, now)
            except KeyError:
                self._fail(job, now, "failed to edit job: source is gone")
                return
            job.src = SrcAttrs(routed)
            job.is_success = job.is_done = True
            self._emit(ev.JobEditedInPlace(now, f"{job.src_key} edited in place by route {job.route_name}",
                                           job.route_name, job.src_key))
            job.state = State.CLEANUP
            return
        if View(job.src).get("Owner") is None:
            self._fail(job, now, "source job has no Owner")
            return
        try:
            job.dest_key = ops.submit_job(self.dst_q, routed, job.is_sandboxed, now)
        except Exception as exc:  # noqa: BLE001 - a submit failure fails this job only, as in HTCondor
            self._fail(job, now, f"failed to submit job: {exc}")
            return
        job.dest_live = True
        job.dest = dict(routed)
        # recorded in the router's copy now, pushed with the next status update (JobRouter.cpp)
        job.dirty = {**(job.dirty or {}), "RoutedToJobId": quote(job.dest_key)}
        job.state = State.SUBMITTED
        job.submission_time = now
        self._emit(ev.JobRouted(now, f"{job.src_key} routed to {job.route_name} as {job.dest_key}",
                                job.route_name, job.src_key, dest=job.dest_key))

    def check_status(self, job: RoutedJob, now: float) -> None:
        """``CheckSubmittedJobStatus``: the update hook once the copy was seen, then the checks."""
        if job.saw_dest:
            res = self._hook(job, hk.UPDATE, job.dest_key or job.src_key, lambda: hk.update_stdin(job.dest), now)
            if res == "pending":
                return
            if isinstance(res, hk.HookResult):
                out = hk.update_outcome(res)
                if out.action == "skip":
                    self._hook_failed(job, hk.UPDATE, now, out.message)
                    return
                if out.action == "remove":
                    self._hook_failed(job, hk.UPDATE, now, out.message)
                    self._fail(job, now, "update hook output rejected", event=False)
                    return
                if out.action == "merge":
                    live = ops.get(self.dst_q, job.dest_key)
                    if live is None:
                        self._fail(job, now, "routed job disappeared before the update finished")
                        return
                    changed = {k: v for k, v in out.attrs.items() if View.of(live).get(k) != v}
                    try:
                        ops.push(self.dst_q, job.dest_key, changed, now)
                    except KeyError:
                        self._fail(job, now, "failed to update routed job status")
                        return
        self.finish_check_status(job, now)

    def finish_check_status(self, job: RoutedJob, now: float) -> None:
        self._seen(job.src_key, job.dest_key)  # changes so far are what this check reads
        src = View.of(ops.get(self.src_q, job.src_key))
        if src is None:
            self._fail(job, now, "source job left the queue", interrupted=True)
            return
        status = src.int("JobStatus")
        if status is None:
            self._fail(job, now, "cannot evaluate JobStatus of the source job", interrupted=True)
            return
        if status == JobStatus.REMOVED:
            self._fail(job, now, "source job was removed", interrupted=True)
            return
        if status == JobStatus.HELD and not src.true("HoldCopiedFromTargetJob"):
            self._fail(job, now, "source job was put on hold", interrupted=True)
            return
        dest_job = ops.get(self.dst_q, job.dest_key) if job.dest_key else None
        if dest_job is None:
            if job.saw_dest:
                self._fail(job, now, f"routed job {job.dest_key} was removed")
            elif now - job.submission_time > self.max_job_mirror_update_lag:
                self._fail(job, now, f"giving up: routed job {job.dest_key} still not in the queue "
                                     f"{now - job.submission_time:.0f} s after submission")
            return
        job.saw_dest = True
        dest = View.of(dest_job)
        job.dest = dest.attrs  # the queue's merged copy (Job.attrs makes a new dict), only read
        update = ops.update_job_status(src, dest, now, self._attrs_to_copy(job), self.chirp_prefix, View(job.src))
        if update is not None:  # an unreadable status is only logged by HTCondor
            if not self._push_src(job, update, now):
                self._fail(job, now, "failed to update the source job")
                return
            if not ("JobStatus" in update and status == JobStatus.COMPLETED):
                # The source now mirrors the copy: checking again with the copy unchanged would
                # push nothing, so this write alone does not call for another check. (A status
                # the schedd refused — the source is Completed — would be pushed again.)
                self._seen(job.src_key)
        dstatus = dest.int("JobStatus")
        if dstatus is None:
            self._fail(job, now, "cannot evaluate JobStatus of the routed job")
            return
        job.is_running = dstatus in (JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT)
        job.is_held = dstatus == JobStatus.HELD
        if dstatus == JobStatus.COMPLETED and (dest.int("JobFinishedHookDone") or 0) != 0:
            job.state = State.FINISHED

    def finalize(self, job: RoutedJob, now: float) -> None:
        """``FinalizeJob``: the finalize hook (output updates the source), then ``FinishFinalizeJob``."""
        res = self._hook(job, hk.FINALIZE, job.dest_key or job.src_key,
                         lambda: hk.finalize_stdin(job.src, job.dest or {}), now)
        if res == "pending":
            return
        if isinstance(res, hk.HookResult):
            out = hk.finalize_outcome(res)
            if out.action == "reroute":
                self._hook_failed(job, hk.FINALIZE, now, out.message)
                self._reroute(job, now, f"finalize hook failed: {out.message}")
                return
            if out.attrs and not self._push_src(job, dict(out.attrs), now):
                self._reroute(job, now, "failed to update the source job with the finalize hook output")
                return
        self.finish_finalize(job, now)

    def finish_finalize(self, job: RoutedJob, now: float) -> None:
        if View(job.src).get("Owner") is None or not ops.finalize_job(self.dst_q, job.dest_key, now):
            self._set_job_idle(job, now)
            self._fail(job, now, "failed to finalize the routed job")
            return
        job.is_done = True
        route = self.table.route(job.route_name)
        failed = route is not None and _truth(route, "JobFailureTest", self._failure_ad(job, route), now)
        job.is_success = not failed
        if failed:
            job.reason = "JobFailureTest is true"
        self._emit(ev.JobFinished(now, f"{job.src_key} finished on {job.route_name}"
                                       + ("" if job.is_success else " (JobFailureTest true: counts as a failure)"),
                                  job.route_name, job.src_key, success=job.is_success))
        job.state = State.CLEANUP

    def cleanup(self, job: RoutedJob, now: float) -> None:
        """``CleanupJob``: the cleanup hook (bounded retries), then ``FinishCleanupJob``."""
        if job.dest:
            res = self._hook(job, hk.CLEANUP, job.dest_key or job.src_key, lambda: hk.cleanup_stdin(job.dest), now)
            if res == "pending":
                return
            if isinstance(res, hk.HookResult) and hk.cleanup_outcome(res).action == "retry":
                if job.hook_attempts is None:
                    job.hook_attempts = {}
                n = job.hook_attempts[hk.CLEANUP] = job.hook_attempts.get(hk.CLEANUP, 0) + 1
                msg = hk.cleanup_outcome(res).message
                if n < self.hooks.max_attempts:
                    self._hook_failed(job, hk.CLEANUP, now, f"{msg}; retrying next poll ({n}/{self.hooks.max_attempts})")
                    return
                self._hook_failed(job, hk.CLEANUP, now, f"{msg}; gave up after {n} attempts, cleaning up anyway")
        self.finish_cleanup(job, now)

    def finish_cleanup(self, job: RoutedJob, now: float) -> None:
        if not job.is_done and job.dest_live and job.dest_key:
            if ops.remove_job(self.dst_q, job.dest_key, "JobRouter aborted job", now):
                job.dest_live = False
        if job.is_claimed:
            ok, keep_trying, detail = ops.yield_job(self.src_q, job.src_key, self.name, job.is_done,
                                                    self.release_on_hold, now)
            if not ok and keep_trying and ops.get(self.src_q, job.src_key) is not None:
                return  # stay in CLEANUP, try again next poll
            job.is_claimed = False
        stats = self.book.get(job.route_name) if self.table.route(job.route_name) is not None else None
        if stats is not None:
            if job.is_success:
                stats.recent_succeeded += 1
            elif not job.is_interrupted:
                stats.recent_failed += 1
        job.state = State.RETIRED
        job.retirement_time = now
        job.src_eval = None  # nothing evaluates a retired job's source ad
        job.last_route = job.route_name or job.last_route
        job.route_name = ""
        why = f": {job.reason}" if job.reason and not job.is_success else ""
        self._emit(ev.JobRetired(now, f"{job.src_key} left route {job.last_route} ({job.outcome}){why}",
                                 job.last_route, job.src_key, outcome=job.outcome))

    def cleanup_retired(self, job: RoutedJob, now: float) -> None:
        """``CleanupRetiredJob``: forget the job once the queues no longer show it as ours."""
        src = View.of(ops.get(self.src_q, job.src_key))
        src_sync = src is None or not (src.str("Managed") == "External" and src.str("ManagedManager") == self.name)
        dest = View.of(ops.get(self.dst_q, job.dest_key)) if job.dest_key else None
        dest_sync = dest is None or dest.str("RoutedBy") != self.name
        if (src_sync and dest_sync) or now - job.retirement_time >= self.max_job_mirror_update_lag:
            dict.pop(self.jobs, job.src_key, None)  # (its visit's Settled.note files it: settled.Tracked)
            self._untracked(job.src_key)

    def _untracked(self, src_key: str) -> None:
        """A source job the router stopped tracking is a candidate again (JobRouter)."""


STEPS = (
    (State.UNCLAIMED, Lifecycle.take_over),
    (State.CLAIMED, Lifecycle.submit),
    (State.SUBMITTED, Lifecycle.check_status),
    (State.FINISHED, Lifecycle.finalize),
    (State.CLEANUP, Lifecycle.cleanup),
    (State.RETIRED, Lifecycle.cleanup_retired),
)
# each state's tail of STEPS: a job's first matching step is its state's, so a poll walks the
# steps from there (a step that moves the job to a later state is followed by that state's step)
STEPS_FROM = {state: STEPS[i:] for i, (state, _step) in enumerate(STEPS)}


def _lower_index(attrs: dict[str, str]) -> dict[str, str] | None:
    """{lower-case name: name} of ``attrs``, or None when two names differ only by case; kept by a
    SrcAttrs until its next change (the same dict: only read it, or keep it exact as _set_local does)."""
    kept = type(attrs) is SrcAttrs and attrs.lower
    if kept and kept[0] == attrs.version:
        return kept[1]
    lower = {k.lower(): k for k in attrs}
    if len(lower) != len(attrs):
        return None
    if type(attrs) is SrcAttrs:
        attrs.lower = (attrs.version, lower)
    return lower


def _set_local(attrs: dict[str, str], name: str, text: str | None, lower: dict[str, str] | None = None,
               counted: bool = False) -> None:
    """Set ``name`` in ``attrs``, replacing any spelling of it; ``lower`` (from
    :func:`_lower_index`, kept up to date here) saves a scan of the whole ad per attribute.
    Writes with dict's own methods; a :class:`SrcAttrs` counts the change here
    (``SrcAttrs._changed``) unless the caller counted it (``counted``: ``_push_src``, once a push)."""
    if not counted and type(attrs) is SrcAttrs:
        attrs._changed()
    low = name.lower()
    if lower is None:
        for k in [k for k in attrs if k.lower() == low]:
            dict.__delitem__(attrs, k)
    else:
        old = lower.pop(low, None)
        if old is not None:
            dict.__delitem__(attrs, old)
    if text is not None:
        dict.__setitem__(attrs, name, text)
        if lower is not None:
            lower[low] = name


def _truth(route: Any, attr: str, ad: Any, now: float) -> bool:
    """``JobFailureTest`` / ``JobShouldBeSandboxed`` / ``EditJobInPlace``: only true counts (§1.4)."""
    try:
        value = route.eval_job_expr(attr, ad, now)
    except Exception:  # noqa: BLE001 - only true counts (§1.4): an expression that fails is not true
        return False
    return value is True or (not isinstance(value, bool) and is_true(value))
