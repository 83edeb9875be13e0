"""HTCondor's macro functions: ``$INT``, ``$REAL``, ``$STRING``, ``$EVAL``, ``$CHOICE``,
``$SUBSTR``, ``$RANDOM_*``, ``$F…``, ``$BASENAME``, ``$DIRNAME`` (config.cpp ``evaluate_macro_func``).

Design decisions and invariants:

- An argument that names a macro is looked up, otherwise taken literally, then expanded.
- ``$INT``/``$REAL`` accept a number (``strtoll``/``strtod`` of the whole text) or a ClassAd
  expression that evaluates to one *in an empty ad* (``string_is_long_param``: the job ad is
  never used); formats are C printf formats (length modifiers are ignored).
- ``$F…``/``$BASENAME``/``$DIRNAME`` of a name that is not a macro work on the text itself
  (``if ( ! mval) mval = body;``); on Linux only ``/`` separates a file name from its
  directory (``condor_basename``). ``$BASENAME(X, suffix)`` drops a matching suffix.
- ``$EVAL`` evaluates in the job ad when there is one; a text that does not parse gives its
  expansion when it held a ``$()``, else ``""``; a non-string result is written as the new
  ClassAd unparser writes it (a real as ``%1.15E``, classad ``sink.cpp`` ``UnparseReal``).
- ``$SUBSTR(X,start[,len])`` as the manual describes it (negative values count from the end).
- ``$RANDOM_CHOICE``/``$RANDOM_INTEGER`` are deterministic (first item / minimum) with a
  warning: the engine must replay identically.
- Bounded (RouteDeck decisions; HTCondor formats with ``formatstr`` and splits whole lists): a
  printf width or precision above ``MAX_FORMAT_WIDTH`` is an error (``%999999999d`` would build
  a gigabyte), and ``$CHOICE``/``$RANDOM_CHOICE`` find their item without splitting the list.
  Everything else a function makes passes through the expander's budgets.
- Every failure goes through :meth:`MacroCtx.fail` with HTCondor's substitute value: raised
  in the config reader, recorded in a transform (``might_EXCEPT``).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from engine import classad as ca
from engine.lang.macro_base import MacroCtx

MAX_FORMAT_WIDTH = 4096  # printf field width / precision: far above any real format

_C_LONG = re.compile(r"\s*[-+]?\d+\s*\Z")
_C_DOUBLE = re.compile(r"\s*[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|inf(?:inity)?|nan)\s*\Z",
                       re.IGNORECASE)


def _evaluate(expr: str, ctx: MacroCtx) -> Any:
    if ctx.evaluate is not None:
        return ctx.evaluate(expr)
    return ca.evaluate(ca.parse_expr(expr))


def _as_number(mval: str, want_int: bool) -> int | float | None:
    """``string_is_long_param`` / ``string_is_double_param``: the whole text as a C number,
    else a ClassAd expression evaluated in an empty ad (never the job ad); None when neither."""
    if (_C_LONG if want_int else _C_DOUBLE).match(mval):
        return int(mval.strip()) if want_int else float(mval.strip())
    try:
        v = ca.evaluate(ca.parse_expr(mval))
    except ca.ClassAdError:
        return None
    if isinstance(v, bool) or (isinstance(v, (int, float)) and not isinstance(v, ca.Value)):
        return int(v) if want_int else float(v)
    return None


def _c_format(fmt: str, value: Any, allowed: str) -> str | None:
    """``fmt`` applied to ``value``; None when ``validatePrintfFormat`` would refuse it."""
    m = re.fullmatch(r"([^%]*)%([-+ #0]*\d*(?:\.\d+)?)(?:hh|h|ll|l|L|q|j|z|t)?([" + allowed + r"])(.*)", fmt)
    if not m:
        return None
    pre, spec, conv, post = m.groups()
    if any(int(n) > MAX_FORMAT_WIDTH for n in re.findall(r"\d+", spec.lstrip("-+ #0"))):
        return None
    conv = "d" if conv in "iu" else conv
    return pre + ("%" + spec + conv) % value + post


def _fn_int_real(func: str, inner: str, ctx: MacroCtx) -> str:
    name, comma, fmt = inner.partition(",")
    if comma and _c_format(fmt, 0 if func == "INT" else 0.0, "diuxXoc" if func == "INT" else "eEfFgG") is None:
        return ctx.fail(f"${func}() macro: '{fmt}' is not a valid format specifier!", fmt, substitute=fmt)
    mval = ctx.arg_value(name)
    number = _as_number(mval, func == "INT")
    if number is None:
        kind = "an integer" if func == "INT" else "an real"
        return ctx.fail(f"${func}() macro: {mval} does not evaluate to {kind}!", mval)
    if func == "INT":
        return _c_format(fmt, int(number), "diuxXoc") or "" if comma else str(int(number))
    if not comma:
        return "%.16G" % number
    s = _c_format(fmt, float(number), "eEfFgG") or ""
    return s if "." in s else s + ".0"


def _fn_string(func: str, inner: str, ctx: MacroCtx) -> str:
    name, comma, fmt = inner.partition(",")
    if comma and _c_format(fmt, "", "s") is None:
        return ctx.fail(f"$STRING macro: '{fmt}' is not a valid format specifier!", fmt, substitute=fmt)
    mval = ctx.arg_value(name)
    try:
        v = ca.evaluate(ca.parse_expr(mval))
        if isinstance(v, str):
            mval = v
    except ca.ClassAdError:
        pass
    return (_c_format(fmt, mval, "s") or "") if comma else mval


def unparse_new(value: Any) -> str:
    """A value as the new ClassAd unparser writes it (``ClassAdUnParser::Unparse``)."""
    if isinstance(value, float) and value == value and value not in (float("inf"), float("-inf")):
        return "%.1f" % value if value == 0.0 else "%1.15E" % value
    return ca.format_value(value)


def _fn_eval(func: str, inner: str, ctx: MacroCtx) -> str:
    raw = ctx.lookup(inner)
    mval = inner if raw is None else raw
    expanded = ctx.expand(mval) if "$" in mval else None
    text = mval if expanded is None else expanded
    try:
        v = _evaluate(text, ctx)
    except ca.ClassAdError:
        return expanded or ""
    return v if isinstance(v, str) else unparse_new(v)


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


def _c_long(text: str) -> int | None:
    """``string_is_long_param`` for an index: the whole text as a C integer, else an expression."""
    number = _as_number(text, True)
    return None if number is None else int(number)


def _fn_choice(func: str, inner: str, ctx: MacroCtx) -> str:
    args = inner.split(",")
    ival = ctx.arg_value(args[0])
    index = _c_long(ival)
    if index is None or not 0 <= index < 2**31 - 1:
        ctx.fail(f"$CHOICE() error: '{ival}' is invalid index", inner)
        index = 0  # HTCondor goes on with item 0
    if len(args) < 2:
        return ctx.fail("$CHOICE() error: no list", inner)
    items = [a.strip() for a in args[1:]]
    if len(items) == 1:
        raw = ctx.lookup(items[0])
        if raw is None:
            return ctx.fail(f'$CHOICE() macro: no list named "{items[0]}"!', items[0])
        item = _nth_item(ctx.expand_named(items[0], raw), index)
    else:
        item = items[index] if index < len(items) else None
    if item is None:
        return ctx.fail(f"$CHOICE() config macro: index {index} is out of range!", inner)
    return item


def _substr_arg(arg: str, ctx: MacroCtx) -> str:
    raw = ctx.lookup(arg)
    text = arg if raw is None else raw
    return ctx.expand(text) if "$" in text else text


def _fn_substr(func: str, inner: str, ctx: MacroCtx) -> str:
    args = inner.split(",")
    if len(args) < 2:
        return ctx.fail("$SUBSTR() macro: no length specified!", inner)
    start_text = _substr_arg(args[1], ctx)
    start = _c_long(start_text)
    if start is None:
        return ctx.fail(f"$SUBSTR() macro: {start_text} is invalid start index!", inner)
    length = None
    if len(args) > 2:
        length_text = _substr_arg(args[2], ctx)
        length = _c_long(length_text)
        if length is None:
            return ctx.fail(f"$SUBSTR() macro: {length_text} is invalid length !", inner)
    raw = ctx.lookup(args[0])
    value = "" if raw is None else ctx.expand_named(args[0], raw)
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


def _fn_random(func: str, inner: str, ctx: MacroCtx) -> str:
    if ctx.warnings is not None:
        ctx.warnings.append(f"${func}() is deterministic in RouteDeck (first choice / minimum)")
    first = inner.split(",", 1)[0].strip()
    if func == "RANDOM_INTEGER":
        number = _c_long(first)
        if number is None:
            return ctx.fail("$RANDOM_INTEGER() config macro: invalid min!", inner)
        return str(number)
    if "," not in inner:
        raw = ctx.lookup(first)
        if raw is not None:
            first = ctx.expand_named(first, raw).split(",", 1)[0].strip()
    return first


def _fn_filename(func: str, inner: str, ctx: MacroCtx) -> str:
    name, suffix = inner, None
    if func == "BASENAME" and "," in inner:
        name, _, suffix = inner.rpartition(",")
        suffix = suffix.lstrip()
    raw = ctx.lookup(name)
    mval = name if raw is None else raw  # config.cpp: if ( ! mval) mval = body;
    if "$" in mval:
        mval = ctx.expand_named(name, raw) if raw is not None else ctx.expand(mval)
    return filename_parts(func, mval, suffix)


def filename_parts(func: str, value: str, suffix: str | None = None) -> str:
    """``$Fpnxdqab(X)``, ``$BASENAME(X[, suffix])``, ``$DIRNAME(X)`` applied to an expanded value."""
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
    ixn = value.rfind("/") + 1  # condor_basename: only '/' on Linux
    dot = value.rfind(".", ixn)
    ixx = dot if dot > ixn else len(value)
    if suffix is not None and len(value) - len(suffix) >= ixn and value[len(value) - len(suffix):].lower() == suffix.lower():
        ixx = len(value) - len(suffix)  # the suffix is treated as the extension, and dropped
        parts &= ~1
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


FUNCS: dict[str, Callable[[str, str, MacroCtx], str]] = {
    "INT": _fn_int_real, "REAL": _fn_int_real, "STRING": _fn_string, "EVAL": _fn_eval,
    "CHOICE": _fn_choice, "SUBSTR": _fn_substr, "RANDOM_CHOICE": _fn_random,
    "RANDOM_INTEGER": _fn_random, "BASENAME": _fn_filename, "DIRNAME": _fn_filename,
    "F": _fn_filename,
}
