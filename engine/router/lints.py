"""Lints over a loaded routing table (``routedeck check``, the route editor).

Each lint says what HTCondor will do, not only what looks odd. Structural problems (undefined,
unlisted, empty, unparsable routes, missing REQUIREMENTS, broken pre/post transforms, duplicate
names, NAME differing from the knob suffix) are reported while loading (engine/router/loader.py);
the checks here look at the loaded routes:

- limits: ``MaxJobs <= 0`` (the route accepts nothing), ``MaxIdleJobs > MaxJobs`` (the idle limit
  can never bite);
- shadowing: a later route whose REQUIREMENTS text equals an earlier one's, whose ``&&`` clauses
  include all of an earlier one's (proved on the texts), or any route after one
  without REQUIREMENTS, only gets jobs while the earlier route is not accepting (first match wins
  unless ``JOB_ROUTER_ROUND_ROBIN_SELECTION``; htcondor.md §1.4);
- ``TARGET.`` in transform REQUIREMENTS: undefined there (job is MY, no TARGET; §1.4);
- a comparison with a bare identifier that looks like a value (``x =?= Some_Site``): it is an
  attribute reference, usually undefined (the UNL ``99-local.conf`` quirk, htcondor.md §6);
- ``SET``/``DEFAULT`` expressions that do not parse: HTCondor logs and skips them when the
  transform runs (the 9.0 manual example's extra ``)``, htcondor.md §6);
- the router's umbrella query (every accepting route's REQUIREMENTS ORed) too deep for ClassAd
  evaluation: from about 400 distinct REQUIREMENTS no job is ever a candidate (htcondor.md §1.4,
  ``MAX_CLASSAD_RECURSION``; engine/router/candidates.py ``Umbrella``);
- GridResource missing on a grid-universe route (jobs fail unless a transform sets it);
- a macro a transform assigns that nothing uses (no ``$(name)``, no ``defined name``, not one of
  the route macros the router reads): e.g. osg-test's ``default_MaxMemory = 128``, which only
  HTCondor-CE's Memory post-route transform reads.
"""

from __future__ import annotations

import bisect
import re
from itertools import combinations
from typing import Any

from engine import classad as C
from engine.router.candidates import umbrella
from engine.router.table import Diagnostic, Route, RoutingTable
from engine.router.whynot import _strip_parens, conjuncts

_KEYWORDS = {"true", "false", "undefined", "error", "is", "isnt"}
_BARE_COMPARE = re.compile(r"(=\?=|=!=|==|!=)\s*([A-Za-z_][A-Za-z0-9_]*)(?![\w.(])")
_MACRO_REF = re.compile(r"\$\(([A-Za-z0-9_.]+)")
_SET_LINE = re.compile(r"^\s*(SET|DEFAULT)\s+([A-Za-z_][\w.]*)\s*[,=]?\s*(.*)$", re.IGNORECASE)


def lint_table(table: RoutingTable) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for route in table.routes:
        out.extend(lint_limits(route))
        out.extend(lint_requirements(route))
    out.extend(lint_shadowing(table))
    out.extend(lint_umbrella(table))
    cfg = table.config
    for kind, transforms in (("pre-route", table.pre_transforms), ("post-route", table.post_transforms)):
        for t in transforms:
            knob = f"JOB_ROUTER_TRANSFORM_{getattr(t, 'name', '')}"
            out.extend(lint_transform_text(getattr(t, "text", ""), knob, cfg, None))
            out.extend(lint_parse_warnings(t, knob, cfg, None))
            req = getattr(t, "requirements", None)
            if req and _uses_target(req):
                out.append(Diagnostic("warning", f"{kind} transform {t.name}: REQUIREMENTS uses TARGET., which is "
                                      "undefined when transform requirements are evaluated (the routed ad is MY, "
                                      "there is no TARGET)", *_where(cfg.location(knob))))
    for route in table.routes:
        if route.syntax == "transform":
            out.extend(lint_transform_text(getattr(route.transform, "text", ""), route.source_label, cfg, route.name))
            out.extend(lint_parse_warnings(route.transform, route.source_label, cfg, route.name))
    out.extend(lint_unused_macros(table))
    return out


