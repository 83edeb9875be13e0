"""What the router asks of a schedd, on RouteDeck's ``JobQueue`` (``submit_job.cpp``, ``VanillaToGrid.cpp``).

Each function is one of HTCondor's QMGMT conversations, done as one queue transaction (applied
at commit, nothing applied if it raises): ``claim_job``, ``yield_job``, ``submit_job``,
``remove_job``, ``finalize_job``, ``push`` (push_dirty_attributes), plus the pure
``update_job_status`` that mirrors a routed copy's state onto its source (htcondor.md §1.6).

Invariants:

- This module is the only part of the router that touches the queue API (``q.get(key)``,
  ``job.attrs``/``job.get``/``job.classad()``, ``q.transaction(now=…)`` with ``new_cluster``,
  ``new_proc``, ``set_attribute``, ``delete_attribute``, ``destroy``). Values are old-syntax text.
- Reads of the *live* queue (claim, yield) stand for HTCondor's ``GetAttribute*`` calls, which
  see the schedd itself, not the router's mirror.
- RouteDeck only *asks* the destination schedd to remove or release a routed copy
  (``JobStatus = 3`` + ``RemoveReason``; ``LeaveJobInQueue = FALSE``); taking the job out of
  the queue is the schedd's business (the embedded schedd does it, a real one too).
- Input sandbox spooling is simulated: a sandboxed copy is submitted held with
  "Spooling input data files" (code 16) and released in a second transaction with
  ``StageInFinish = now``, as a schedd does once ``spoolJobFiles`` has finished.
- User-log events (execute/evict/terminate/abort/hold) are not written: RouteDeck owns no user
  logs. The router reports the same moments as events instead.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Iterable, Mapping

from engine.classad import as_int, evaluate, format_value, is_true, make_ad, quote
from engine.contract.codes import HoldCode, JobStatus
from engine.queue.records import parse_key

_INT = re.compile(r"-?\d+$")
_PLAIN_STR = re.compile(r'"[^"\\]*"$')  # a string literal without escapes: its value is its text

# submit_job.cpp: attributes a client may not set since 8.5.8, and token identity attributes
SUBMIT_FILTER = frozenset(
    a.lower()
    for a in (
        "x509UserProxySubject", "x509UserProxyExpiration", "x509UserProxyEmail", "x509UserProxyVOName",
        "x509UserProxyFirstFQAN", "x509UserProxyFQAN", "TokenSubject", "TokenIssuer", "TokenGroups",
        "TokenScopes", "TokenId",
    )
)

# VanillaToGrid.cpp update_job_status: copied from the routed copy when different
ATTRS_TO_COPY = (
    "BytesSent", "BytesRecvd", "CompletionDate", "JobRunCount", "JobStartDate", "ExitBySignal",
    "ExitSignal", "ExitCode", "ExitReason", "JobCurrentStartDate", "JobCurrentStartExecutingDate",
    "JobLastStartDate", "ShadowBday", "RemoteSysCpu", "RemoteUserCpu", "NumCkpts", "NumJobStarts",
    "NumJobReconnects", "NumShadowExceptions", "NumShadowStarts", "NumJobMatches", "NumRestarts",
    "RemoteWallClockTime", "LastRemoteWallClockTime", "JobCoreDumped", "ImageSize", "MemoryUsage",
    "ResidentSetSize", "ProportionalSetSizeKb", "DiskUsage", "ScratchDirFileCount",
    "SpooledOutputFiles", "CpusUsage", "CpusProvisioned", "DiskProvisioned", "MemoryProvisioned",
)


class View:
    """Case-insensitive read access to an ad given as {name: text} (a queue job or a dict).

    A queue job's names are looked up through the queue's own spellings (``JobQueue._lower``:
    lower-case name -> the one spelling every ad of the queue uses; an entry never changes, a
    reload makes a new map), taken with the ad's texts, instead of lowering every name of the ad."""

    __slots__ = ("_attrs", "_lower", "_ad", "_job")

    def __init__(self, attrs: Mapping[str, str] | None, job: Any = None) -> None:
        self._attrs = attrs
        # lower-case name -> spelling in ``attrs``: the queue's map for a queue job (names the
        # ad lacks included: check ``attrs``), else built from ``attrs`` when first needed
        self._lower: dict[str, str] | None = None
        self._ad: Any = None
        self._job = job

    @classmethod
    def of(cls, job: Any) -> "View | None":
        """A view of a queue job, read through the queue (no copy of the ad; the router's status
        checks make hundreds of thousands of these). Its merged ad and evaluation ad are made
        only when asked for."""
        if job is None:
            return None
        return cls(None, job=job)

    @property
    def attrs(self) -> Mapping[str, str]:
        if self._attrs is None:
            job = self._job
            self._attrs = job.attrs
            # every name of a queue ad is the queue's spelling of it (engine.queue.jobqueue)
            self._lower = getattr(getattr(job, "_q", None), "_lower", None)
        return self._attrs

    def _names(self) -> dict[str, str]:
        """lower-case name -> its spelling, for names that may be in ``attrs`` (check there)."""
        if self._lower is None:
            self._lower = {k.lower(): k for k in self.attrs}
        return self._lower

    def name(self, name: str) -> str | None:
        key = self._names().get(name.lower())
        return key if key is None or key in self._attrs else None  # type: ignore[operator]

    def get(self, name: str) -> str | None:
        if self._attrs is None:
            return self._job.get(name)  # the queue's own case-insensitive lookup
        key = self._names().get(name.lower())
        return None if key is None else self._attrs.get(key)

    def ad(self) -> Any:
        if self._ad is None:
            self._ad = self._job.classad() if self._job is not None else make_ad(self.attrs)
        return self._ad

    def eval(self, name: str, now: float | None = None) -> Any:
        return evaluate(name, self.ad(), now=now)

    def int(self, name: str) -> int | None:
        text = self.get(name)
        if text is None:
            return None
        if _INT.match(text):
            return int(text)
        v = self.eval(name)
        return None if isinstance(v, str) else as_int(v)

    def str(self, name: str) -> str | None:
        text = self.get(name)
        if text is None:
            return None
        if _PLAIN_STR.match(text):
            return text[1:-1]
        v = self.eval(name)
        return v if isinstance(v, str) else None

    def true(self, name: str) -> bool:
        return self.get(name) is not None and is_true(self.eval(name))


