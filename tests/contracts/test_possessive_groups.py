"""No possessive repeat of a group (``(...)*+``, ``(...)++``, ``(...)?+``, ``(...){m,n}+``) in a
regex of engine/ or tui/: CPython 3.11.0-3.11.4, which ``requires-python = ">=3.11"`` admits,
match it wrongly when the group can backtrack (gh-106052: "Possessive quantifier matches where an
ordinary quantifier doesn't", fixed in 3.11.5). Write it as an atomic group, ``(?>(...)*)``, which
is right on every 3.11 (and what 3.11.5 made ``x*+`` mean). A possessive single character or class
(``[!-~]++``) is not affected."""

from __future__ import annotations

import re

from tests.helpers.paths import REPO

_GROUP_POSSESSIVE = re.compile(r"\)(?:[*+?]|\{\d*(?:,\d*)?\})\+")


def test_no_possessive_repeat_of_a_group():
    found = []
    for folder in ("engine", "tui"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if line.lstrip().startswith("#") or "``" in line:  # comments and docstrings naming the form
                    continue
                if _GROUP_POSSESSIVE.search(line):
                    found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)
