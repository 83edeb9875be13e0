"""The string-literal and bracket scans of engine/classad_text.py run in the regex engine (issue 25
item 6: a JOB_ROUTER_ENTRIES of 100,000 routes was walked one character at a time in Python).
The per-character loops they replace are kept here as oracles; the scans must agree with them on
every text, hostile ones included (unterminated strings, a backslash last, comments, nesting).
Old-ClassAd strings: only ``\\"`` escapes a quote, so a backslash takes the next character along
(htcondor.md §3.1 "Values")."""

from __future__ import annotations

import random

import pytest

from engine.classad_text import _matching_bracket, _split_strings


def old_split_strings(text: str) -> list[tuple[bool, str]]:
    out: list[tuple[bool, str]] = []
    n, start = len(text), 0
    while start < n:
        i = text.find('"', start)
        if i < 0:
            break
        if i > start:
            out.append((False, text[start:i]))
        j = i + 1
        while j < n and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        out.append((True, text[i : j + 1]))
        start = j + 1
    if start < n:
        out.append((False, text[start:]))
    return out


def old_matching_bracket(text: str, pos: int) -> int:
    depth = 0
    i, n = pos, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                return -1
            i = end + 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
            if depth == 0:
                return i
        i += 1
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