@functools.lru_cache(maxsize=1 << 17)
def _job_id(key: str) -> tuple[int, int] | None:
    return parse_key(key)


def get(q: Any, key: Any) -> Any:
    """``q.get(key)`` with a "c.p" key parsed once, not on every lookup (the router looks its jobs
    up by key several times per job per poll)."""
    if isinstance(key, str):
        jid = _job_id(key)
        if jid is None:
            return None
        key = jid
    return q.get(key)


def job_key(job_id: tuple[int, int] | str) -> str:
    return job_id if isinstance(job_id, str) else f"{job_id[0]}.{job_id[1]}"


class _Lit(str):
    """A Python string meant as a ClassAd *string value* (quoted on write)."""


def S(value: str) -> _Lit:
    return _Lit(value)


def _write(t: Any, key: Any, changes: Mapping[str, Any]) -> None:
    if None not in changes.values():  # only sets: one call for the ad (Transaction.set_attributes)
        t.set_attributes(key, [(name, quote(str(value)) if isinstance(value, _Lit)
                                else value if isinstance(value, str) else format_value(value))
                               for name, value in changes.items()])
        return
    for name, value in changes.items():
        if value is None:
            t.delete_attribute(key, name)
        elif isinstance(value, _Lit):
            t.set_attribute(key, name, quote(str(value)))
        elif isinstance(value, str):
            t.set_attribute(key, name, value)  # already old-syntax text
        else:
            t.set_attribute(key, name, format_value(value))


# ------------------------------------------------------------------------------------------
# claim / yield (submit_job.cpp)


def claim_job(q: Any, key: str, my_name: str, now: float) -> tuple[str, str]:
    """``claim_job``: ("ok"|"busy"|"error", detail)."""
    v = View.of(get(q, key))
    if v is None:
        return "error", f"job {key} not found in the source queue"
    status = v.int("JobStatus")
    if status is None:
        return "error", f"Encountered problem reading current JobStatus for {key}"
    if status != JobStatus.IDLE:
        return "busy", f"Job {key} isn't idle, is {status}"
    if v.get("Managed") is not None and v.str("Managed") != "Schedd":
        return "busy", f"Job {key} is already managed by another process"
    with q.transaction(now=now) as t:
        _write(t, key, {"Managed": S("External"), "ManagedManager": S(my_name)})
    return "ok", ""