ROUTER_MACROS = {m.lower() for m in (
    "MaxJobs", "MaxIdleJobs", "FailureRateThreshold", "TargetUniverse", "GridResource", "JobFailureTest",
    "JobShouldBeSandboxed", "EditJobInPlace", "UseSharedX509UserProxy", "SharedX509UserProxy", "SendIDTokens",
    "OverrideRoutingEntry")}


def lint_unused_macros(table: RoutingTable) -> list[Diagnostic]:
    sources = [(f"JOB_ROUTER_TRANSFORM_{t.name}", t, None) for t in list(table.pre_transforms) + list(table.post_transforms)]
    sources += [(r.source_label, r.transform, r) for r in table.routes if r.syntax == "transform"]
    texts = "\n".join(getattr(t, "text", "") for _, t, _ in sources).lower()
    used = _MacroUses(texts)
    out = []
    for label, t, route in sources:
        for name in getattr(t, "local_macros", {}) or {}:
            low = name.lower()
            if low in ROUTER_MACROS or used.referenced(low) or used.tested(low):
                continue
            where = route.location if route else table.config.location(label)
            out.append(Diagnostic("info", f"{label} assigns the macro {name}, which no route or transform of this "
                                  f"table uses (no $({name}), no 'defined {name}'); a macro does not edit the job",
                                  *_where(where), route.name if route else None))
    return out


_NAME_RUN = re.compile(r"[\w.]+")
_REF_RUN = re.compile(r"\$\(([\w.]*)")
_DEFINED_WORD = re.compile(r"(?=\bdefined\s+(\w+))")  # a lookahead: "defined defined x" yields both


class _MacroUses:
    """Which macro names the lower-cased texts of a table use: ``$(name`` (a prefix, so
    ``$(default_maxMemory:2000)`` uses ``default_maxmemory``) and ``defined name``. Built in one
    pass over the texts, so asking about every macro of a table of 100,000 routes does not scan
    the texts once per macro."""

    def __init__(self, texts: str) -> None:
        self.texts = texts
        # what follows each "$(" up to the first character that cannot be in a name, sorted: the
        # runs that start with a name are a block beginning where the name would be inserted
        self.refs = sorted(set(_REF_RUN.findall(texts)))
        self.defined = set(_DEFINED_WORD.findall(texts))

    def referenced(self, low: str) -> bool:
        """``$(<low>`` occurs in the texts."""
        if not _NAME_RUN.fullmatch(low):
            return f"$({low}" in self.texts
        i = bisect.bisect_left(self.refs, low)
        return i < len(self.refs) and self.refs[i].startswith(low)

    def tested(self, low: str) -> bool:
        """``defined <low>`` occurs in the texts as whole words."""
        if re.fullmatch(r"\w+", low):
            return low in self.defined
        return re.search(rf"\bdefined\s+{re.escape(low)}\b", self.texts) is not None


def _where(src: Any) -> tuple[str | None, int | None]:
    return (src.file, src.line) if src else (None, None)


def _diag(level: str, msg: str, route: Route) -> Diagnostic:
    file, line = _where(route.location)
    return Diagnostic(level, msg, file, line, route.name)


def lint_limits(route: Route) -> list[Diagnostic]:
    out = []
    if route.max_jobs <= 0:
        out.append(_diag("warning", f"route {route.name}: MaxJobs = {route.max_jobs}, so it never accepts a job", route))
    elif route.max_idle_jobs >= 0 and route.max_idle_jobs > route.max_jobs:
        out.append(_diag("warning", f"route {route.name}: MaxIdleJobs ({route.max_idle_jobs}) > MaxJobs "
                         f"({route.max_jobs}); the idle limit can never be reached", route))
    if route.target_universe == 9 and not route.grid_resource and not route.edit_job_in_place:
        out.append(_diag("info", f"route {route.name}: grid universe without GridResource; routed jobs fail "
                         "unless a transform sets it", route))
    return out


