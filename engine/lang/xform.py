"""HTCondor's transform language ("xform"): ``JOB_ROUTER_ROUTE_<name>``,
``JOB_ROUTER_TRANSFORM_<name>`` and ``condor_transform_ads`` rules (htcondor.md §1.3).

Parsing lives in :mod:`engine.lang.xform_parse`, application in :mod:`engine.lang.xform_apply`; this module
is the public face.

Design decisions and invariants:

- A :class:`Transform` is immutable after parsing; applying it never changes it. The caller owns
  the :class:`MacroSet`, so the pre-route, route and post-route transforms of one job can share
  macro variables (``$(TargetUniverse)`` set by a route is visible to a post-route transform).
- ``REQUIREMENTS`` is evaluated with the ad as MY and no TARGET (``MacroStreamXFormSource::matches``):
  true or a non-zero number matches, anything else (undefined, error, strings) does not, and a
  transform without requirements matches everything. Its text is not macro-expanded.
- ``UNIVERSE`` only records the target universe; it never edits the ad.
- :meth:`Transform.apply` is a single application (what the router does); ``TRANSFORM``
  iteration (condor_transform_ads) is not modelled; see :mod:`engine.lang.xform_iter`.
- A macro loop (``A = $(B)``, ``B = $(A)``, in the transform or the config) is found when the
  table loads (:meth:`Transform.macro_loops`, run without a job ad like :meth:`macro_value`): at
  run time HTCondor would expand it forever, RouteDeck fails the job's transform; either way the
  config is wrong, and the loader names every macro of the cycle at its ``file:line``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from engine import classad as ca
from engine.lang import macros as mx
from engine.lang.xform_apply import XFORM_BASIC_DEFAULTS, XFORM_DEFAULTS, MacroSet, Run
from engine.lang.xform_parse import Statement, XformError, parse, universe_number

if TYPE_CHECKING:
    from engine.lang.config import Config

__all__ = ["MacroLoop", "MacroSet", "Statement", "Transform", "XformError", "parse_transform", "universe_number"]


@dataclass(frozen=True)
class MacroLoop:
    """A macro loop a transform meets (:meth:`Transform.macro_loops`)."""

    line: int  # the transform line of the first statement that expands it
    chain: tuple[str, ...]  # the cycle as referenced, first name repeated (MacroError.chain)
    local: Mapping[str, int]  # macro (lower case) -> transform line of its assignment; others are the config's


@dataclass
class Transform:
    name: str | None
    requirements: str | None
    universe: int | None
    text: str
    statements: list[Statement] = field(default_factory=list)
    local_macros: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # load-time warnings (bad regex, universe)
    transform_args: str | None = None
    requirements_line: int = 0
    declared_name: str | None = None  # the NAME statement, even when the caller chose the name
    transform_items: list[str] = field(default_factory=list)  # inline TRANSFORM … from ( items )
    # REQUIREMENTS as the parser parsed it: matching a job evaluates this tree instead of parsing
    # the text again per job (the parse cache is smaller than a table of 100,000 routes)
    requirements_expr: ca.Expr | None = field(default=None, repr=False, compare=False)

    def requirements_tree(self) -> ca.Expr | None:
        """The parsed REQUIREMENTS (None without them), parsed at most once per transform."""
        if not self.requirements:
            return None
        if self.requirements_expr is None or self.requirements_expr.text != self.requirements.strip():
            self.requirements_expr = ca.parse_expr(self.requirements)
        return self.requirements_expr

    def matches(self, ad: Any, now: float | None = None, macros: MacroSet | None = None,
                config: "Config | None" = None) -> bool:
        """Does ``ad`` ({name: text} or a classad2 ad) satisfy REQUIREMENTS? (htcondor.md §1.4)"""
        if not self.requirements:
            return True
        my = ca.make_ad(ad) if isinstance(ad, Mapping) and not hasattr(ad, "lookup") else ad
        return ca.is_true(ca.evaluate(self.requirements_tree(), my=my, now=now))

    def apply(self, ad: dict[str, str], *, macros: MacroSet | None = None, config: "Config | None" = None,
              now: float | None = None, router: bool = False, observer: Any = None,
              rejected: list[str] | None = None) -> list[str]:
        """Edit ``ad`` in place; returns warnings. Raises :class:`XformError` when HTCondor's
        transform would fail (an invalid ``if`` condition, ``error :``, a macro that cannot expand).
        ``router``: the Job Router's macro defaults (``XFormHash(Basic)``), else the iterating ones.
        ``observer``: see ``Run.observer`` (tracing). ``rejected`` receives the attribute names
        HTCondor would insert but the schedd refuses (left out of ``ad``)."""
        run = Run(ad, MacroSet() if macros is None else macros, config, now,
                  XFORM_BASIC_DEFAULTS if router else XFORM_DEFAULTS)
        run.observer = observer
        run.run(self.statements)
        if rejected is not None:
            rejected.extend(run.rejected)
        return run.warnings

    def macro_value(self, name: str, config: "Config | None" = None) -> str | None:
        """A route-level macro (``MaxJobs``, ``GridResource``…) as the body defines it, expanded
        without a job ad (the router reads these once at config time)."""
        return self.macro_reader(config)(name)

    def macro_reader(self, config: "Config | None" = None) -> Callable[[str], str | None]:
        """:meth:`macro_value` for many names of one body: the body runs once (no job ad, so
        every name sees the same macros) and each call expands one name from that run. A run
        that fails raises the same error for every name, as separate ``macro_value`` calls do."""
        run = Run(None, MacroSet(), config, None)
        try:
            run.run(self.statements, validate_only=True)
        except Exception as exc:  # noqa: BLE001  (re-raised for each name, as macro_value would)
            failed = exc

            def fail(name: str) -> str | None:
                raise failed

            return fail

        def value(name: str) -> str | None:
            raw = run.macros.get(name)
            if raw is None:
                return None
            try:
                return mx.expand(raw, run.lookup, env=config.env if config else None, warnings=run.warnings)
            except mx.MacroError as exc:
                raise XformError(0, 0, exc.message) from None

        return value

    def macro_loops(self, config: "Config | None" = None) -> list["MacroLoop"]:
        """The macro loops met by the statements whose text a run expands (SET …, if, error,
        warning), each once, without a job ad (``$(MY.x)`` is empty here). A body without ``$``
        and without ``if`` expands nothing and its run cannot fail: it is not run."""
        if "$" not in self.text and not any(st.kind == "if" for st in self.statements):
            return []
        lookup, lines = self.static_macros(config)
        out: list[MacroLoop] = []
        seen: set[frozenset[str]] = set()
        for st in self.statements:
            if st.kind not in ("action", "if", "error", "warning"):
                continue
            for text in (st.text,) if st.kind == "if" else (st.attr, st.rhs):
                if "$" not in text:
                    continue
                try:
                    mx.expand(text, lookup, env=config.env if config else None, errors=[])
                except mx.MacroError as exc:
                    key = frozenset(n.lower() for n in exc.chain)
                    if exc.chain and key not in seen:
                        seen.add(key)
                        out.append(MacroLoop(st.line, exc.chain, lines))
        return out

    def static_macros(self, config: "Config | None" = None) -> tuple[mx.Lookup, dict[str, int]]:
        """(macro lookup, macro -> line of its assignment) after a run without a job ad: the
        transform's own macros, the router's defaults, then the config (as at run time)."""
        run = Run(None, MacroSet(), config, None, XFORM_BASIC_DEFAULTS)
        run.run(self.statements, validate_only=True)
        return run.lookup, dict(run.lines)

    def macro_names(self, config: "Config | None" = None) -> list[str]:
        """Names of the macros the body assigns when run without a job ad."""
        run = Run(None, MacroSet(), config, None)
        run.run(self.statements, validate_only=True)
        return list(run.macros)


def parse_transform(text: str, name: str | None = None) -> Transform:
    """Parse transform text; raises :class:`XformError` (line/column relative to ``text``).

    ``name`` (e.g. the ``JOB_ROUTER_ROUTE_<name>`` suffix) wins over a ``NAME`` statement,
    which stays available as ``declared_name`` (the router warns when they differ, §1.3)."""
    parsed = parse(text)
    return Transform(
        name=name if name is not None else parsed.name,
        requirements=parsed.requirements,
        universe=parsed.universe,
        text=text,
        statements=parsed.statements,
        local_macros=parsed.local_macros,
        warnings=parsed.warnings,
        transform_args=parsed.transform_args,
        requirements_line=parsed.requirements_line,
        declared_name=parsed.name,
        transform_items=parsed.transform_items,
        requirements_expr=parsed.requirements_expr,
    )