def yield_job(q: Any, key: str, my_name: str, done: bool, release_on_hold: bool, now: float) -> tuple[bool, bool, str]:
    """``yield_job``: (ok, keep_trying, detail). Destroys a Removed source (DestroyProc)."""
    v = View.of(get(q, key))
    if v is None:
        return False, False, f"job {key} is gone"
    if v.str("Managed") != "External":
        return False, False, f"Job {key} is not managed!"
    manager = v.str("ManagedManager")
    if manager is not None and manager != my_name:
        return False, False, f"Job {key} is managed by '{manager}' instead of expected '{my_name}'"
    status = v.int("JobStatus")
    with q.transaction(now=now) as t:
        _write(t, key, {"Managed": S("ScheddDone" if done else "Schedd"), "ManagedManager": S("")})
        if status == JobStatus.REMOVED:
            t.destroy(key)
        elif status is not None and status not in (JobStatus.IDLE, JobStatus.COMPLETED):
            mirrored = False
            if status == JobStatus.HELD and release_on_hold:
                mirrored = v.int("HoldCopiedFromTargetJob") not in (None, 0)
                if mirrored:
                    t.delete_attribute(key, "HoldCopiedFromTargetJob")
            if status != JobStatus.HELD or mirrored:
                _write(t, key, {"JobStatus": JobStatus.IDLE})
    return True, True, ""


# ------------------------------------------------------------------------------------------
# submit / remove / finalize / push


def submit_job(q: Any, attrs: Mapping[str, str], sandboxed: bool, now: float) -> str:
    """``submit_job``: NewCluster, NewProc, then every attribute; returns "c.p".

    ``ProcId`` and ``JobStatus`` go to the proc ad, everything else to the cluster ad, as the
    schedd stores a single-proc submission (htcondor.md §1.6 "Submit").
    """
    ts = int(now)
    with q.transaction(now=now) as t:
        cluster = t.new_cluster()
        new = t.new_proc(cluster)
        proc = new[1] if isinstance(new, tuple) else int(new)
        key = f"{cluster}.{proc}"
        ad = {k: v for k, v in attrs.items() if k.lower() not in SUBMIT_FILTER}
        ad.update({"ProcId": str(proc), "ClusterId": str(cluster), "QDate": str(ts), "EnteredCurrentStatus": str(ts)})
        if sandboxed:
            ad.update({"JobStatus": JobStatus.HELD.text, "HoldReason": quote("Spooling input data files"),
                       "HoldReasonCode": HoldCode.SpoolingInput.text})
        ad["LeaveJobInQueue"] = "JobStatus == 4"
        ad = _drop_case_dupes(ad)
        # the spooling hold is per proc (it is lifted per proc), so it goes with JobStatus
        per_proc = ("procid", "jobstatus", "holdreason", "holdreasoncode") if sandboxed else ("procid", "jobstatus")
        proc_only = {k: v for k, v in ad.items() if k.lower() in per_proc}
        _write(t, (cluster, -1), {k: v for k, v in ad.items() if k not in proc_only})
        _write(t, key, proc_only)
    if sandboxed:  # the schedd releases the spooling hold once the input has arrived
        with q.transaction(now=now) as t:
            _write(t, key, {"JobStatus": JobStatus.IDLE, "StageInFinish": ts, "HoldReason": None, "HoldReasonCode": None})
    return key


def _drop_case_dupes(ad: dict[str, str]) -> dict[str, str]:
    """``ad`` with only the last of two spellings of one name, moved to where the last one
    stands; ``ad`` itself (a copy) when no name is spelled twice (the common case)."""
    if len({k.lower() for k in ad}) == len(ad):
        return dict(ad)
    out: dict[str, str] = {}
    lower: dict[str, str] = {}
    for k, v in ad.items():
        old = lower.get(k.lower())
        if old is not None:
            del out[old]
        lower[k.lower()] = k
        out[k] = v
    return out


def remove_job(q: Any, key: str, reason: str, now: float) -> bool:
    """``remove_job`` (condor_rm through the schedd): status Removed with a reason."""
    v = View.of(get(q, key))
    if v is None:
        return False
    if v.int("JobStatus") == JobStatus.REMOVED:
        return True
    with q.transaction(now=now) as t:
        _write(t, key, {"JobStatus": JobStatus.REMOVED, "RemoveReason": S(reason), "EnteredCurrentStatus": int(now)})
    return True


def finalize_job(q: Any, key: str, now: float) -> bool:
    """``finalize_job``: ``LeaveJobInQueue = FALSE`` so the schedd lets the copy go to history."""
    if get(q, key) is None:
        return False
    with q.transaction(now=now) as t:
        t.set_attribute(key, "LeaveJobInQueue", "FALSE")
    return True


