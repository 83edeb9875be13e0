"""Crondor field parsing, exactly as HTCondor's ``CronTab::expandParameter`` (htcondor.md §2.2).

Design decisions and invariants:

- The five fields are parsed the way HTCondor 25.14 parses them, quirks included: a character
  check (digits ``, - . / *`` and space only), spaces removed, empty items skipped, the step
  applied to the *absolute* value (``v % step == 0``), range ends clamped, an out-of-range single
  value meaning the whole field, day-of-week items containing ``*`` ignored, 7 folded to 0 before
  the step test. Numbers are read with C ``atoi`` semantics (``1.5`` is 1, ``*`` is 0).
- An empty expansion is an error for every field except day of week; step 0 is an error with no
  text. Error texts are HTCondor's, concatenated with no separator in field order. As the schedd
  runs ``validate()`` (the character check) before constructing the CronTab, the error a job sees
  is the concatenated character-check errors if there are any, else the expansion errors.
- ``None`` for a field means the attribute is absent, which HTCondor reads as ``*``. A non-string
  attribute is also read as ``*``; :mod:`engine.crondor.deferral` maps ads to these inputs.
- Parsed schedules are immutable, cached (:func:`parse_schedule`), and carry precomputed bit
  masks (bit *v* set when value *v* is allowed) so the next-run search does no set lookups.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

ATTRS = ("CronMinute", "CronHour", "CronDayOfMonth", "CronMonth", "CronDayOfWeek")
SUBMIT_NAMES = ("cron_minute", "cron_hour", "cron_day_of_month", "cron_month", "cron_day_of_week")
MINUTE, HOUR, DOM, MONTH, DOW = range(5)
LIMITS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))

# HTCondor's PCRE pattern is "[^\/0-9,-/*\ \/*]"; ",-/" inside the class is a range that also
# admits "." (htcondor.md §2.2 item 1).
_BAD_CHAR = re.compile(r"[^/0-9,\-./* ]")
_ATOI = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def atoi(text: str) -> int:
    """C ``atoi`` as glibc does it: ``(int) strtol(text, NULL, 10)``.

    Leading digits only (``"1.5"`` is 1, ``""`` and ``"*"`` are 0); strtol saturates at the
    ``long`` limits and the cast to ``int`` keeps the low 32 bits.
    """
    m = _ATOI.match(text)
    if not m:
        return 0
    v = int(m.group(1))
    v = max(-(2**63), min(2**63 - 1, v))
    v &= 0xFFFFFFFF
    return v - 2**32 if v >= 2**31 else v


@dataclass(frozen=True)
class Token:
    """One comma-separated item of a field, as HTCondor reads it (spaces already removed)."""

    text: str
    kind: str  # "range", "wildcard", "single"
    step: int  # 1 when there is no "/"; 0 makes the field invalid
    lo: int  # effective range after clamping (lo > hi: adds nothing)
    hi: int
    raw_lo: int | None = None  # range ends / single value as written (atoi), before clamping
    raw_hi: int | None = None
    ignored: bool = False  # day-of-week item containing "*" (adds nothing)
    values: tuple[int, ...] = ()


def split_tokens(text: str) -> list[str]:
    """Items of a field after removing spaces; empty items are dropped, as HTCondor does."""
    return [t for t in text.replace(" ", "").split(",") if t]


def read_token(tok: str, idx: int) -> Token:
    """Interpret one item: step, then range, then wildcard, then single value (§2.2 item 3)."""
    fmin, fmax = LIMITS[idx]
    step = 1
    body = tok
    if "/" in tok:
        body, _, after = tok.partition("/")
        step = atoi(after)
        if step == 0:
            return Token(tok, "single", 0, 1, 0)
    if "-" in body:
        before, _, after = body.partition("-")
        raw_lo, raw_hi = atoi(before), atoi(after)
        lo, hi = max(raw_lo, fmin), min(raw_hi, fmax)
        kind = "range"
    elif "*" in body:
        if idx == DOW:
            return Token(tok, "wildcard", step, fmin, fmax, ignored=True)
        raw_lo = raw_hi = None
        lo, hi, kind = fmin, fmax, "wildcard"
    else:
        raw_lo = raw_hi = atoi(body)
        lo, hi = (raw_lo, raw_lo) if fmin <= raw_lo <= fmax else (fmin, fmax)
        kind = "single"
    vals = set()
    for v in range(lo, hi + 1):
        if idx == DOW and v == 7:
            v = 0  # folded before the step test (htcondor.md §2.2, observed on 381 schedules)
        if v % step == 0:
            vals.add(v)
    return Token(tok, kind, step, lo, hi, raw_lo, raw_hi, values=tuple(sorted(vals)))


@dataclass(frozen=True)
class FieldResult:
    idx: int
    text: str | None  # as given; None = attribute absent
    values: tuple[int, ...]
    tokens: tuple[Token, ...]
    bad_chars: bool  # fails HTCondor's character check
    ok: bool
    error: str  # HTCondor's text for this field ("" when ok, or for step 0)


def expand_field(text: str | None, idx: int) -> FieldResult:
    attr = ATTRS[idx]
    src = "*" if text is None else text
    if _BAD_CHAR.search(src):
        return FieldResult(idx, text, (), (), True, False, f"Invalid parameter value '{src}' for {attr}")
    tokens = tuple(read_token(t, idx) for t in split_tokens(src))
    for t in tokens:
        if t.step == 0:
            # HTCondor returns before the empty-list check: invalid, with no error text.
            return FieldResult(idx, text, (), tokens, False, False, "")
    values = tuple(sorted({v for t in tokens for v in t.values}))
    if not values and idx != DOW:
        return FieldResult(idx, text, (), tokens, False, False, f"Invalid cron attribute: {src.replace(' ', '')}")
    return FieldResult(idx, text, values, tokens, False, True, "")


def _mask(values) -> int:
    m = 0
    for v in values:
        m |= 1 << v
    return m


def _low(x: int) -> int:
    return (x & -x).bit_length() - 1


def _values_of(index: int) -> property:
    """A read-only attribute: the allowed values (ascending) of field ``index`` (MINUTE … DOW)."""

    def values(self: Schedule) -> tuple[int, ...]:
        return self.fields[index].values

    return property(values)


@dataclass(frozen=True, eq=False)
class Schedule:
    """A parsed crondor schedule. Invariant: ``valid`` implies every mask below is non-zero
    (except ``dow_mask``, where 0 means "not restricted")."""

    texts: tuple[str | None, ...]
    fields: tuple[FieldResult, ...]
    valid: bool
    error: str | None  # HTCondor's error text when invalid (may be "", e.g. for "*/0")
    minute_mask: int = 0
    hour_mask: int = 0
    dom_mask: int = 0  # bits 1..31
    month_mask: int = 0  # bits 1..12
    dow_mask: int = 0  # bits 0..6
    minute0: int = 0  # first allowed minute / hour
    hour0: int = 0
    month0: int = 1
    # "dom": day-of-month list only; "dow": weekdays only; "union": either (documented rule).
    day_rule: str = "dom"
    # HTCondor >= 10.3 day-0 defect applies (DOM unrestricted, DOW has 1..6 days; §2.3 item 4).
    schedd_defect: bool = False
    # For each weekday of the 1st of a month (0 = Sunday): the days 1..31 that fall on an allowed
    # weekday, as a bit mask.
    dow_day_masks: tuple[int, ...] = field(default=(), repr=False)

    minutes = _values_of(MINUTE)
    hours = _values_of(HOUR)
    doms = _values_of(DOM)
    months = _values_of(MONTH)
    dows = _values_of(DOW)

    @property
    def absent(self) -> bool:
        """No cron attribute at all: not a cron job (``needsCronTab`` is false)."""
        return all(t is None for t in self.texts)


@functools.lru_cache(maxsize=4096)
def parse_schedule(
    minute: str | None = None,
    hour: str | None = None,
    dom: str | None = None,
    month: str | None = None,
    dow: str | None = None,
) -> Schedule:
    """Parse the five fields (``None`` = attribute absent). Never raises on bad input: an
    invalid schedule has ``valid=False`` and HTCondor's ``error`` text."""
    texts = (minute, hour, dom, month, dow)
    fields = tuple(expand_field(t, i) for i, t in enumerate(texts))
    if not all(f.ok for f in fields):
        bad = [f.error for f in fields if f.bad_chars]
        error = "".join(bad) if bad else "".join(f.error for f in fields)
        return Schedule(texts, fields, False, error)
    dows = fields[DOW].values
    dom_full = len(fields[DOM].values) == 31
    if not dows:
        rule = "dom"
    elif dom_full:
        rule = "dow"
    else:
        rule = "union"
    dow_mask = _mask(dows)
    day_masks = []
    for first in range(7):
        m = 0
        for day in range(1, 32):
            if (dow_mask >> ((first + day - 1) % 7)) & 1:
                m |= 1 << day
        day_masks.append(m)
    return Schedule(
        texts,
        fields,
        True,
        None,
        minute_mask=_mask(fields[MINUTE].values),
        hour_mask=_mask(fields[HOUR].values),
        dom_mask=_mask(fields[DOM].values),
        month_mask=_mask(fields[MONTH].values),
        dow_mask=dow_mask,
        minute0=fields[MINUTE].values[0],
        hour0=fields[HOUR].values[0],
        month0=fields[MONTH].values[0],
        day_rule=rule,
        schedd_defect=dom_full and 0 < len(dows) < 7,
        dow_day_masks=tuple(day_masks),
    )


def ranges_text(values: tuple[int, ...]) -> str:
    """``"1,2,3"`` as the oracle prints a CronTab's expanded range."""
    return ",".join(str(v) for v in values)
