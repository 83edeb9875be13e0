"""``TRANSFORM`` iteration (condor_transform_ads multi-ad output; the router never iterates).

Forms (submit ``queue`` grammar, ``MacroStreamXFormSource::parse_iterate_args``):
``TRANSFORM N``, ``TRANSFORM [N] var[, var…] in (a, b, c)``,
``TRANSFORM [N] var[, var…] from (`` inline lines ``)`` and ``TRANSFORM [N] vars from <file>``.

Design decisions and invariants:

- Output order is item by item, and within an item step 0..N-1 (htcondor.md §6:
  ``TRANSFORM 2 … in (2.0, 100, "test")`` gives 2.0, 2.0, 100, 100, "test", "test").
- Each output starts from a copy of the input ad and of the caller's macro set, with the loop
  variables and ``Step``/``Row``/``ItemIndex``/``Iterating`` set as live macros.
- With several variables, the first gets the item up to the first separator (comma, space,
  tab) and the last gets the rest (``set_iter_item``).
- ``matching`` (file globs) is not supported: an :class:`XformError`. So is a plan of more than
  ``MAX_OUTPUTS`` ads (``TRANSFORM 1000000000``; HTCondor would try).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from engine.lang.xform_apply import MacroSet
from engine.lang.xform_parse import XformError

if TYPE_CHECKING:
    from engine.lang.config import Config
    from engine.lang.xform import Transform


MAX_OUTPUTS = 100_000


def iteration_plan(xf: "Transform", base_dir: Path | None = None) -> tuple[int, list[str], list[str | None]]:
    """(count, loop variable names, items) for the transform's TRANSFORM statement."""
    args = (xf.transform_args or "").strip()
    m = re.match(r"(\d+)?\s*(.*)$", args, re.DOTALL)
    count = int(m.group(1)) if m and m.group(1) else 1
    rest = m.group(2).strip() if m else ""
    if not rest:
        return count, [], [None]
    m = re.match(r"(.*?)\s*\b(in|from|matching)\b\s*(.*)$", rest, re.IGNORECASE | re.DOTALL)
    if m is None:
        raise XformError(0, 0, f"invalid TRANSFORM statement: {args}")
    variables = [v for v in re.split(r"[\s,]+", m.group(1)) if v] or ["Item"]
    mode, source = m.group(2).lower(), m.group(3).strip()
    if mode == "matching":
        raise XformError(0, 0, "TRANSFORM … matching is not supported")
    if mode == "in":
        inner = source[1:-1] if source.startswith("(") and source.endswith(")") else source.lstrip("(")
        return count, variables, [item for item in re.split(r"[\s,]+", inner.strip()) if item]
    if source == "(":
        lines = list(xf.transform_items)
    elif source.startswith("(") and source.endswith(")"):
        lines = [source[1:-1].strip()]
    else:
        path = Path(source)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        try:
            lines = [ln.strip() for ln in path.read_text().splitlines()]
        except OSError as exc:
            raise XformError(0, 0, f"cannot read TRANSFORM items from {source}: {exc.strerror}") from None
    return count, variables, [ln for ln in lines if ln and not ln.startswith("#")]


def split_item(item: str, variables: list[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    rest = item
    for i, var in enumerate(variables):
        if i == len(variables) - 1:
            values[var] = rest
            break
        m = re.match(r"([^,\s]*)[,\s]*(.*)$", rest, re.DOTALL)
        values[var], rest = (m.group(1), m.group(2)) if m else (rest, "")
    return values


def apply_all(xf: "Transform", ad: dict[str, str], *, macros: MacroSet | None = None,
              config: "Config | None" = None, now: float | None = None,
              base_dir: Path | None = None) -> tuple[list[dict[str, str]], list[str]]:
    """All output ads for one input ad, and the warnings."""
    count, variables, items = iteration_plan(xf, base_dir)
    if count * len(items) > MAX_OUTPUTS:  # TRANSFORM 1000000000 would never finish
        raise XformError(0, 0, f"TRANSFORM would make {count * len(items)} ads "
                         f"(RouteDeck stops at {MAX_OUTPUTS})")
    outputs: list[dict[str, str]] = []
    warnings: list[str] = []
    iterating = "1" if (variables or count > 1) else "0"
    for row, item in enumerate(items):
        for step in range(count):
            out = dict(ad)
            live = MacroSet(dict((macros or MacroSet()).items()))
            for name, value in split_item(item or "", variables).items():
                live[name] = value
            for name, value in (("Step", step), ("Row", row), ("ItemIndex", row), ("Iterating", iterating)):
                live[name] = str(value)
            warnings += xf.apply(out, macros=live, config=config, now=now)
            outputs.append(out)
    return outputs, warnings