def push(q: Any, key: str, changes: Mapping[str, Any], now: float) -> dict[str, Any]:
    """``push_dirty_attributes`` to a live job; returns what was written.

    The schedd refuses to change ``JobStatus`` of a job that is already Removed or Completed
    (htcondor.md §1.6 "Pushing to the schedd").
    """
    v = View.of(get(q, key))
    if v is None:
        raise KeyError(key)
    changes = dict(changes)
    if "JobStatus" in changes and v.int("JobStatus") in (JobStatus.REMOVED, JobStatus.COMPLETED):
        del changes["JobStatus"]
    if changes:
        with q.transaction(now=now) as t:
            _write(t, key, changes)
    return changes


def text_of(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, _Lit):
        return quote(str(value))
    return value if isinstance(value, str) else format_value(value)


# ------------------------------------------------------------------------------------------
# status mirroring (VanillaToGrid.cpp update_job_status)


def update_job_status(orig: View, new: View, now: float, custom_attrs: Iterable[str] = (),
                      chirp_prefix: str | None = None, local: View | None = None) -> dict[str, Any] | None:
    """Changes to push to the source so it mirrors the routed copy; None if a status is unreadable.

    ``orig`` is the live source, ``new`` the routed copy, ``local`` the router's own copy of the
    source (whose ``ReleaseReason`` becomes ``LastReleaseReason`` on a mirrored hold).
    """
    orig_status, new_status = orig.int("JobStatus"), new.int("JobStatus")
    if orig_status is None or new_status is None:
        return None
    update: dict[str, Any] = {}
    copied = orig.int("HoldCopiedFromTargetJob") not in (None, 0)
    if orig_status != JobStatus.HELD and copied:
        update["HoldCopiedFromTargetJob"] = False
    if orig_status != new_status:
        if new_status in (JobStatus.IDLE, JobStatus.RUNNING, JobStatus.TRANSFERRING_OUTPUT):
            target = JobStatus.IDLE if new_status == JobStatus.IDLE else JobStatus.RUNNING
            # set_job_status_simple: a non-mirrored hold, a removal or the same status blocks it
            if not ((orig_status == JobStatus.HELD and not copied) or orig_status in (target, JobStatus.REMOVED)):
                update["JobStatus"] = target
                update["EnteredCurrentStatus"] = int(now)
                if copied:
                    update["HoldCopiedFromTargetJob"] = False
        elif new_status == JobStatus.HELD:
            if orig_status not in (JobStatus.HELD, JobStatus.REMOVED, JobStatus.COMPLETED):
                code = new.int("HoldReasonCode") or 0
                sub = new.int("HoldReasonSubCode") or 0
                reason = new.str("HoldReason")
                if reason is None:
                    sub = 0
                update.update({
                    "JobStatus": JobStatus.HELD, "EnteredCurrentStatus": int(now),
                    "HoldReason": S(reason or "Unknown reason"), "HoldReasonCode": code,
                    "HoldReasonSubCode": sub, "HoldCopiedFromTargetJob": True,
                    "NumSystemHolds": (orig.int("NumSystemHolds") or 0) + 1,
                })
                # the release reason of the router's copy becomes the last release reason
                rr = (local or orig).get("ReleaseReason")
                if rr is not None:
                    update["LastReleaseReason"] = rr
        elif new_status == JobStatus.REMOVED:
            pass  # never passed back to the source
        else:
            update["JobStatus"] = new_status
    names = [*_COPY_LOWER, *(a.lower() for a in custom_attrs if a)]
    if chirp_prefix:
        prefixes = ["Chirp"] if chirp_prefix.strip() == "Chirp*" else [p.strip() for p in re.split(r"[\s,]+", chirp_prefix) if p.strip()]
        for a in new.attrs:
            if any(_wild(p, a) for p in prefixes):
                names.append(a.lower())
    attrs = new.attrs
    spelled = new._names()  # the queue's spellings, or one pass over the copy's names
    # the source's texts read once (this function only reads; a Job.get per name was the most
    # called function of the demo): a name's text is the merged ad's, as Job.get reads it
    orig_attrs, orig_spelled = orig.attrs, orig._names()
    for low in names:
        k = spelled.get(low)
        if k is None:
            continue
        nv = attrs.get(k)
        if nv is None:
            continue
        ok = orig_spelled.get(low)
        if (None if ok is None else orig_attrs.get(ok)) != nv:
            update[k] = nv
    return update


_COPY_LOWER = tuple(a.lower() for a in ATTRS_TO_COPY)


def _wild(pattern: str, name: str) -> bool:
    p = pattern.lower()
    n = name.lower()
    if p == "chirp":  # "Chirp*" shorthand: prefix match
        return n.startswith("chirp")
    if "*" in p:
        head, _, tail = p.partition("*")
        return n.startswith(head) and n.endswith(tail) and len(n) >= len(head) + len(tail)
    return n == p
