"""Parsing HTCondor transform text (routes, pre/post-route transforms, condor_transform_ads rules).

Written from HTCondor's ``xform_utils.cpp`` (``MacroStreamXFormSource::open``,
``ParseRulesCallback``, ``ActionKeywordItems``) and ``config.cpp`` (``Parse_macros`` with submit
syntax); facts in htcondor.md §1.3.

Design decisions and invariants:

- Lines are joined and trimmed like config lines (``\\`` continuations, ``#`` comments).
  ``NAME``/``REQUIREMENTS``/``UNIVERSE``/``TRANSFORM`` followed by whitespace (and not by ``=``
  or ``:``) are meta statements, taken out of the body wherever they are (also inside ``if``).
  ``Requirements = x`` is therefore a macro assignment, not a requirement.
- HTCondor tokenises keyword lines only when the transform runs; we do it once here so that an
  unknown keyword, a two-argument keyword with one argument ("needs 2 arguments"), ``include``
  and unbalanced ``if``/``endif`` are reported at load time with line and column. ``$()`` is
  never expanded here: statement text stays raw until :meth:`Transform.apply`.
- A statement's ``line`` is the 1-based line in the text given to :func:`parse`; config values
  keep one value line per body line, so ``Config.source_of_value_line`` maps it to file:line.
- A line inside an ``if`` body that does not parse is kept as an ``invalid`` statement and a
  warning: HTCondor never reads it in a branch not taken and fails the transform in one taken.
- A regex that does not compile is a warning and its statement does nothing (HTCondor logs
  "this entry will be ignored").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine import classad as ca
from engine.lang import macros as mx
from engine.lang import bounded_re
from engine.lang import macro_cond as mc
from engine.lang.bounded_re import BoundedPattern, compile_bounded

# keyword -> (argument count, first argument may be a /regex/)
KEYWORDS: dict[str, tuple[int, bool]] = {
    "COPY": (2, True), "DEFAULT": (2, False), "DELETE": (1, True), "EVALMACRO": (2, False),
    "EVALSET": (2, False), "NAME": (0, False), "RENAME": (2, True), "REQUIREMENTS": (0, False),
    "SET": (2, False), "TRANSFORM": (0, False), "UNIVERSE": (1, False),
}
META = ("name", "requirements", "universe", "transform")

# condor_universe.cpp UniverseItems. CondorUniverseNumber refuses the "docker" topping, and
# "container" and "globus" are not in the table: UNIVERSE docker sets no universe in a transform
# (only condor_submit maps docker/container to vanilla, submit_utils.cpp).
UNIVERSES = {
    "standard": 1, "pipe": 2, "linda": 3, "pvm": 4, "vanilla": 5, "pvmd": 6, "scheduler": 7,
    "mpi": 8, "grid": 9, "java": 10, "parallel": 11, "local": 12, "vm": 13,
}
UNIVERSE_INSTEAD = {"docker": "vanilla (5) and set WantDocker = true in the route",
                    "container": "vanilla (5) and set the container image attribute in the route",
                    "globus": "grid (9)"}


class XformError(Exception):
    """A transform that cannot be parsed or applied. ``line``/``column`` are 1-based, relative
    to the transform text; ``column`` is 0 when not meaningful."""

    def __init__(self, line: int, column: int, message: str) -> None:
        where = f"line {line}" + (f", column {column}" if column else "")
        super().__init__(f"{where}: {message}")
        self.line = line
        self.column = column
        self.message = message


@dataclass(frozen=True)
class Statement:
    kind: str  # "assign", "if", "action", "error", "warning", "invalid" (rhs: the error)
    line: int
    text: str  # the logical line as written
    keyword: str = ""  # action keyword (upper case) or if/elif/else/endif
    attr: str = ""  # attribute, macro name, or regex source
    rhs: str = ""  # raw (unexpanded) rest of the line / assigned value
    column: int = 0  # column of rhs in ``text``
    regex: BoundedPattern | None = None
    invalid: bool = False  # a statement HTCondor would skip (e.g. a regex that does not compile)


@dataclass
class Parsed:
    statements: list[Statement] = field(default_factory=list)
    name: str | None = None
    requirements: str | None = None
    requirements_expr: ca.Expr | None = None  # REQUIREMENTS parsed once, here (the router evaluates this tree)
    requirements_line: int = 0
    universe: int | None = None
    transform_args: str | None = None
    transform_items: list[str] = field(default_factory=list)  # inline items after "TRANSFORM … from ("
    local_macros: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def universe_number(text: str) -> int:
    """``CondorUniverseNumberEx`` (xform_utils.cpp): ``atoi`` when not 0, else a case-insensitive
    universe name (no toppings); 0 if unknown."""
    m = re.match(r"\s*([-+]?\d+)", text)
    if m and int(m.group(1)) != 0:
        return int(m.group(1))
    return UNIVERSES.get(text.strip().lower(), 0)


_META = re.compile(r"(name|requirements|universe|transform)\s+(.*)$", re.IGNORECASE | re.DOTALL)
_COLON_IF = re.compile(r":if(\s|$)", re.IGNORECASE)


def _meta(line: str) -> tuple[str, str] | None:
    m = _META.match(line)
    if not m or m.group(2)[:1] in ("=", ":"):
        return None
    return m.group(1).lower(), m.group(2).strip()


def parse(text: str) -> Parsed:
    out = Parsed()
    here: tuple[str, str, int, list[str]] | None = None
    ifs: list[bool] = []  # in_else flag per open if
    skip_items = False
    last = 0
    for lineno, line in mc.logical_lines(text):
        last = lineno
        if skip_items:
            skip_items = line != ")"
            if skip_items and not line.startswith("#"):
                out.transform_items.append(line)
            continue
        if not line or line.startswith("#"):
            continue
        if here is not None:
            name, tag, start, body = here
            if line == "@" + tag:
                _assign(out, name, "\n".join(body), start, line, 0, not ifs)
                here = None
            else:
                body.append(line)
            continue
        meta = _meta(line)
        if meta is not None:
            skip_items = _handle_meta(out, meta, lineno, line)
            continue
        if line.startswith(":") and (ifs or _COLON_IF.match(line)):
            line = line[1:].lstrip()
        if mc.is_if_keyword(line):
            _check_if(ifs, line, lineno)
            word = re.split(r"\s", line, maxsplit=1)[0].lower()
            out.statements.append(Statement("if", lineno, line, word, rhs=line[len(word):].strip()))
            continue
        try:
            started = _classify(out, line, lineno, not ifs)
        except XformError as exc:
            if not ifs:
                raise
            # Parse_macros skips a line of a branch not taken before tokenising it: HTCondor
            # fails the transform only when the branch is taken
            out.statements.append(Statement("invalid", lineno, line, rhs=exc.message, column=exc.column))
            out.warnings.append(f"line {lineno}: {exc.message}: this line is invalid; HTCondor ignores it "
                                f"only while the branch is not taken (the transform fails when it is)")
            continue
        if started is not None:
            here = (started[0], started[1], lineno, [])
    if here is not None:
        raise XformError(here[2], 0, f"end of text while scanning for '@{here[1]}'")
    if ifs:
        raise XformError(last, 0, "endif(s) not found before end of transform")
    return out


def _check_if(ifs: list[bool], line: str, lineno: int) -> None:
    word = re.split(r"\s", line, maxsplit=1)[0].lower()
    if word == "if":
        if len(line) <= 2:
            raise XformError(lineno, 3, "if needs a condition")
        ifs.append(False)
    elif word in ("elif", "else"):
        if not ifs:
            raise XformError(lineno, 1, f"{word} without matching if")
        if ifs[-1]:
            raise XformError(lineno, 1, f"{word} is not allowed after else")
        ifs[-1] = word == "else"
    elif not ifs:
        raise XformError(lineno, 1, "endif without matching if")
    else:
        ifs.pop()


def _handle_meta(out: Parsed, meta: tuple[str, str], lineno: int, line: str) -> bool:
    kind, args = meta
    if kind == "name":
        if args:
            out.name = args
    elif kind == "requirements":
        try:
            out.requirements_expr = ca.parse_expr(args)
        except ca.ClassAdError:
            raise XformError(lineno, line.find(args) + 1, f"invalid REQUIREMENTS : {args}") from None
        out.requirements = args
        out.requirements_line = lineno
    elif kind == "universe":
        # setUniverse: every UNIVERSE line overwrites the last; an unknown name resets it to 0,
        # and the router then takes the route's TargetUniverse (JobRouter.cpp ParseNext)
        number = universe_number(args)
        out.universe = number or None
        if number == 0:
            instead = UNIVERSE_INSTEAD.get(args.strip().lower())
            hint = f"; write UNIVERSE {instead}" if instead else ""
            out.warnings.append(f"line {lineno}: UNIVERSE {args}: HTCondor knows no such universe and sets none "
                                f"(the route's TargetUniverse, grid by default, applies){hint}")
    else:
        trivial = re.fullmatch(r"[01]?", args) is not None
        if not trivial and out.transform_args is None:
            out.transform_args = args
        return args.endswith("(")  # inline items follow until a line ")"
    return False


def _assign(out: Parsed, name: str, value: str, lineno: int, line: str, col: int, top: bool) -> None:
    if "$" not in name and not mx.is_valid_name(name):
        raise XformError(lineno, 1, f"illegal identifier <{name}>")
    out.statements.append(Statement("assign", lineno, line, attr=name, rhs=value, column=col))
    if top:
        out.local_macros[name] = value


def _classify(out: Parsed, line: str, lineno: int, top: bool) -> tuple[str, str] | None:
    """One non-if line; returns (name, tag) when a ``@=`` block starts."""
    split = mc.split_statement(line)
    if split is None:
        _action(out, line, lineno)
        return None
    name, word, op, j = split
    keyword = (name[1:] if name.startswith("@") else name).lower()
    if op == ":" and keyword == "include":
        raise XformError(lineno, 1, "include is not allowed in a transform")
    if op == ":" and keyword == "use":
        raise XformError(lineno, 1, "use (metaknobs) is not supported in a transform")
    if op == ":" and keyword in ("error", "warning"):
        out.statements.append(Statement(keyword, lineno, line, rhs=line[j:].strip()))
        return None
    if word or op not in ("=", "@") or keyword == "queue":
        _action(out, line, lineno)
        return None
    rhs = line[j:].strip()
    col = (line.find(rhs, j) + 1) if rhs else j + 1
    if op == "@":
        if "$" not in name and not mx.is_valid_name(name):
            raise XformError(lineno, 1, f"illegal identifier <{name}>")
        return name, rhs
    if name[:1] in ("+", "-"):  # submit syntax: +Attr = value is stored as macro MY.Attr
        _assign(out, "MY." + name[1:], rhs if name[0] == "+" else "", lineno, line, col, top)
        return None
    _assign(out, name, rhs, lineno, line, col, top)
    return None


_NUL_EFFECT = {
    "SET": "sets an attribute named {0}\\0 instead of", "DEFAULT": "tests and sets an attribute named {0}\\0 instead of",
    "EVALSET": "sets an attribute named {0}\\0 instead of", "COPY": "looks for an attribute named {0}\\0, not",
    "RENAME": "looks for an attribute named {0}\\0, not", "DELETE": "deletes an attribute named {0}\\0, not",
}

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|\S+')


def _action(out: Parsed, line: str, lineno: int) -> None:
    # spans first, text only for the few tokens read: a 100 MB argument is not copied again
    spans = [m.span() for m in _TOKEN.finditer(line)]
    tokens = [(a, line[a:b] if i < 2 or b - a == 1 else "") for i, (a, b) in enumerate(spans)]
    kw_text = tokens[0][1]
    kw = kw_text.upper()
    if kw not in KEYWORDS:
        raise XformError(lineno, 1, f"{kw_text} is not a valid transform keyword")
    argc, allows_regex = KEYWORDS[kw]
    if len(tokens) < 2:
        if kw == "TRANSFORM":
            return
        need = "needs 2 arguments" if argc == 2 else "needs an argument"
        raise XformError(lineno, len(line) + 1, f"{kw} {need}")
    start, attr = tokens[1]
    regex = None
    invalid = False
    next_pos = start + len(attr)
    if allows_regex and attr.startswith("/"):
        m = re.compile(r"/((?:[^/\\]|\\.)*)/([A-Za-z]*)").match(line, start)
        if m is None:
            raise XformError(lineno, start + 1, "invalid regex")
        attr, next_pos = m.group(1), m.end()
        flags = bounded_re.IGNORECASE
        for c in m.group(2).lower():
            flags |= {"m": bounded_re.MULTILINE, "s": bounded_re.DOTALL, "x": bounded_re.VERBOSE}.get(c, 0)
        try:
            # matched with a time bound, as PCRE2's match limit bounds it in HTCondor (bounded_re)
            regex = compile_bounded(attr, flags)
        except (bounded_re.error, RecursionError, OverflowError, MemoryError) as exc:
            # the regex parser recurses once per group: a deeply nested pattern is refused
            # like one that does not compile (HTCondor: "this entry will be ignored")
            why = exc if isinstance(exc, bounded_re.error) else f"{type(exc).__name__}: pattern too deeply nested or too large"
            shown = attr if len(attr) <= 200 else attr[:200] + "…"
            out.warnings.append(f"line {lineno}: error compiling regex '{shown}': {why}; this entry will be ignored")
            invalid = True
    elif attr[-1:] in (",", "=") and len(attr) > 1:
        # HTCondor defect, predicted and flagged (not copied): ParseRulesCallback writes a NUL
        # over the ',' or '=' (attr[size-1]=0), so the name keeps a trailing "\0" byte
        if kw in ("SET", "DEFAULT", "EVALSET", "COPY", "RENAME", "DELETE"):
            out.warnings.append(
                f"line {lineno}: {kw} {attr}: HTCondor's transform turns the '{attr[-1]}' glued to the name into a "
                f"NUL byte (xform_utils.cpp ParseRulesCallback), so it {_NUL_EFFECT[kw].format(attr[:-1])} {attr[:-1]!r}; "
                f"RouteDeck uses {attr[:-1]!r}. Write '{kw} {attr[:-1]} ...' with a space instead")
        attr = attr[:-1]
    rhs, col = "", 0
    if argc == 2:
        rest = [(s, t) for s, t in tokens if s >= next_pos]
        if rest and rest[0][1] in ("=", ","):
            rest = rest[1:]
        if not rest:
            raise XformError(lineno, len(line) + 1, f"{kw} needs 2 arguments")
        col = rest[0][0] + 1
        rhs = line[rest[0][0]:].strip()
    out.statements.append(Statement("action", lineno, line, kw, attr, rhs, col, regex, invalid))
