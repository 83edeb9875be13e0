"""Reading the engine for the queries: on the engine thread through ``Runtime.query`` when the
runtime has it, directly otherwise (test fakes)."""

from __future__ import annotations

from typing import Any, Iterable


def _first_attr(obj: Any, names: Iterable[str], default: Any = None) -> Any:
    for n in names:
        if isinstance(obj, dict) and n in obj:
            return obj[n]
        if hasattr(obj, n):
            return getattr(obj, n)
    return default


QUERY_TIMEOUT = 5.0  # seconds a screen waits for the engine thread to answer


def _has_query(runtime: Any) -> bool:
    return callable(getattr(runtime, "query", None)) and getattr(runtime, "feed", None) is not None


def _engine_ad(engine: Any, key: str) -> dict[str, str] | None:
    """One job's full ad from an engine object (its ``job_ad``, or the demo queue's job)."""
    fn = getattr(engine, "job_ad", None)
    if fn is not None:
        ad = fn(key)
        if ad:
            return dict(ad)
    queue = getattr(engine, "queue", None)
    if queue is not None and hasattr(queue, "get"):
        job = queue.get(key)
        if job is not None:
            attrs = job.attrs  # a property on engine.queue.jobqueue.Job
            return dict(attrs() if callable(attrs) else attrs)
    return None
