"""The shipped 3-hour recording, compacted as a schedd compacts it, recorded and replayed (issue 27).

Source: sample_configs/recordings/demo-3h.job_queue.log (19,454 transactions). Compaction:
htcondor.md §3.4 (``TruncateClassAdLog``), by ``QueueLogWriter.compact`` (tests/helpers/compaction.py),
every 20 minutes of the recording's time (the schedd's ``QUEUE_CLEAN_INTERVAL`` is 8 h; a 3-hour
recording needs a shorter one to hold several generations). The recorder polls at uneven
intervals, some of them after a compaction it did not see (the rest of the old generation comes
from the rotated copy). Replayed at 1,000 transaction boundaries, the archive equals the
uncompacted recording: counts per JobStatus and per route, and every ad.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.feeds.replay.archive import open_archive
from engine.record.recorder import Recorder
from tests.helpers.compaction import ScheddLog, steps_of
from tests.helpers.paths import REPO

DEMO = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"


def routes(q) -> Counter:
    """Jobs (proc ads) per RouteName, read as the queue reads an attribute: the proc ad's, else its
    cluster ad's ``0<c>.-1`` (engine.queue.jobqueue; a routed copy's RouteName is in its cluster
    ad). A queue holds each attribute name in one spelling, the first it saw (the same module; the
    replay index looks its time attributes up the same way), so the ads are read at that
    spelling: lower-casing every name of every ad was half this test's CPU. :func:`routes_by_scan`
    checks that rule where the whole state is compared."""
    name = q.spelling("RouteName")
    out: Counter = Counter()
    table = q.table
    for key, ad in table.items():
        c, _, p = key.partition(".")
        if p.isdigit():
            v = ad.get(name)
            out[v if v is not None else table.get("0" + c + ".-1", _NO_AD).get(name)] += 1
    return out


def routes_by_scan(q) -> Counter:
    """:func:`routes` without the queue's spelling: an ad's first name that is RouteName in any case."""
    return _routes(q, lambda ad: next((v for n, v in ad.items() if n.lower() == "routename"), None))


def _routes(q, route_of) -> Counter:
    out: Counter = Counter()
    table = q.table
    for key, ad in table.items():
        c, _, p = key.partition(".")
        if p.isdigit():
            v = route_of(ad)
            out[v if v is not None else route_of(table.get("0" + c + ".-1", _NO_AD))] += 1
    return out


_NO_AD: dict = {}


@pytest.mark.slow
def test_the_demo_recording_compacted_recorded_and_replayed(tmp_path, shipped_index):
    data = DEMO.read_bytes()
    ref = shipped_index("UTC")  # build_index(DEMO, tz="UTC"), shared (tests/helpers/shipped_index.py)
    header, steps = steps_of(data)
    assert len(steps) == ref.steps
    log = ScheddLog(tmp_path / "job_queue.log", data)
    rec = Recorder(log.path, tmp_path / "archive", tz="UTC", segment_bytes=1 << 20)
    rng = random.Random(27)
    now = 0.0
    next_clean = ref.times[0] + 1200
    compactions = 0
    while not log.finished:
        log.advance(rng.randint(1, 400))
        if ref.times[log.done - 1] >= next_clean:
            log.compact()
            compactions += 1
            next_clean += 1200
            if rng.random() < 0.5:  # sometimes more transactions before the recorder looks again
                log.advance(rng.randint(1, 100))
        now += 1
        rep = rec.poll(now, flush=rng.random() < 0.7)
        assert rep.gaps == [] and rep.problems == []
    rec.poll(now + 1, flush=True)
    assert compactions >= 8 and log.seq == compactions + 1

    arch = open_archive(tmp_path / "archive", tz="UTC")
    got = arch.index
    assert got.steps == ref.steps and not arch.gaps and len(arch.generations) == compactions + 1
    assert list(got.times) == list(ref.times)
    boundaries = set(rng.sample(range(ref.steps), 1000)) | {0, ref.steps - 1}
    a, b = got.state_at(0), ref.state_at(0)
    checked = 0
    for i in range(ref.steps):
        if i:
            got.advance(a, i - 1, i)
            ref.advance(b, i - 1, i)
        if i in boundaries:
            assert a.counts_by_status() == b.counts_by_status(), i
            assert routes(a) == routes(b), i
            if checked % 50 == 0:
                assert a.snapshot_state() == b.snapshot_state(), i
                assert routes_by_scan(a) == routes(a) and routes_by_scan(b) == routes(b), i
            checked += 1
    assert checked == len(boundaries)
    assert a.snapshot_state() == b.snapshot_state()
    # the archive is much smaller than the log it replaces
    size = sum(f.stat().st_size for f in (tmp_path / "archive").iterdir())
    assert size < 0.2 * len(data)
