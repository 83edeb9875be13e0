"""Count the calls of a function, patched where its callers look it up (growth shown by work counted)."""

from __future__ import annotations

from typing import Any


def count_calls(monkeypatch: Any, real: Any, *places: tuple[Any, str]) -> list[int]:
    """Patch ``real`` at each ``(owner, name)`` with a counting wrapper; the one-item list counts
    (``owner`` may lack ``name``: a place the code before a fix looked it up)."""
    calls = [0]

    def counting(*a: Any, **k: Any) -> Any:
        calls[0] += 1
        return real(*a, **k)

    for owner, name in places:
        monkeypatch.setattr(owner, name, counting, raising=False)
    return calls
