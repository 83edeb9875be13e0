"""Where the suite's files are: the tests folder, its data, and the repository root."""
from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
DATA = TESTS / "data"
REPO = TESTS.parent
