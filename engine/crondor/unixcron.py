"""How Unix cron (Vixie cron / cronie, ``entry.c``) would read one crondor field, for lints.

Design decisions and invariants:

- Only what the lints compare is modelled: an item is ``*`` or ``N`` or ``N-M``, a step ``/S``
  only after ``*`` or a range and counted from the range start, names (``jan``, ``mon``) in the
  month and weekday fields, values outside the field rejected, ``N > M`` rejected, step 0
  rejected, no empty items, no spaces (a space ends the field). Day of week is 0–7, 7 = Sunday.
- The day rule: cron ORs day of month and day of week unless either field *starts with* ``*``,
  in which case it ANDs them (``DOM_STAR`` / ``DOW_STAR`` in cron.c).
- ``None`` from :func:`cron_item` / :func:`cron_field` means "cron rejects the line".
"""

from __future__ import annotations

import re

from .fields import DOW, LIMITS, MONTH

MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
DOW_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")
_NUM = re.compile(r"^(?:[0-9]+|[A-Za-z]+)$")


def _number(text: str, idx: int) -> int | None:
    if not _NUM.match(text):
        return None
    if text.isdigit():
        return int(text)
    names = MONTH_NAMES if idx == MONTH else DOW_NAMES if idx == DOW else ()
    low = text.lower()
    for i, name in enumerate(names):
        if low == name:
            return i + (1 if idx == MONTH else 0)
    return None


def cron_item(item: str, idx: int) -> frozenset[int] | None:
    """Values of one list item as cron reads it (7 folded to 0 for weekdays), or None."""
    lo_f, hi_f = LIMITS[idx]
    body, slash, step_text = item.partition("/")
    if body == "*":
        lo, hi = lo_f, hi_f
    else:
        a, dash, b = body.partition("-")
        lo = _number(a, idx)
        if lo is None:
            return None
        if dash:
            hi = _number(b, idx)
            if hi is None or lo > hi:
                return None
        elif slash:
            return None  # "N/S": a single number may not take a step
        else:
            hi = lo
    step = 1
    if slash:
        if not step_text.isdigit() or int(step_text) == 0:
            return None
        step = int(step_text)
    if lo < lo_f or hi > hi_f:
        return None
    vals = {0 if (idx == DOW and v == 7) else v for v in range(lo, hi + 1, step)}
    return frozenset(vals)


def cron_field(text: str | None, idx: int) -> frozenset[int] | None:
    """The whole field as cron reads it; ``None`` (absent) is ``*``."""
    text = "*" if text is None else text.strip()
    if not text or " " in text or "\t" in text:
        return None  # empty field, or a space that would split it into two fields
    out: set[int] = set()
    for item in text.split(","):
        vals = cron_item(item, idx)
        if vals is None:
            return None
        out |= vals
    return frozenset(out)


def cron_star(text: str | None) -> bool:
    """cron's DOM_STAR / DOW_STAR: the field starts with ``*`` (an absent field is ``*``)."""
    return text is None or text.strip().startswith("*")
