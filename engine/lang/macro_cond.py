"""Config-language lines and conditions: ``\\`` continuations and ``#`` comments
(``getline_implementation``), ``if``/``elif``/``else``/``endif`` (``ConfigIfStack``,
``Test_config_if_expression``, ``Evaluate_config_if`` in config.cpp).

Design decisions and invariants:

- Conditions: numbers (non-zero), ``true``/``false``, ``yes``/``no``/``t``/``f``, ``defined NAME``
  (defined and non-empty), ``version <op> X.Y[.Z]`` against :data:`CONDOR_VERSION`, a leading
  ``!``; ``$()`` is expanded first and an empty expansion is false.
- A complex (ClassAd) condition is only possible in transforms, evaluated against the job ad,
  with HTCondor's quirk kept: it returns the boolean as the *validity*, so a complex condition
  that is false is reported as an invalid condition (``return bval``).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from engine import classad as ca
from engine.lang.macros import Lookup, is_valid_name

CONDOR_VERSION = (25, 14, 1)  # the htcondor wheel RouteDeck pins; used by `if version ...`

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


# Characterize_config_if_expression (config.cpp): the character classes of a condition; only
# these sets make ``defined …`` a CIFT_IFDEF (``defined -0.5`` has a ct_sum: it is complex)
_SPACE, _DIGIT, _ALPHA, _IDENT, _CMP, _SUM, _LOGIC, _GROUP, _MONEY, _COLON, _OTHER, _FLOAT, _MACRO = (
    0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80, 0x100, 0x200, 0x400, 0x1000, 0x2000)
_IFDEF_SETS = {_ALPHA | _SPACE | extra for extra in (0, _COLON, _IDENT, _IDENT | _COLON, _DIGIT, _DIGIT | _IDENT,
                                                     _DIGIT | _FLOAT, _DIGIT | _IDENT | _FLOAT)}


def _char_set(expr: str) -> int:
    p = expr.lstrip()
    if p[:1] == "-":  # a leading minus is not a sum
        p = p[1:]
    out = 0
    for i, ch in enumerate(p):
        nxt = p[i + 1] if i + 1 < len(p) else ""
        if "0" <= ch <= "9":
            out |= _DIGIT
        elif ch == ".":
            out |= _FLOAT if out == _DIGIT or not nxt or "0" <= nxt <= "9" else _IDENT
        elif ch in "eE":
            out |= _FLOAT if (out & ~_FLOAT) == _DIGIT else _ALPHA
        elif ch in "+-":
            out |= 0 if out == _DIGIT | _FLOAT else _SUM
        elif ch.isascii() and ch.isalpha():
            out |= _ALPHA
        elif ch in "_/":
            out |= _IDENT
        elif ch in "<=>" or (ch == "!" and nxt == "="):
            out |= _CMP
        elif ch == "$":
            out |= _MONEY | (_MACRO if nxt == "(" else 0)
        elif ch in " \t\r\n\f\v":
            out |= _SPACE if nxt and not nxt.isspace() else 0
        elif ch in "&|":
            out |= _LOGIC
        elif ch in "{|}()[]":
            out |= _GROUP
        elif ch == ":":
            out |= _COLON
        else:
            out |= _OTHER
    return out


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
    if low == "defined" or (re.match(r"defined\s", low) and _char_set(text) in _IFDEF_SETS):
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
            f = self._open_frame(kw, after_else=False)
            value = False
            if not f[1] and self._outer_enabled():
                value = test(rest.strip())
            f[0] = value
            f[1] = f[1] or value
            return True
        if kw == "else":
            f = self._open_frame(kw, after_else=False)
            f[0], f[2] = not f[1], True
            return True
        if kw == "endif":
            self._open_frame(kw, after_else=True)
            self.frames.pop()
            return True
        return False

    def _open_frame(self, kw: str, *, after_else: bool) -> list[bool]:
        """The innermost if's frame, which ``kw`` (elif/else/endif) continues; ConditionError when
        there is none, or when it is in its else branch and ``kw`` may not follow one."""
        if not self.frames:
            raise ConditionError(f"{kw} without matching if")
        f = self.frames[-1]
        if f[2] and not after_else:
            raise ConditionError(f"{kw} is not allowed after else")
        return f


_FIRST_SPACE = re.compile(r"\s")


def is_if_keyword(line: str) -> bool:
    m = _FIRST_SPACE.search(line)  # the first word, as re.split(r"\s", line, maxsplit=1)[0]
    word = (line[: m.start()] if m else line).lower()
    return word in ("if", "elif", "else", "endif")


_NAME_END = re.compile(r"[\s=:]")  # re's \s for str is str.isspace()
_SPACES = re.compile(r"\s*")
_OPERATOR = re.compile(r"[=:@]")


def split_statement(line: str) -> tuple[str, str, str, int] | None:
    """Split a config or transform line as HTCondor's config parser does: ``NAME = v``,
    ``NAME : v``, ``NAME @=tag``, or ``keyword word : v`` (``include``, ``use``, …).

    Returns ``(name, word, op, j)``: ``op`` is ``"="``, ``":"``, ``"@"`` (for ``@=``) or ``""``
    (no operator found), ``word`` the text between a keyword and its ``:`` and ``j`` the index
    where the value starts. ``None`` when the line is one word with no operator.
    """
    n = len(line)
    m = _NAME_END.search(line)  # regex scans, not a Python loop per character: lines can be 100 MB
    i = m.start() if m else n
    name = line[:i]
    if i == n:
        return None
    word = ""
    if line[i] in "=:":
        return name, word, line[i], i + 1
    k = _SPACES.match(line, i).end()  # type: ignore[union-attr]
    m = _OPERATOR.search(line, k)
    j = m.start() if m else n
    word = line[k:j].strip()
    op = line[j] if j < n else ""
    j += 1
    if op == "@":
        if j < n and line[j] == "=":
            j += 1
        else:
            op = ""
    return name, word, op, j
