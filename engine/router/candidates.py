"""Candidate selection: the umbrella pre-filter and route matching, fast (htcondor.md §1.4).

HTCondor's ``GetCandidateJobs`` evaluates one "umbrella" constraint over the whole source queue::

    (<JOB_ROUTER_SOURCE_JOB_CONSTRAINT>) && ( (<req A>) || (<req B>) ... )   # accepting routes only
    && (target.ProcId >= 0 && target.JobStatus == 1 && ... && target.RoutedBy isnt "<name>")

with an empty ad as MY and the job as TARGET (unqualified names fall back to the job; ``MY.x``
is the empty ad), then ``ChooseRoute`` evaluates each route's ``REQUIREMENTS`` with the job as
MY and no TARGET. :func:`umbrella_text` builds that exact string and :meth:`Scanner.classify`
evaluates it with classad2 — nothing of ClassAd's three-valued logic is re-implemented here.

Speed (product.md §7: 100,000 idle jobs × 50 routes in ≤ 1 s) comes from grouping, as
HTCondor's autoclusters do:

- The *sanity clause* (the last line above) is checked in Python straight from the attribute
  texts when they are all plain literals (the normal case: ``JobStatus = 1``,
  ``Owner = "u"``); anything else falls back to evaluating the clause with classad2. It is kept
  out of the grouping key because ``ProcId`` differs for every job.
- Everything else depends only on the job attributes that the source constraint and the route
  requirements reference (``Expr.refs``), followed transitively through job attributes that are
  themselves expressions. Jobs with the same texts for those attributes form one *signature*;
  the umbrella and every route's match are evaluated once per signature per cycle (one cycle
  has one ``now``, so ``time()`` is safe). A queue of 100,000 jobs from a few submit files has a
  handful of signatures.
- Route ``REQUIREMENTS`` are evaluated for every route (accepting or not) so the why-not view
  can show them; the umbrella only ORs the accepting ones, exactly as HTCondor.

RouteDeck does not add HTCondor's non-root clause (``target.Owner == "<me>"``): the embedded
engine can act for every owner, and ``watch`` mode never claims jobs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from engine.classad import ClassAd, ClassAdError, evaluate, is_true, parse_expr

SANITY_ATTRS = ("ProcId", "JobStatus", "StageInStart", "StageInFinish", "Managed", "Owner", "RoutedBy")

_NUM = re.compile(r"-?\d+(\.\d*)?([eE][-+]?\d+)?$")
_STR = re.compile(r'"[^"\\]*"$')
_EMPTY = ClassAd()


def sanity_clauses(router_name: str) -> list[tuple[str, str]]:
    """The fixed clauses of the umbrella, one by one (labels are for the why-not view)."""
    return [
        ("ProcId >= 0", "target.ProcId >= 0"),
        ("JobStatus == 1 (idle)", "target.JobStatus == 1"),
        ("input staged (StageInStart undefined or StageInFinish set)",
         "(target.StageInStart is undefined || target.StageInFinish isnt undefined)"),
        ('Managed isnt "ScheddDone"', 'target.Managed isnt "ScheddDone"'),
        ('Managed isnt "External" (not claimed by a router)', 'target.Managed isnt "External"'),
        ("Owner is defined", "target.Owner isnt Undefined"),
        (f'RoutedBy isnt "{router_name}" (not a routed copy of this router)',
         f'target.RoutedBy isnt "{router_name}"'),
    ]


def sanity_text(router_name: str) -> str:
    return "(" + " && ".join(text for _label, text in sanity_clauses(router_name)) + ")"


def umbrella_core(source_constraint: str | None, route_reqs: Sequence[str | None]) -> str | None:
    """The umbrella without the sanity clause; None when no route is accepting."""
    seen: list[str] = []
    for req in route_reqs:
        text = (req or "").strip() or "True"  # an empty requirement counts as True
        if text not in seen:  # duplicates removed
            seen.append(text)
    if not seen:
        return None
    out = f"({source_constraint}) && " if source_constraint and source_constraint.strip() else ""
    return out + "( " + " || ".join(f"({t})" for t in seen) + " )"


def umbrella_text(source_constraint: str | None, route_reqs: Sequence[str | None], router_name: str) -> str | None:
    """HTCondor's umbrella string (JobRouter::GetCandidateJobs); None when no route accepts."""
    core = umbrella_core(source_constraint, route_reqs)
    return None if core is None else core + " && " + sanity_text(router_name)


def _lit(text: str | None) -> str:
    """'none', 'num', 'str' or 'other' (anything the fast path must not interpret)."""
    if text is None:
        return "none"
    if _NUM.match(text):
        return "num"
    if _STR.match(text):
        return "str"
    return "other"


