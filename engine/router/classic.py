"""The ClassAd route syntax (HTCondor ≤ 24.9) and its conversion to the transform syntax.

What this module reproduces (htcondor.md §1.1, §1.2, §6 "What the converter output shows"; the
code read is ``initRouterDefaultsAd``, ``JobRouter::ParseRoutingEntries``, ``JobRoute::ParseNext``
and ``ConvertClassadJobRouterRouteToXForm`` of the last release that still had the syntax):

- ``JOB_ROUTER_DEFAULTS`` is one ad; text that does not start with ``[`` is wrapped in ``[ … ]``.
  Several ads in a row are merged only with ``MERGE_JOB_ROUTER_DEFAULT_ADS``; the merge loop skips
  only whitespace and ``]`` between ads, so a comment there is a parse error (as in HTCondor). A
  parse error disables routing.
- Each entry of ``JOB_ROUTER_ENTRIES`` / ``_FILE`` / ``_CMD`` is the defaults ad updated with the
  entry. Entries are labelled ``entries:N`` / ``file:N`` / ``cmd:N`` (N counts every ad, malformed
  ones too). A malformed entry is reported and skipped; the walk goes on after its ``]``, or,
  when its brackets never balance, at the next ``[`` (8.8), so one bad entry never hides the
  ones after it.
- Conversion: ``copy_*`` → ``COPY``, ``delete_*`` → ``DELETE``, ``set_*`` → ``SET`` (old-syntax
  unparse, not evaluated), ``eval_set_*`` → ``EVALSET`` (flattened against the route ad, TARGET→MY,
  when it refers to route attributes); each block sorted case-insensitively, blocks in that order.
  ``Requirements`` is flattened and loses its ``TARGET.`` prefixes; the expression attributes of
  ``ROUTER_ATTR_FLAGS`` are flattened with TARGET→MY; other attributes become macro lines
  (literal strings unquoted, except ``GridResource``). ``Name`` → ``NAME``, ``TargetUniverse`` →
  ``UNIVERSE``.
- Decision (spec, seed manual): a route with no ``Name`` is named after its ``GridResource``
  (8.9.7–24.9 would have called it ``entries:N``). With neither, HTCondor keeps the route under its
  source label (``JobRouter.cpp`` 24.0 ``ParseRoutingEntries`` passes ``entries:N`` as the name and
  the converter replaces it only from ``Name``): so does RouteDeck, with a warning.
- Flattening is HTCondor's ``FlattenAndInline``: a route attribute whose value does not fold is
  inlined (its own flattened text spliced in, as HTCondor's unparser writes it, without added
  parentheses), so the "temporarily SET … DELETE" block appears only for what cannot be inlined
  (an attribute holding an ad). Left as a known difference: classad2 and HTCondor may order or
  fold the operands of a commutative operator differently across an inlined attribute.

The matching rule of this syntax is kept by the caller: the merged route ad is MY, the job TARGET.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from engine import classad as C
from engine import classad_ads as CA

# RouterAttrItems of xform_utils.cpp: attributes with special unparse treatment.
# value: (flatten, strip TARGET., TARGET.->MY.)
ROUTER_ATTR_FLAGS: dict[str, tuple[bool, bool, bool]] = {
    "editjobinplace": (True, False, True),
    "failureratethreshold": (True, False, True),
    "jobfailuretest": (True, False, True),
    "jobshouldbesandboxed": (True, False, True),
    "overrideroutingentry": (True, False, True),
    "sharedx509userproxy": (True, False, True),
    "usesharedx509userproxy": (True, False, True),
    "requirements": (True, True, False),
}


@dataclass
class ClassicProblem:
    """A problem found in ClassAd route text. ``line`` is 1-based within that text."""

    level: str  # "error" | "warning" | "info"
    message: str
    line: int | None = None
    route: str | None = None


@dataclass
class ClassicRoute:
    """One ClassAd route: the merged route ad and its conversion to transform text."""

    name: str
    source_label: str
    route_ad: Any  # classad2 ad: defaults updated with the entry
    transform_text: str
    requirements: str | None  # the route ad's own Requirements (old syntax), matched MY=route
    override: bool | None  # OverrideRoutingEntry; None when unset
    line: int  # 1-based line of the entry's '[' within its text
    name_from: str = "Name"  # "Name" | "GridResource" | "knob" | "source" (the label, as HTCondor)


@dataclass
class DefaultsResult:
    ad: Any
    ok: bool
    problems: list[ClassicProblem] = field(default_factory=list)
    ads_seen: int = 0


def parse_defaults(text: str | None, merge: bool) -> DefaultsResult:
    """Parse ``JOB_ROUTER_DEFAULTS`` as ``initRouterDefaultsAd`` did."""
    empty = CA.parse_new_ad("[]")
    if text is None or not text.strip():
        return DefaultsResult(empty, True)
    src = text
    stripped = src.lstrip()
    if not stripped.startswith("["):
        src = "[" + stripped + "]"
        merge = False
    first = next(iter(CA.iter_new_ads(src)), None)
    if first is None or first[2] is None:
        line = CA.line_of_offset(src, first[0]) if first else 1
        why = first[3] if first else "no ClassAd found"
        return DefaultsResult(empty, False, [ClassicProblem(
            "error", f"JOB_ROUTER_DEFAULTS does not parse ({why}); HTCondor disables job routing", line)])
    ad, pos, seen = first[2], first[1], 1
    extra: list[int] = []
    while True:
        while pos < len(src) and (src[pos].isspace() or src[pos] == "]"):
            pos += 1
        if pos >= len(src):
            break
        if src[pos] != "[":
            if not merge:
                extra.append(pos)
                break
            return DefaultsResult(empty, False, [ClassicProblem(
                "error", "JOB_ROUTER_DEFAULTS: text between merged ads is not an ad (HTCondor's merge "
                "loop skips only whitespace, so a comment there fails too); HTCondor disables job routing",
                CA.line_of_offset(src, pos))], seen)
        nxt = next(iter(CA.iter_new_ads(src[pos:])), None)
        if nxt is None or nxt[2] is None:
            if not merge:
                extra.append(pos)
                break
            return DefaultsResult(empty, False, [ClassicProblem(
                "error", "JOB_ROUTER_DEFAULTS: a merged ad does not parse; HTCondor disables job routing",
                CA.line_of_offset(src, pos))], seen)
        seen += 1
        if merge:
            ad.update(nxt[2])
        else:
            extra.append(pos)
        pos += nxt[1]
    problems = []
    if extra and not merge:
        problems.append(ClassicProblem(
            "warning", "JOB_ROUTER_DEFAULTS has text after its first ad, which is ignored because "
            "MERGE_JOB_ROUTER_DEFAULT_ADS is false", CA.line_of_offset(src, extra[0])))
    return DefaultsResult(ad, True, problems, seen)


def parse_entries(text: str, defaults: Any, label: str) -> tuple[list[ClassicRoute], list[ClassicProblem]]:
    """Parse ``JOB_ROUTER_ENTRIES``-style text (``label`` is ``entries``, ``file`` or ``cmd``)."""
    routes: list[ClassicRoute] = []
    problems: list[ClassicProblem] = []
    line, counted = 1, 0  # the line of offset ``counted``; entries come in text order
    for index, (start, _end, entry, error) in enumerate(_walk_entries(text)):
        source = f"{label}:{index}"
        line += text.count("\n", counted, start)  # not from the top for each of 100,000 entries
        counted = start
        if entry is None:
            problems.append(ClassicProblem(
                "error", f"malformed route entry {source} ignored: {error}", line))
            continue
        route_ad = C.copy_ad(defaults)
        route_ad.update(entry)
        route, found = build_route(route_ad, source, line)
        problems += found
        if route:
            routes.append(route)
    return routes, problems


def _walk_entries(text: str):
    """``CA.iter_new_ads``, going on after the two errors that end its walk (an ad whose brackets
    do not balance, text that is not an ad): as HTCondor 8.8 did (htcondor.md §1.2), the walk
    jumps to the next ``[``, so one malformed entry does not hide the entries after it."""
    base = 0
    while True:
        resume = None
        for start, end, ad, error in CA.iter_new_ads(text[base:]):
            start, end = start + base, end + base
            if ad is None and end == len(text):  # the walk stops here: go on at the next '['
                nxt = text.find("[", start + 1)
                resume = nxt if nxt >= 0 else None
                if error and error.startswith("unterminated") and resume is not None:
                    error = "its brackets or parentheses do not balance; skipped to the next '['"
                    end = resume
            yield start, end, ad, error
        if resume is None:
            return
        base = resume


def parse_single_knob(text: str, knob_name: str) -> tuple[ClassicRoute | None, list[ClassicProblem]]:
    """A ClassAd written in ``JOB_ROUTER_ROUTE_<name>`` (8.9.7–24.9): no defaults ad, the knob
    suffix is the name (``JobRoute::ParseNext`` with ``single_route_knob``)."""
    items = list(CA.iter_new_ads(text))
    if not items or items[0][2] is None:
        why = items[0][3] if items else "no ClassAd found"
        return None, [ClassicProblem("error", f"JOB_ROUTER_ROUTE_{knob_name}: ClassAd route does not parse ({why})",
                                     CA.line_of_offset(text, items[0][0]) if items else 1, knob_name)]
    problems = []
    if len(items) > 1:
        problems.append(ClassicProblem("warning", f"JOB_ROUTER_ROUTE_{knob_name} holds more than one ClassAd; "
                                       "only the first is used", CA.line_of_offset(text, items[1][0]), knob_name))
    route, found = build_route(items[0][2], f"JOB_ROUTER_ROUTE_{knob_name}", CA.line_of_offset(text, items[0][0]),
                               knob_name=knob_name)
    problems += found
    return route, problems


def build_route(route_ad: Any, source: str, line: int, knob_name: str | None = None
                ) -> tuple[ClassicRoute | None, list[ClassicProblem]]:
    notes: list[str] = []
    name, text, requirements = convert_route_ad(route_ad, knob_name, notes=notes)
    problems: list[ClassicProblem] = []
    name_from = "Name"
    if knob_name is not None:
        if name and name.lower() != knob_name.lower():
            problems.append(ClassicProblem("warning", f"Name \"{name}\" in JOB_ROUTER_ROUTE_{knob_name} differs from "
                                           f"the knob suffix; the route is named {knob_name}", line, knob_name))
        name, name_from = knob_name, "knob"
    elif not name:
        grid = _string_attr(route_ad, "GridResource")
        if grid:
            name, name_from = grid, "GridResource"
        else:
            # JobRouter.cpp (24.0) ParseRoutingEntries hands the source label to
            # ConvertClassadJobRouterRouteToXForm as the route's name; only a Name attribute replaces it.
            name, name_from = source, "source"
            problems.append(ClassicProblem("warning", f"route entry {source} has neither Name nor GridResource; "
                                           f"HTCondor keeps it under the name \"{source}\"", line, source))
    if name_from != "Name" or knob_name is not None:
        # the converted text must carry the name the route really has
        name2, text, _ = convert_route_ad(route_ad, knob_name, forced_name=name)
    problems += [ClassicProblem("warning", f"route {name} ({source}): {n}", line, name) for n in notes]
    override = None
    if _has(route_ad, "OverrideRoutingEntry"):
        override = C.is_true(C.evaluate("OverrideRoutingEntry", my=route_ad))
    return ClassicRoute(name, source, route_ad, text, requirements, override, line, name_from), problems


def _has(ad: Any, name: str) -> bool:
    return any(k.lower() == name.lower() for k in ad.keys())


def _lookup(ad: Any, name: str) -> Any:
    for k in ad.keys():
        if k.lower() == name.lower():
            return ad.lookup(k)
    return None


def _string_attr(ad: Any, name: str) -> str | None:
    if not _has(ad, name):
        return None
    v = C.evaluate(C.parse_expr(name), my=ad)
    return v if isinstance(v, str) else None


_IDENT = re.compile(r"(?<![\w.])(?:(MY)\s*\.\s*)?([A-Za-z_][\w]*)(?![\w.(])(?!\s*\()", re.IGNORECASE)
_INLINE_DEPTH = 32


def _flatten_inline(ad: Any, tree: Any, depth: int = 0, seen: frozenset[str] = frozenset(),
                    notes: list[str] | None = None) -> str:
    """Old-syntax text of ``ClassAd::FlattenAndInline(tree)`` in the route ad (classad
    attrrefs.cpp ``AttributeReference::_Flatten``): classad2's ``flatten`` folds what it can and
    leaves a reference to an attribute whose value does not fold; HTCondor's inline mode puts that
    attribute's own flattened expression there instead (recursively; an attribute holding an ad is
    not inlined). The text is spliced as HTCondor's unparser writes the inlined tree: without added
    parentheses. Bounded by ``_INLINE_DEPTH`` and by a cycle check."""
    text = C.unparse_tree_old(C.flatten_tree(ad, tree))
    refs = {r.lower() for r in C.internal_refs(ad, tree)} - seen
    if not refs or depth >= _INLINE_DEPTH:
        return text
    inlined: dict[str, str] = {}
    for low in refs:
        sub = _lookup(ad, low)
        if sub is None or C.unparse_tree_old(sub).lstrip().startswith("["):
            continue
        inlined[low] = _flatten_inline(ad, sub, depth + 1, seen | {low}, notes)

    def splicer(parens: bool):
        def splice(m: re.Match[str]) -> str:
            name = m.group(2).lower()
            if name in ("true", "false", "undefined", "error", "is", "isnt", "my", "target") or name not in inlined:
                return m.group(0)
            return f"({inlined[name]})" if parens and _needs_parens(inlined[name]) else inlined[name]
        return splice

    def spliced(parens: bool) -> str:
        fn = splicer(parens)
        return "".join(chunk if is_str else _IDENT.sub(fn, chunk) for is_str, chunk in C.string_chunks(text))

    out = spliced(False)
    if notes is not None and inlined:
        meant = spliced(True)
        try:
            same = C.unparse_old(C.parse_expr(out)) == C.unparse_old(C.parse_expr(meant))
        except C.ClassAdError:
            same = False
        if not same:
            notes.append(f"HTCondor's converter inlines {', '.join(sorted(inlined))} without parentheses "
                         f"(FlattenAndInline + the unparser), so {text} becomes {out}, which does not read as "
                         f"{meant}; put parentheses in the route attribute's own expression")
    return out


_OPERATOR_CHARS = set("+-*/%<>=!&|?:^~")


def _needs_parens(text: str) -> bool:
    """Does ``text`` have an operator outside brackets and strings (so splicing it into a larger
    expression without parentheses can regroup it)? ``(…)`` around the whole text counts as none."""
    depth = 0
    for is_str, chunk in C.string_chunks(text):
        if is_str:
            continue
        for ch in chunk:
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif depth == 0 and ch in _OPERATOR_CHARS:
                return True
    return False


def _unparse_special(ad: Any, tree: Any, flags: tuple[bool, bool, bool], notes: list[str] | None = None) -> str:
    flatten, untarget, mytarget = flags
    text = _flatten_inline(ad, tree, notes=notes) if flatten else C.unparse_tree_old(tree)
    if untarget:
        text = C.rewrite_scope_prefix(text, "TARGET", "")
    if mytarget:
        text = C.rewrite_scope_prefix(text, "TARGET", "MY")
    return text


def _internal_refs_of_text(ad: Any, text: str) -> set[str]:
    try:
        tree = C.parse_expr(text).tree
    except C.ClassAdError:
        return set()
    return set(C.internal_refs(ad, tree))


def convert_route_ad(route_ad: Any, knob_name: str | None = None, forced_name: str | None = None,
                     notes: list[str] | None = None) -> tuple[str, str, str | None]:
    """``ConvertClassadJobRouterRouteToXForm``: returns (name from the ad, transform text, the route
    ad's own Requirements in old syntax or None)."""
    name = ""
    target_universe = 0
    requirements = ""
    raw_requirements: str | None = None
    assignments: dict[str, tuple[str, str]] = {}
    string_assignments: set[str] = set()
    copy_cmds: dict[str, tuple[str, str]] = {}
    delete_cmds: dict[str, tuple[str, str]] = {}
    set_cmds: dict[str, tuple[str, str]] = {}
    evalset_cmds: dict[str, tuple[str, str]] = {}
    evalset_myrefs: set[str] = set()

    for key in list(route_ad.keys()):
        low = key.lower()
        tree = route_ad.lookup(key)
        if low.startswith("copy_"):
            value = C.evaluate(C.parse_expr(key), my=route_ad)
            if isinstance(value, str):
                copy_cmds.setdefault(low[5:], (key[5:], value))
        elif low.startswith("delete_"):
            delete_cmds.setdefault(low[7:], (key[7:], ""))
        elif low.startswith("set_"):
            rhs = C.unparse_tree_old(tree)
            if rhs:
                set_cmds[low[4:]] = (key[4:], rhs)
        elif low.startswith("eval_set_"):
            rhs = C.unparse_tree_old(tree)
            if rhs:
                myrefs = set(C.internal_refs(route_ad, tree))
                if myrefs:
                    rhs = _unparse_special(route_ad, tree, (True, False, True), notes)
                    myrefs = _internal_refs_of_text(route_ad, rhs)
                evalset_cmds[low[9:]] = (key[9:], rhs)
                evalset_myrefs |= {r.lower() for r in myrefs}
        elif low == "name":
            value = C.evaluate(C.parse_expr(key), my=route_ad)
            if isinstance(value, str):
                name = value
        elif low == "targetuniverse":
            value = C.as_int(C.evaluate(C.parse_expr(key), my=route_ad))
            if value is not None:
                target_universe = value
        elif low == "gridresource":
            rhs = C.unparse_tree_old(tree)
            if rhs:
                assignments[low] = (key, rhs)
                string_assignments.add(low)
        elif low == "requirements":
            raw_requirements = C.unparse_tree_old(tree)
            requirements = _unparse_special(route_ad, tree, ROUTER_ATTR_FLAGS[low], notes)
        else:
            is_string = True
            flags = ROUTER_ATTR_FLAGS.get(low)
            if flags:
                rhs = _unparse_special(route_ad, tree, flags, notes)
            else:
                literal = C.literal_string(tree)
                if literal is not None:
                    rhs = literal
                else:
                    is_string = False
                    rhs = C.unparse_tree_old(tree)
            if rhs:
                assignments[low] = (key, rhs)
                if is_string:
                    string_assignments.add(low)

    shown_name = forced_name if forced_name is not None else name
    lines = [f"# autoconversion of route '{shown_name}' from old route syntax"]
    if shown_name:
        lines.append(f"NAME {shown_name}")
    if target_universe:
        lines.append(f"UNIVERSE {target_universe}")
    if requirements:
        lines.append(f"REQUIREMENTS {requirements}")
    lines.append("")
    for _low, (attr, rhs) in sorted(assignments.items()):
        lines.append(f"{attr} = {rhs}")

    def block(title: str, cmds: dict[str, tuple[str, str]], fmt: str) -> None:
        if cmds:
            lines.extend(["", title])
            for _low, (attr, rhs) in sorted(cmds.items()):
                lines.append(fmt.format(attr=attr, rhs=rhs).rstrip())

    block("# copy_* rules", copy_cmds, "COPY {attr} {rhs}")
    block("# delete_* rules", delete_cmds, "DELETE {attr}")
    block("# set_* rules", set_cmds, "SET {attr} {rhs}")
    temps = sorted(r for r in evalset_myrefs if r in assignments and r not in set_cmds)
    if temps:
        lines.extend(["", "# temporarily SET attrs because eval_set_ rules refer to them"])
        for r in temps:
            attr = assignments[r][0]
            lines.append(f'SET {attr} "$({attr})"' if r in string_assignments else f"SET {attr} $({attr})")
    block("# eval_set_* rules", evalset_cmds, "EVALSET {attr} {rhs}")
    if temps:
        lines.extend(["", "# remove temporary attrs"])
        lines.extend(f"DELETE {assignments[r][0]}" for r in temps)
    return name, "\n".join(lines) + "\n", raw_requirements


# --------------------------------------------------------------------------------------------
# route order without JOB_ROUTER_ROUTE_NAMES


def _condor_hash(name: str) -> int:
    """``hashFunction(const char*)`` of HTCondor's HashTable.cpp ("Chris Torek's" hash)."""
    i = 0
    for b in name.encode("utf-8"):
        i = (i + (i << 5) + b) & 0xFFFFFFFF
    return i


class CondorHashOrder:
    """The iteration order of HTCondor's ``HashTable<std::string,int>`` (HashTable.h): 7 buckets
    to start, insert at the head of a chain, grow to ``(size+1)*2-1`` once ``elements/size >= 0.8``
    (re-inserting chains head first), iterate buckets in index order. ClassAd routes are matched
    in this order when ``JOB_ROUTER_ROUTE_NAMES`` is not set (htcondor.md §1.2)."""

    def __init__(self) -> None:
        self.size = 7
        self.buckets: list[list[tuple[str, int]]] = [[] for _ in range(self.size)]
        self.count = 0

    def insert(self, name: str, value: int) -> None:
        bucket = self.buckets[_condor_hash(name) % self.size]
        if any(k == name for k, _ in bucket):
            return  # rejectDuplicateKeys
        bucket.insert(0, (name, value))
        self.count += 1
        if self.count / self.size >= 0.8:
            self._resize((self.size + 1) * 2 - 1)

    def lookup(self, name: str) -> int | None:
        for k, v in self.buckets[_condor_hash(name) % self.size]:
            if k == name:
                return v
        return None

    def remove(self, name: str) -> None:
        bucket = self.buckets[_condor_hash(name) % self.size]
        for i, (k, _) in enumerate(bucket):
            if k == name:
                del bucket[i]
                self.count -= 1
                return

    def _resize(self, new_size: int) -> None:
        new: list[list[tuple[str, int]]] = [[] for _ in range(new_size)]
        for chain in self.buckets:
            for item in chain:
                new[_condor_hash(item[0]) % new_size].insert(0, item)
        self.buckets, self.size = new, new_size

    def names(self) -> list[str]:
        return [k for chain in self.buckets for k, _ in chain]
