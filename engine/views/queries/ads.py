"""Full job ads (batched on the engine thread), their display lines, and ClassAd constraints over jobs."""

from __future__ import annotations

from typing import Any, Iterable

from engine.classad import evaluate, format_value, is_true, make_ad, parse_expr
from engine.contract.snapshot import JobRow
from engine.views.job_ad import annotate
from engine.views.queries.access import Queries, ask, feed_ad


def job_ads(runtime: Queries, rows: list[JobRow]) -> list[dict[str, str]]:
    """Full ads of ``rows`` in one engine query (the row's own attributes for a job not found, or
    when the feed offers no full ads or the engine does not answer)."""
    keys = [r.job for r in rows]
    try:
        found = ask(runtime, lambda feed: [feed_ad(feed, k) for k in keys])
    except Exception:  # noqa: BLE001 - engine stopped or busy: the rows' own attributes, as before
        found = [None] * len(rows)
    return [ad if ad else row_ad(r) for ad, r in zip(found, rows)]


def job_ad(runtime: Queries, row: JobRow) -> dict[str, str]:
    return job_ads(runtime, [row])[0]


def job_ad_lines(runtime: Queries, row: JobRow, now: float, tz: str = "UTC") -> list:
    """The job's ad as ``engine.views.job_ad.AdLine``s (dates, code names, the in-memory
    DeferralTime of a crondor job). The ad and the schedd's in-memory DeferralTime are read on
    the engine thread; the row's ``deferral_time`` (from the snapshot) stands in otherwise."""
    memory = None
    try:
        ad, memory = ask(runtime, lambda feed: (feed_ad(feed, row.job), feed.deferral_time(row.job)))
    except Exception:  # noqa: BLE001 - engine stopped or busy: the row's own attributes
        ad = None
    ad = ad or row_ad(row)
    if memory is None:
        memory = row.deferral_time
    return annotate(ad, now, tz, memory)


def row_ad(row: JobRow) -> dict[str, str]:
    """The attributes a ``JobRow`` carries, as old-syntax texts (for constraints and drill-down)."""
    c, _, p = row.job.partition(".")
    ad = {"ClusterId": c, "ProcId": p or "0", "JobStatus": str(row.status), "Owner": format_value(row.owner),
          "Cmd": format_value(row.cmd)}
    if row.qdate is not None:
        ad["QDate"] = str(row.qdate)
    if row.entered_status is not None:
        ad["EnteredCurrentStatus"] = str(row.entered_status)
    if row.route:
        ad["RouteName"] = format_value(row.route)
    if row.routed_to:
        ad["RoutedToJobId"] = format_value(row.routed_to)
    if row.routed_from:
        ad["RoutedFromJobId"] = format_value(row.routed_from)
        ad["RoutedBy"] = format_value("jobrouter")
    if row.hold_reason:
        ad["HoldReason"] = format_value(row.hold_reason)
    if row.deferral_time is not None:
        ad["DeferralTime"] = str(row.deferral_time)
    return ad


AD_BATCH = 2048  # ads fetched per engine query: a few ms of the engine thread's time


class FullAds:
    """``ad_of`` for :func:`constraint_hits`: the engine's full job ads, fetched in batches
    (one engine query per :data:`AD_BATCH` rows, not one per row)."""

    def __init__(self, runtime: Queries) -> None:
        self.runtime = runtime

    def __call__(self, row: JobRow) -> dict[str, str]:
        return job_ad(self.runtime, row)

    def many(self, rows: list[JobRow]) -> list[dict[str, str]]:
        return job_ads(self.runtime, rows)


def _ads_in_batches(rows: Iterable[JobRow], ad_of: Any, cancelled=lambda: False):
    """``(row, ad or None)`` for every row; ``None`` when the ad cannot be had."""
    rows = list(rows)
    many = ad_of.many if isinstance(ad_of, FullAds) else None
    for start in range(0, len(rows), AD_BATCH):
        if cancelled():
            return
        chunk = rows[start:start + AD_BATCH]
        if many is not None:
            yield from zip(chunk, many(chunk))
            continue
        for r in chunk:
            try:
                yield r, ad_of(r)
            except Exception:  # noqa: BLE001 - no ad: treated as not matching
                yield r, None


def constraint_hits(rows: Iterable[JobRow], text: str, now: float, cancelled=lambda: False,
                    ad_of=row_ad) -> frozenset[str]:
    """Job ids whose ad satisfies the ClassAd ``text`` (raises ClassAdError if it does not parse).

    ``ad_of(row)`` gives the attributes: the engine's full ad when it offers one, else the row's;
    an ``ad_of`` with ``many(rows)`` is asked for a batch at a time.
    """
    expr = parse_expr(text)
    hits = []
    for r, texts in _ads_in_batches(rows, ad_of, cancelled):
        if texts is None:
            continue
        try:
            ad = make_ad(texts)
        except Exception:  # noqa: BLE001 - an attribute that does not parse: the job does not match
            continue
        if is_true(evaluate(expr, my=ad, now=now)):
            hits.append(r.job)
    return frozenset(hits)


def full_ads_of(runtime: Queries | None):
    """``ad_of`` for :func:`constraint_hits`: the engine's full job ads, or the rows' own
    attributes when there is no engine to ask."""
    return FullAds(runtime) if runtime is not None else row_ad
