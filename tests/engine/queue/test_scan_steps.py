"""``engine.queue.steps.scan_steps``: the cyclic collector is paused for a scan and resumed as it
was (issue 27: the collector's full passes cost about a third of a scan's CPU,
``bench/scan_steps.py``); the steps it gives are unchanged."""

import gc

import pytest

from engine.queue.steps import scan_steps

LOG = b"107 1 CreationTimestamp 0\n105 \n101 1.0 Job Machine\n103 1.0 JobStatus 1\n106 # 2026-11-21T00:00:00\n"


class _Sink:
    applied: list

    def __init__(self) -> None:
        self.applied = []

    def apply_quiet(self, records: list) -> int:
        self.applied.append(list(records))
        return 0


def test_collector_paused_during_the_scan_and_resumed():
    seen = []
    assert gc.isenabled()
    sink = _Sink()
    scan_steps(LOG, 0, len(LOG), sink, lambda *_a: seen.append(gc.isenabled()), None)
    assert seen == [False]
    assert gc.isenabled()
    assert sink.applied == [[(101, "1.0", "Job", "Machine"), (103, "1.0", "JobStatus", "1")]]


def test_collector_left_off_when_it_was_off():
    gc.disable()
    try:
        scan_steps(LOG, 0, len(LOG), _Sink(), None, None)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_collector_resumed_when_a_callback_raises():
    def boom(*_a):
        raise RuntimeError("callback")

    with pytest.raises(RuntimeError):
        scan_steps(LOG, 0, len(LOG), _Sink(), boom, None)
    assert gc.isenabled()
