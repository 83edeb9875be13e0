"""HTCondor's macro functions: ``$INT``, ``$REAL``, ``$STRING``, ``$EVAL``, ``$CHOICE``,
``$SUBSTR``, ``$RANDOM_*``, ``$F…``, ``$BASENAME``, ``$DIRNAME`` (config.cpp ``evaluate_macro_func``).

Design decisions and invariants:

- An argument that names a macro is looked up, otherwise taken literally, then expanded.
- ``$INT``/``$REAL`` accept a literal number or a ClassAd expression that evaluates to one;
  formats are C printf formats (length modifiers are ignored).
- ``$SUBSTR(X,start[,len])`` as the manual describes it (negative values count from the end).
- ``$RANDOM_CHOICE``/``$RANDOM_INTEGER`` are deterministic (first item / minimum) with a
  warning: the engine must replay identically.
- Bounded (RouteDeck decisions; HTCondor formats with ``formatstr`` and splits whole lists): a
  printf width or precision above ``MAX_FORMAT_WIDTH`` is an error (``%999999999d`` would build
  a gigabyte), and ``$CHOICE``/``$RANDOM_CHOICE`` find their item without splitting the list.
  Everything else a function makes passes through :func:`engine.lang.macros._expand`'s budgets.
- Every failure raises :class:`engine.lang.macros.MacroError`.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from engine import classad as ca
from engine.lang.macros import MacroError, _arg_value, _Ctx, _expand_named, _lookup

MAX_FORMAT_WIDTH = 4096  # printf field width / precision: far above any real format


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
    if any(int(n) > MAX_FORMAT_WIDTH for n in re.findall(r"\d+", spec.lstrip("-+ #0"))):
        raise MacroError(f"'{fmt}': a field width or precision above {MAX_FORMAT_WIDTH} is not supported", fmt)
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


def _nth_item(s: str, index: int) -> str | None:
    """Item ``index`` (from 0) of a comma list, stripped; None when there is no such item.
    The list is not built: a value may hold a million items."""
    start = 0
    for _ in range(index):
        comma = s.find(",", start)
        if comma < 0:
            return None
        start = comma + 1
    end = s.find(",", start)
    return s[start : end if end >= 0 else len(s)].strip()


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
        item = _nth_item(_expand_named(items[0], raw, ctx), index) if index >= 0 else None
    else:
        item = items[index] if 0 <= index < len(items) else None
    if item is None:
        raise MacroError(f"$CHOICE() error: index {index} is out of range", inner)
    return item


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
    first = inner.split(",", 1)[0].strip()
    if func == "RANDOM_INTEGER":
        return str(int(first))
    if "," not in inner:
        raw = _lookup(first, ctx)
        if raw is not None:
            first = _expand_named(first, raw, ctx).split(",", 1)[0].strip()
    return first


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


FUNCS: dict[str, Callable[[str, str, _Ctx], str]] = {
    "INT": _fn_int_real, "REAL": _fn_int_real, "STRING": _fn_string, "EVAL": _fn_eval,
    "CHOICE": _fn_choice, "SUBSTR": _fn_substr, "RANDOM_CHOICE": _fn_random,
    "RANDOM_INTEGER": _fn_random, "BASENAME": _fn_filename, "DIRNAME": _fn_filename,
    "F": _fn_filename,
}
