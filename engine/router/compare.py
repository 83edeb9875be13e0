"""Migration check: the same jobs through two routing tables, job by job (issue 13 item 2).

Both tables run the same dry run (:func:`engine.router.dryrun.route_jobs`: one polling cycle of a
freshly started router, hooks withheld unless the caller's managers allow them), so the only
difference between the two sides is the table. The classic trap this catches: an old ClassAd
table and its transform rewrite that route differently, because ``JOB_ROUTER_ROUTE_NAMES`` order
changed (the first matching route wins, htcondor.md §1.4) or a ``JOB_ROUTER_DEFAULTS`` default
was lost (every entry is the defaults ad updated with the entry, §1.2).

Invariants:
- Attribute names compare case-insensitively (ClassAd names do); values compare by their
  old-syntax text after a parse and unparse, so ``1+x`` and ``1 + x`` are the same value; a value
  that does not parse compares as written.
- A job "changes route" when the route names differ (case-insensitively) or one side routes it
  and the other does not — except when the two names are one route that the conversion renamed
  (:func:`renamed_routes`): then it keeps its route and its ``RouteName`` change is listed like
  any other attribute. Its routed-ad differences are listed only when both sides route it.
- Pure: no clock, no files; the caller passes ``now`` and the ads. The TUI editor's what-if
  can call :func:`compare_tables` with the edited table as ``new``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from engine import classad as C
from engine.router.convert import knob_names
from engine.router.dryrun import route_jobs

ABSENT = None  # an attribute missing from one routed ad


@dataclass
class JobComparison:
    job: Any  # "c.p" or the job's 0-based index
    old_route: str | None
    new_route: str | None
    old_verdict: str
    new_verdict: str
    old_ad: dict[str, str] | None
    new_ad: dict[str, str] | None
    changed: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)  # attr: (old, new)
    renamed: bool = False  # old_route and new_route are one route the conversion renamed

    @property
    def route_changed(self) -> bool:
        if self.renamed:
            return False
        return (self.old_route or "").lower() != (self.new_route or "").lower() or \
            (self.old_route is None) != (self.new_route is None)

    @property
    def differs(self) -> bool:
        return self.route_changed or bool(self.changed)

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job, "differs": self.differs, "route_changed": self.route_changed,
                "route_renamed": self.renamed,
                "old": {"route": self.old_route, "verdict": self.old_verdict, "routed_ad": self.old_ad},
                "new": {"route": self.new_route, "verdict": self.new_verdict, "routed_ad": self.new_ad},
                "changed": {k: {"old": o, "new": n} for k, (o, n) in self.changed.items()}}


@dataclass
class Comparison:
    jobs: list[JobComparison]
    renamed: dict[str, str] = field(default_factory=dict)  # old route name → new (renamed_routes)

    @property
    def differs(self) -> bool:
        return any(j.differs for j in self.jobs)

    def route_moves(self) -> dict[tuple[str | None, str | None], list[Any]]:
        """(old route, new route) → the jobs that move that way."""
        out: dict[tuple[str | None, str | None], list[Any]] = {}
        for j in self.jobs:
            if j.route_changed:
                out.setdefault((j.old_route, j.new_route), []).append(j.job)
        return out

    def attribute_changes(self) -> Counter[str]:
        """Attribute → number of jobs (routed on both sides) whose value of it changes."""
        return Counter(a for j in self.jobs for a in j.changed)

    def per_route(self) -> dict[str, dict[str, Any]]:
        """Route → jobs it takes under each table, and jobs that stay on it with a different routed
        ad; a route the conversion renamed is one row under its new name, ``was`` its old name."""
        out: dict[str, dict[str, Any]] = {}
        was = {new.lower(): old for old, new in self.renamed.items()}
        now = {old.lower(): new for old, new in self.renamed.items()}

        def row(name: str) -> dict[str, Any]:
            """A renamed route is one row, under its new name, with ``was`` its old name."""
            if name.lower() in now:
                name = now[name.lower()]
            r = out.setdefault(name, {"old": 0, "new": 0, "ad_changed": 0})
            if name.lower() in was:
                r["was"] = was[name.lower()]
            return r

        for j in self.jobs:
            if j.old_route is not None:
                row(j.old_route)["old"] += 1
            if j.new_route is not None:
                row(j.new_route)["new"] += 1
                if j.changed and not j.route_changed:
                    row(j.new_route)["ad_changed"] += 1
        return out

    def summary_json(self) -> dict[str, Any]:
        return {"jobs": len(self.jobs), "jobs_differ": sum(j.differs for j in self.jobs),
                "jobs_change_route": sum(j.route_changed for j in self.jobs),
                "route_moves": [{"old": o, "new": n, "jobs": js} for (o, n), js in self.route_moves().items()],
                "renamed": [{"old": o, "new": n} for o, n in self.renamed.items()],
                "attributes_changed": dict(self.attribute_changes()),
                "per_route": self.per_route()}


def _normal(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        return C.unparse_old(C.parse_expr(text))
    except C.ClassAdError:
        return text.strip()


def diff_ads(old: dict[str, str], new: dict[str, str]) -> dict[str, tuple[str | None, str | None]]:
    """Attributes whose value differs (case-insensitive names; absent on one side = None)."""
    lo = {k.lower(): k for k in old}
    ln = {k.lower(): k for k in new}
    out: dict[str, tuple[str | None, str | None]] = {}
    for low in sorted(set(lo) | set(ln)):
        a = old[lo[low]] if low in lo else ABSENT
        b = new[ln[low]] if low in ln else ABSENT
        if _normal(a) != _normal(b):
            out[ln.get(low) or lo[low]] = (a, b)
    return out


def renamed_routes(old_table: Any, new_table: Any) -> dict[str, str]:
    """Old route name → new route name, for the routes of ``old_table`` that the conversion to the
    transform syntax renamed and that ``new_table`` holds under their new name.

    Pairing rule — the conversion's own name mapping, nothing guessed: ``routedeck convert`` names
    each route ``JOB_ROUTER_ROUTE_<knob_tag(Name)>`` as ``condor_transform_ads -convert:file``
    does (:func:`engine.router.convert.knob_names`, the one function both use; htcondor.md §8), and
    a 25.x router names the route, and ``RouteName``, after the knob. So old route X is route Y of
    the new table when Y is X's converted name, Y differs from X, the new table has a route Y,
    and the new table has no route X of its own (unless that X is itself another route's converted
    name, as when ``A B`` and ``AB`` both exist and the conversion numbers the clash ``AB_2``).
    Routes renamed by hand are not paired: jobs between them are reported as moves. A paired route
    may still differ in content; every job on it is compared attribute by attribute as usual."""
    mapping = knob_names(old_table)
    new_names = {r.name.lower() for r in new_table.routes}
    targets = {new.lower() for old, new in mapping.items() if old.lower() != new.lower()}
    return {old: new for old, new in mapping.items()
            if old.lower() != new.lower() and new.lower() in new_names
            and (old.lower() not in new_names or old.lower() in targets)}


def compare_tables(old_table: Any, new_table: Any, ads: list[dict[str, str]], *, now: float,
                   ignore_prior: bool = False, old_hooks: Any = None, new_hooks: Any = None) -> Comparison:
    """Route ``ads`` through both tables (the same dry run) and compare job by job; routes the
    conversion renamed (:func:`renamed_routes`) are paired."""
    old = route_jobs(old_table, ads, now, ignore_prior, old_hooks)
    new = route_jobs(new_table, ads, now, ignore_prior, new_hooks)
    renamed = renamed_routes(old_table, new_table)
    pairs = {o.lower(): n.lower() for o, n in renamed.items()}
    jobs = []
    for a, b in zip(old, new):
        changed = diff_ads(a["routed_ad"], b["routed_ad"]) if a["routed_ad"] is not None and \
            b["routed_ad"] is not None else {}
        paired = a["route"] is not None and b["route"] is not None and \
            pairs.get(a["route"].lower()) == b["route"].lower()
        jobs.append(JobComparison(a["job"], a["route"], b["route"], a["verdict"], b["verdict"],
                                  a["routed_ad"], b["routed_ad"], changed, paired))
    return Comparison(jobs, renamed)


def _show(value: str | None) -> str:
    return "(absent)" if value is None else value


def format_comparison(cmp: Comparison, *, full_ads: bool = False, all_jobs: bool = False) -> str:
    """The text report: per job that differs (every job with ``all_jobs``), the route under each
    table and the differences; a summary."""
    lines: list[str] = []
    for j in cmp.jobs:
        if not (j.differs or all_jobs):
            continue
        mark = "DIFFERS" if j.differs else "same"
        renamed = " (renamed)" if j.renamed else ""
        lines.append(f"Job {j.job}: old {j.old_route or '-'} / new {j.new_route or '-'}{renamed}  [{mark}]")
        if j.route_changed:
            lines.append(f"  old: {j.old_verdict}")
            lines.append(f"  new: {j.new_verdict}")
        for attr, (a, b) in j.changed.items():
            lines.append(f"  {attr}: {_show(a)}  ->  {_show(b)}")
        if full_ads:
            for side, ad in (("old", j.old_ad), ("new", j.new_ad)):
                if ad is not None:
                    lines.append(f"  routed ad under the {side} table:")
                    lines.extend(f"    {ln}" for ln in C.format_ad(ad).splitlines())
    moves = cmp.route_moves()
    same = sum(not j.differs for j in cmp.jobs)
    if lines:
        lines.append("")
    lines.append(f"Summary: {len(cmp.jobs)} job(s); {sum(j.route_changed for j in cmp.jobs)} change route; "
                 f"{sum(bool(j.changed) and not j.route_changed for j in cmp.jobs)} keep their route but get a "
                 "different routed ad")
    if same and not all_jobs:
        lines.append(f"  {same} job(s) routed the same are not listed (--all lists them)")
    if cmp.renamed:
        lines.append("  routes renamed by the conversion: "
                     + ", ".join(f"{o} -> {n}" for o, n in cmp.renamed.items()))
    for (o, n), js in moves.items():
        lines.append(f"  route {o or '(not routed)'} -> {n or '(not routed)'}: {len(js)} job(s): "
                     + ", ".join(str(x) for x in js))
    changes = cmp.attribute_changes()
    if changes:
        lines.append("  attributes that change value: "
                     + ", ".join(f"{a} ({n} job{'s' if n != 1 else ''})" for a, n in changes.most_common()))
    for name, row in cmp.per_route().items():
        was = f" (was {row['was']})" if "was" in row else ""
        lines.append(f"  route {name}{was}: old {row['old']} job(s), new {row['new']} job(s), "
                     f"{row['ad_changed']} with a different routed ad")
    lines.append("tables route these jobs differently" if cmp.differs else "no differences")
    return "\n".join(lines) + "\n"
