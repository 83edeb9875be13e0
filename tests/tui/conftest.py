"""Fixtures of the Pilot tests in this folder."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _pilot_idle_in_short_steps(monkeypatch):
    """Pilot's wait for an idle app in 5 ms steps, not 20 ms (tests/helpers/pilot_waits.py)."""
    from tests.helpers.pilot_waits import idle_in_short_steps  # noqa: PLC0415 - textual only when tests run

    idle_in_short_steps(monkeypatch)
