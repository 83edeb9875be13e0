"""Fixtures the whole suite shares."""
from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend():
    """Textual's `App.run_test()` runs under anyio; the suite runs it on asyncio only."""
    return "asyncio"
