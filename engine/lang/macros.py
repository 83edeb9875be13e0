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
  bounded: a macro that (indirectly) refers to itself raises :class:`MacroError` naming it and
  the whole cycle (``chain``; :func:`loop_message` puts each macro's ``file:line`` in the
  message where the caller knows it) (HTCondor would loop forever), and so are nesting (``MAX_DEPTH`` named macros, ``MAX_NEST``
  expansions in all) and work. HTCondor has no such limits (config.cpp ``expand_macro`` loops
  until no macro is left); ours are RouteDeck decisions, set far above any real config: one
  top-level expansion may make at most ``MAX_REFS`` substitutions, hold at most ``MAX_SIZE``
  characters of partial text at any time (summed over every nesting level, so memory stays a
  few MiB) and produce at most ``MAX_WORK`` characters in all (``$SUBSTR(BIG,0,1)`` copies BIG
  each time). ``expand_self`` (definition time) is bounded by ``MAX_SIZE`` too. Budget errors are
  raised with no macro name, so the caller reports them at the knob being expanded.
- Scanning is linear: a ``)`` search is cached, and a ``$(X:default`` scan that ran to a failure
  is remembered, so ``$INT(`` or ``$(x:(`` repeated a hundred thousand times on one line does
  not re-scan the rest of the line each time (HTCondor's scanner does).
- ``$(X:default)`` uses the default when X is undefined *or* its raw value is empty.
- ``$(DOLLAR)`` becomes ``$`` once, at the very end of a top-level expansion.
- Nothing here reads the clock. ``$RANDOM_CHOICE``/``$RANDOM_INTEGER`` are made deterministic
  (first item / minimum) with a warning, because the engine must be replayable.
- Macro functions live in :mod:`engine.lang.macro_funcs`, the error type and the expansion
  context in :mod:`engine.lang.macro_base` (imports go macros → macro_funcs → macro_base only);
  line joining and ``if`` conditions in :mod:`engine.lang.macro_cond`.
- ``expand(..., errors=[...])`` is a transform's expansion: a macro function that fails records
  its error there and gives HTCondor's substitute (``might_EXCEPT``, see macro_base); without
  ``errors`` (the config reader) it raises.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from engine.lang.macro_base import _IDCHARS, Lookup, MacroCtx, MacroError, is_valid_name
from engine.lang.macro_funcs import FUNCS, filename_parts

__all__ = ["Lookup", "MacroError", "MacroRef", "ScanMemo", "expand", "expand_self", "find_macro",
           "is_valid_name", "located", "loop_message", "replace_dollar"]

MAX_DEPTH = 40  # named macros being expanded inside each other
MAX_NEST = 3 * MAX_DEPTH  # all nested expansions (defaults and function arguments too)
MAX_REFS = 100_000  # substitutions in one top-level expansion ($(A) = $(B)$(B), … doubles each level)
MAX_SIZE = 1 << 20  # characters of one expanded value (and of all partial text held at once)
MAX_WORK = 16 * MAX_SIZE  # characters produced by one top-level expansion, all levels counted

_COLON_EXTRA = frozenset("$ ,\\:")
_SPECIAL = ("ENV", "RANDOM_CHOICE", "RANDOM_INTEGER", "CHOICE", "SUBSTR", "INT", "REAL",
            "STRING", "EVAL", "BASENAME", "DIRNAME")
_FNAME_FLAGS = frozenset("pnxdqabfwu")


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


class ScanMemo:
    """What a :func:`find_macro` scan learned about one text, for the next call on the same text.

    ``close_from``/``close_at``: the first ``)`` at or after ``close_from`` is at ``close_at``
    (-1: none). ``fail_lo``/``fail_hi``: a ``$(X:default`` scan whose default starts after
    ``fail_lo`` and that jumps (over a ``(...)`` group) to a position in ``(fail_lo, fail_hi]``
    fails: an earlier scan went through that position and failed. (What a scan does from a
    position does not depend on where it started, and a scan starting later can only land on
    positions the earlier one went through before its failure point.)
    """

    __slots__ = ("close_from", "close_at", "fail_lo", "fail_hi", "reach")

    def __init__(self) -> None:
        self.close_from, self.close_at, self.fail_lo, self.fail_hi = -1, -2, -1, -1
        self.reach = -1  # the furthest position a failed scan read

    def close_after(self, text: str, i: int) -> int:
        if self.close_from <= i and (self.close_at >= i or self.close_at == -1):
            return self.close_at
        self.close_from, self.close_at = i, text.find(")", i)
        return self.close_at

    def failed(self, lo: int, hi: int) -> None:
        if lo <= self.fail_hi:
            self.fail_hi = max(self.fail_hi, hi)
        else:
            self.fail_lo, self.fail_hi = lo, hi


def find_macro(text: str, pos: int = 0, *, dollar: str = "skip", unknown: list | None = None,
               memo: ScanMemo | None = None, at_dollar: bool = False) -> MacroRef | None:
    """The next macro reference at or after ``pos``.

    ``dollar``: "skip" ignores ``$(DOLLAR)``, "only" finds nothing else, "any" finds all.
    ``unknown`` collects names of ``$NAME(`` prefixes that are not macro functions.
    ``memo``: pass the same :class:`ScanMemo` to successive calls on the same text.
    ``at_dollar``: read ``text[pos]`` as a ``$`` whatever it is (for :func:`replace_dollar`).
    """
    n = len(text)
    memo = memo or ScanMemo()
    while True:
        if at_dollar:
            d, at_dollar = pos, False
        else:
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
            jumped = False
            while i < n and text[i] != ")":
                c = text[i]
                i += 1
                if c == ":" and colon < 0:
                    colon = i - 1
                    continue
                if colon >= 0:
                    if c == "(":
                        close = memo.close_after(text, i)
                        if close >= 0:
                            i = close + 1
                            if colon >= memo.fail_lo and memo.fail_lo < i <= memo.fail_hi:
                                ok = False
                                break
                            jumped = True
                            continue
                    elif c in _COLON_EXTRA:
                        continue
                if c not in _IDCHARS:
                    ok = False
                    break
            if jumped and (not ok or i >= n):
                memo.failed(colon, i)
        else:
            i = memo.close_after(text, body)
            if i < 0:
                i = n
        if not ok or i >= n:
            memo.reach = max(memo.reach, i)
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


def expand(
    text: str,
    lookup: Lookup,
    *,
    ad_lookup: Lookup | None = None,
    env: Mapping[str, str] | None = None,
    evaluate: Callable[[str], Any] | None = None,
    warnings: list[str] | None = None,
    errors: list[str] | None = None,
) -> str:
    """Expand every macro in ``text``.

    ``lookup(name)`` returns the raw (unexpanded) value of a macro or None. Names starting with
    ``MY.`` fall back to ``ad_lookup(attr)`` (unevaluated attribute text, strings unquoted).
    ``evaluate(expr_text)`` evaluates a ClassAd expression for ``$EVAL``/``$STRING``/``$INT``
    (default: in an empty ad). Raises :class:`MacroError`; with ``errors`` (a transform), a
    macro function's error is appended there instead and HTCondor's substitute is used.
    """
    if "$" not in text:
        return text
    ctx = MacroCtx(lookup, ad_lookup, os.environ if env is None else env, evaluate, warnings,
                   _expand, _expand_named, lenient=errors is not None)
    out = _expand(text, ctx)
    if errors is not None:
        errors.extend(ctx.errors)
    return replace_dollar(out)


def replace_dollar(text: str) -> str:
    """``$(DOLLAR)`` → ``$``, as HTCondor's loop does it: after each replacement the search starts
    again from the beginning of the new text (``$(DOLLAR)(DOLLAR)`` → ``$``;
    ``$(DOLLAR)$(DOLLAR)`` → ``$$(DOLLAR)``). Only the ``$`` just put in and what follows can read
    differently, unless a scan that failed earlier read past the replaced text: only then is the
    new text built and searched from the start (while the texts searched again add up to at most
    ``MAX_WORK`` characters; after that, in a pathological text, the search goes on from the ``$``
    put in and the result may differ from HTCondor's). Linear otherwise."""
    out: list[str] = []
    pos = 0
    placed = False  # text[pos] stands for the '$' put in place of the $(DOLLAR) that ends there
    memo = ScanMemo()
    rescanned = 0
    while True:
        ref = find_macro(text, pos, dollar="only", memo=memo, at_dollar=placed)
        if ref is None or not (placed and ref.dollar == pos):
            if placed:
                out.append("$")
                pos += 1
            if ref is None:
                out.append(text[pos:])
                return "".join(out)
            out.append(text[pos : ref.dollar])
        if memo.reach >= ref.dollar and rescanned + len(text) <= MAX_WORK:
            rescanned += len(text)
            text = "".join(out) + "$" + text[ref.right :]
            out, pos, placed, memo = [], 0, False, ScanMemo()
            continue
        pos, placed = ref.right - 1, True


def _over(what: str, ctx: MacroCtx) -> MacroError:
    """A budget error. No macro name: the caller reports it at the knob being expanded."""
    return MacroError(what + (f" (expanding $({ctx.stack[0]}))" if ctx.stack else ""))


def _add(out: list[str], piece: str, ctx: MacroCtx) -> None:
    if not piece:
        return
    ctx.live += len(piece)
    ctx.work += len(piece)
    if ctx.live > MAX_SIZE:
        raise _over(f"expansion is longer than {MAX_SIZE} characters", ctx)
    if ctx.work > MAX_WORK:
        raise _over(f"expansion copies more than {MAX_WORK} characters in all", ctx)
    out.append(piece)


def _expand(text: str, ctx: MacroCtx) -> str:
    if "$" not in text:
        return text
    if len(ctx.stack) > MAX_DEPTH:
        raise MacroError(f"macro expansion nested too deeply at $({ctx.stack[-1]})", ctx.stack[-1])
    if ctx.nest >= MAX_NEST:
        raise _over(f"macro expansion nested more than {MAX_NEST} deep", ctx)
    base = ctx.live
    ctx.nest += 1
    try:
        out: list[str] = []
        pos = 0
        memo = ScanMemo()
        unknown: list[str] | None = [] if ctx.warnings is not None else None
        while True:
            ref = find_macro(text, pos, unknown=unknown, memo=memo)
            if ref is None:
                _add(out, text[pos:], ctx)
                break
            _add(out, text[pos : ref.dollar], ctx)
            ctx.refs += 1
            if ctx.refs > MAX_REFS:
                raise _over(f"more than {MAX_REFS} macro substitutions (a macro doubling itself?)", ctx)
            _add(out, _evaluate_ref(ref, text, ctx), ctx)
            pos = ref.right
        if unknown and ctx.warnings is not None:
            seen = set(ctx.warnings)
            for name in dict.fromkeys(unknown):
                msg = f"unknown macro function ${name}() left as is"
                if msg not in seen:
                    ctx.warnings.append(msg)
        return "".join(out)
    finally:
        ctx.live = base  # the caller counts the result when it keeps it
        ctx.nest -= 1


def _expand_named(name: str, raw: str, ctx: MacroCtx) -> str:
    key = name.lower()
    if key in ctx.stack:
        chain = tuple(ctx.names[ctx.stack.index(key) :]) + (name,)
        raise MacroError(loop_message(chain, lambda _name: None), name, chain)
    ctx.stack.append(key)
    ctx.names.append(name)
    try:
        return _expand(raw, ctx)
    finally:
        ctx.stack.pop()
        ctx.names.pop()


def loop_message(chain: tuple[str, ...], where: Callable[[str], str | None]) -> str:
    """A macro loop in words, every macro of the cycle with where it is defined (``where(name)``:
    ``file:line`` or ``line N``, None when not known): ``macro $(A) refers to itself through a
    loop: A (f:1) -> B (f:2) -> A``. HTCondor has no loop check: config.cpp ``expand_macro``
    substitutes until no ``$()`` is left, so a daemon expanding it never returns (and
    ``CONFIG_MAX_NESTING_DEPTH``, condor_config.h, bounds only include and metaknob nesting)."""
    steps = [f"{n} ({w})" if (w := where(n)) else n for n in chain[:-1]] + [chain[-1]]
    return (f"macro $({chain[0]}) refers to itself through a loop: {' -> '.join(steps)} "
            "(HTCondor would expand it forever)")


def located(exc: MacroError, where: Callable[[str], str | None]) -> str:
    """``exc``'s message, a loop's with the place of each of its macros (:func:`loop_message`)."""
    return loop_message(exc.chain, where) if exc.chain else exc.message


def _evaluate_ref(ref: MacroRef, text: str, ctx: MacroCtx) -> str:
    func = ref.func
    if func == "":
        name = ref.name(text)
        raw = ctx.lookup(name)
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
    inner = ref.inner(text)
    try:
        return FUNCS["F" if func.startswith("F") else func](func, inner, ctx)
    except (ValueError, TypeError, IndexError) as exc:
        return ctx.fail(f"${func}({inner}): {exc}", inner)


def expand_self(text: str, self_name: str, current: str | None) -> str:
    """Expand only references to ``self_name`` (definition time): ``$(X)``, ``$(X:def)``, ``$F…(X)``.

    Raises :class:`MacroError` (named ``self_name``) when the result would pass ``MAX_SIZE``
    characters: ``N = $(N) $(N) $(N)`` on forty lines is 3**40 copies (HTCondor has no bound).
    """
    if "$" not in text:
        return text
    key = self_name.lower()
    out: list[str] = []
    size = 0
    pos = 0
    memo = ScanMemo()
    while True:
        ref = find_macro(text, pos, memo=memo)
        if ref is None:
            out.append(text[pos:])
            size += len(out[-1])
            if size > MAX_SIZE:
                break
            return "".join(out)
        out.append(text[pos : ref.dollar])
        name = ref.name(text)
        if ref.func == "" and name.lower() == key:
            default = ref.default(text)
            out.append(current if current else (default if default is not None else ""))
        elif ref.func.startswith("F") and ref.inner(text).strip().lower() == key:
            out.append(filename_parts(ref.func, current or ""))
        else:
            out.append(text[ref.dollar : ref.right])
        size += len(out[-2]) + len(out[-1])
        if size > MAX_SIZE:
            break
        pos = ref.right
    raise MacroError(f"{self_name}: expanding $({self_name}) in its own definition makes a value longer "
                     f"than {MAX_SIZE} characters", self_name)


# --------------------------------------------------------------------------------------------
