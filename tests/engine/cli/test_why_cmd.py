"""``routedeck why`` on the shipped demo recording (htcondor.md §1.4 ChooseRoute, §8 route acceptance)."""

import json
import subprocess
import sys

from tests.helpers.paths import REPO

LOG = REPO / "sample_configs/recordings/demo-3h.job_queue.log"
CFG = REPO / "sample_configs/demo/condor_config"


def _why(*extra):
    return subprocess.run([sys.executable, "-m", "tui.cli", "why", str(LOG), "--config", str(CFG), "--json", *extra],
                          capture_output=True, text=True, cwd=REPO)


def test_json_shape_and_verdict_words():
    # JSON interface of issue 29; verdict words from JobRouter.cpp ChooseRoute / JobRoute::AcceptingMoreJobs
    r = _why("--at", "+1h")
    assert r.returncode in (0, 1), r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"time", "jobs", "policies"}
    assert out["jobs"]
    words = {"matched", "no_match", "route_full", "throttled", "not_candidate"}
    for j in out["jobs"]:
        assert j["verdict"] in words
        assert set(j) >= {"job", "verdict", "routes", "hold"}
        if j["verdict"] == "matched":
            assert j["hold"] is None
            assert any(rt["verdict"] == "matched" for rt in j["routes"])
