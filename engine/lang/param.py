"""How HTCondor reads a config value as a list, a boolean or a number (``StringList``,
``param_boolean``, ``string_is_long_param`` / ``string_is_double_param``): the readers of
:class:`engine.lang.config.Config`'s ``get_bool``/``get_int``/``get_float`` and of the router's
knobs. Split out of ``config.py``, which reads the files."""

from __future__ import annotations

import re

from engine import classad as ca


def split_list(value: str | None) -> list[str]:
    """HTCondor StringList split (commas and/or whitespace), e.g. ``JOB_ROUTER_ROUTE_NAMES``."""
    return [item for item in re.split(r"[\s,]+", (value or "").strip()) if item]


def parse_bool(value: str) -> bool | None:
    """``param_boolean``: true/false/1/0 (whole word), else a ClassAd expression; None if invalid."""
    s = value.strip()
    for word, result in (("true", True), ("1", True), ("false", False), ("0", False)):
        if s[: len(word)].lower() == word and not s[len(word):].strip():
            return result
    try:
        v = ca.evaluate(ca.parse_expr(s))
    except ca.ClassAdError:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, ca.Value):
        return v != 0
    return None


def parse_number(value: str, *, want_int: bool) -> int | float | None:
    """``string_is_long_param`` / ``string_is_double_param``: a literal, else a ClassAd number."""
    s = value.strip()
    try:
        return int(s, 10) if want_int else float(s)
    except ValueError:
        pass
    try:
        v = ca.evaluate(ca.parse_expr(s))
    except ca.ClassAdError:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or isinstance(v, ca.Value):
        return None
    if want_int and isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return None  # 1e400 evaluates to infinity, which no integer holds
    return int(v) if want_int else float(v)
