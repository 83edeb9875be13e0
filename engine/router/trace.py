"""Transform tracer: the routed ad built step by step (issue 13 item 1).

HTCondor's order for one routing attempt (htcondor.md §1.3, ``JobRoute::ApplyRoutingJobEdits``
and §1.6): ``VanillaToGrid`` on the copy, then each pre-route transform whose ``REQUIREMENTS``
match the ad *as it is then*, the route's transform, each post-route transform likewise, then
the router's own attributes (``RoutedFromJobId``, ``RoutedBy``, ``RouteName``). The tracer does
not re-implement any of that: :func:`engine.router.routed_copy.build_routed_ad` calls it at each
step, and the transform engine's statement loop (``Run.observer`` in
``engine/lang/xform_apply.py``) calls it after every statement with the ad before it. So the
trace is the real pipeline, observed.

Per statement it records the ad's diff (attribute set / changed / deleted / renamed), the macro
a ``name = value`` line assigned, the text after ``$()`` expansion when it differs, ``if``
branches taken or not, statements skipped and why, and the warnings the statement produced.
Invariant: applying the recorded diffs of every block, in order, to the source ad gives the
routed ad (checked in the tests).

Lines: a statement's ``line`` counts from the first line of its knob's value (the transform
parser's numbering); given the config, the tracer also records the config file and line it comes
from (``file``/``file_line``), through ``Config.source_of_value_line`` — the mapping ``check``'s
transform lints use (``engine/router/lints.py``). A ClassAd-syntax route's transform is the
converted text, so only its knob's own location is known (the block's ``file``/``file_line``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from engine.router.routed_copy import build_routed_ad, job_flags
from engine.router.table import RoutingError
from engine.classad import make_ad

ENVELOPE = ("NAME", "UNIVERSE", "REQUIREMENTS", "TRANSFORM")


@dataclass
class Change:
    kind: str  # "set" | "changed" | "deleted" | "renamed"
    attr: str
    old: str | None = None
    new: str | None = None
    new_name: str | None = None  # renamed: the new attribute name

    def line(self) -> str:
        if self.kind == "set":
            return f"set {self.attr} = {self.new}"
        if self.kind == "changed":
            return f"changed {self.attr}: {self.old} -> {self.new}"
        if self.kind == "deleted":
            return f"deleted {self.attr} (was {self.old})"
        return f"renamed {self.attr} -> {self.new_name} ({self.new})"

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in (("kind", self.kind), ("attr", self.attr), ("old", self.old), ("new", self.new),
                                  ("new_name", self.new_name)) if v is not None}


@dataclass
class StatementEvent:
    line: int
    text: str
    status: str  # "applied" | "no change" | "branch taken" | "branch not taken" | "skipped: …" | "macro"
    changes: list[Change] = field(default_factory=list)
    macro: tuple[str, str] | None = None  # name = value assigned
    expanded: str | None = None  # the statement after $() expansion, when it differs
    warnings: list[str] = field(default_factory=list)
    file: str | None = None  # the config file and line the statement comes from, when known
    file_line: int | None = None

    def where(self, short: bool = False) -> str:
        """``file:line`` in the config when known (``short``: the file's base name), else
        ``line N`` (of the knob's value)."""
        if not (self.file and self.file_line):
            return f"line {self.line}"
        return f"{os.path.basename(self.file) if short else self.file}:{self.file_line}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line, "file": self.file, "file_line": self.file_line,
                               "text": self.text, "status": self.status,
                               "changes": [c.to_json() for c in self.changes]}
        if self.macro:
            out["macro"] = {"name": self.macro[0], "value": self.macro[1]}
        if self.expanded is not None:
            out["expanded"] = self.expanded
        if self.warnings:
            out["warnings"] = self.warnings
        return out


@dataclass
class Block:
    step: str  # "VanillaToGrid" | "pre-route transform" | "route" | "post-route transform" | "router attributes"
    name: str
    status: str  # "applied" | "not applied: …" | "failed: …"
    statements: list[StatementEvent] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)  # the block's net diff
    knob: str | None = None  # the config knob the transform is read from
    file: str | None = None  # where that knob is defined
    file_line: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "name": self.name, "status": self.status, "knob": self.knob,
                "file": self.file, "file_line": self.file_line,
                "statements": [s.to_json() for s in self.statements],
                "changes": [c.to_json() for c in self.changes]}


