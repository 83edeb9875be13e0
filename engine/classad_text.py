"""ClassAd text before the ClassAd library sees it: string literals found and skipped, old to new
syntax (backslashes), ``time()`` rewritten, size guards for hostile text, bracket and separator
scanning, scope prefixes rewritten. Pure text: no ``classad2`` here (:mod:`engine.classad` is the
one module that parses and evaluates)."""

from __future__ import annotations

import functools
import re


_TIME_CALL = re.compile(r"(?<![\w.])time\s*\(\s*\)", re.IGNORECASE)


# A string literal from its opening quote: a backslash takes the next character with it, the
# literal ends at the next quote (group 2), or at the end of the text when none closes it (group 1:
# a backslash as the last character). Possessive: one pass, never a backtrack, in the regex engine
# rather than a Python loop per character (route tables of 100,000 routes, issue 25 item 6). An
# atomic group rather than ``(?:...)*+``: that is wrong on CPython 3.11.0-3.11.4 (gh-106052, see
# engine.queue.steps.PLAIN_TXN), the same code from 3.11.5.
_STRING_LITERAL = re.compile(r'"(?>(?:[^"\\]|\\[\s\S])*)(\\\Z)?(")?')


def string_end(text: str, pos: int) -> int:
    """Index of the ``"`` closing the string literal whose ``"`` is at ``pos`` (``\\"`` escapes a
    quote); ``len(text)`` or more when the literal is not closed."""
    m = _STRING_LITERAL.match(text, pos)
    if m is None:  # no quote at pos: as the character loop, the literal starts after it
        i, n = pos + 1, len(text)
        while i < n and text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        return i
    if m.group(2) is not None:
        return m.start(2)
    return len(text) + (1 if m.group(1) is not None else 0)


def _split_strings(text: str) -> list[tuple[bool, str]]:
    """Split ``text`` into (is_string_literal, chunk) pieces. Handles ``\\"`` inside strings."""
    out: list[tuple[bool, str]] = []
    n, start = len(text), 0
    while start < n:
        i = text.find('"', start)
        if i < 0:
            break
        if i > start:
            out.append((False, text[start:i]))
        j = string_end(text, i)
        out.append((True, text[i : j + 1]))
        start = j + 1
    if start < n:
        out.append((False, text[start:]))
    return out


def rewrite_time_calls(text: str) -> str:
    """Replace ``time()`` calls outside string literals with ``CurrentTime``."""
    if "(" not in text or "time" not in text.lower():
        return text
    return "".join(
        chunk if is_str else _TIME_CALL.sub("CurrentTime", chunk) for is_str, chunk in _split_strings(text)
    )


_LONE_BACKSLASH = re.compile(r'\\(?!")')


def old_to_new_syntax(text: str) -> str:
    """Old-ClassAd string literals keep backslashes literally (only ``\\"`` escapes a quote);
    new syntax treats ``\\`` as an escape. Double the lone backslashes inside strings so the strict
    new-syntax parser reads the same value (htcondor.md §3.1 "Values")."""
    if "\\" not in text:
        return text
    return "".join(
        '"' + _LONE_BACKSLASH.sub(r"\\\\", chunk[1:-1]) + '"' if is_str and len(chunk) >= 2 else chunk
        for is_str, chunk in _split_strings(text)
    )


MAX_OPERATORS = 10_000  # per expression; classad2 crashed at ~40,000 (see the module docstring)
_OPERATOR = re.compile(r"[-+*/%&|^<>=!?~:]+|[.\[(]")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?")
_SEPARATOR = re.compile(r"[,;]")


