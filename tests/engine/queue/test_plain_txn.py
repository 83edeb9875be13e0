"""``steps.PLAIN_TXN`` (the plain-transaction pattern of replay's step scanner and the recorder's
catch-up) matches exactly what its first form matched, with the same groups: that form found a
value's visible character by a lookahead and let the records be backtracked into; the one-pass
form takes them possessively and atomically (a cheaper match, the same result).

An equivalence guard for that rewrite: it passes on the first form by construction, and pins
PLAIN_TXN to a copy of that form (``LOOKAHEAD_FORM``), so an intended change of what the pattern
matches changes or removes this oracle. The values hold the characters around the value class's
visible/invisible boundary (space, tab, CR, VT, FF, NUL, DEL, non-ASCII): the part the one-pass
form changed."""

from __future__ import annotations

import random
import re

from engine.queue.steps import PLAIN_TXN
from engine.queue.timeline import STAMP

# the pattern as it was written before the one-pass form
LOOKAHEAD_FORM = re.compile(r"105 \n((?:103 [!-~]+ [!-~]+ (?=[^\n]*[!-~])[^\n]*\n|102 [!-~]+\n"
                            r"|101 [!-~]+ [!-~]+ [!-~]+\n)*)(106(?: (?:" + STAMP + r"(?=\n)|#[^\n]*)?)?)\n").match

PIECES = ["1.0", "01.-1", "Job", "Machine", "x", "a\tb", "é", "\0", "", " ", "  ", "\x7f", "\x1f", "106", "#", "\r",
          "\x0b"]
VALUES = ["1", '"s p a c e s"', " ", "  ", "\t", " x", "x ", "\0", "é", "\x7f", "", "\tx\t", "106 #", "\r", "x\r",
          "\x0b\x0cx", "\r\x0b"]
ENDS = ["106 \n", "106\n", "106 #\n", "106 # 2026-11-21T00:00:00.000000\n", "106 # 2026-11-21T00:00:00 x\n",
        "106 #NONDURABLE\n", "106 x\n", "106", "106 # 2026-13-99T99:99:99\n", "10\n"]


def _line(rng: random.Random) -> str:
    op = rng.choice(("101", "102", "103", "103", "103", "104", "105", "10", "103 "))
    n = {"101": 3, "102": 1, "103": 2}.get(op, rng.randrange(0, 3))
    parts = [op] + [rng.choice(PIECES) for _ in range(n)]
    if op == "103":
        parts.append(rng.choice(VALUES))
    return rng.choice((" ", " ", "  ")).join(parts) + rng.choice(("\n", "\n", "\n", " \n", ""))


def test_one_pass_form_matches_as_the_lookahead_form():
    rng = random.Random(27)
    checked = matched = 0
    for _ in range(20000):
        text = rng.choice(("105 \n", "105 \n", "105\n", "")) + "".join(_line(rng) for _ in range(rng.randrange(0, 6)))
        text += rng.choice(ENDS) + rng.choice(("", "105 \n103 1.0 A 1\n106 \n"))
        start = rng.choice((0, 0, 1))
        old, new = LOOKAHEAD_FORM(text, start), PLAIN_TXN(text, start)
        assert (old is None) == (new is None), text
        if old is not None:
            assert (old.span(), old.groups()) == (new.span(), new.groups()), text
            matched += 1
        checked += 1
    assert matched > 500  # (the random texts are plain often enough to compare the groups)