def diff(before: dict[str, str], after: dict[str, str], renames: bool = False) -> list[Change]:
    """Attribute changes from ``before`` to ``after`` (names compare case-insensitively). With
    ``renames``, a deleted and a new attribute holding the same text are one rename."""
    lb = {k.lower(): k for k in before}
    la = {k.lower(): k for k in after}
    out: list[Change] = []
    gone = [lb[k] for k in lb if k not in la]
    new = [la[k] for k in la if k not in lb]
    if renames:
        for g in list(gone):
            match = next((n for n in new if after[n] == before[g]), None)
            if match is not None:
                out.append(Change("renamed", g, before[g], after[match], match))
                gone.remove(g)
                new.remove(match)
    for k in sorted(set(lb) & set(la)):
        if before[lb[k]] != after[la[k]]:
            out.append(Change("changed", la[k], before[lb[k]], after[la[k]]))
    out += [Change("deleted", g, before[g]) for g in gone]
    out += [Change("set", n, None, after[n]) for n in new]
    return out


class Tracer:
    """Receives the pipeline's calls for one routing attempt; ``blocks`` is the trace.
    ``config`` and ``route`` (optional) let it name the config file:line of every statement."""

    def __init__(self, config: Any = None, route: Any = None) -> None:
        self.config = config
        self.route = route
        self._label: str | None = None
        self._lines = False  # the knob's value lines are the statements' lines
        self.blocks: list[Block] = []
        self._ad: dict[str, str] | None = None
        self._before: dict[str, str] = {}
        self._run: Any = None
        self._warned = 0

    # ---------------------------------------------------------------- called by build_routed_ad

    def begin(self, step: str, name: str, ad: dict[str, str], skipped: str | None) -> None:
        self._close()
        self._ad = ad
        self._before = dict(ad)
        block = Block(step, name, skipped or "applied")
        self._label, self._lines = self._knob(step, name)
        if self._label and self.config is not None:
            src = self.config.location(self._label)
            if src is not None:
                block.knob, block.file, block.file_line = self._label, src.file, src.line
        self.blocks.append(block)

    def _knob(self, step: str, name: str) -> tuple[str | None, bool]:
        """The knob a step's transform is read from, and whether its lines map to the knob's."""
        if step in ("pre-route transform", "post-route transform"):
            return f"JOB_ROUTER_TRANSFORM_{name}", True
        if step == "route" and self.route is not None:
            label = getattr(self.route, "source_label", None) or None
            return label, bool(label) and getattr(self.route, "syntax", "") == "transform"
        return None, False

    block = begin  # a step that is not a transform (VanillaToGrid, the router's attributes)

    def failed(self, message: str) -> None:
        if self.blocks:
            self.blocks[-1].status = f"failed: {message} (the routing attempt fails)"
        self._close()

    def end(self, ad: dict[str, str]) -> None:
        self._close()

    def _close(self) -> None:
        if self.blocks and self._ad is not None:
            # no rename pairing here: two attributes holding the same text are not a rename
            self.blocks[-1].changes = diff(self._before, self._ad)
        self._ad = None

    # ---------------------------------------------------------------- called by Run.run (observer)

    def statement(self, st: Any, before: dict[str, str], run: Any) -> None:
        if run is not self._run:
            self._run, self._warned = run, 0
        warnings = list(run.warnings[self._warned:])
        self._warned = len(run.warnings)
        after = run.ad if run.ad is not None else {}
        ev = StatementEvent(st.line, st.text, "applied", warnings=warnings)
        if self._lines and self.config is not None and self._label:
            src = self.config.source_of_value_line(self._label, st.line)
            if src is not None and src.line:
                ev.file, ev.file_line = src.file, src.line
        if st.kind == "if":
            kw = st.keyword.lower() if st.keyword else st.text.split()[0].lower()
            ev.status = "" if kw == "endif" else ("branch taken" if run.ifs.enabled else "branch not taken")
        elif not run.ifs.enabled:
            ev.status = "skipped: in an if/elif/else branch not taken"
        elif st.kind == "assign":
            ev.status = "macro"
            name = st.attr
            value = run.macros.get(name) if hasattr(run.macros, "get") else None
            ev.macro = (name, value if value is not None else "")
        elif getattr(st, "invalid", False):
            ev.status = "skipped: HTCondor skips this statement"
        elif st.kind == "action" and st.keyword in ENVELOPE:
            ev.status = "envelope (no edit)"
        elif st.keyword == "EVALMACRO":
            ev.status = "macro"
            value = run.macros.get(st.attr)
            ev.macro = (st.attr, value if value is not None else "")
            if "$" in (st.rhs or ""):
                ev.expanded = self._expand(st, run)
        else:
            ev.changes = diff(before, after, renames=st.keyword == "RENAME")
            if not ev.changes:
                ev.status = "no change" + (" (attribute already present)" if st.keyword == "DEFAULT" else "")
            if st.kind == "action" and "$" in (st.rhs or ""):
                ev.expanded = self._expand(st, run)
        self.blocks[-1].statements.append(ev)

    @staticmethod
    def _expand(st: Any, run: Any) -> str | None:
        """The statement's value after ``$()`` expansion, with the macros as they are now."""
        n = len(run.warnings)
        try:
            return run.expand(st.rhs, st)
        except Exception:  # noqa: BLE001  (tracing must never change the outcome)
            return None
        finally:
            del run.warnings[n:]

    def to_json(self) -> list[dict[str, Any]]:
        return [b.to_json() for b in self.blocks]