def _uses_target(text: str) -> bool:
    return C.rewrite_scope_prefix(text, "TARGET", "") != text


def _uses_my(text: str) -> bool:
    return C.rewrite_scope_prefix(text, "MY", "") != text


def lint_requirements(route: Route) -> list[Diagnostic]:
    out = []
    req = route.requirements
    if not req:
        return out
    if route.syntax == "transform" and _uses_target(req):
        out.append(_diag("warning", f"route {route.name}: REQUIREMENTS uses TARGET., which is undefined when the "
                         "route is matched (ChooseRoute: the job is MY, there is no TARGET), so the route never gets "
                         "jobs: write job attributes unqualified", route))
    if route.syntax == "transform" and _uses_my(req):
        # JobRouter::GetCandidateJobs puts every accepting route's REQUIREMENTS into one query whose
        # MY is an empty ad and whose TARGET is the job (htcondor.md §1.4 "Pre-filter"): MY.x is
        # undefined there, so no job passes the candidate query for this route.
        out.append(_diag("warning", f"route {route.name}: REQUIREMENTS uses MY., which is undefined in the router's "
                         "candidate query (an empty ad is MY there, the job is TARGET), so the route never gets "
                         "jobs: write job attributes unqualified", route))
    text = route.classad_requirements or req
    for name in bare_identifier_comparisons(text):
        out.append(_diag("warning", f"route {route.name}: REQUIREMENTS compares with {name}, which is an attribute "
                         f"reference, not a string (undefined unless the job has {name}); write \"{name}\" if a "
                         "string was meant", route))
    return out


def bare_identifier_comparisons(text: str) -> list[str]:
    """Right-hand operands of ``==``/``=?=``/… that are bare identifiers looking like values:
    containing ``_`` or a digit, not a keyword (e.g. ``GlideinEntryName =?= HCC_US_Omaha_crane_gpu``)."""
    found = []
    for chunk_is_str, chunk in C.string_chunks(text):
        if chunk_is_str:
            continue
        for m in _BARE_COMPARE.finditer(chunk):
            name = m.group(2)
            if name.lower() in _KEYWORDS:
                continue
            if "_" in name or any(ch.isdigit() for ch in name):
                found.append(name)
    return found


def _normal(text: str | None, parsed: C.Expr | None = None) -> str:
    """``text`` unparsed by the new-syntax parser, without spaces, lower case. ``parsed``: the
    route's own parse of ``text`` (``Transform.requirements_expr``), used instead of parsing it
    twice more when it is that parse: without a backslash, the old-syntax text is the new-syntax
    text, and ``unparse_old`` writes the tree as the text was before the ``time()`` rewrite."""
    if not text:
        return "true"
    if parsed is not None and parsed.text == text.strip() and "\\" not in text:
        try:
            return C.unparse_old(parsed).replace(" ", "").lower()
        except Exception:  # noqa: BLE001  (as below: compared as written)
            return text.replace(" ", "").lower()
    try:
        return C.unparse_old(C.parse_expr(text).text).replace(" ", "").lower()
    except (C.ClassAdError, Exception):  # noqa: BLE001  (unparsable text compares as written)
        return text.replace(" ", "").lower()


MAX_SUBSET_CLAUSES = 8  # a later route of more clauses is checked against single-clause earlier routes only


def clause_set(key: str) -> frozenset[str]:
    """The top-level ``&&`` clauses of a route's normalised REQUIREMENTS ``key`` (``_normal``: one
    canonical text, split without parsing again), ``true`` left out: a job matches the route iff it
    makes every clause true (ClassAd ``&&`` is true only when both sides are, htcondor.md §1.4)."""
    if key == "true":
        return frozenset()
    return frozenset(_strip_parens(c) for c in conjuncts(key)) - {"true"}


def _subsets(clauses: frozenset[str]):
    """The non-empty subsets of ``clauses`` (all of them, itself included), or with more than
    MAX_SUBSET_CLAUSES clauses only the single clauses and itself."""
    items = sorted(clauses)
    if len(items) > MAX_SUBSET_CLAUSES:
        yield from (frozenset((c,)) for c in items)
        yield clauses
        return
    for k in range(1, len(items) + 1):
        yield from (frozenset(c) for c in combinations(items, k))