@functools.lru_cache(maxsize=16)  # a failing value is checked again by each caller
def longest_chain(text: str) -> int:
    """An upper bound of the operators in one expression of ``text``: the most operator tokens
    between two ``,``/``;`` separators, outside string literals and numbers. Cheap; 0 when
    ``text`` is shorter than :data:`MAX_OPERATORS` (it cannot hold more)."""
    if len(text) <= MAX_OPERATORS:
        return 0
    best = run = 0
    for is_str, chunk in _split_strings(text):
        if is_str:
            continue
        pieces = _SEPARATOR.split(_NUMBER.sub("0", chunk))
        for k, piece in enumerate(pieces):
            if k:
                run = 0
            run += _OPERATOR.subn("", piece)[1]
            best = max(best, run)
    return best


@functools.lru_cache(maxsize=16)
def _max_nesting(text: str) -> int:
    depth = best = 0
    for is_str, chunk in _split_strings(text):
        if is_str:
            continue
        for c in chunk:
            if c in "([{":
                depth += 1
                best = max(best, depth)
            elif c in ")]}":
                depth -= 1
    return best


def _clip(text: str, limit: int = 100) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"… ({len(text)} characters)"


def _skip_separators(text: str, pos: int) -> int:
    n = len(text)
    while pos < n:
        c = text[pos]
        if c.isspace() or c == ",":
            pos += 1
        elif text.startswith("/*", pos):
            end = text.find("*/", pos + 2)
            pos = n if end < 0 else end + 2
        elif text.startswith("//", pos) or c == "#":
            end = text.find("\n", pos)
            pos = n if end < 0 else end + 1
        else:
            break
    return pos


def _matching_bracket(text: str, pos: int) -> int:
    """Index of the ``]`` closing the ``[`` at ``pos`` (strings and comments skipped), or -1."""
    depth = 0
    i, n = pos, len(text)
    while i < n:
        m = _BRACKET_TOKEN.search(text, i)  # the next character that matters, found by the regex engine
        if m is None:
            return -1
        i, c = m.start(), m.group()
        if c == '"':
            i = string_end(text, i) + 1
            continue
        if c == "/*":
            end = text.find("*/", i + 2)
            if end < 0:
                return -1
            i = end + 2
            continue
        if c == "//":
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if c in "[{(":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


_BRACKET_TOKEN = re.compile(r'[\[\]{}()"]|/[*/]')


_SCOPE_PREFIX_CACHE: dict[str, re.Pattern[str]] = {}


def rewrite_scope_prefix(text: str, scope: str, replacement: str) -> str:
    """Rewrite ``scope.`` attribute prefixes (case-insensitive) outside string literals: e.g.
    ``TARGET.`` → ``""`` or ``TARGET.`` → ``MY.``, as HTCondor's RewriteAttrRefs does when it
    converts ClassAd routes (htcondor.md §1.2 "Converter rewrites")."""
    pat = _SCOPE_PREFIX_CACHE.get(scope.lower())
    if pat is None:
        pat = re.compile(r"(?<![\w.])" + re.escape(scope) + r"\s*\.\s*(?=[A-Za-z_])", re.IGNORECASE)
        _SCOPE_PREFIX_CACHE[scope.lower()] = pat
    if scope.lower() not in text.lower():
        return text
    prefix = f"{replacement}." if replacement else ""
    return "".join(chunk if is_str else pat.sub(prefix, chunk) for is_str, chunk in _split_strings(text))


def string_chunks(text: str) -> list[tuple[bool, str]]:
    """``text`` split into (is_string_literal, chunk) pieces, for lexical checks outside strings."""
    return _split_strings(text)


# ----------------------------------------------------- one reader of attribute text (issue 26)

def string_of(text: str | None) -> str | None:
    """The value of a ClassAd string literal as a queue log holds it (``"a \\"b\\""`` → ``a "b"``);
    None for anything else (absent, a number, an expression)."""
    if text is None or len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return None
    return text[1:-1].replace('\\"', '"')


def integer_of(text: str | None) -> int | None:
    """An integer attribute's value as ``EvaluateAttrInt`` reads a literal: ``3`` and ``3.0`` are 3
    (a real converts), anything else (absent, a string, ``nan``, an expression) is None."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value == value and abs(value) != float("inf") else None