def format_trace(blocks: list[Block], indent: str = "  ") -> str:
    """The trace as text, one block per step (with its knob and the file:line defining it), the
    statements (at the file's base name:line) and their diffs under it."""
    lines: list[str] = []
    for b in blocks:
        head = f"{b.step} {b.name}".strip() if b.step not in ("VanillaToGrid", "router attributes") else b.step
        origin = f"  ({b.knob}, {b.file}:{b.file_line})" if b.knob and b.file else ""
        lines.append(f"{indent}{head}" + ("" if b.status == "applied" else f"  [{b.status}]") + origin)
        for ev in b.statements:
            status = f"  [{ev.status}]" if ev.status and ev.status not in ("applied", "macro") else ""
            lines.append(f"{indent * 2}{ev.where(short=True)}: {ev.text}{status}")
            if ev.expanded is not None:
                lines.append(f"{indent * 3}expanded: {ev.expanded}")
            if ev.macro is not None:
                lines.append(f"{indent * 3}macro {ev.macro[0]} = {ev.macro[1]}")
            lines.extend(f"{indent * 3}{c.line()}" for c in ev.changes)
            lines.extend(f"{indent * 3}warning: {w}" for w in ev.warnings)
        if not b.statements:
            lines.extend(f"{indent * 2}{c.line()}" for c in b.changes)
    return "\n".join(lines) + "\n"


def trace_route(table: Any, route_name: str, attrs: dict[str, str], *, now: float,
                source_id: tuple[int, int] = (0, 0)) -> tuple[list[Block], dict[str, str] | None, str | None]:
    """The trace of ``attrs`` built into a routed copy for ``route_name`` — for a job the router
    has routed already (its route is known, the decision is not retaken). Returns (blocks, the
    routed ad or None, the routing error or None); the same ``build_routed_ad`` as a routing attempt."""
    route = table.route(route_name)
    if route is None:
        raise LookupError(f"route {route_name} is not in the routing table")
    tracer = Tracer(table.config, route)
    ad = None

    try:
        ad = build_routed_ad(table, route, attrs, now=now, source_id=source_id, trace=tracer,
                             **job_flags(route, make_ad(attrs), now))
    except RoutingError as exc:
        return tracer.blocks, None, str(exc)
    return tracer.blocks, ad, None
