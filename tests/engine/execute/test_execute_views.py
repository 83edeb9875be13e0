"""The execute node's view rows and snapshot fields (issue 12 item 4): ``engine/views/execute.py``.

Sources: htcondor.md §4.2 (tryFetchWork: FetchWorkDelay, LastFetchWorkCompleted; fetched vs
matched claims), src/condor_startd.V6/StartdHookMgr.cpp (FetchClient::hookExited: invalid output
ignored, the fetch completes with no job), src/condor_starter.V6.1/StarterHookMgr.cpp
(PREPARE_JOB output merged), src/condor_startd.V6/startd_cron_job.cpp (Startd Cron merged into
slot ads). The node is ``tests/execute_fixture.py`` (real scripts, manual clock).
"""

from __future__ import annotations

import json
import dataclasses

from engine.contract import snapshot as S
from engine.contract.feed import FeedBase
from engine.runtime import feed_controls
from engine.views.execute import HookIndex, execute_views
from tests.helpers.execute_fixture import FROZEN_DURATION, T0, build_node
from engine.execute.startd import Startd
from engine.lang.config import Config
from engine.execute.hooks import HookRunner
from tui.screens.hooks import ended_cell


def test_slot_rows_show_claim_fetch_timer_and_cron_attrs(tmp_path, monkeypatch):
    """slot1 holds the fetched job 42.0 (Claimed/Busy, waiting for its DeferralTime); FetchWorkDelay's
    idiom gives 300 while Busy, so the next fetch is at T0+300; slot2's fetch got garbage and stays
    Unclaimed; both carry the Startd Cron attribute (htcondor.md §4.2; startd_cron_job.cpp)."""
    sd = build_node(tmp_path, monkeypatch)
    slots, _ = execute_views(sd)
    one, two = slots
    assert (one.name, one.state, one.activity, one.job, one.claim) == ("slot1@node.test", "Claimed", "Busy", "42.0", "fetched")
    assert (one.last_fetch, one.next_fetch, one.fetch_delay) == (T0, T0 + 300, 300)
    assert "FetchWorkDelay" in one.next_why
    assert (two.state, two.job, two.claim, two.keyword) == ("Unclaimed", None, None, "BAD")
    assert one.cron_attrs["Probe_Ready"] == "true" and two.cron_attrs["Probe_Ready"] == "true"


def test_hook_rows_in_order_with_outcomes_and_failures(tmp_path, monkeypatch):
    """Each invocation once, in the order run: Startd Cron, FETCH_WORK (accepted), REPLY_FETCH with
    ``accept`` (exit 2: a failure, though advisory), PREPARE_JOB (Cmd rewritten), the garbage
    FETCH_WORK (invalid output ignored: FetchClient::hookExited)."""
    sd = build_node(tmp_path, monkeypatch)
    _, hooks = execute_views(sd)
    assert [(h.seq, h.family, h.hook, h.target) for h in hooks] == [
        (1, "cron", "PROBE", "startd"), (2, "fetch", "FETCH_WORK", "slot1"), (3, "fetch", "REPLY_FETCH", "slot1"),
        (4, "starter", "PREPARE_JOB", "42.0"), (5, "fetch", "FETCH_WORK", "slot2")]
    cron, fetch, reply, prepare, bad = hooks
    assert fetch.failure is None and fetch.parsed["ClusterId"] == "42" and fetch.decision.startswith("accepted")
    assert 'Name = "slot1@node.test"' in fetch.stdin and fetch.stdout_bytes == len(fetch.stdout.encode())
    assert reply.args == ("accept",) and reply.exit == 2 and reply.failure == "exited with status 2"
    assert prepare.parsed["Cmd"] == '"/usr/bin/java"' and prepare.decision == "run" and 'Cmd = "sample-java"' in prepare.stdin
    assert bad.exit == 0 and bad.failure is not None and "invalid hook output" in bad.failure and bad.decision == "no job"
    assert all(h.duration == FROZEN_DURATION and not h.withheld for h in hooks)


def test_numbers_stay_stable_as_invocations_come_and_old_ones_drop(tmp_path, monkeypatch):
    """The runner keeps a bounded deque; a dropped invocation does not renumber the others, and a
    new one gets the next number (what the failure toasts rely on)."""
    sd = build_node(tmp_path, monkeypatch)
    index = HookIndex()
    _, first = execute_views(sd, index)
    sd.runner.invocations.popleft()
    sd.step(T0 + 300)  # the cron probe and both slots' fetches are due again
    _, second = execute_views(sd, index)
    assert [h.seq for h in second[:4]] == [2, 3, 4, 5]
    assert [h.seq for h in second[4:]] == list(range(6, 6 + len(second) - 4)) and len(second) > 4
    assert second[0].hook == first[1].hook


