"""The editor's checks of an edited routing table: parse errors and lints, and the what-if."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from engine.contract.codes import JobStatus
from engine.contract.snapshot import Diagnostic, JobRow
from engine.lang.config import Config
from engine.router.compare import compare_tables
from engine.router.loader import load_routing_table
from engine.views.queries.access import Queries
from engine.views.queries.ads import _ads_in_batches, full_ads_of, row_ad


@dataclass
class WhatIf:
    """The editor's what-if: the idle, not yet routed jobs through the current and the edited
    table, compared by :func:`engine.router.compare.compare_tables` (the migration check's
    comparison: one polling cycle of a fresh router per table, so MaxJobs / MaxIdleJobs fill up
    as jobs are assigned, htcondor.md §1.4). ``before``/``after``: jobs each route takes under each
    table; ``moved``: jobs that change route; ``attributes``: attribute → jobs (routed by both
    tables) whose routed ad gets another value of it; ``ad_changed``: jobs that keep their route
    but get a different routed ad."""

    before: dict[str, int]
    after: dict[str, int]
    moved: int
    considered: int
    candidates: int
    approximate: bool  # True when only the row's attributes were available, not the full ad
    attributes: dict[str, int] = field(default_factory=dict)
    ad_changed: int = 0
    moves: dict = field(default_factory=dict)  # (old route, new route) → jobs, as Comparison.route_moves
    comparison: Any = None  # the engine.router.compare.Comparison


@dataclass
class LintResult:
    diagnostics: list  # engine.contract.snapshot.Diagnostic
    route_names: list[str] | None  # the edited table's routes in match order, when the router could load it
    table: Any = None
    what_if: WhatIf | None = None


def _diag(level: str, message: str, file: str | None = None, line: int | None = None):
    return Diagnostic(level, message, file, line)


def _as_diag(d: Any) -> Diagnostic:
    """A routing table's diagnostic (``engine.router.table.Diagnostic``) as the snapshot's."""
    return Diagnostic(d.level, d.message, d.file, d.line)


def load_table(cfg: Any):
    """The router's routing table of ``cfg`` (:func:`engine.router.loader.load_routing_table`)."""
    return load_routing_table(cfg)


def table_route_names(table: Any) -> list[str]:
    """The table's routes (``engine.router.table.RoutingTable.routes``) in match order."""
    return [r.name for r in table.routes]


WHAT_IF_LIMIT = 500  # jobs the what-if routes: the dry run explains each job (about 0.75 ms per job and
# table on this machine: 2,000 jobs through two tables took 3.0 s), and it runs while the operator types


def _no_ad(row: JobRow) -> None:
    return None


def what_if(old_table: Any, new_table: Any, snap: Any, runtime: Queries | None = None, limit: int = WHAT_IF_LIMIT) -> WhatIf:
    """Route the idle, not-yet-routed jobs of the current queue (the first ``limit``) through
    both tables with :func:`engine.router.compare.compare_tables` (hooks withheld: nothing runs)."""
    if old_table is None:  # before fetching any ad from the engine thread
        raise ValueError("the what-if needs the current routing table")
    idle = JobStatus.IDLE
    rows = [r for r in snap.jobs if r.status == idle and r.kind != "routed" and not r.routed_to]
    approximate = False
    full = full_ads_of(runtime)
    ads: list[dict[str, str]] = []
    for row, texts in _ads_in_batches(rows[:limit], full if full is not row_ad else _no_ad):
        if not texts:
            texts, approximate = row_ad(row), True
        ads.append(dict(texts))
    cmp = compare_tables(old_table, new_table, ads, now=snap.time)
    per_route = cmp.per_route()
    before = {name: row["old"] for name, row in per_route.items() if row["old"]}
    after = {name: row["new"] for name, row in per_route.items() if row["new"]}
    return WhatIf(before, after, sum(j.route_changed for j in cmp.jobs), min(len(rows), limit), len(rows),
                  approximate, dict(cmp.attribute_changes()),
                  sum(bool(j.changed) and not j.route_changed for j in cmp.jobs), cmp.route_moves(), cmp)


def load_config(text: str, path: str, files: tuple[str, ...] = ()) -> Any:
    """The configuration the engine would load from ``files``, with ``path``'s text replaced by
    ``text`` (the editor's buffer), so a route file is linted with the macros and
    ``JOB_ROUTER_ROUTE_NAMES`` of the files around it. Falls back to the text alone."""
    real = os.path.realpath(path)
    if not files or real not in {os.path.realpath(f) for f in files}:
        return Config.from_text(text, name=path, follow_locals=False)
    return Config.load(files, env={}, edited={path: text})


def lint_config(text: str, path: str, snap: Any = None, *, runtime: Queries | None = None,
                base_text: str | None = None) -> LintResult:
    """Parse errors (file:line) and router lints of an edited config text, plus the one lint only
    the UI can make: a route removed while it still has jobs (its jobs would be orphaned)."""
    files = tuple(getattr(snap, "config_files", ()) or ())
    cfg = load_config(text, path, files)
    diags = [_diag("error", e.message, e.file, e.line) for e in cfg.errors]
    diags += [_diag("warning", e.message, e.file, e.line) for e in cfg.warnings]
    names = table = None
    try:
        table = load_table(cfg)
    except LookupError as exc:
        diags.append(_diag("info", str(exc)))
    except Exception as exc:  # noqa: BLE001 - a table that does not load is an error to show
        line = getattr(exc, "line", None)
        diags.append(_diag("error", str(getattr(exc, "message", exc)), getattr(exc, "file", path), line))
    if table is not None:
        diags += [_as_diag(d) for d in table.diagnostics]
        names = table_route_names(table)
    if names is not None and snap is not None:
        for r in snap.routes:
            if r.name not in names and r.routed > 0:
                diags.append(_diag("warning", f"route {r.name} is removed but still has {r.routed} routed jobs; "
                                   "they stay tracked under a route that no longer exists", path, None))
    result = LintResult(diags, names, table)
    if table is not None and snap is not None and base_text is not None:
        try:
            old = load_table(load_config(base_text, path, files))
            result.what_if = what_if(old, table, snap, runtime)
        except Exception as exc:  # noqa: BLE001 - the what-if is advice; its failure is shown, not raised
            diags.append(_diag("info", f"what-if unavailable: {type(exc).__name__}: {exc}"))
    return result
