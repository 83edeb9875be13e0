"""Why a job is not routed (the router's ``why_not``) and which job a why-not is about."""

from __future__ import annotations

from typing import Iterable

from engine.contract.codes import JobStatus
from engine.contract.feed import NOT_OFFERED, Check
from engine.contract.snapshot import JobRow
from engine.views.queries.access import Queries, ask


NO_EXPLANATION = [Check("why-not", None, "this engine offers no routing explanation")]


def why_not(runtime: Queries, job: str, now: float) -> tuple[str | None, list[Check]]:
    """``(verdict, checks)``: the feed's ``why_not(job, now)``, built on the engine thread between
    two steps (``Runtime.query``); :data:`NO_EXPLANATION` when the feed offers none."""
    answer = ask(runtime, lambda feed: feed.why_not(job, now))
    if answer is None:
        return None, list(NO_EXPLANATION)
    return answer.verdict, list(answer.checks)


def why_not_candidate(runtime: Queries, route: str | None, now: float,
                      rows: Iterable[JobRow] = ()) -> tuple[str, str] | None:
    """``(job, why picked)``: the job a why-not about ``route`` is most likely about, chosen by
    the router on the engine thread (``JobRouter.why_not_candidate``). A feed without a router
    (replay, watch) answers :data:`~engine.contract.feed.NOT_OFFERED`, and the snapshot's rows
    answer: the first idle job that is neither a routed copy nor routed."""
    out = ask(runtime, lambda feed: feed.why_not_candidate(route, now))
    if out is not NOT_OFFERED:
        return out
    idle = JobStatus.IDLE  # bound once: an enum member lookup costs ~0.3 µs a row
    job = next((r for r in rows if r.status == idle and r.kind != "routed" and not r.routed_to), None)
    return (job.job, "first idle job not routed (this engine has no router to ask)") if job else None
