"""Why a job is not routed (the router's ``why_not``) and which job a why-not is about."""

from __future__ import annotations

from typing import Iterable

from engine.contract.codes import JobStatus
from engine.contract.feed import NOT_OFFERED, Check, FeedBase
from engine.contract.snapshot import JobRow
from engine.views.queries.access import Queries, ask


NO_EXPLANATION = [Check("why-not", None, "this engine offers no routing explanation")]


NO_LEDGER = "this engine offers no routing ledger"


def why_not(runtime: Queries, job: str, now: float) -> tuple[str | None, list[Check]]:
    """``(verdict, checks)``: the feed's ``why_not(job, now)``, built on the engine thread between
    two steps (``Runtime.query``); :data:`NO_EXPLANATION` when the feed offers none."""
    answer = ask(runtime, lambda feed: feed.why_not(job, now))
    if answer is None:
        return None, list(NO_EXPLANATION)
    return answer.verdict, list(answer.checks)


def ledger(runtime: Queries, now: float) -> tuple[list | None, str]:
    """``(entries, note)``: every idle source job's ledger entry (engine.router.unrouted.Entry:
    job, verdict, detail, routes, hold) from the feed's ``ledger(now)`` — the entries of
    ``routedeck why`` — or ``(None, why there are none)``: no routing table, no ledger."""
    def on_feed(feed: FeedBase) -> tuple[list | None, str]:
        try:
            entries = feed.ledger(now)
        except LookupError as exc:  # the feed has no routing table: it says how to give one
            return None, str(exc.args[0] if exc.args else exc)
        return (None, NO_LEDGER) if entries is None else (list(entries), "")

    return ask(runtime, on_feed)


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


def why_not_candidate(runtime: Queries, route: str | None, now: float,
                      rows: Iterable[JobRow] = ()) -> tuple[str, str] | None:
    """``(job, why picked)``: the job a why-not about ``route`` is most likely about, chosen by
    the router on the engine thread (``JobRouter.why_not_candidate``). A feed without a router
    (replay, watch) answers :data:`~engine.contract.feed.NOT_OFFERED` and its ledger picks
    (:func:`pick_waiting`); without a ledger the snapshot's rows answer: the first idle job that is
    neither a routed copy nor a source the router manages (issue 29: ``w`` on the board could
    pick a routed job)."""
    def on_feed(feed: FeedBase) -> tuple[str, str] | None | object:
        out = feed.why_not_candidate(route, now)
        if out is not NOT_OFFERED:
            return out
        try:
            entries = feed.ledger(now)
        except LookupError:  # no routing table: the rows below
            return NOT_OFFERED
        return NOT_OFFERED if entries is None else pick_waiting(list(entries), route)

    out = ask(runtime, on_feed)
    if out is not NOT_OFFERED:
        return out  # type: ignore[return-value]
    idle = JobStatus.IDLE  # bound once: an enum member lookup costs ~0.3 µs a row
    job = next((r for r in rows if r.status == idle and r.kind == "plain" and not r.routed_to), None)
    return (job.job, "first idle job not routed (this engine has no router to ask)") if job else None
