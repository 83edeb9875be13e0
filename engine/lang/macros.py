"""HTCondor's macro language: ``$()`` expansion, macro functions, ``if`` conditions, line joining.

Shared by the config reader (engine/lang/config.py) and the transform engine (engine/lang/xform*.py).
Written from HTCondor's ``src/condor_utils/config.cpp`` (``next_config_macro``,
``evaluate_macro_func``, ``expand_macro``, ``expand_self_macro``, ``Test_config_if_expression``,
``ConfigIfStack``, ``getline_implementation``).

Design decisions and invariants:

- A macro reference is recognised exactly as HTCondor does: ``$(NAME)`` / ``$(NAME:default)``
  where NAME is identifier characters (``A-Za-z0-9_./``) and the default may also hold
  ``$ ,\\:`` and parenthesised groups; anything else (``$(JobStatus != 3)``) is *not* a macro and
  stays literal. ``$$(...)`` is never expanded (it belongs to the negotiator).
  Function prefixes are case-sensitive (``$ENV``, ``$INT``, ``$F…``); an unknown ``$Name(`` is
  left as is (a warning is recorded when a warnings list is given).
- HTCondor re-scans replaced text; we expand the replacement recursively instead, which is the
  same except for pathological values whose expansion glues onto following text. Recursion is
  bounded: a macro that (indirectly) refers to itself raises :class:`MacroError` naming it
  (HTCondor would loop forever). So is the work: more than ``MAX_REFS`` substitutions or a
  value longer than ``MAX_SIZE`` is a :class:`MacroError` (``A = $(B)$(B)`` forty levels deep
  would otherwise never finish; HTCondor has no such limit).
- ``$(X:default)`` uses the default when X is undefined *or* its raw value is empty.
- ``$(DOLLAR)`` becomes ``$`` once, at the very end of a top-level expansion.
- Nothing here reads the clock. ``$RANDOM_CHOICE``/``$RANDOM_INTEGER`` are made deterministic
  (first item / minimum) with a warning, because the engine must be replayable.
- Macro functions live in :mod:`engine.lang.macro_funcs`; line joining and ``if`` conditions in
  :mod:`engine.lang.macro_cond`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


Lookup = Callable[[str], "str | None"]

MAX_DEPTH = 40
MAX_REFS = 100_000  # substitutions in one top-level expansion ($(A) = $(B)$(B), … doubles each level)
MAX_SIZE = 1 << 20  # characters of one expanded value

_IDCHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./")
_COLON_EXTRA = frozenset("$ ,\\:")
_SPECIAL = ("ENV", "RANDOM_CHOICE", "RANDOM_INTEGER", "CHOICE", "SUBSTR", "INT", "REAL",
            "STRING", "EVAL", "BASENAME", "DIRNAME")
_FNAME_FLAGS = frozenset("pnxdqabfwu")


class MacroError(Exception):
    """A macro that cannot be expanded (cycle, bad function argument)."""

    def __init__(self, message: str, name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.name = name


def is_valid_name(name: str) -> bool:
    return bool(name) and all(c in _IDCHARS for c in name)


# --------------------------------------------------------------------------------------------
# finding references


@dataclass(frozen=True)
class MacroRef:
    func: str  # "" for $(X), else "ENV", "INT", "F", "Fqn", ...
    dollar: int  # index of '$'
    body: int  # index after '('
    colon: int  # index of the ':' starting the default, or -1
    right: int  # index after ')'

    def name(self, text: str) -> str:
        return text[self.body : self.colon if self.colon >= 0 else self.right - 1]

    def default(self, text: str) -> str | None:
        return text[self.colon + 1 : self.right - 1] if self.colon >= 0 else None

    def inner(self, text: str) -> str:
        return text[self.body : self.right - 1]


def _kind(prefix: str) -> str | None:
    """Function name for a ``$prefix(`` (prefix without ``$``), or None when not a macro."""
    if prefix == "":
        return ""
    if prefix.startswith("$"):
        return None
    if prefix[0] == "F" and all(c.lower() in _FNAME_FLAGS for c in prefix[1:]):
        return prefix
    return prefix if prefix in _SPECIAL else None


def find_macro(text: str, pos: int = 0, *, dollar: str = "skip", unknown: list | None = None) -> MacroRef | None:
    """The next macro reference at or after ``pos``.

    ``dollar``: "skip" ignores ``$(DOLLAR)``, "only" finds nothing else, "any" finds all.
    ``unknown`` collects names of ``$NAME(`` prefixes that are not macro functions.
    """
    n = len(text)
    while True:
        d = text.find("$", pos)
        if d < 0:
            return None
        p = d + 1
        if p < n and text[p] == "$":
            p += 1
        while p < n and (text[p].isalnum() or text[p] == "_"):
            p += 1
        if p >= n or text[p] != "(":
            pos = p if p > d + 1 else d + 1
            continue
        prefix = text[d + 1 : p]
        kind = _kind(prefix)
        if kind is None:
            if unknown is not None and re.fullmatch(r"[A-Z][A-Z0-9_]+", prefix):
                unknown.append(prefix)
            pos = p
            continue
        body = p + 1
        colon = -1
        i = body
        ok = True
        if kind in ("", "ENV"):
            while i < n and text[i] != ")":
                c = text[i]
                i += 1
                if c == ":" and colon < 0:
                    colon = i - 1
                    continue
                if colon >= 0:
                    if c == "(":
                        close = text.find(")", i)
                        if close >= 0:
                            i = close + 1
                            continue
                    elif c in _COLON_EXTRA:
                        continue
                if c not in _IDCHARS:
                    ok = False
                    break
        else:
            while i < n and text[i] != ")":
                i += 1
        if not ok or i >= n:
            pos = body
            continue
        ref = MacroRef(kind, d, body, colon, i + 1)
        is_dollar = kind == "" and colon < 0 and text[body:i].upper() == "DOLLAR"
        if (dollar == "skip" and is_dollar) or (dollar == "only" and not is_dollar):
            pos = i
            continue
        return ref


# --------------------------------------------------------------------------------------------
# expansion


@dataclass
class _Ctx:
    lookup: Lookup
    ad_lookup: Lookup | None
    env: Mapping[str, str]
    evaluate: Callable[[str], Any] | None
    warnings: list[str] | None
    stack: list[str] = field(default_factory=list)
    refs: int = 0


def expand(
    text: str,
    lookup: Lookup,
    *,
    ad_lookup: Lookup | None = None,
    env: Mapping[str, str] | None = None,
    evaluate: Callable[[str], Any] | None = None,
    warnings: list[str] | None = None,
) -> str:
    """Expand every macro in ``text``.

    ``lookup(name)`` returns the raw (unexpanded) value of a macro or None. Names starting with
    ``MY.`` fall back to ``ad_lookup(attr)`` (unevaluated attribute text, strings unquoted).
    ``evaluate(expr_text)`` evaluates a ClassAd expression for ``$EVAL``/``$STRING``/``$INT``
    (default: in an empty ad). Raises :class:`MacroError`.
    """
    if "$" not in text:
        return text
    ctx = _Ctx(lookup, ad_lookup, os.environ if env is None else env, evaluate, warnings)
    out = _expand(text, ctx)
    return replace_dollar(out)


def replace_dollar(text: str) -> str:
    while True:
        ref = find_macro(text, 0, dollar="only")
        if ref is None:
            return text
        text = text[: ref.dollar] + "$" + text[ref.right :]


def _expand(text: str, ctx: _Ctx) -> str:
    if "$" not in text:
        return text
    if len(ctx.stack) > MAX_DEPTH:
        raise MacroError(f"macro expansion nested too deeply at $({ctx.stack[-1]})", ctx.stack[-1])
    out: list[str] = []
    pos = 0
    unknown: list[str] | None = [] if ctx.warnings is not None else None
    while True:
        ref = find_macro(text, pos, unknown=unknown)
        if ref is None:
            out.append(text[pos:])
            break
        out.append(text[pos : ref.dollar])
        ctx.refs += 1
        if ctx.refs > MAX_REFS:
            raise MacroError(f"more than {MAX_REFS} macro substitutions (a macro doubling itself?)",
                             ctx.stack[-1] if ctx.stack else None)
        out.append(_evaluate_ref(ref, text, ctx))
        pos = ref.right
    if unknown and ctx.warnings is not None:
        for name in unknown:
            msg = f"unknown macro function ${name}() left as is"
            if msg not in ctx.warnings:
                ctx.warnings.append(msg)
    result = "".join(out)
    if len(result) > MAX_SIZE:
        raise MacroError(f"expansion is longer than {MAX_SIZE} characters", ctx.stack[-1] if ctx.stack else None)
    return result


def _lookup(name: str, ctx: _Ctx) -> str | None:
    raw = ctx.lookup(name)
    if raw is None and ctx.ad_lookup is not None and name[:3].lower() == "my.":
        raw = ctx.ad_lookup(name[3:])
    return raw


def _expand_named(name: str, raw: str, ctx: _Ctx) -> str:
    key = name.lower()
    if key in ctx.stack:
        chain = " -> ".join(ctx.stack[ctx.stack.index(key) :] + [key])
        raise MacroError(f"macro $({name}) refers to itself ({chain})", name)
    ctx.stack.append(key)
    try:
        return _expand(raw, ctx)
    finally:
        ctx.stack.pop()


def _arg_value(arg: str, ctx: _Ctx) -> str:
    """A function argument: a macro name is looked up, otherwise the literal; then expanded."""
    arg = arg.strip()
    raw = _lookup(arg, ctx) if is_valid_name(arg) else None
    if raw is None:
        return _expand(arg, ctx)
    return _expand_named(arg, raw, ctx)


def _evaluate_ref(ref: MacroRef, text: str, ctx: _Ctx) -> str:
    func = ref.func
    if func == "":
        name = ref.name(text)
        raw = _lookup(name, ctx)
        default = ref.default(text)
        if default is not None and not raw:
            return _expand(default, ctx)
        return "" if raw is None else _expand_named(name, raw, ctx)
    if func == "ENV":
        name = ref.name(text)
        val = ctx.env.get(name)
        default = ref.default(text)
        if val is None and default is None:
            val = "UNDEFINED"
        if not val:
            return _expand(default or "", ctx)
        return _expand(val, ctx)
    from engine.lang.macro_funcs import FUNCS  # function-level: macros_funcs imports this module

    inner = ref.inner(text)
    try:
        return FUNCS["F" if func.startswith("F") else func](func, inner, ctx)
    except MacroError:
        raise
    except (ValueError, TypeError, IndexError) as exc:
        raise MacroError(f"${func}({inner}): {exc}", inner) from None


def expand_self(text: str, self_name: str, current: str | None) -> str:
    """Expand only references to ``self_name`` (definition time): ``$(X)``, ``$(X:def)``, ``$F…(X)``."""
    if "$" not in text:
        return text
    key = self_name.lower()
    out: list[str] = []
    pos = 0
    while True:
        ref = find_macro(text, pos)
        if ref is None:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos : ref.dollar])
        name = ref.name(text)
        if ref.func == "" and name.lower() == key:
            default = ref.default(text)
            out.append(current if current else (default if default is not None else ""))
        elif ref.func.startswith("F") and ref.inner(text).strip().lower() == key:
            from engine.lang.macro_funcs import filename_parts

            out.append(filename_parts(ref.func, current or ""))
        else:
            out.append(text[ref.dollar : ref.right])
        pos = ref.right


# --------------------------------------------------------------------------------------------
