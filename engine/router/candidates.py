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

import functools
import re
from dataclasses import dataclass
from typing import Any, Sequence

from engine.classad import MAX_CLASSAD_RECURSION, ClassAd, ClassAdError, evaluate, evaluation_fails, is_true, parse_expr
from engine.contract.codes import JobStatus
from engine.queue.job import Job

_IDLE_TEXT = JobStatus.IDLE.text  # JobStatus as condor_submit writes it
SANITY_ATTRS = ("ProcId", "JobStatus", "StageInStart", "StageInFinish", "Managed", "Owner", "RoutedBy")

_NUM = re.compile(r"-?\d+(\.\d*)?([eE][-+]?\d+)?$")
_STR = re.compile(r'"[^"\\]*"$')
_EMPTY = ClassAd()
_EXTRA = object()  # marks a signature that followed expressions into further attributes
# Words that may make an expression's value change with time alone (time(), random(), formatTime()
# with no argument, CurrentTime, …): a table using any of them is re-evaluated for every job on
# every cycle (no skipping of unchanged jobs). Over-matching only costs speed.
_CLOCK_WORDS = re.compile(r"(?i)time|random|interval|now")
# bounds of the classifications kept across cycles (Scanner._classification): umbrellas (sets of
# accepting routes) and signatures per umbrella
_KNOWN_UMBRELLAS = 16
_KNOWN_SIGNATURES = 20_000


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


def _distinct_terms(route_reqs: Sequence[str | None]) -> list[str]:
    # an empty requirement counts as True; duplicates removed, first occurrence kept (a dict,
    # not a list: the membership test must not grow with the routes)
    return list(dict.fromkeys((req or "").strip() or "True" for req in route_reqs))


def umbrella_core(source_constraint: str | None, route_reqs: Sequence[str | None]) -> str | None:
    """The umbrella without the sanity clause; None when no route is accepting."""
    seen = _distinct_terms(route_reqs)
    if not seen:
        return None
    out = f"({source_constraint}) && " if source_constraint and source_constraint.strip() else ""
    return out + "( " + " || ".join(f"({t})" for t in seen) + " )"


def umbrella_text(source_constraint: str | None, route_reqs: Sequence[str | None], router_name: str) -> str | None:
    """HTCondor's umbrella string (JobRouter::GetCandidateJobs); None when no route accepts."""
    core = umbrella_core(source_constraint, route_reqs)
    return None if core is None else core + " && " + sanity_text(router_name)


def too_deep_message(terms: int) -> str:
    """Why an umbrella of ``terms`` distinct REQUIREMENTS is no job's (see :class:`Umbrella`)."""
    return (f"the router's umbrella constraint ORs the REQUIREMENTS of {terms:,} accepting routes (distinct texts), "
            f"nested deeper than ClassAd evaluation goes ({MAX_CLASSAD_RECURSION} levels, one per ||: "
            "MAX_CLASSAD_RECURSION in HTCondor's src/classad/classad/exprTree.h), so HTCondor's "
            "JobRouter::GetCandidateJobs evaluates it to error for every job and routes none; "
            f"keep fewer than about {MAX_CLASSAD_RECURSION - 10} distinct REQUIREMENTS")


@dataclass(frozen=True, eq=False)
class Umbrella:
    """The umbrella without the sanity clause (:func:`umbrella_core`), parsed once per set of
    accepting routes (:func:`umbrella`) instead of once per job.

    HTCondor parses its chain of ``||`` left-deep, one level per term, and the ClassAd library
    stops an evaluation nested deeper than ``MAX_CLASSAD_RECURSION`` levels: the query's call
    fails for every job (JobRouter::GetCandidateJobs, htcondor.md §1.4), which is then no
    candidate. ``problem`` says so; from ``MAX_CLASSAD_RECURSION`` terms on it is certain (the
    chain alone is that deep) and the text is not parsed (megabytes, over RouteDeck's parse limit)."""

    text: str | None  # None: no route is accepting
    terms: int  # distinct REQUIREMENTS texts ORed
    expr: Any  # the parsed text; None when there is none, it does not parse, or it is too deep
    problem: str | None  # why no job can pass it (too deep), else None

    def test(self, target: Any, now: float) -> bool:
        """HTCondor's query for one job (an empty ad as MY, the job as TARGET); false when it is
        too deep (see :meth:`fails`)."""
        if self.expr is None:
            return False
        return is_true(evaluate(self.expr, _EMPTY, target, now=now))

    def fails(self, target: Any, now: float) -> bool:
        """The evaluation call fails for this job (too deep), rather than giving a value."""
        if self.problem is not None:
            return True
        return self.expr is not None and evaluation_fails(self.expr, _EMPTY, target, now=now)


