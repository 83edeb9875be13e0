"""Where HTCondor stops reading a transform: the ``TRANSFORM`` statement.

``MacroStreamXFormSource::open`` (``src/condor_utils/xform_utils.cpp``), which the job router
uses for every ``JOB_ROUTER_ROUTE_<name>`` and ``JOB_ROUTER_TRANSFORM_<name>``, reads the text
line by line and ``break``s at the first physical line that is a ``TRANSFORM`` statement
(``at_end = true``): the statements after it are never loaded. :func:`cut_at_transform` makes
RouteDeck read the same text, and says what was dropped so ``check`` can warn.

Decision (issue 17 item 11): ``TRANSFORM`` iteration itself (``condor_transform_ads`` output of
several ads, and the schedd's ``JOB_TRANSFORM_*`` rules-file semantics: a file skipped when its
``REQUIREMENTS`` fail, iteration arguments macro-expanded by ``init_iterator``) is not modelled.
RouteDeck re-implements the Job Router and crondor; the schedd's own transforms are outside that
scope, and the former ``apply_all`` that sketched them was called by nothing and ignored all
three rules, so it was deleted rather than kept half right. The router never iterates: a
``TRANSFORM`` line in a route only ends the route's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# is_xform_statement(buf, "transform"): the keyword, then a whitespace character (so a bare
# "TRANSFORM" at the end of a line is not one), and no '=' or ':' after the blanks.
_TRANSFORM_WORD = re.compile("transform", re.IGNORECASE)  # as _TRANSFORM_LINE matches it
_TRANSFORM_LINE = re.compile(r"[ \t\f\v]*transform[ \t\f\v](?![ \t\f\v]*[=:])", re.IGNORECASE)


@dataclass(frozen=True)
class TransformCut:
    text: str  # the text HTCondor loads (up to and including the TRANSFORM line)
    transform_line: int | None  # 1-based line of the TRANSFORM statement, None when there is none
    dropped_lines: list[int]  # 1-based lines after it that hold something other than blanks/comments


def cut_at_transform(text: str) -> TransformCut:
    """The part of ``text`` that ``MacroStreamXFormSource::open`` loads."""
    if not _TRANSFORM_WORD.search(text):  # a route body without the word: nothing to cut (one scan)
        return TransformCut(text, None, [])
    lines = re.split(r"\r\n|\r|\n", text)
    for i, line in enumerate(lines):
        if _TRANSFORM_LINE.match(line):
            dropped = [j + 1 for j in range(i + 1, len(lines))
                       if lines[j].strip() and not lines[j].lstrip().startswith("#")]
            return TransformCut("\n".join(lines[: i + 1]) + "\n", i + 1, dropped)
    return TransformCut(text, None, [])