def fast_sanity(get: Callable[[str], str | None], router_name_quoted: str) -> bool | None:
    """The sanity clause from literal texts; None when some text needs real evaluation."""
    kinds = {}
    for a in SANITY_ATTRS:
        k = _lit(get(a))
        if k == "other":
            return None
        kinds[a] = k
    if kinds["ProcId"] != "num" or float(get("ProcId")) < 0:
        return False
    if kinds["JobStatus"] != "num" or float(get("JobStatus")) != 1:
        return False
    if kinds["StageInStart"] != "none" and kinds["StageInFinish"] == "none":
        return False
    managed = get("Managed")
    if managed in ('"ScheddDone"', '"External"'):
        return False
    if kinds["Owner"] == "none":
        return False
    if get("RoutedBy") == router_name_quoted:
        return False
    return True


@dataclass(frozen=True)
class Classification:
    """What the cycle knows about one signature."""

    umbrella: bool  # the umbrella (minus the sanity clause) is true
    matches: tuple[int, ...]  # indices (match order) of routes whose REQUIREMENTS match


class Scanner:
    """Per routing table: the attributes that matter; per cycle: the umbrella and a cache."""

    def __init__(self, routes: Sequence[Any], source_constraint: str | None, router_name: str) -> None:
        self.routes = list(routes)
        self.source_constraint = (source_constraint or "").strip() or None
        self.router_name = router_name
        self._quoted_name = '"' + router_name.replace('"', '\\"') + '"'
        self._sanity_expr = parse_expr(sanity_text(router_name))
        refs: set[str] = set()
        if self.source_constraint:
            refs |= self._refs(self.source_constraint)
        for r in self.routes:
            refs |= self._refs(getattr(r, "requirements", None) or "")
        self.sig_attrs = tuple(sorted(refs))
        self._sig_set = frozenset(self.sig_attrs)
        self._refs_cache: dict[str, frozenset[str]] = {}
        self.umbrella: str | None = None
        self._umbrella_expr = None
        self._cache: dict[Any, Classification] = {}
        self._now: float = 0.0
        self.evaluations = 0  # ClassAd evaluations this cycle (for the bench and the UI)

    @staticmethod
    def _refs(text: str) -> frozenset[str]:
        if not text.strip():
            return frozenset()
        try:
            return parse_expr(text).refs
        except ClassAdError:
            return frozenset()

    def begin_cycle(self, accepting: Sequence[bool], now: float) -> str | None:
        """Build this cycle's umbrella from the routes accepting jobs now; clear the cache."""
        reqs = [getattr(r, "requirements", None) for r, ok in zip(self.routes, accepting) if ok]
        core = umbrella_core(self.source_constraint, reqs)
        self.umbrella = None if core is None else core + " && " + sanity_text(self.router_name)
        self._umbrella_expr = parse_expr(core) if core else None
        self._cache = {}
        self._now = now
        self.evaluations = 0
        return self.umbrella

    def signature(self, get: Callable[[str], str | None]) -> Any:
        vals = tuple(get(a) for a in self.sig_attrs)
        extra: dict[str, str | None] | None = None
        pending = [v for v in vals if v is not None and _lit(v) == "other"]
        while pending:
            text = pending.pop()
            refs = self._refs_cache.get(text)
            if refs is None:
                refs = self._refs_cache[text] = self._refs(text)
            for a in refs:
                if a in self._sig_set or (extra is not None and a in extra):
                    continue
                if extra is None:
                    extra = {}
                v = extra[a] = get(a)
                if v is not None and _lit(v) == "other":
                    pending.append(v)
        return vals if extra is None else (vals, tuple(sorted(extra.items())))

    def sanity(self, job: Any) -> bool:
        ok = fast_sanity(job.get, self._quoted_name)
        if ok is None:
            self.evaluations += 1
            ok = is_true(evaluate(self._sanity_expr, _EMPTY, job.classad(), now=self._now))
        return ok

    def classify(self, job: Any) -> Classification:
        sig = self.signature(job.get)
        hit = self._cache.get(sig)
        if hit is None:
            hit = self._cache[sig] = self._evaluate(job)
        return hit

    def _evaluate(self, job: Any) -> Classification:
        ad = job.classad()
        umbrella = False
        if self._umbrella_expr is not None:
            self.evaluations += 1
            umbrella = is_true(evaluate(self._umbrella_expr, _EMPTY, ad, now=self._now))
        matches = []
        for i, route in enumerate(self.routes):
            self.evaluations += 1
            if route.matches(ad, self._now):
                matches.append(i)
        return Classification(umbrella, tuple(matches))

    @property
    def signatures(self) -> int:
        return len(self._cache)
