"""Why a job is not routed (the router's ``why_not``) and which job a why-not is about."""

from __future__ import annotations

from typing import Any, Iterable

from engine.contract.codes import JobStatus
from engine.contract.feed import Check
from engine.contract.snapshot import JobRow
from engine.views.queries.access import QUERY_TIMEOUT, _first_attr, _has_query


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


def why_not(runtime: Any, job: str, now: float) -> tuple[str | None, list[Check]]:
    """``(verdict, checks)`` from the router's ``why_not(job_id, now)``.

    The router's state belongs to the engine thread: with a runtime that has ``query`` the
    explanation is built there, between two steps (``Runtime.query``); a runtime without it (test
    fakes) is read from this thread, retried if a container changed under it mid-read.
    """
    if _has_query(runtime):
        def on_engine(engine: Any) -> tuple[str | None, list[Check]] | None:
            for owner in (engine, getattr(engine, "router", None)):
                fn = getattr(owner, "why_not", None)
                if fn is not None:
                    return _explain(fn, job, now)
            return None

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


def why_not_candidate(runtime: Any, route: str | None, now: float,
                      rows: Iterable[JobRow] = ()) -> tuple[str, str] | None:
    """``(job, why picked)``: the job a why-not about ``route`` is most likely about, chosen by
    the router on the engine thread (``JobRouter.why_not_candidate``). An engine without a
    router (replay, watch, test fakes) answers from the snapshot's rows: the first idle job
    that is neither a routed copy nor routed."""
    if _has_query(runtime):
        def on_engine(engine: Any) -> Any:
            for owner in (engine, getattr(engine, "router", None)):
                fn = getattr(owner, "why_not_candidate", None)
                if fn is not None:
                    return fn(route, now)
            return NotImplemented

        out = runtime.query(on_engine, timeout=QUERY_TIMEOUT)
        if out is not NotImplemented:
            return out
    idle = JobStatus.IDLE  # bound once: an enum member lookup costs ~0.3 µs a row
    job = next((r for r in rows if r.status == idle and r.kind != "routed" and not r.routed_to), None)
    return (job.job, "first idle job not routed (this engine has no router to ask)") if job else None