def lint_shadowing(table: RoutingTable) -> list[Diagnostic]:
    """A route is shadowed by the first earlier route whose REQUIREMENTS are absent or ``true``
    (matches every job), equal to its own (normalised text), or — proved on the texts — a subset
    of its own ``&&`` clauses (earlier ``A``, later ``A && B``: every job the later route matches,
    the earlier one matches first; issue 29). One pass: the first route of each normalised text
    and of each clause set is kept in a dict, so the cost grows with the routes (and, for a route
    of several clauses, the subsets of its clauses), not their square."""
    out: list[Diagnostic] = []
    rule = ("round-robin selection shares jobs between them" if table.knobs.round_robin else
            "first match wins: JOB_ROUTER_ROUND_ROBIN_SELECTION is false")
    level = "info" if table.knobs.round_robin else "warning"
    first: dict[str, tuple[int, Route]] = {}  # normalised REQUIREMENTS -> its first route (position, route)
    by_set: dict[frozenset[str], tuple[int, Route]] = {}  # clause set -> its first route
    for i, route in enumerate(table.routes):
        key = _normal(route.requirements, getattr(route.transform, "requirements_expr", None))
        found = [(first[k], k) for k in {"true", key} if k in first]
        clauses = clause_set(key)
        if found:
            (_, prev), prev_key = min(found, key=lambda f: f[0][0])
            what = ("has the same REQUIREMENTS" if prev_key == key and prev_key != "true" else
                    "has no REQUIREMENTS (matches every job)" if not prev.requirements else
                    "has REQUIREMENTS true (matches every job)")
        elif len(clauses) > 1 or (clauses and clauses != {key}):
            subs = [(by_set[c], c) for c in _subsets(clauses) if c in by_set]
            if subs:
                (_, prev), sub = min(subs, key=lambda f: f[0][0])
                what = ("has the same REQUIREMENTS clauses" if sub == clauses else
                        f"requires only some of its clauses, {prev.requirements.strip()}, so it matches every "
                        f"job {route.name} matches")
                found = True
        if found:
            out.append(_diag(level, f"route {route.name} is shadowed: {prev.name}, earlier in the route order, "
                             f"{what}; {route.name} gets such jobs only while {prev.name} is not accepting "
                             f"({rule})", route))
        first.setdefault(key, (i, route))
        if clauses:
            by_set.setdefault(clauses, (i, route))
    return out


def lint_umbrella(table: RoutingTable) -> list[Diagnostic]:
    """The router's candidate query with every route that can accept jobs in it (as when the router
    starts): too many distinct REQUIREMENTS and it is too deep to evaluate, so no job is ever a
    candidate (candidates.Umbrella; JobRouter::GetCandidateJobs, htcondor.md §1.4)."""
    reqs = tuple(r.requirements for r in table.routes if r.max_jobs > 0)
    umb = umbrella((table.knobs.source_job_constraint or "").strip() or None, reqs)
    return [Diagnostic("warning", f"with every route accepting jobs, {umb.problem}")] if umb.problem else []


def lint_transform_text(text: str, label: str, cfg: Any, route: str | None) -> list[Diagnostic]:
    """``SET``/``DEFAULT`` expressions that will not parse when the transform runs."""
    out: list[Diagnostic] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        start = i
        line = lines[i]
        while line.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line.rstrip()[:-1] + " " + lines[i].strip()
        i += 1
        m = _SET_LINE.match(line)
        if not m or not m.group(3).strip():
            continue
        expr = m.group(3).strip()
        if "$" in expr:
            # only config macros can be judged now; $(MY.x) and the transform's own macros are
            # known only when the transform runs
            if any(n.lower().startswith("my.") or n not in cfg for n in _MACRO_REF.findall(expr)):
                continue
            try:
                expr = cfg.expand(expr)
            except Exception:  # noqa: BLE001  (a bad macro is reported when the transform runs)
                continue
        if C.is_valid_expr(expr):
            continue
        src = cfg.source_of_value_line(label, start + 1) if label.startswith("JOB_ROUTER_") else None
        file, ln = _where(src)
        out.append(Diagnostic("warning", f"{label}: {m.group(1).upper()} {m.group(2)}: the expression does not "
                              "parse; HTCondor logs an error and skips this statement when the transform runs",
                              file, ln, route))
    return out


