"""Finding a route's text in the config file it came from (for the detail screen and editor).

The router reports where each route was defined (``RouteView.location`` = ``file:line``). This
module only cuts the definition out of that file for display, following the config language's
block shapes: ``NAME @=tag … @tag`` blocks, ``[ … ]`` ClassAd entries (brackets counted outside
strings) and ``\\`` continuation lines. It never interprets the route.
"""

from __future__ import annotations

import re


def split_location(location: str | None) -> tuple[str, int] | None:
    if not location:
        return None
    path, _, line = location.rpartition(":")
    if not path or not line.isdigit():
        return None
    return path, int(line)


def cut_definition(lines: list[str], start: int) -> tuple[int, int]:
    """0-based ``[first, end)`` lines of the definition starting at 0-based ``start``."""
    first = lines[start] if start < len(lines) else ""
    m = re.search(r"@=(\w+)\s*$", first)
    if m:
        tag = "@" + m.group(1)
        for k in range(start + 1, len(lines)):
            if lines[k].strip().startswith(tag):
                return start, k + 1
        return start, len(lines)
    if "[" in first:
        depth, in_str = 0, False
        for k in range(start, len(lines)):
            prev = ""
            for ch in lines[k]:
                if ch == '"' and prev != "\\":
                    in_str = not in_str
                elif not in_str and ch == "[":
                    depth += 1
                elif not in_str and ch == "]":
                    depth -= 1
                prev = ch
            if depth <= 0 and k >= start:
                return start, k + 1
        return start, len(lines)
    k = start
    while k < len(lines) and lines[k].rstrip().endswith("\\"):
        k += 1
    return start, min(k + 1, len(lines))


def route_text(location: str | None) -> tuple[str, str] | None:
    """``(path:line, text)`` of a route's definition, or None when the file cannot be read."""
    where = split_location(location)
    if where is None:
        return None
    path, line = where
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    if not 1 <= line <= len(lines):
        return None
    a, b = cut_definition(lines, line - 1)
    return f"{path}:{line}", "\n".join(lines[a:b])
