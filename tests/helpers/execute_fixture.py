"""A small embedded execute node with real hook scripts, stepped on a manual clock, for the
execute views and the Hooks/Slots screens (issue 12 item 4).

Deterministic on purpose: the one fetched job carries a ``DeferralTime`` an hour ahead, so the
starter waits (htcondor.md §2.5) instead of racing a real job process; the hook programs' real
durations are frozen by replacing ``engine.hookrun.stopwatch`` (the only real-time figure).

What happens at t = T0 (``Resource::tryFetchWork`` for each slot, htcondor.md §4.2):
- slot1 (keyword GOOD): FETCH_WORK hands out job 42.0 → REPLY_FETCH ``accept`` (exits 2: a
  failure the screen marks, advisory for HTCondor) → PREPARE_JOB rewrites ``Cmd`` → the starter
  waits for the DeferralTime: Claimed/Busy on a fetched claim.
- slot2 (keyword BAD): FETCH_WORK prints garbage → "ignoring invalid hook output", no job.
- the Startd Cron job PROBE publishes ``Probe_Ready = true`` into both slot ads.
"""

from __future__ import annotations

import time
from pathlib import Path

import engine.hookrun
from engine.execute.startd import Startd
from engine.lang.config import Config

T0 = 1795271525  # tui_fixtures.T0: 2026-11-21 14:32:05 UTC (the snapshot tests' frozen clock)
FROZEN_DURATION = 0.012


def _script(d: Path, name: str, body: str) -> str:
    p = d / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(0o755)
    return str(p)


def build_node(tmp_path: Path, monkeypatch=None) -> Startd:
    """The node above, stepped once at T0 (real hook processes, manual clock)."""
    if monkeypatch is not None:
        monkeypatch.setattr(engine.hookrun, "stopwatch", lambda: (lambda: FROZEN_DURATION))
    d = tmp_path / "hooks"
    d.mkdir()
    flag = tmp_path / "fetched"
    job = (f'ClusterId = 42\\nProcId = 0\\nOwner = "alice"\\nCmd = "sample-java"\\n'
           f'DeferralTime = {T0 + 3600}\\nDeferralWindow = 60\\n')
    fetch = _script(d, "fetch_good.sh", f'cat > /dev/null\n[ -e {flag} ] && exit 0\ntouch {flag}\nprintf \'{job}\'\n')
    garbage = _script(d, "fetch_bad.sh", "cat > /dev/null\necho 'this is not a ClassAd'\n")
    reply = _script(d, "reply.sh", "cat > /dev/null\nexit 2\n")
    prepare = _script(d, "prepare.sh", 'cat > /dev/null\necho \'Cmd = "/usr/bin/java"\'\n')
    probe = _script(d, "probe.sh", "echo 'Ready = true'\n")
    cfg = Config.from_text(
        "NUM_SLOTS = 2\n"
        "SLOT1_JOB_HOOK_KEYWORD = GOOD\nSLOT2_JOB_HOOK_KEYWORD = BAD\n"
        f"GOOD_HOOK_FETCH_WORK = {fetch}\nGOOD_HOOK_REPLY_FETCH = {reply}\nGOOD_HOOK_PREPARE_JOB = {prepare}\n"
        f"BAD_HOOK_FETCH_WORK = {garbage}\n"
        'FetchWorkDelay = ifThenElse(State == "Claimed" && Activity == "Idle", 0, 300)\n'
        f"STARTD_CRON_JOBLIST = PROBE\nSTARTD_CRON_PROBE_EXECUTABLE = {probe}\n"
        "STARTD_CRON_PROBE_PERIOD = 5m\nSTARTD_CRON_PROBE_PREFIX = Probe_\n")
    assert not cfg.errors, cfg.errors
    sd = Startd(cfg, tmp_path / "state", allow_hooks=True, host="node.test")
    sd.step(T0)
    return sd


def script(tmp_path: Path, name: str, body: str) -> str:
    d = tmp_path / "hooks"
    d.mkdir(exist_ok=True)
    p = d / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(0o755)
    return str(p)


def run_until(startd: Startd, now: float, pred, step: float = 1.0, limit: float = 600.0) -> float:
    """Step the engine clock until ``pred()``; between steps give real processes a moment."""
    end = now + limit
    while now < end:
        startd.step(now)
        if pred():
            return now
        now += step
        time.sleep(0.005)  # test-side only: let the real child process run; the engine never sleeps
    raise AssertionError("condition not reached")


def fetch_queue_hook(tmp_path: Path, jobs: list[str]) -> str:
    """FETCH_WORK that hands out one job file per call from a directory, then nothing."""
    q = tmp_path / "queue"
    q.mkdir()
    for i, text in enumerate(jobs):
        (q / f"{i:03d}.job").write_text(text)
    log = tmp_path / "fetch.stdin"
    return script(tmp_path, "fetch", f"""cat >> {log}
echo '=====' >> {log}
f=$(ls {q} | head -1)
[ -n "$f" ] || exit 0
cat {q}/$f
rm {q}/$f
""")