def test_withheld_runs_are_rows_but_not_failures(tmp_path):
    """Without allow_hooks nothing is spawned (README: hooks run only in demo or with
    --allow-hooks); the row says so and is not a failure."""
    cfg = Config.from_text("STARTD_JOB_HOOK_KEYWORD = Q\nQ_HOOK_FETCH_WORK = /bin/true\n")
    sd = Startd(cfg, tmp_path / "state", allow_hooks=False, host="node.test")
    sd.step(T0)
    _, hooks = execute_views(sd)
    (h,) = hooks
    assert h.withheld and h.exit is None and h.duration is None and h.failure is None and "withheld" in h.ended


def test_json_has_slots_and_hooks_with_nulls_in_every_mode(tmp_path, monkeypatch):
    """``--json``: the same keys in every mode, empty lists without an execute node, null (not -1)
    for what is not known; stdin/stdout stay out of the JSON (they are on the Hooks screen)."""
    sd = build_node(tmp_path, monkeypatch)
    slots, hooks = execute_views(sd)
    base = S.Snapshot(seq=1, time=T0, mode="demo", clock="virtual", speed=1.0, paused=False,
                      engine_state="running", routes=())
    with_node = json.loads(json.dumps(_replace(base, slots=slots, hooks=hooks).to_json()))
    two = with_node["slots"][1]
    assert two["job"] is None and two["claim"] is None and two["cron_attrs"]["Probe_Ready"] == "true"
    assert [h["hook"] for h in with_node["hooks"]] == ["PROBE", "FETCH_WORK", "REPLY_FETCH", "PREPARE_JOB", "FETCH_WORK"]
    assert with_node["hooks"][2]["exit"] == 2 and "stdin" not in with_node["hooks"][0]
    for mode in ("demo", "watch", "replay"):
        empty = _replace(base, mode=mode).to_json()
        assert empty["slots"] == [] and empty["hooks"] == []
        assert set(empty) == set(with_node)


def test_execute_control_only_with_a_node():
    """The Hooks/Slots keys are offered only where the feed has an execute node (Snapshot.controls)."""
    class Feed(FeedBase):
        controls = frozenset({"pause"})

    assert feed_controls(Feed()) == {"pause"}
    Feed.startd = object()
    assert feed_controls(Feed()) == {"pause", S.EXECUTE}


def _replace(snap, **kw):
    return dataclasses.replace(snap, **kw)


def test_timeout_and_flood_are_failures_with_their_cause(tmp_path):
    """A FETCH_WORK that hangs past ``<KW>_HOOK_FETCH_WORK_TIMEOUT`` and one that floods its stdout
    are killed (engine.hookrun: timeout, output cap, process-group kill) and counted as no work
    (FetchClient::hookExited never sees an ad); both rows are failures naming the cause, and the
    Hooks screen's Ended cell says so."""
    d = tmp_path / "hooks"
    d.mkdir()
    hang, flood = d / "hang.sh", d / "flood.sh"
    hang.write_text("#!/bin/sh\ncat > /dev/null\nsleep 30\n")
    flood.write_text("#!/bin/sh\ncat > /dev/null\nyes 'Attr = 1'\n")
    for p in (hang, flood):
        p.chmod(0o755)
    cfg = Config.from_text(f"NUM_SLOTS = 2\nSLOT1_JOB_HOOK_KEYWORD = HANG\nSLOT2_JOB_HOOK_KEYWORD = FLOOD\n"
                           f"HANG_HOOK_FETCH_WORK = {hang}\nHANG_HOOK_FETCH_WORK_TIMEOUT = 1\n"
                           f"FLOOD_HOOK_FETCH_WORK = {flood}\n")
    sd = Startd(cfg, tmp_path / "state", host="node.test", runner=HookRunner(cfg, allow_run=True, max_output=4096))
    sd.step(T0)
    _, (hung, flooded) = execute_views(sd)
    assert hung.failure == "timed out and was killed" and hung.exit is None and hung.decision == "no job"
    assert flooded.failure == "flooded its stdout and was killed" and flooded.stdout_bytes <= 4096
    assert ended_cell(hung).plain == "timed out" and ended_cell(flooded).plain == "flooded"
    assert hung.duration is not None and hung.duration >= 1.0  # measured, not engine time
