"""Fixtures of the Pilot tests in this folder."""
from __future__ import annotations

from tests.helpers.pilot_waits import pilot_idle_in_short_steps  # noqa: F401 - autouse here