@functools.lru_cache(maxsize=8)
def umbrella(source_constraint: str | None, route_reqs: tuple[str | None, ...]) -> Umbrella:
    """The :class:`Umbrella` of these accepting routes' REQUIREMENTS (cached: ``route`` asks
    for each job, the router for each cycle, mostly with the same routes accepting)."""
    core = umbrella_core(source_constraint, route_reqs)
    if core is None:
        return Umbrella(None, 0, None, None)
    terms = len(_distinct_terms(route_reqs))
    if terms >= MAX_CLASSAD_RECURSION:
        return Umbrella(core, terms, None, too_deep_message(terms))
    try:
        expr = parse_expr(core)
    except ClassAdError:
        expr = None  # a route whose REQUIREMENTS do not parse: the loader reports it
    if expr is not None and evaluation_fails(expr, _EMPTY, _EMPTY):
        # the first term is evaluated deepest, whatever the job: too deep for every job
        return Umbrella(core, terms, None, too_deep_message(terms))
    return Umbrella(core, terms, expr, None)


_LIT_CACHE: dict[str, str] = {}


def _lit(text: str | None) -> str:
    """'none', 'num', 'str' or 'other' (anything the fast path must not interpret)."""
    if text is None:
        return "none"
    kind = _LIT_CACHE.get(text)
    if kind is None:
        kind = "num" if _NUM.match(text) else "str" if _STR.match(text) else "other"
        if len(_LIT_CACHE) < 100_000:
            _LIT_CACHE[text] = kind
    return kind


_SANITY_LOWER = tuple(a.lower() for a in SANITY_ATTRS)
_KEYWORDS = frozenset({"true", "false", "undefined", "error"})


def _constant(text: str) -> bool:
    """A literal whose value cannot depend on anything: a number, a plain string or a keyword."""
    return _lit(text) != "other" or text.lower() in _KEYWORDS


def fast_sanity(vals: dict[str, str], router_name_quoted: str) -> bool | None:
    """The sanity clause from literal texts (``vals``: lower-case name -> text); None when some
    text needs real evaluation."""
    get = vals.get
    for a in _SANITY_LOWER:
        if _lit(get(a)) == "other":
            return None
    proc, status = get("procid"), get("jobstatus")
    if proc is None or _lit(proc) != "num" or float(proc) < 0:
        return False
    if status is None or (status != _IDLE_TEXT and (_lit(status) != "num" or float(status) != JobStatus.IDLE)):
        return False
    if get("stageinstart") is not None and get("stageinfinish") is None:
        return False
    if get("managed") in ('"ScheddDone"', '"External"'):
        return False
    if get("owner") is None:
        return False
    if get("routedby") == router_name_quoted:
        return False
    return True


