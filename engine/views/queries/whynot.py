"""Why a job is not routed (the router's ``why_not``) and which job a why-not is about."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from engine.contract.codes import JobStatus
from engine.contract.snapshot import JobRow
from engine.views.queries.access import QUERY_TIMEOUT, _first_attr, _has_query


@dataclass(frozen=True)
class Check:
    """One step of the router's decision for a job, normalised for display."""

    label: str
    ok: bool | None  # None = informational
    detail: str


def normalise_checks(steps: Any) -> list[Check]:
    steps = _first_attr(steps, ("steps", "checks"), steps)
    out = []
    for s in steps or ():
        if isinstance(s, str):
            out.append(Check(s, None, ""))
            continue
        label = str(_first_attr(s, ("label", "check", "step", "name", "title"), "?"))
        route = _first_attr(s, ("route",))
        if route:
            label = f"[{route}] {label}"
        ok = _first_attr(s, ("ok", "passed", "result", "success"))
        detail = _first_attr(s, ("detail", "details", "message", "numbers", "why"), "")
        out.append(Check(label, None if ok is None else bool(ok), str(detail)))
    return out


def _why_not_fn(runtime: Any):
    engine = getattr(runtime, "feed", None)
    for owner in (runtime, engine, getattr(engine, "router", None)):
        fn = getattr(owner, "why_not", None)
        if fn is not None:
            return fn
    return None


def _explain(fn: Any, job: str, now: float) -> tuple[str | None, list[Check]]:
    result = fn(job, now)
    verdict = _first_attr(result, ("verdict",))
    return (str(verdict) if verdict else None), normalise_checks(result)


NO_EXPLANATION = [Check("why-not", None, "this engine offers no routing explanation")]


NO_LEDGER = "this engine offers no routing ledger"


def _engine_fn(engine: Any, name: str) -> Any:
    """The engine's (or its router's) method ``name``, None when neither has it."""
    for owner in (engine, getattr(engine, "router", None)):
        fn = getattr(owner, name, None)
        if fn is not None:
            return fn
    return None


def why_not(runtime: Any, job: str, now: float) -> tuple[str | None, list[Check]]:
    """``(verdict, checks)`` from the router's ``why_not(job_id, now)``.

    The router's state belongs to the engine thread: with a runtime that has ``query`` the
    explanation is built there, between two steps (``Runtime.query``); a runtime without it (test
    fakes) is read from this thread, retried if a container changed under it mid-read.
    """
    if _has_query(runtime):
        def on_engine(engine: Any) -> tuple[str | None, list[Check]] | None:
            fn = _engine_fn(engine, "why_not")
            return _explain(fn, job, now) if fn is not None else None

        out = runtime.query(on_engine, timeout=QUERY_TIMEOUT)
        return out if out is not None else (None, list(NO_EXPLANATION))
    fn = _why_not_fn(runtime)
    if fn is None:
        return None, list(NO_EXPLANATION)
    for attempt in range(3):
        try:
            return _explain(fn, job, now)
        except RuntimeError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _read(runtime: Any, fn: Any) -> Any:
    """``fn(engine)`` on the engine thread when the runtime has ``query``, else directly (fakes)."""
    if _has_query(runtime):
        return runtime.query(fn, timeout=QUERY_TIMEOUT)
    return fn(getattr(runtime, "feed", None) or runtime)


def ledger(runtime: Any, now: float) -> tuple[list | None, str]:
    """``(entries, note)``: every idle source job's ledger entry (engine.router.unrouted.Entry:
    job, verdict, detail, routes, hold) from the engine's ``ledger(now)`` — the entries of
    ``routedeck why`` — or ``(None, why there are none)``: no routing table, no ledger."""
    def on_engine(engine: Any) -> tuple[list | None, str]:
        fn = _engine_fn(engine, "ledger")
        if fn is None:
            return None, NO_LEDGER
        try:
            return list(fn(now)), ""
        except LookupError as exc:  # the feed has no routing table: it says how to give one
            return None, str(exc.args[0] if exc.args else exc)

    out = _read(runtime, on_engine)
    return out if out is not None else (None, NO_LEDGER)


def pick_waiting(entries: list, route: str | None) -> tuple[str, str] | None:
    """The ledger's pick for a why-not: the first idle source job the router may take (not
    ``not_candidate``), one whose routes name ``route`` first."""
    waiting = [e for e in entries if e.verdict != "not_candidate"]
    if route is not None:
        about = next((e for e in waiting if any(r["route"].lower() == route.lower() for r in e.routes)), None)
        if about is not None:
            return about.job, f"first idle source job in the ledger ({about.verdict})"
    if waiting:
        return waiting[0].job, f"first idle source job in the ledger ({waiting[0].verdict})"
    return None


def why_not_candidate(runtime: Any, route: str | None, now: float,
                      rows: Iterable[JobRow] = ()) -> tuple[str, str] | None:
    """``(job, why picked)``: the job a why-not about ``route`` is most likely about, chosen by
    the router on the engine thread (``JobRouter.why_not_candidate``). An engine without a
    router (replay, watch, test fakes) answers from its ledger (:func:`pick_waiting`), else from
    the snapshot's rows: the first idle job that is neither a routed copy nor a source the router
    manages (issue 29: ``w`` on the board could pick a routed job)."""
    def on_engine(engine: Any) -> Any:
        fn = _engine_fn(engine, "why_not_candidate")
        if fn is not None:
            return fn(route, now)
        fn = _engine_fn(engine, "ledger")
        if fn is not None:
            try:
                return pick_waiting(list(fn(now)), route)
            except LookupError:  # no routing table: the rows below
                return NotImplemented
        return NotImplemented

    if _has_query(runtime):
        out = runtime.query(on_engine, timeout=QUERY_TIMEOUT)
        if out is not NotImplemented:
            return out
    idle = JobStatus.IDLE  # bound once: an enum member lookup costs ~0.3 µs a row
    job = next((r for r in rows if r.status == idle and r.kind == "plain" and not r.routed_to), None)
    return (job.job, "first idle job not routed (this engine has no router to ask)") if job else None
