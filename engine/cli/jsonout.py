"""The ``--json`` forms shared by the headless commands (issue 11 item 19: the same keys and value
types in every mode).

- A snapshot prints as :meth:`engine.contract.snapshot.Snapshot.to_json` plus ``total_jobs`` (an int) and,
  when asked, ``jobs`` (a list of :func:`job_json` rows) — in ``demo``, ``watch`` and ``replay``.
- A job is ``{"job": "c.p", "status": name, "status_code": int, "owner", "kind", "route",
  "routed_to", "routed_from"}``: the status by name (``engine.contract.codes.STATUS_NAMES``) and by
  code; a value that is not known is null (never -1 or "").
"""

from __future__ import annotations

from typing import Any

from engine.contract.codes import STATUS_NAMES


def status_json(code: int | None) -> dict[str, Any]:
    """``{"status": "Idle", "status_code": 1}``; an unknown code keeps its number with a null name."""
    return {"status": STATUS_NAMES.get(code) if code is not None else None, "status_code": code}


def job_json(job: str, status: int | None, owner: str | None = None, kind: str | None = None,
             route: str | None = None, routed_to: str | None = None, routed_from: str | None = None) -> dict[str, Any]:
    return {"job": job, **status_json(status), "owner": owner or None, "kind": kind, "route": route or None,
            "routed_to": routed_to or None, "routed_from": routed_from or None}


def row_json(row: Any) -> dict[str, Any]:
    """A :class:`engine.contract.snapshot.JobRow` as :func:`job_json`."""
    return job_json(row.job, row.status, row.owner, row.kind, row.route, row.routed_to, row.routed_from)


def snapshot_json(snap: Any, jobs: bool = False) -> dict[str, Any]:
    out = snap.to_json()
    out["total_jobs"] = snap.total_jobs
    if jobs:
        out["jobs"] = [row_json(j) for j in snap.jobs]
    return out
