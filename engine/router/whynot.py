"""Why is (or isn't) this job routed: the router's decision for one job, step by step.

The steps follow ``GetCandidateJobs`` / ``ChooseRoute`` (htcondor.md §1.4) in order, each with
its result and the numbers behind it:

1. routing enabled; the job not already tracked (with its state if it is);
2. ``JOB_ROUTER_MAX_JOBS`` against the managed jobs; at least one route accepting jobs;
3. the umbrella, clause by clause: the fixed sanity clauses (JobStatus, Managed, Owner, …), the
   source constraint (each top-level ``&&`` clause, so the failing one is named) and the OR of
   the accepting routes' requirements evaluated as the umbrella does (empty MY, job as TARGET);
4. every route in match order: accepting or not (throttle / MaxIdleJobs / MaxJobs with the
   figures), then its ``REQUIREMENTS`` with the job as MY (the failing ``&&`` clause named, with
   the values of the job attributes it references);
5. the verdict: the route ``ChooseRoute`` would pick now (round robin noted), or why none.

Splitting an expression into its top-level ``&&`` clauses is lexical (parentheses and string
literals respected) and every clause is re-parsed and evaluated by classad2; if a piece does not
parse the whole expression is shown as one clause. Nothing here changes router state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from engine.classad import ClassAd, ClassAdError, evaluate, format_value, is_true, parse_expr
from engine.classad_text import string_end
from engine.contract.codes import JobStatus
from engine.contract.feed import WhyNot
from engine.router.candidates import sanity_clauses, too_deep_message, umbrella
from engine.router.throttle import RouteStats, route_state

EMPTY_AD = ClassAd()


@dataclass(frozen=True)
class Step:
    check: str  # what was checked
    ok: bool | None  # None: informational
    detail: str = ""  # the numbers / values
    route: str | None = None

    def line(self) -> str:
        mark = {True: "PASS", False: "FAIL", None: "    "}[self.ok]
        where = f"[{self.route}] " if self.route else ""
        return f"{mark} {where}{self.check}" + (f": {self.detail}" if self.detail else "")


@dataclass(frozen=True)
class Explanation:
    job: str
    route: str | None  # the route it is (or would now be) routed to
    verdict: str
    steps: tuple[Step, ...] = field(default_factory=tuple)

    def text(self) -> str:
        return "\n".join([f"Job {self.job}: {self.verdict}"] + ["  " + s.line() for s in self.steps])

    def to_json(self) -> list[dict[str, Any]]:
        return [{"check": s.check, "ok": s.ok, "detail": s.detail, "route": s.route} for s in self.steps]

    def answer(self) -> WhyNot:
        """As a feed answers a why-not (``engine.contract.feed.FeedBase.why_not``)."""
        return WhyNot.of(self.verdict, ((s.check, s.ok, s.detail, s.route) for s in self.steps))


def conjuncts(text: str) -> list[str]:
    """Top-level ``&&`` clauses of an expression's text, flattening parenthesised conjunctions,
    without parsing them (``[text]`` when the top level is not a conjunction: ``a || b && c`` is
    ``a || (b && c)``, and ``a ? b && c : d`` a conditional)."""
    parts = _split_top(_strip_parens(text.strip()))
    if len(parts) == 1:
        return parts
    out: list[str] = []
    for p in parts:
        sub = conjuncts(p) if p.startswith("(") else [p]
        out.extend(sub if len(sub) > 1 else [p])
    return out


def split_and(text: str) -> list[str]:
    """Top-level ``&&`` clauses of an expression (:func:`conjuncts`), each of which parses."""
    out = conjuncts(text)
    if len(out) == 1:
        return out
    try:
        for p in out:
            parse_expr(p)
    except ClassAdError:
        return [text.strip()]
    return out


_TOKENS = re.compile(r'"|[(\[{]|[)\]}]|&&|\|\||\?')  # what _split_top looks at; the rest is skipped


def _split_top(t: str) -> list[str]:
    """``t`` split at its top-level ``&&``; ``[t]`` when its top level has ``||`` or a ``?``
    conditional (which bind looser than ``&&``: splitting there would change the meaning)."""
    parts, depth, start, i, n = [], 0, 0, 0, len(t)
    while i < n:
        m = _TOKENS.search(t, i)
        if m is None:
            break
        i, tok = m.start(), m.group()
        if tok == '"':
            i = string_end(t, i)
        elif tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth -= 1
        elif depth == 0 and (tok == "||" or (tok == "?" and t[i - 1:i] != "=" and t[i + 1:i + 2] != "=")):
            return [t.strip()]
        elif depth == 0 and tok == "&&":
            parts.append(t[start:i].strip())
            start = i + 2
            i += 1
        i += 1
    parts.append(t[start:].strip())
    return parts


_PARENS = re.compile(r"[()]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _strip_parens(t: str) -> str:
    """``t`` without the parentheses that enclose all of it (``((a) && b)`` -> ``(a) && b``);
    only the parentheses are visited, not every character."""
    while t.startswith("(") and t.endswith(")"):
        depth, last = 0, len(t) - 1
        for m in _PARENS.finditer(t):
            depth += 1 if m.group() == "(" else -1
            if depth == 0 and m.start() < last:
                return t
        t = t[1:-1].strip()
    return t


def _show(value: Any) -> str:
    try:
        return format_value(value)
    except Exception:  # noqa: BLE001 - an explanation shows what it cannot format as Python sees it
        return repr(value)


def clause_values(job: Any, text: str) -> str:
    """``Name = text`` of the job attributes ``text`` references (the job's spelling)."""
    try:
        found = parse_expr(text).refs
    except ClassAdError:
        return ""
    names = {k.lower(): k for k in job.attrs}
    # references classad2 cannot list (Expr.refs None): the job's attributes named in the text
    refs = sorted(found if found is not None else {w.lower() for w in _WORD.findall(text)} & names.keys())

    def spelled(a: str) -> str:
        if a in names:
            return names[a]
        m = re.search(r"(?<!\w)" + re.escape(a) + r"(?!\w)", text, re.IGNORECASE)
        return m.group(0) if m else a

    shown = [f"{spelled(a)} = {job.get(a) if job.get(a) is not None else 'undefined'}" for a in refs
             if a != "currenttime"]
    return "; ".join(shown)


def eval_clause(text: str, my: Any, target: Any, now: float) -> Any:
    try:
        return evaluate(parse_expr(text), my, target, now=now)
    except ClassAdError as exc:
        return f"(does not parse: {exc})"


def clause_steps(job: Any, text: str, my: Any, target: Any, now: float, label: str, route: str | None) -> list[Step]:
    out = []
    for clause in split_and(text):
        v = eval_clause(clause, my, target, now)
        vals = clause_values(job, clause)
        out.append(Step(f"{label}: {clause}", is_true(v), f"{_show(v)}" + (f" ({vals})" if vals else ""), route))
    return out


def routed_verdict(tracked: Any, steps: list[Step]) -> str:
    """The verdict for a job the router already tracks: that it is routed, where, and as which
    copy (htcondor.md §1.4: a tracked job is never a candidate again). The step is informational
    (``ok=None``): being managed is not a failed check."""
    route = tracked.route_name or tracked.last_route or "?"
    state = tracked.state.value
    copy = f"as routed copy {tracked.dest_key}" if tracked.dest_key else "no routed copy submitted yet"
    steps.append(Step("managed by the router", None, f"route {route}, state {state}, {copy}"))
    where = f"routed to {route}" + (f" as {tracked.dest_key}" if tracked.dest_key else "")
    return f"already managed ({state}): {where}"


def copy_verdict(job: Any, router_name: str) -> Explanation | None:
    """A routed copy asked about: it is the router's own output, never a candidate (its
    ``RoutedBy`` fails the umbrella, htcondor.md §1.4); say whose copy it is."""
    routed_by = job.get("RoutedBy")
    src = job.get("RoutedFromJobId")
    if routed_by is None or src is None or routed_by.strip('"') != router_name:
        return None
    route = (job.get("RouteName") or "?").strip('"')
    src = src.strip('"')
    step = Step("routed copy", None, f"routed by {router_name} from {src} on route {route}")
    return Explanation(job.key, route, f"this is the routed copy of {src} (route {route})", (step,))


def pick_candidate(router: Any, route_name: str | None, now: float, limit: int = 5000) -> tuple[str, str] | None:
    """The idle job a why-not question about ``route_name`` is most likely about, and why it was
    picked. Only jobs the router could take are considered: idle, not tracked, passing the
    umbrella's fixed clauses and JOB_ROUTER_SOURCE_JOB_CONSTRAINT (htcondor.md §1.4). In order of relevance, the oldest (queue order)
    one whose REQUIREMENTS for ``route_name`` are true (it waits for that route); else the oldest
    one some route's REQUIREMENTS match; else the oldest one. None when no job qualifies. At most
    ``limit`` jobs are evaluated (the scan is bounded on a big queue)."""
    routes = list(router.table.routes)
    wanted = next((r for r in routes if r.name.lower() == (route_name or "").lower()), None)
    any_idle = any_match = None
    ad_ok = _sane(router, now)
    evaluated = 0
    for job in router.src_q:
        if evaluated >= limit:
            break
        if job.key in router.jobs or not ad_ok(job):
            continue
        evaluated += 1
        any_idle = any_idle or job.key
        ad = job.classad()
        if wanted is not None and wanted.matches(ad, now):
            return job.key, f"oldest idle job that {wanted.name}'s requirements match"
        if any_match is None and any(r.matches(ad, now) for r in routes):
            any_match = job.key
            if wanted is None:
                break
    note = f" (none waits for {wanted.name})" if wanted is not None else ""
    if any_match is not None:
        return any_match, "oldest idle job a route's requirements match" + note
    if any_idle is not None:
        return any_idle, "oldest idle job; no route's requirements match it" + note
    return None


def _sane(router: Any, now: float):
    """The umbrella's fixed clauses and the source job constraint (htcondor.md §1.4), per job."""
    texts = [parse_expr(text) for _label, text in sanity_clauses(router.name)]
    sc = (router.table.knobs.source_job_constraint or "").strip()
    if sc:
        try:
            texts.append(parse_expr(sc))
        except ClassAdError:
            pass  # a constraint that does not parse is reported by why-not itself

    def ok(job: Any) -> bool:
        status = job.get("JobStatus")
        if status is not None and status.strip() != JobStatus.IDLE.text:
            return False  # the common case, without building the ad
        ad = job.classad()
        return all(is_true(evaluate(e, EMPTY_AD, ad, now=now)) for e in texts)

    return ok


def explain_job(table: Any, job: Any, *, now: float, stats: Mapping[str, RouteStats] | None = None,
                tracked: Any = None, managed: int = 0, router_name: str | None = None,
                detail: bool = True, states: list[tuple[bool, str, str | None]] | None = None) -> Explanation:
    """Explain the routing decision for ``job`` (needs ``key``, ``get``, ``classad()``).
    ``detail=False``: the same route and verdict, without the clause-by-clause steps of each route
    whose REQUIREMENTS fail (a caller that prints only the verdict; on 100,000 routes they were
    most of ``routedeck route``'s time). ``states``: each route's ``route_state`` with ``stats``,
    kept by a caller that explains many jobs (``stats`` must then hold every route)."""
    name = router_name or table.knobs.name
    steps: list[Step] = []
    key = job.key

    def done(route: str | None, verdict: str) -> Explanation:
        return Explanation(key, route, verdict, tuple(steps))

    if not table.routing_enabled:
        errs = "; ".join(str(d) for d in getattr(table, "errors", [])[:3])
        steps.append(Step("routing enabled", False, errs or "the routing table disables routing"))
        return done(None, "not routed: job routing is disabled")
    steps.append(Step("routing enabled", True, f"{len(table.routes)} routes in match order"))
    if tracked is not None:
        return done(tracked.route_name or None, routed_verdict(tracked, steps))
    max_jobs = int(table.knobs.max_jobs)
    ok = max_jobs < 0 or managed < max_jobs
    steps.append(Step("JOB_ROUTER_MAX_JOBS", ok, "unlimited (-1)" if max_jobs < 0 else f"{managed} managed, limit {max_jobs}"))
    if not ok:
        return done(None, "not routed: the router manages JOB_ROUTER_MAX_JOBS jobs already")

    routes = list(table.routes)
    if states is None:
        book = {r.name.lower(): (stats or {}).get(r.name.lower()) or RouteStats(r.name, now) for r in routes}
        states = [route_state(r, book[r.name.lower()]) for r in routes]
    else:
        book = stats or {}
    accepting = [s[0] for s in states]
    n_acc = sum(accepting)
    steps.append(Step("some route is accepting jobs", n_acc > 0, f"{n_acc} of {len(routes)} accepting"))
    if not n_acc:
        return done(None, "not routed: no route is accepting jobs (" +
                    "; ".join(f"{r.name} {s[2]}" for r, s in zip(routes, states)) + ")")

    ad = job.classad()
    sanity_ok = True
    for label, text in sanity_clauses(name):
        v = eval_clause(text, EMPTY_AD, ad, now)
        ok = is_true(v)
        sanity_ok &= ok
        vals = clause_values(job, text)
        steps.append(Step(f"umbrella: {label}", ok, vals or _show(v)))
    sc = (table.knobs.source_job_constraint or "").strip()
    sc_ok = True
    if sc:
        sc_steps = clause_steps(job, sc, EMPTY_AD, ad, now, "JOB_ROUTER_SOURCE_JOB_CONSTRAINT", None)
        steps.extend(sc_steps)
        sc_ok = all(s.ok for s in sc_steps)
    # parsed once for every job asked about with the same routes accepting (umbrella's cache)
    umb = umbrella(None, tuple(r.requirements for r, a in zip(routes, accepting) if a))
    route_or = umb.test(ad, now)
    steps.append(Step("umbrella: one accepting route's requirements (job as TARGET, MY = empty ad)", route_or,
                      umb.problem or umb.text or ""))
    if not (sanity_ok and sc_ok):
        failed = [s.check for s in steps if s.ok is False]
        return done(None, "not a candidate: " + "; ".join(failed))
    if umb.problem is not None:  # no job is a candidate: ChooseRoute is never asked (htcondor.md §1.4)
        return done(None, f"not a candidate: {umb.problem}")
    # when only the routes' part of the umbrella fails, the per-route checks below say why

    chosen = None
    matching = []
    for r, (acc, state, reason) in zip(routes, states):
        s = book[r.name.lower()]
        if not acc:
            steps.append(Step("accepting jobs", False, reason or state, r.name))
            continue
        steps.append(Step("accepting jobs", True, f"{s.num_jobs}/{r.max_jobs} jobs, {s.idle} idle (MaxIdleJobs "
                                                  f"{r.max_idle_jobs}), throttle "
                                                  f"{'none' if s.throttle <= 0 else f'{s.throttle:.3g}'} "
                                                  f"({s.recent_routed} routed this window)", r.name))
        if r.matches(ad, now):
            steps.append(Step("REQUIREMENTS (job as MY)", True, r.requirements or "none (matches)", r.name))
            matching.append(r.name)
            if chosen is None:
                chosen = r.name
                if not table.knobs.round_robin:
                    break
        elif detail:
            req = r.classad_requirements if getattr(r, "syntax", "") == "classad" else r.requirements
            if getattr(r, "syntax", "") == "classad" and r.route_ad is not None:
                steps.extend(clause_steps(job, req or "true", r.route_ad, ad, now, "Requirements (route MY, job TARGET)", r.name))
            else:
                steps.extend(clause_steps(job, req or "true", ad, None, now, "REQUIREMENTS (job as MY)", r.name))
    if not route_or:
        if umb.fails(ad, now):  # too deep for this job only (a later term deeper than the first)
            return done(None, f"not a candidate: {too_deep_message(umb.terms)}")
        return done(None, "not a candidate: no accepting route's requirements are true in the umbrella")
    if chosen is None:
        return done(None, "not routed: no accepting route's requirements match")
    if table.knobs.round_robin and len(matching) > 1:
        return done(chosen, f"would be routed by round robin to one of {', '.join(matching)}")
    return done(chosen, f"would be routed to {chosen}")
