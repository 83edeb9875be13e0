"""The source job → routed copy → grid job chain (issue 29; k9s's xray as the anchor).

For each source job the router took: its routed copy (``RoutedToJobId`` on the source,
``RoutedFromJobId`` on the copy, htcondor.md §1.6), the copy's ``GridJobId`` (the gridmanager's id
of the remote job: ``batch <type> <sandbox id> <batch job id>`` for a batch resource,
``infnbatchjob.cpp`` ``SetRemoteIds``), its ``GridJobStatus`` and the batch system's own id (the last
word of the ``GridJobId``, after its last ``/``), and where a hop lags:

- ``mirror``: the source's ``JobStatus`` is not the copy's: the router has not mirrored the copy's
  status yet, for ``now - copy's EnteredCurrentStatus`` seconds;
- ``grid``: the copy has no ``GridJobId`` yet: the gridmanager has not submitted it, for
  ``now - copy's QDate`` seconds.

A lag over ``MAX_JOB_MIRROR_UPDATE_LAG`` (600 s, htcondor.md §1.3/§1.6: the router gives up on a
copy that does not appear within it) is marked. Orphans are listed apart: a routed copy whose
source is not in the queue (or names another copy), and a source the router manages
(``Managed == "External"``) whose copy is not in the queue. Totals count each job once.

Pure: takes the ads (job id → attribute name → value text, as the queue holds them) and ``now``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from engine.classad_text import integer_of, string_of
from engine.queue.records import job_order

MAX_JOB_MIRROR_UPDATE_LAG = 600  # htcondor.md §1.3 timing knobs


@dataclass(frozen=True)
class Lag:
    hop: str  # "mirror" | "grid"
    seconds: float
    over: bool  # more than MAX_JOB_MIRROR_UPDATE_LAG


@dataclass(frozen=True)
class Link:
    """One source job's chain."""

    source: str
    source_status: int | None
    copy: str | None
    copy_status: int | None
    route: str | None
    grid_resource: str | None
    grid_job_id: str | None
    grid_status: str | None
    batch_id: str | None
    lags: tuple[Lag, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "source_status": self.source_status, "copy": self.copy,
                "copy_status": self.copy_status, "route": self.route, "grid_resource": self.grid_resource,
                "grid_job_id": self.grid_job_id, "grid_status": self.grid_status, "batch_id": self.batch_id,
                "lags": [{"hop": g.hop, "seconds": g.seconds, "over": g.over} for g in self.lags]}


@dataclass(frozen=True)
class Chains:
    links: tuple[Link, ...]
    orphan_copies: tuple[str, ...]  # a routed copy without its source
    orphan_sources: tuple[str, ...]  # a managed source without its copy
    totals: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"links": [x.to_json() for x in self.links], "orphan_copies": list(self.orphan_copies),
                "orphan_sources": list(self.orphan_sources), "totals": dict(self.totals)}


def batch_id(grid_job_id: str | None) -> str | None:
    """The batch system's own job id inside a ``GridJobId`` (its last word, after the last ``/``)."""
    if not grid_job_id:
        return None
    words = grid_job_id.split()
    return words[-1].rsplit("/", 1)[-1] if len(words) > 1 else None


def chains(ads: Mapping[str, Mapping[str, str]], now: float, *, jobs: Iterable[str] | None = None,
           lag_limit: float = MAX_JOB_MIRROR_UPDATE_LAG) -> Chains:
    """Every routed source job's chain (or those of ``jobs``: a source, or a copy standing for its
    source), the orphans and the totals."""
    def text(ad: Mapping[str, str], name: str) -> str | None:
        return string_of(ad.get(name))

    def number(ad: Mapping[str, str], name: str) -> int | None:
        return integer_of(ad.get(name))

    copies_of = {}  # source -> copy, from the copies' RoutedFromJobId
    for job, ad in ads.items():
        source = text(ad, "RoutedFromJobId")
        if source:
            copies_of.setdefault(source, job)
    wanted = None
    if jobs is not None:
        wanted = set()
        for j in jobs:
            ad = ads.get(j)
            wanted.add(text(ad, "RoutedFromJobId") or j if ad is not None else j)
    links, orphan_sources = [], []
    for job, ad in ads.items():
        if text(ad, "RoutedFromJobId"):
            continue  # a copy: shown under its source
        copy = text(ad, "RoutedToJobId") or copies_of.get(job)
        managed = text(ad, "Managed") == "External"
        if copy is None and not managed:
            continue  # not routed
        if copy is None or copy not in ads:
            orphan_sources.append(job)
        if wanted is not None and job not in wanted:
            continue
        cad = ads.get(copy) if copy else None
        links.append(_link(job, ad, copy if cad is not None else None, cad, now, lag_limit, text, number))
    orphan_copies = sorted((c for s, c in copies_of.items()
                            if s not in ads or (text(ads[s], "RoutedToJobId") not in (None, c))), key=job_order)
    grid_ids = {text(ad, "GridJobId") for job, ad in ads.items() if text(ad, "RoutedFromJobId")} - {None}
    totals = {"sources": len(links),
              "copies": sum(1 for x in links if x.copy), "grid_jobs": len(grid_ids) if wanted is None
              else len({x.grid_job_id for x in links if x.grid_job_id}),
              "orphan_copies": len(orphan_copies), "orphan_sources": len(orphan_sources),
              "lagging": sum(1 for x in links if any(g.over for g in x.lags))}
    return Chains(tuple(sorted(links, key=lambda x: job_order(x.source))), tuple(orphan_copies),
                  tuple(sorted(orphan_sources, key=job_order)), totals)


def _link(job, ad, copy, cad, now, lag_limit, text, number) -> Link:
    lags = []
    if cad is not None:
        if number(ad, "JobStatus") != number(cad, "JobStatus"):
            since = number(cad, "EnteredCurrentStatus")
            if since is not None:
                lags.append(Lag("mirror", max(0.0, now - since), now - since > lag_limit))
        if not text(cad, "GridJobId"):
            queued = number(cad, "QDate")
            if queued is not None:
                lags.append(Lag("grid", max(0.0, now - queued), now - queued > lag_limit))
    gid = text(cad, "GridJobId") if cad is not None else None
    return Link(source=job, source_status=number(ad, "JobStatus"), copy=copy,
                copy_status=number(cad, "JobStatus") if cad is not None else None,
                route=(text(cad, "RouteName") if cad is not None else None) or text(ad, "RouteName"),
                grid_resource=text(cad, "GridResource") if cad is not None else None,
                grid_job_id=gid, grid_status=text(cad, "GridJobStatus") if cad is not None else None,
                batch_id=batch_id(gid), lags=tuple(lags))

