"""The recording shipped in sample_configs/recordings/ (issue 7: "so routedeck replay has something
to open on a fresh machine") stays loadable under the schedd's rules (htcondor.md §3.3) and
replays with its commit-comment times (product.md §2 "Record times")."""

import pytest

from tests.helpers.paths import REPO
from engine.clock import ManualClock
from engine.queue.reader import load_log
from engine.feeds.replay.player import Player

LOG = REPO / "sample_configs" / "recordings" / "demo-3h.job_queue.log"


def test_shipped_recording_loads_without_problems():
    result = load_log(LOG)
    assert not [p for p in result.problems if getattr(p, "level", "error") != "info"], result.problems[:3]
    assert len(result.queue) > 100


@pytest.mark.slow
def test_shipped_recording_replays_three_hours_with_routed_copies(shipped_index):
    index = shipped_index()  # build_index(LOG), shared (tests/helpers/shipped_index.py)
    assert index.has_comments  # times come from `106 #` comments, not inference
    player = Player(index, ManualClock(0))
    assert 3 * 3600 - 60 <= player.end - player.start <= 3 * 3600
    player.seek(time=player.start + 5400)
    snap = player.snapshot(with_jobs=False)
    routed = {r.name: r.routed for r in snap.routes}
    assert routed.get("CMS_T2", 0) > 0 and routed.get("Overflow", 0) > 0  # routed copies carry RouteName
