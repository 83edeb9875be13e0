"""HTCondor's macro language: ``$()`` expansion, macro functions, ``if`` conditions, line joining.

Shared by the config reader (engine/config.py) and the transform engine (engine/xform*.py).
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
  (HTCondor would loop forever).
- ``$(X:default)`` uses the default when X is undefined *or* its raw value is empty.
- ``$(DOLLAR)`` becomes ``$`` once, at the very end of a top-level expansion.
- Nothing here reads the clock. ``$RANDOM_CHOICE``/``$RANDOM_INTEGER`` are made deterministic
  (first item / minimum) with a warning, because the engine must be replayable.
- ``if`` conditions follow ``Evaluate_config_if``, including its quirk that a complex (ClassAd)
  condition which evaluates to *false* is reported as an invalid condition (``return bval``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from engine import classad as ca

Lookup = Callable[[str], "str | None"]

CONDOR_VERSION = (25, 14, 1)  # the htcondor wheel RouteDeck pins; used by `if version ...`
MAX_DEPTH = 40

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
        out.append(_evaluate_ref(ref, text, ctx))
        pos = ref.right
    if unknown and ctx.warnings is not None:
        for name in unknown:
            msg = f"unknown macro function ${name}() left as is"
            if msg not in ctx.warnings:
                ctx.warnings.append(msg)
    return "".join(out)


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
    inner = ref.inner(text)
    try:
        return _FUNCS["F" if func.startswith("F") else func](func, inner, ctx)
    except MacroError:
        raise
    except (ValueError, TypeError, IndexError) as exc:
        raise MacroError(f"${func}({inner}): {exc}", inner) from None


def _evaluate(expr: str, ctx: _Ctx) -> Any:
    if ctx.evaluate is not None:
        return ctx.evaluate(expr)
    return ca.evaluate(ca.parse_expr(expr))


def _as_number(mval: str, ctx: _Ctx, want_int: bool) -> int | float:
    s = mval.strip()
    try:
        return int(s, 10) if want_int else float(s)
    except ValueError:
        pass
    try:
        v = _evaluate(s, ctx)
    except ca.ClassAdError:
        v = ca.ERROR
    if isinstance(v, bool) or (isinstance(v, (int, float)) and not isinstance(v, ca.Value)):
        return int(v) if want_int else float(v)
    kind = "an integer" if want_int else "a real"
    raise MacroError(f"{mval!r} does not evaluate to {kind}", mval)


def _c_format(fmt: str, value: Any, allowed: str) -> str:
    m = re.fullmatch(r"([^%]*)%([-+ #0]*\d*(?:\.\d+)?)(?:hh|h|ll|l|L|q|j|z|t)?([" + allowed + r"])(.*)", fmt)
    if not m:
        raise MacroError(f"'{fmt}' is not a valid format specifier", fmt)
    pre, spec, conv, post = m.groups()
    conv = "d" if conv in "iu" else conv
    return pre + ("%" + spec + conv) % value + post


def _fn_int_real(func: str, inner: str, ctx: _Ctx) -> str:
    name, _, fmt = inner.partition(",")
    mval = _arg_value(name, ctx)
    if func == "INT":
        iv = _as_number(mval, ctx, True)
        return _c_format(fmt, int(iv), "diuxXoc") if fmt else str(int(iv))
    fv = float(_as_number(mval, ctx, False))
    if not fmt:
        return "%.16G" % fv
    s = _c_format(fmt, fv, "eEfFgG")
    return s if "." in s else s + ".0"


def _fn_string(func: str, inner: str, ctx: _Ctx) -> str:
    name, _, fmt = inner.partition(",")
    mval = _arg_value(name, ctx)
    try:
        v = _evaluate(mval, ctx)
        if isinstance(v, str):
            mval = v
    except ca.ClassAdError:
        pass
    return _c_format(fmt, mval, "s") if fmt else mval


def _fn_eval(func: str, inner: str, ctx: _Ctx) -> str:
    mval = _arg_value(inner, ctx)
    try:
        v = _evaluate(mval, ctx)
    except ca.ClassAdError:
        return mval
    return v if isinstance(v, str) else ca.format_value(v)


def _split_list(s: str) -> list[str]:
    return [item.strip() for item in s.split(",")]


def _fn_choice(func: str, inner: str, ctx: _Ctx) -> str:
    args = inner.split(",")
    if len(args) < 2:
        raise MacroError("$CHOICE() error: no list", inner)
    ival = _arg_value(args[0], ctx)
    try:
        index = int(ival.strip())
    except ValueError:
        raise MacroError(f"$CHOICE() error: '{ival}' is invalid index", inner) from None
    items = [a.strip() for a in args[1:]]
    if len(items) == 1:
        raw = _lookup(items[0], ctx)
        if raw is None:
            raise MacroError(f"$CHOICE() error: no list named {items[0]}", items[0])
        items = _split_list(_expand_named(items[0], raw, ctx))
    if not 0 <= index < len(items):
        raise MacroError(f"$CHOICE() error: index {index} is out of range", inner)
    return items[index]


def _fn_substr(func: str, inner: str, ctx: _Ctx) -> str:
    args = inner.split(",")
    if len(args) < 2:
        raise MacroError("$SUBSTR() error: no start index", inner)
    raw = _lookup(args[0].strip(), ctx)
    value = "" if raw is None else _expand_named(args[0].strip(), raw, ctx)
    start = int(_arg_value(args[1], ctx).strip())
    length = int(_arg_value(args[2], ctx).strip()) if len(args) > 2 else None
    n = len(value)
    if start < 0:
        start = max(0, n + start)
    start = min(start, n)
    rest = value[start:]
    if length is None:
        return rest
    if length < 0:
        length = max(0, len(rest) + length)
    return rest[:length]


def _fn_random(func: str, inner: str, ctx: _Ctx) -> str:
    if ctx.warnings is not None:
        ctx.warnings.append(f"${func}() is deterministic in RouteDeck (first choice / minimum)")
    if func == "RANDOM_INTEGER":
        return str(int(_split_list(inner)[0]))
    items = _split_list(inner)
    if len(items) == 1:
        raw = _lookup(items[0], ctx)
        if raw is not None:
            items = _split_list(_expand_named(items[0], raw, ctx))
    return items[0]


def _fn_filename(func: str, inner: str, ctx: _Ctx) -> str:
    raw = _lookup(inner.strip(), ctx)
    if raw is None:
        return ""
    return filename_parts(func, _expand_named(inner.strip(), raw, ctx))


def filename_parts(func: str, value: str) -> str:
    """``$Fpnxdqab(X)``, ``$BASENAME(X)``, ``$DIRNAME(X)`` applied to an expanded value."""
    parts = num_dirs = 0
    quoted = bare = arg_quote = False
    path_char = ""
    if func == "BASENAME":
        parts = 3
    elif func == "DIRNAME":
        parts = 4
    else:
        for c in func[1:].lower():
            parts |= {"x": 1, "n": 2, "p": 4, "d": 8}.get(c, 0)
            num_dirs += c == "d"
            quoted |= c == "q"
            bare |= c == "b"
            arg_quote |= c == "a"
            path_char = {"w": "\\", "u": "/"}.get(c, path_char)
    if len(value) > 1 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    if path_char:
        value = value.replace("/" if path_char == "\\" else "\\", path_char)
    ixn = max(value.rfind("/"), value.rfind("\\")) + 1
    dot = value.rfind(".", ixn)
    ixx = dot if dot > ixn else len(value)
    if ixn == 0 and parts & 3:
        parts &= ~12
    end = len(value)
    sel = parts & 15
    if sel == 1:
        start = ixx + (1 if bare and ixx < end else 0)
    elif sel == 3:
        start = ixn
    elif sel == 2:
        start, end = ixn, ixx
    elif sel in (0, 7, 5):
        start = 0
    elif sel == 4:
        start, end = 0, (ixn - 1 if bare and ixn > 0 else ixn)
    elif sel == 6:
        start, end = 0, ixx
    elif ixn > 0:
        seps = [i + 1 for i, ch in enumerate(value) if ch in "/\\"]
        start = seps[-1 - num_dirs] if len(seps) > num_dirs else 0
        if parts & 3 == 2:
            end = ixx
        elif parts & 3 == 0:
            end = ixn - 1 if bare else ixn
    else:
        start = end = 0
    out = value[start:end]
    if quoted:
        q = "'" if arg_quote else '"'
        out = q + out + q
    return out


_FUNCS: dict[str, Callable[[str, str, _Ctx], str]] = {
    "INT": _fn_int_real, "REAL": _fn_int_real, "STRING": _fn_string, "EVAL": _fn_eval,
    "CHOICE": _fn_choice, "SUBSTR": _fn_substr, "RANDOM_CHOICE": _fn_random,
    "RANDOM_INTEGER": _fn_random, "BASENAME": _fn_filename, "DIRNAME": _fn_filename,
    "F": _fn_filename,
}


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
            out.append(filename_parts(ref.func, current or ""))
        else:
            out.append(text[ref.dollar : ref.right])
        pos = ref.right


# --------------------------------------------------------------------------------------------
# physical lines -> logical lines (getline_implementation)


def logical_lines(text: str) -> list[tuple[int, str]]:
    """Trimmed logical lines with the 1-based number of their first physical line.

    ``\\`` at the end continues onto the next (left-trimmed) line; a line starting with ``#``
    never continues; a ``#`` line inside a continuation counts as empty and continues only if
    it too ends with ``\\`` (HTCondor keeps that line's last character; we drop it).
    """
    phys = text.split("\n")
    out: list[tuple[int, str]] = []
    i, n = 0, len(phys)
    while i < n:
        start = i + 1
        buf = phys[i].strip()
        i += 1
        if buf.startswith("#"):
            out.append((start, buf))
            continue
        while buf.endswith("\\"):
            buf = buf[:-1]
            if i >= n:
                break
            nxt = phys[i].strip()
            i += 1
            if nxt.startswith("#"):
                if nxt.endswith("\\"):
                    buf += "\\"
                    continue
                break
            buf += nxt
        out.append((start, buf))
    if out and out[-1][1] == "" and text.endswith("\n"):
        out.pop()
    return out


# --------------------------------------------------------------------------------------------
# if / elif / else / endif


class ConditionError(ValueError):
    pass


def _is_number(s: str) -> bool:
    return re.fullmatch(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", s) is not None


def _parse_version(s: str) -> tuple[int, int, int] | None:
    s = s.strip()
    if s[:1] in ("v", "V"):
        s = s[1:]
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", s)
    if not m or int(m.group(1)) < 6:
        return None
    sub = int(m.group(3)) if m.group(3) is not None else CONDOR_VERSION[2]
    return int(m.group(1)), int(m.group(2)), sub


_CRUFTY = {"yes": True, "t": True, "no": False, "f": False}


def test_condition(
    expr: str,
    lookup: Lookup,
    expand_text: Callable[[str], str],
    eval_complex: Callable[[str], Any] | None = None,
) -> bool:
    """Value of an ``if``/``elif`` condition; raises :class:`ConditionError` when invalid.

    ``lookup`` answers ``defined NAME`` (raw value, None when undefined); ``eval_complex``
    evaluates a ClassAd expression against the ad being transformed (transforms only).
    """
    text = expr
    expanded = False
    if "$" in text:
        text = expand_text(text).rstrip()
        expanded = True
    text = text.lstrip()
    inverted = text.startswith("!")
    if inverted:
        text = text[1:].lstrip()
    if expanded and not text:
        return inverted  # an empty expansion is false
    return _evaluate_condition(text, lookup, eval_complex) != inverted


def _evaluate_condition(text: str, lookup: Lookup, eval_complex: Callable[[str], Any] | None) -> bool:
    low = text.lower()
    if _is_number(text):
        return float(text) != 0
    if low in ("true", "false"):
        return low == "true"
    if low in _CRUFTY:
        return _CRUFTY[low]
    if low == "version" or re.match(r"version\s*[!<=>]", low):
        m = re.match(r"version\s*(!?)([<>]?)(=?)(=?)\s*(.*)$", text, re.IGNORECASE | re.DOTALL)
        ver = _parse_version(m.group(5)) if m else None
        if m is None or ver is None:
            raise ConditionError("the version literal is invalid")
        negated, rel = m.group(1) == "!", m.group(2)
        or_equal = bool(m.group(3)) and (rel != "" or bool(m.group(4)))
        op = {"<": -1, ">": 1, "": 0}[rel]
        diff = (CONDOR_VERSION > ver) - (CONDOR_VERSION < ver)
        result = diff == op or (or_equal and diff == 0)
        return result != negated
    if low == "defined" or re.match(r"defined\s", low):
        arg = text[7:].strip()
        if not arg:
            return False
        if _is_number(arg) or arg.lower() in ("true", "false"):
            return True
        if arg.lower().startswith("use "):
            return False  # metaknobs are not supported
        if not is_valid_name(arg):
            raise ConditionError("defined argument must be param name, boolean, or number")
        value = lookup(arg)
        if value is None and arg.lower() in _CRUFTY:
            return True
        return bool(value)
    if is_valid_name(text):
        raise ConditionError("expression is not a conditional")
    if eval_complex is not None:
        value = eval_complex(text)
        if isinstance(value, bool) or (isinstance(value, (int, float)) and not isinstance(value, ca.Value)):
            if value:
                return True
            # HTCondor returns the boolean as the *validity* of the condition (config.cpp).
            raise ConditionError("the condition evaluated to false, which HTCondor's transform "
                                 "engine reports as an invalid complex condition")
    raise ConditionError("complex conditionals are not supported")


class IfStack:
    """``ConfigIfStack``: nested if/elif/else state; ``enabled`` tells whether lines apply."""

    def __init__(self) -> None:
        self.frames: list[list[bool]] = []  # [active, any_taken, in_else]

    @property
    def enabled(self) -> bool:
        return all(f[0] for f in self.frames)

    def _outer_enabled(self) -> bool:
        return all(f[0] for f in self.frames[:-1])

    @property
    def depth(self) -> int:
        return len(self.frames)

    def handle(self, line: str, test: Callable[[str], bool]) -> bool:
        """Process ``line`` if it is an if/elif/else/endif; returns False for other lines.

        ``test(expr)`` is called only when the branch could be taken. Raises ConditionError.
        """
        word, _, rest = line.partition(" ")
        if "\t" in word:
            word, _, tail = word.partition("\t")
            rest = tail + " " + rest
        kw = word.lower()
        if kw == "if":
            value = test(rest.strip()) if self.enabled else False
            if len(self.frames) >= 63:
                raise ConditionError("if nesting too deep!")
            self.frames.append([value, value, False])
            return True
        if kw == "elif":
            if not self.frames:
                raise ConditionError("elif without matching if")
            f = self.frames[-1]
            if f[2]:
                raise ConditionError("elif is not allowed after else")
            value = False
            if not f[1] and self._outer_enabled():
                value = test(rest.strip())
            f[0] = value
            f[1] = f[1] or value
            return True
        if kw == "else":
            if not self.frames:
                raise ConditionError("else without matching if")
            f = self.frames[-1]
            if f[2]:
                raise ConditionError("else is not allowed after else")
            f[0], f[2] = not f[1], True
            return True
        if kw == "endif":
            if not self.frames:
                raise ConditionError("endif without matching if")
            self.frames.pop()
            return True
        return False


def is_if_keyword(line: str) -> bool:
    word = re.split(r"\s", line, maxsplit=1)[0].lower()
    return word in ("if", "elif", "else", "endif")
