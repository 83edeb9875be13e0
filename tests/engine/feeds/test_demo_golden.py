"""A one-hour demo run gives, byte for byte, the job_queue.log, history and last snapshot it gave
before the demo's CPU work was cut (issue 30: "behaviour must not change").

The digests were taken on main 8d3c9f3, before any of issue 30's speed-ups of the router's poll, the
schedd's passes and the queue's commits. The run is the sample demo (seed 1) with 50 parked jobs
that no route takes (as bench/demo_speed.py parks them), stepped one virtual hour in snapshots of
450 s, as ``routedeck demo --json`` does. A change of behaviour changes a digest; a deliberate one
updates them here with the reason in the commit.
"""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import pytest

from engine.cli.demo import snapshots_fast
from engine.cli.jsonout import dumps, snapshot_json
from engine.feeds.demo import build_demo
from tests.helpers.paths import REPO

PARKED = {"Owner": '"parked"', "VO": '"parked"', "JobUniverse": "5", "Cmd": '"/bin/sleep"',
          "RequestCpus": "1", "RequestMemory": "64000"}  # as bench/demo_speed.py: no route takes them

EXPECTED = {
    "history": "d7614b99c680cf6a",
    "job_queue.log": "c7fae7f6547dedda",
    "last snapshot": "011643def3d2fa84",  # with the checkout's path as <repo> (a config warning names the file)
}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


@pytest.mark.slow
def test_one_hour_demo_run_is_unchanged(tmp_path):
    state = tmp_path / "state"
    engine = build_demo(seed=1, state_dir=state, durable=False)
    engine.schedd.submit(SimpleNamespace(name="parked", attrs=PARKED, runtime=None, site=None), 50, engine.now)
    snaps = list(snapshots_fast(engine, engine.start + 3600, 450))
    engine.close()
    got = {p.name: _digest(p.read_bytes()) for p in sorted(state.iterdir()) if p.is_file()}
    # the snapshot names the config file by its path (a load warning): the checkout's path is not behaviour
    got["last snapshot"] = _digest(dumps(snapshot_json(snaps[-1])).replace(str(REPO), "<repo>").encode())
    assert got == EXPECTED
