"""The ``--json`` forms shared by the headless commands (issue 11 item 19: the same keys and value
types in every mode).

- A snapshot prints as :meth:`engine.contract.snapshot.Snapshot.to_json` plus ``total_jobs`` (an int) and,
  when asked, ``jobs`` (a list of :func:`job_json` rows) — in ``demo``, ``watch`` and ``replay``.
- A job is ``{"job": "c.p", "status": name, "status_code": int, "owner", "kind", "route",
  "routed_to", "routed_from"}``: the status by name (``engine.contract.codes.STATUS_NAMES``) and by
  code; a value that is not known is null (never -1 or "").
- Counts by status are rows ``{"status": name, "status_code": int, "jobs": n}``
  (:func:`status_counts`), the same two status fields as a job's (issue 25 item 8j: ``queue
  --json`` gave the code only).
- Every ``--json`` output is written by :func:`emit`: one JSON document per line, compact (a
  snapshot stream is JSON Lines, and a single answer is one line too; ``replay --json`` and
  ``queue --json`` were pretty-printed over many lines while ``watch``/``demo`` printed one).
"""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable, Mapping, TextIO

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


def status_counts(counts: Mapping[int | None, int] | Iterable[tuple[int | None, int]]) -> list[dict[str, Any]]:
    """``[{"status": "Idle", "status_code": 1, "jobs": 3}, …]`` in status code order."""
    items = counts.items() if isinstance(counts, Mapping) else counts
    return [{**status_json(code), "jobs": n}
            for code, n in sorted(items, key=lambda kv: (kv[0] is None, kv[0] if kv[0] is not None else 0))]


def dumps(doc: Any) -> str:
    """One JSON document as one line (no newline inside: JSON escapes them in strings)."""
    return json.dumps(doc, separators=(",", ":"))


def emit(doc: Any, out: TextIO | None = None) -> None:
    """Write ``doc`` as one line and flush (a stream's reader sees each document as it comes)."""
    out = out or sys.stdout
    out.write(dumps(doc) + "\n")
    out.flush()