_LINE_PREFIX = re.compile(r"line (\d+): (.*)", re.DOTALL)


def lint_parse_warnings(transform: Any, label: str, cfg: Any, route: str | None) -> list[Diagnostic]:
    """What the transform parser predicted HTCondor will do differently from what the text seems
    to say (``UNIVERSE docker``, ``SET A, x``…), at the file and line of the statement."""
    out: list[Diagnostic] = []
    for w in getattr(transform, "warnings", ()) or ():
        m = _LINE_PREFIX.match(w)
        src = None
        if m and label.startswith("JOB_ROUTER_"):
            src = cfg.source_of_value_line(label, int(m.group(1)))
        file, ln = _where(src if src is not None else cfg.location(label))
        out.append(Diagnostic("warning", f"{label}: {m.group(2) if m else w}", file, ln, route))
    return out


# -------------------------------------------------------------------- lints that need the config

HTCONDOR_DEFAULT_LIMITS = (100, 50)  # JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE / ..._MAX_IDLE_JOBS_PER_ROUTE
CE_DEFAULT_LIMITS = (10000, 2000)  # HTCondor-CE's 01-ce-router-defaults.conf (htcondor.md §6)


def lint_config_routes(table: RoutingTable, cfg: Any) -> list[Diagnostic]:
    """Lints an admin needs that the table alone cannot tell (issue 29):

    - a route knob defined twice: the config reader keeps the later definition silently
      (``Config.replaced``), so an edit to the first one does nothing;
    - on an HTCondor-CE (its ``CONDORCE_*`` knobs are in the config), routes running with
      HTCondor's default limits (MaxJobs 100, MaxIdleJobs 50) because the CE's defaults
      (10000/2000, ``01-ce-router-defaults.conf``) are not in force.
    """
    out: list[Diagnostic] = []
    replaced = getattr(cfg, "replaced", None) or {}
    for route in table.routes:
        knob = (route.source_label or "").lower()
        earlier = replaced.get(knob)
        if earlier:
            where = ", ".join(f"{s.file}:{s.line}" for s in earlier)
            out.append(_diag("warning", f"route {route.name}: {route.source_label} is defined more than once "
                             f"(also at {where}); HTCondor uses the last definition only, so edits to the "
                             "earlier ones do nothing", route))
    names = getattr(cfg, "names", None)
    on_ce = names is not None and any(n.lower().startswith("condorce_") for n in names())
    knobs = table.knobs
    if on_ce and (knobs.default_max_jobs, knobs.default_max_idle_jobs) == HTCONDOR_DEFAULT_LIMITS:
        at_default = [r.name for r in table.routes
                      if (r.max_jobs, r.max_idle_jobs) == HTCONDOR_DEFAULT_LIMITS]
        if at_default:
            shown = ", ".join(at_default[:5]) + (f" and {len(at_default) - 5} more" if len(at_default) > 5 else "")
            out.append(Diagnostic(
                "warning", f"{'routes' if len(at_default) > 1 else 'route'} {shown} "
                f"{'run' if len(at_default) > 1 else 'runs'} with HTCondor's default limits MaxJobs "
                f"{HTCONDOR_DEFAULT_LIMITS[0]} / MaxIdleJobs {HTCONDOR_DEFAULT_LIMITS[1]}: this is an HTCondor-CE "
                f"config (CONDORCE_* knobs), whose defaults are {CE_DEFAULT_LIMITS[0]} / {CE_DEFAULT_LIMITS[1]} "
                "(JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE, JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE in "
                "01-ce-router-defaults.conf), but those are not set here", None, None, at_default[0]))
    return out
