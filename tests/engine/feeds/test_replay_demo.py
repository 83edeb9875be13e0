"""A demo run's recording replays with the per-route counts the live run showed.

Sources: product.md §2 (every demo run is a recording in HTCondor's format that replay opens);
htcondor.md §1.5 (a route's ``num_jobs``/``num_running`` come from the router's tracked jobs, and
``is_running``/``is_held`` are refreshed only at the status check) and §1.6 (the status check
mirrors the copy's status into the source job and sets ``RoutedToJobId`` at its first push) —
which is why replay counts a copy as the router last saw it (its source's status).
"""

from __future__ import annotations

import pytest

from engine.clock import ManualClock
from engine.feeds import demo
from engine.feeds.replay.index import build_index
from engine.feeds.replay.player import Player


def _counts(snap):
    return {r.name: (r.routed, r.idle, r.running, r.held) for r in snap.routes if r.routed}


@pytest.mark.slow
def test_demo_recording_replays_with_the_live_counts(tmp_path):
    engine = demo.build_demo(state_dir=tmp_path, seed=3)
    live = []
    try:
        for k in range(1, 41):
            engine.step(demo.DEMO_START + 15 * k)
            engine.advance()  # a snapshot only reads what the advance settled (issue 26)
            live.append((engine.now, _counts(engine.snapshot())))
    finally:
        engine.close()
    assert any(c for _t, c in live[-5:]), "the demo routed nothing: nothing to compare"
    assert any(r[2] for _t, c in live for r in c.values()), "no copy ever ran: weak comparison"
    player = Player(build_index(tmp_path / "job_queue.log"), ManualClock(0))
    assert player.index.has_comments and not player.index.problems
    for t, want in live:
        player.seek(time=t)
        assert _counts(player.snapshot(with_jobs=False)) == want, f"at {t}"
