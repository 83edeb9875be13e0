"""The schedd the recorder tests follow: the shipped 3-hour recording written into ``tmp_path``'s
``job_queue.log`` a step at a time, compacted as the schedd compacts (tests/helpers/compaction.py)."""

from __future__ import annotations

import pytest

from tests.engine.record.test_recorder import _DATA
from tests.helpers.compaction import ScheddLog


@pytest.fixture
def schedd(tmp_path):
    return ScheddLog(tmp_path / "job_queue.log", _DATA)
