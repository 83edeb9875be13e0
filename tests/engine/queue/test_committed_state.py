"""``committed_state`` (replay's fast loader) takes replay's rule for a ``101`` of an ad that
exists — ignored, as ``JobQueue.apply`` does — instead of giving up: the same state as the step
by step reading, at the fast loader's cost (days of demo history re-submit live cluster ids, and
a seek into them fell back to the step scanner: issue 27's ``replay DIR --at``)."""

from __future__ import annotations

from engine.queue.reader import committed_state
from engine.queue.steps import scan_steps
from engine.queue.jobqueue import JobQueue

TEXT = b"""107 1 CreationTimestamp 1795219200
101 0.0 Job Machine
103 0.0 NextClusterNum 3
101 01.-1 Job Machine
103 01.-1 Owner "alice"
101 1.0 Job Machine
103 1.0 JobStatus 1
105 
101 01.-1 Job Machine
103 01.-1 Owner "bob"
101 1.0 Job Machine
103 1.0 JobStatus 2
106 # 2026-11-21T00:00:01.000000
105 
102 1.0
106 # 2026-11-21T00:00:02.000000
"""


def _stepwise(data: bytes) -> JobQueue:
    q = JobQueue()
    scan_steps(data, 0, len(data), q, None, None)
    return q


def test_a_new_ad_for_an_existing_key_is_ignored_as_step_by_step_reading_does():
    fast = committed_state(TEXT)
    assert fast is not None
    slow = _stepwise(TEXT)
    assert dict(fast._ads) == dict(slow._ads) == {"0.0": {"NextClusterNum": "3"}, "01.-1": {"Owner": '"bob"'}}
    assert fast._types == slow._types
    assert fast.get("1.0") is None and len(fast) == 0