_KEPT_MAX = 1 << 18  # cluster entries kept across cycles (bounded: emptied when full)


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
        found = [self._refs(self.source_constraint or "")]
        for r in self.routes:
            found.append(self._refs(getattr(r, "requirements", None) or ""))
            found.append(self._refs(getattr(r, "classad_requirements", None) or ""))
        # a text whose references are unknown may read any attribute: every job is evaluated
        # on its own (``signature``), and none is decided from literal texts only (``last_fast``)
        self._opaque = None in found
        self.sig_attrs = tuple(sorted(set().union(*(f for f in found if f is not None))))
        self._sig_set = frozenset(self.sig_attrs)
        self._needed = frozenset(self.sig_attrs) | frozenset(_SANITY_LOWER)
        self._lower: dict[str, str] = {}
        self._clusters: dict[int, dict[str, str]] = {}
        self._centries: dict[int, tuple] = {}
        # cluster id -> (the queue job's cluster_stamp, its _cluster_entry): kept across cycles
        self._kept: dict[int, tuple[Any, tuple]] = {}
        # proc-ad shape (its attribute names) -> what scan() reads from it (``_shape``); kept
        # across cycles: it depends on the table only
        self._shapes: dict[tuple[str, ...], tuple[str | None, str | None] | bool] = {}
        self._proc_in_sig = "procid" in self._sig_set
        self._status_in_sig = "jobstatus" in self._sig_set
        self._refs_cache: dict[str, frozenset[str] | None] = {}
        self.umbrella: str | None = None
        self._umbrella = umbrella(None, ())
        # why no job passes this cycle's umbrella whatever it holds (Umbrella.problem), else None
        self.umbrella_problem: str | None = None
        self._cache: dict[Any, Classification] = {}
        self._now: float = 0.0
        self.evaluations = 0  # ClassAd evaluations this cycle (for the bench and the UI)
        # True when the last scan() decided from literal texts only (every attribute it read is
        # a number or a plain string); with a time-free table its answer then depends on nothing
        # but those texts
        self.last_fast = False
        texts = [self.source_constraint or ""] + [
            (getattr(r, "requirements", None) or "") + " " + (getattr(r, "classad_requirements", None) or "")
            for r in self.routes]
        self.time_free = not any(_CLOCK_WORDS.search(t) for t in texts)
        # With a table whose texts use no clock, a signature of literal texts classifies the same
        # on every cycle that has the same umbrella: umbrella text -> {signature: Classification},
        # kept across cycles (``_classification``). Fixed here: callers may clear ``time_free``
        # for their own reasons (engine.router.unrouted), which does not make the texts use a clock.
        self._pure = self.time_free
        self._known_by_umbrella: dict[str | None, dict[Any, Classification]] = {}
        self._known: dict[Any, Classification] | None = None

    @staticmethod
    def _refs(text: str) -> frozenset[str] | None:
        """The names ``text`` reads (``Expr.refs``; None: unknown, it may read any)."""
        if not text.strip():
            return frozenset()
        try:
            return parse_expr(text).refs
        except ClassAdError:
            return frozenset()

    def begin_cycle(self, accepting: Sequence[bool], now: float) -> str | None:
        """Build this cycle's umbrella from the routes accepting jobs now; clear the cache."""
        reqs = tuple(getattr(r, "requirements", None) for r, ok in zip(self.routes, accepting) if ok)
        self._umbrella = umbrella(self.source_constraint, reqs)
        core = self._umbrella.text
        self.umbrella = None if core is None else core + " && " + sanity_text(self.router_name)
        self.umbrella_problem = self._umbrella.problem
        self._cache = {}
        if self._pure:
            if len(self._known_by_umbrella) >= _KNOWN_UMBRELLAS and self.umbrella not in self._known_by_umbrella:
                self._known_by_umbrella.clear()  # bounded: a table with many route subsets evaluates again
            self._known = self._known_by_umbrella.setdefault(self.umbrella, {})
        self._clusters = {}  # cluster ads may have changed since the last cycle
        self._centries = {}
        self._now = now
        self.evaluations = 0
        return self.umbrella

    def values(self, job: Any) -> dict[str, str]:
        """The texts of the attributes this table looks at (lower-case names), the cluster
        ad's part computed once per cluster per cycle."""
        try:
            proc, cid = job.proc_attrs, job.id[0]
        except AttributeError:  # a job-like object without the queue's ad split
            return {a: v for a in self._needed if (v := job.get(a)) is not None}
        lower, needed = self._lower, self._needed
        base = self._clusters.get(cid)
        if base is None:
            base = {}
            for k, v in job.cluster_attrs.items():
                lk = lower.get(k) or lower.setdefault(k, k.lower())
                if lk in needed:
                    base[lk] = v
            self._clusters[cid] = base
        vals = dict(base)
        for k, v in proc.items():
            lk = lower.get(k) or lower.setdefault(k, k.lower())
            if lk in needed:
                vals[lk] = v
        return vals

    def signature(self, job: Any, vals: dict[str, str]) -> Any:
        get = vals.get
        sig = tuple(get(a) for a in self.sig_attrs)
        if self._opaque:
            return (_EXTRA, sig, object())  # a key of its own: the job is evaluated (no cache hit)
        extra: dict[str, str | None] | None = None
        pending = [v for v in sig if v is not None and _lit(v) == "other"]
        while pending:  # follow job attributes that are expressions, transitively
            text = pending.pop()
            refs = self._refs_cache.get(text, _EXTRA)
            if refs is _EXTRA:
                refs = self._refs_cache[text] = self._refs(text)
            if refs is None:  # it may read any attribute: a key of its own, as above
                return (_EXTRA, sig, object())
            for a in refs:
                if a in self._sig_set or (extra is not None and a in extra):
                    continue
                if extra is None:
                    extra = {}
                v = extra[a] = job.get(a)
                if v is not None and _lit(v) == "other":
                    pending.append(v)
        return sig if extra is None else (_EXTRA, sig, tuple(sorted(extra.items())))

    def scan(self, job: Any) -> Classification | None:
        """Sanity clause + classification in one go; None when the sanity clause fails.

        Fast path: the job's proc ad holds nothing the table looks at except ``ProcId`` and
        ``JobStatus`` (what condor_submit puts there), and neither is part of the signature;
        then all the rest comes from the per-cluster cache. Which names of a proc ad matter is
        decided once per *shape* (the proc ad's attribute names, in order), so a cluster's
        procs cost one tuple and one dict look-up each. Anything unusual (an expression instead
        of a literal, a proc ad overriding a looked-at attribute) takes the slow path, which
        gives the same answer.
        """
        self.last_fast = False
        try:
            cid = job.id[0]
            proc = job.proc_texts() if type(job) is Job else job.proc_attrs
        except AttributeError:
            return self._slow(job)
        entry = self._centries.get(cid)
        if entry is None:
            entry = self._cluster_entry(job, cid)
        base, cluster_ok, sig, literal = entry
        if cluster_ok is None:
            return self._slow(job)
        keys = tuple(proc)
        shape = self._shapes.get(keys)
        if shape is None:
            shape = self._shape(keys)
        if shape is False:
            return self._slow(job)
        pk, sk = shape
        procid = proc[pk] if pk is not None else base.get("procid")
        status = proc[sk] if sk is not None else base.get("jobstatus")
        if procid is None or status is None:
            return self._slow(job)
        if not (status == _IDLE_TEXT and procid.isascii() and procid.isdigit()):  # the usual idle job
            if _lit(procid) != "num" or _lit(status) != "num":
                return self._slow(job)
            if float(procid) < 0 or float(status) != JobStatus.IDLE:
                self.last_fast = literal
                return None
        self.last_fast = literal
        if not cluster_ok:
            return None
        hit = self._cache.get(sig)
        if hit is None:
            hit = self._cache[sig] = self._classification(job, sig, literal)
        return hit

    def _classification(self, job: Any, sig: Any, literal: bool) -> Classification:
        """The job's classification (this cycle's cache missed): taken from the cycles before
        with the same umbrella when the table uses no clock and ``literal`` (every text the
        signature holds is a constant), so nothing in it can evaluate differently now; else
        evaluated (and kept for those cycles when it may be)."""
        known = self._known if literal and self._pure else None
        if known is not None:
            hit = known.get(sig)
            if hit is not None:
                return hit
        hit = self._evaluate(job)
        if known is not None:
            if len(known) >= _KNOWN_SIGNATURES:
                known.clear()
            known[sig] = hit
        return hit

    def _shape(self, keys: tuple[str, ...]) -> tuple[str | None, str | None] | bool:
        """For a proc ad with these names: (its name of ProcId, of JobStatus), each None when
        absent; False when it holds another attribute the table looks at (slow path)."""
        lower, needed = self._lower, self._needed
        pk = sk = None
        out: tuple[str | None, str | None] | bool
        for k in keys:
            lk = lower.get(k) or lower.setdefault(k, k.lower())
            if lk not in needed:
                continue
            if lk == "procid" and not self._proc_in_sig:
                pk = k
            elif lk == "jobstatus" and not self._status_in_sig:
                sk = k
            else:
                out = False
                break
        else:
            out = (pk, sk)
        if len(self._shapes) < 10_000:  # bounded: odd queues just compute it again
            self._shapes[keys] = out
        return out

    def _slow(self, job: Any) -> Classification | None:
        vals = self.values(job)
        out = self.classify(job, vals) if self.sanity(job, vals) else None
        self.last_fast = not self._opaque and all(_constant(v) for v in vals.values())
        return out

    def _cluster_entry(self, job: Any, cid: int) -> tuple[dict[str, str], bool | None, Any, bool]:
        """(cluster-ad values, sanity of everything but ProcId/JobStatus — None when the fast
        path cannot decide, the signature, whether every value is a literal)."""
        entry = self._centries.get(cid)
        stamp = None
        if entry is None and type(job) is Job:
            # a pure function of the cluster ad's texts (and the table): kept across cycles
            # while the cluster ad is unchanged (test_cluster_entries_kept_across_cycles)
            stamp = job.cluster_stamp()
            kept = self._kept.get(cid)
            if kept is not None and kept[0] == stamp:
                entry = self._centries[cid] = kept[1]
        if entry is None:
            base = {}
            for k, v in job.cluster_attrs.items():
                lk = self._lower.get(k) or self._lower.setdefault(k, k.lower())
                if lk in self._needed:
                    base[lk] = v
            ok = fast_sanity(dict(base, procid="0", jobstatus="1"), self._quoted_name)
            sig = None
            if ok is not None:
                sig = self.signature(job, base)
                if sig and sig[0] is _EXTRA:  # expressions reaching other attributes: no shortcut
                    ok = None
            literal = all(_constant(v) for v in base.values())
            entry = self._centries[cid] = (base, ok, sig, literal)
            if stamp is not None:
                if len(self._kept) >= _KEPT_MAX:
                    self._kept.clear()
                self._kept[cid] = (stamp, entry)
        return entry

    def sanity(self, job: Any, vals: dict[str, str] | None = None) -> bool:
        ok = fast_sanity(self.values(job) if vals is None else vals, self._quoted_name)
        if ok is None:
            self.evaluations += 1
            ok = is_true(evaluate(self._sanity_expr, _EMPTY, job.classad(), now=self._now))
        return ok

    def classify(self, job: Any, vals: dict[str, str] | None = None) -> Classification:
        if vals is None:
            vals = self.values(job)
        sig = self.signature(job, vals)
        hit = self._cache.get(sig)
        if hit is None:
            literal = not (sig and sig[0] is _EXTRA) and all(_constant(v) for v in vals.values())
            hit = self._cache[sig] = self._classification(job, sig, literal)
        return hit

    def _evaluate(self, job: Any) -> Classification:
        ad = job.classad()
        passes = False
        if self._umbrella.expr is not None:
            self.evaluations += 1
            passes = self._umbrella.test(ad, self._now)
        matches = []
        for i, route in enumerate(self.routes):
            self.evaluations += 1
            if route.matches(ad, self._now):
                matches.append(i)
        return Classification(passes, tuple(matches))

    @property
    def signatures(self) -> int:
        return len(self._cache)
