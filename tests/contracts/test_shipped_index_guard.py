"""The guard of the shared index of the shipped recording (tests/helpers/shipped_index.py, the
``shipped_index`` fixture of tests/conftest.py) sees a write: to what ``build_index`` wrote, and to
a built checkpoint; a seek (which forks a checkpoint) and a new checkpoint change neither."""

from __future__ import annotations

from engine.feeds.replay.index import build_index
from tests.helpers.shipped_index import DEMO, digest


def test_the_digest_sees_a_write_and_not_a_seek():
    data = DEMO.read_bytes()
    ix = build_index("demo-head", data=data[: data.index(b"\n106", 1 << 20) + 1], every=2000)
    assert ix.steps > 100 and len(ix.plan) > 2
    text, built = digest(ix)
    state = ix.state_at(ix.steps - 1)  # builds checkpoints, forks the last
    key = next(k for k in state._ads if k != "0.0")
    state._ads[key] = {**state._ads[key], "JobStatus": "5"}  # the fork's own write
    text2, built2 = digest(ix)
    assert text2 == text and len(built2) > len(built) and {s: built2[s] for s in built} == built
    cp = max(s for s in ix.built if s >= 0)
    ix.built[cp]._ads[key]["JobStatus"] = "7"  # a write to a checkpoint's ad
    assert digest(ix)[1][cp] != built2[cp]
    ix.times[0] += 1  # a write to the step tables
    assert digest(ix)[0] != text
