"""The string-literal and bracket scans of engine/classad_text.py run in the regex engine (issue 25
item 6: a JOB_ROUTER_ENTRIES of 100,000 routes was walked one character at a time in Python).
The per-character readings they replace are restated here as oracles (checked equal to the old
loops); the scans must agree with them on every text, hostile ones included (unterminated strings, a backslash last, comments, nesting).
Old-ClassAd strings: only ``\\"`` escapes a quote, so a backslash takes the next character along
(htcondor.md §3.1 "Values")."""

from __future__ import annotations

import random

import pytest

from engine.classad_text import _matching_bracket, _split_strings


def old_split_strings(text: str) -> list[tuple[bool, str]]:
    """The per-character reading: outside a string a quote opens one; inside, a backslash takes
    the next character along and a quote closes it; an unclosed string runs to the end."""
    out: list[tuple[bool, str]] = []
    cur, in_str, i = "", False, 0
    while i < len(text):
        c = text[i]
        if in_str and c == "\\":
            cur += text[i : i + 2]
            i += 2
            continue
        if c == '"':
            if in_str:
                out.append((True, cur + c))
                cur = ""
            else:
                if cur:
                    out.append((False, cur))
                cur = c
            in_str = not in_str
        else:
            cur += c
        i += 1
    if cur:
        out.append((in_str, cur))
    return out


def old_matching_bracket(text: str, pos: int) -> int:
    """The per-character reading, one mode at a time: code, a string, a block or a line comment."""
    depth, i, mode = 0, pos, "code"
    while i < len(text):
        c, two = text[i], text[i : i + 2]
        step = 1
        if mode == "string":
            step = 2 if c == "\\" else 1
            mode = "code" if c == '"' else mode
        elif mode == "block":
            step, mode = (2, "code") if two == "*/" else (1, mode)
        elif mode == "line":
            mode = "code" if c == "\n" else mode
        elif c == '"':
            mode = "string"
        elif two in ("/*", "//"):
            step, mode = 2, "block" if two == "/*" else "line"
        elif c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
            if depth == 0:
                return i
        i += step
    return -1


PIECES = ['"', "\\", '\\"', "[", "]", "{", "}", "(", ")", "/", "*", "/*", "*/", "//", "\n", " ", "a", "x = 1;",
          '"s"', "é", "#", ","]


@pytest.mark.parametrize("seed", range(40))
def test_scans_agree_with_the_per_character_loops(seed):
    rng = random.Random(seed)
    for _ in range(500):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 25)))
        assert _split_strings(text) == old_split_strings(text), repr(text)
        for pos in {0, text.find("["), len(text) // 2}:
            if pos >= 0:
                assert _matching_bracket(text, pos) == old_matching_bracket(text, pos), (repr(text), pos)


def test_scans_on_the_edge_cases():
    for text in ['"a\\', '"a\\"', '"', 'x "a" "', '"a\\\\"b', '[ "]" ]', "[ /* ] */ ]", "[ // ]\n ]", "[ /* ]",
                 "[[]", '[ "\\" ] ', "[ a = \"x\\\"]\" ]"]:
        assert _split_strings(text) == old_split_strings(text), repr(text)
        assert _matching_bracket(text, 0) == old_matching_bracket(text, 0), repr(text)
