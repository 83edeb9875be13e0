"""The check every feed's "taking a snapshot changes nothing" test makes (issue 26)."""

from __future__ import annotations

from typing import Any, Callable


def two_equal_snapshots(take: Callable[[], Any], state: Callable[[], Any]) -> Any:
    """Take two snapshots in a row: they are equal and ``state()`` (what a snapshot must not
    change) is as it was before either. Returns the snapshot."""
    before = state()
    one = take()
    assert state() == before
    two = take()
    assert one == two
    assert state() == before
    return one
