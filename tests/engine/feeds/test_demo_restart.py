"""Kill and restart: the demo's job_queue.log cut at random points mid-run, the demo restarted
from it. No job is lost and none is routed twice: the router recovers from job attributes
alone (htcondor.md §1.7 AdoptOrphans), the schedd from the log under the owner's rules (§3.3:
an unfinished trailing transaction or torn line is discarded)."""

from __future__ import annotations

import random

import pytest

from tests.helpers.demo_fixture import _copies_per_source, _guard_single_copy
from engine.feeds.demo import build_demo
from engine.queue.reader import load_log
from engine.schedd.history import read_history
from tests.helpers.demo_fixture import make_config_dir

@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("restart")
    cfg = make_config_dir(tmp)
    engine = build_demo(config_dir=cfg, seed=5, state_dir=tmp / "first")
    problems = _guard_single_copy(engine)
    engine.step(engine.start + 5400)
    engine.close()
    assert problems == []
    return tmp, cfg, (tmp / "first" / "job_queue.log").read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("cut", [0, 1, 2])
def test_truncate_at_a_random_point_and_restart(recording, tmp_path, cut):
    tmp, cfg, data = recording
    rng = random.Random(f"cut:{cut}")
    offset = rng.randrange(len(data) // 3, len(data))  # anywhere, mid-line included
    state = tmp_path / "state"
    state.mkdir()
    (state / "job_queue.log").write_bytes(data[:offset])
    before = load_log(state / "job_queue.log")  # what the schedd will find (owner's rules)
    assert not before.fatal
    committed = {j.key for j in before.queue.jobs()}
    sources_with_copy = set(_copies_per_source(before.queue))

    engine = build_demo(config_dir=cfg, seed=5, state_dir=state)
    problems = _guard_single_copy(engine)
    restart_at = engine.now
    first_new_cluster = before.queue.next_cluster_num()
    engine.step(restart_at + 1800)
    engine.close()

    assert problems == []  # never two live routed copies of one source
    # no job lost: every committed job is still queued or left through the history file
    left = {f"{r.attrs['ClusterId']}.{r.attrs['ProcId']}" for r in read_history(state / "history")}
    now_queued = {j.key for j in engine.queue.jobs()}
    assert committed <= now_queued | left, sorted(committed - now_queued - left)[:5]
    # sources whose copy survived the crash were adopted, not routed again: no copy of them was
    # submitted after the restart while the old one lived (checked per poll above), and the
    # routed copies made after the restart are all in new clusters
    adopted = [e for e in engine.events if e.kind == "orphan-adopted"]
    assert len(adopted) >= 1 or not sources_with_copy
    new = [j for j in engine.queue.jobs() if j.get("RoutedFromJobId") and j.id[0] >= first_new_cluster]
    assert all(j.get("QDate") is not None and int(j.get("QDate")) >= int(restart_at) for j in new)
    # no source is left claimed by a router that does not track it (orphans are adopted or yielded)
    stuck = [j.key for j in engine.queue.jobs()
             if j.get("Managed") == '"External"' and j.key not in engine.router.jobs]
    assert stuck == []
    # the engine carried on: new submissions and routing after the restart
    assert engine.submitted > 0 and any(e.kind == "job-routed" and e.time > restart_at for e in engine.events)
