"""Hooks inside a running router (htcondor.md §1.8 table; product.md §4 bounded retries).

The hooks are small shell scripts written into tmp_path; JOB_ROUTER_HOOK_KEYWORD or the job's
HookKeyword selects them. Every router here opts in to running them (``allow_hooks=True``):
by default no hook program runs (tests/test_hook_safety.py).
"""

from __future__ import annotations

import os

from tests.helpers.router_fixtures import T0, get, kinds, make_router, outcomes, route, schedd_set, submit, table

from engine.router.lifecycle import State


def hook(tmp_path, name, body):
    d = tmp_path / "hooks"
    d.mkdir(exist_ok=True)
    os.chmod(d, 0o755)
    p = d / name
    p.write_text("#!/bin/sh\n" + body)
    os.chmod(p, 0o755)
    return str(p)


def config(**hooks):
    return "\n".join(f"RD_HOOK_{k.upper()} = {v}" for k, v in hooks.items())


def test_translate_hook_output_replaces_the_ad_and_transforms_still_run(tmp_path):
    """§1.8 TRANSLATE_JOB: stdin = route ad, "------", source ad; exit 0 with output replaces
    the dest ad, then VanillaToGrid and the route still run."""
    seen = tmp_path / "stdin"
    t = hook(tmp_path, "t.sh", f"cat > {seen}\n"
             "echo 'Owner = \"alice\"'\necho 'Cmd = \"/bin/translated\"'\necho 'JobUniverse = 5'\n")
    tbl = table([route("A", grid_resource="batch pbs")], config(translate_job=t), hook_keyword="RD")
    r, src, dst = make_router(tbl, allow_hooks=True)
    (key,) = submit(src)
    r.poll(T0 + 10)
    job = r.jobs[key]
    assert job.state is State.SUBMITTED
    assert get(dst, job.dest_key, "Cmd") == '"/bin/translated"'
    assert get(dst, job.dest_key, "RouteName") == '"A"'  # the route still applied
    assert get(dst, job.dest_key, "QDate") == str(int(T0 + 10))
    text = seen.read_text()
    assert text.startswith('[ Name = "A"; TargetUniverse = 9; GridResource = "batch pbs" ]\n------\n')
    assert 'Cmd = "/bin/sleep"\n' in text


def test_job_hook_keyword_wins_over_knob(tmp_path):
    """§1.8: the job's HookKeyword takes precedence over JOB_ROUTER_HOOK_KEYWORD."""
    t = hook(tmp_path, "t.sh", "exit 1\n")
    cfg = f"JOBKW_HOOK_TRANSLATE_JOB = {t}"
    tbl = table([route("A")], cfg, hook_keyword="RD")
    r, src, dst = make_router(tbl, allow_hooks=True)
    (plain,) = submit(src)
    (special,) = submit(src, HookKeyword='"JOBKW"')
    r.poll(T0 + 10)
    assert r.jobs[plain].state is State.SUBMITTED  # RD has no hooks
    events = r.drain_events()
    assert outcomes(events) == {special: "failure"}  # JOBKW translate exits 1: routing abandoned
    assert "hook-failed" in [e.kind for e in events]


def test_translate_no_output_retried_then_given_up(tmp_path):
    """§1.8: exit 0 with no output leaves the job CLAIMED and the hook runs again next poll;
    RouteDeck stops after max_attempts (HTCondor loops forever)."""
    count = tmp_path / "count"
    t = hook(tmp_path, "t.sh", f"echo x >> {count}\n")
    tbl = table([route("A")], config(translate_job=t), hook_keyword="RD")
    r, src, dst = make_router(tbl, hook_attempts=3, allow_hooks=True)
    (key,) = submit(src)
    r.poll(T0 + 10)
    assert r.jobs[key].state is State.CLAIMED
    r.poll(T0 + 20)
    assert r.jobs[key].state is State.CLAIMED
    r.poll(T0 + 30)
    assert outcomes(r.drain_events()) == {key: "failure"}
    assert count.read_text().count("x") == 3
    assert get(src, key, "Managed") == '"Schedd"'  # yielded


def test_update_hook_merges_into_the_routed_copy(tmp_path):
    """§1.8 UPDATE_JOB_INFO: runs once the copy was seen; output (minus MyType/TargetType) is
    merged into the dest and pushed; then normal status processing mirrors it to the source."""
    u = hook(tmp_path, "u.sh", "cat > /dev/null\necho 'MyType = \"Junk\"'\necho 'JobStatus = 2'\necho 'SiteNote = \"ok\"'\n")
    tbl = table([route("A")], config(update_job_info=u), hook_keyword="RD")
    r, src, dst = make_router(tbl, allow_hooks=True)
    (key,) = submit(src)
    r.poll(T0 + 10)  # submitted and seen; the hook runs from the next poll on
    dest = r.jobs[key].dest_key
    assert get(dst, dest, "SiteNote") is None
    r.poll(T0 + 20)
    assert get(dst, dest, "SiteNote") == '"ok"' and get(dst, dest, "MyType") is None
    assert get(src, key, "JobStatus") == "2"


def test_update_hook_failure_skips_the_status_check(tmp_path):
    """§1.8: a non-zero exit ignores the output and skips this poll's status check."""
    u = hook(tmp_path, "u.sh", "exit 2\n")
    tbl = table([route("A")], config(update_job_info=u), hook_keyword="RD")
    r, src, dst = make_router(tbl, allow_hooks=True)
    (key,) = submit(src)
    r.poll(T0 + 10)
    schedd_set(dst, r.jobs[key].dest_key, T0 + 11, JobStatus=2)
    r.poll(T0 + 20)
    assert get(src, key, "JobStatus") == "1"  # not mirrored: the check was skipped


def test_finalize_hook_updates_source_or_reroutes(tmp_path):
    """§1.8 JOB_FINALIZE: stdin = source, "------", dest; output updates the source; a non-zero
    exit reroutes (source back to Idle, routed copy removed)."""
    seen = tmp_path / "fin"
    good = hook(tmp_path, "f.sh", f"cat > {seen}\necho 'FinalizedBy = \"hook\"'\n")
    tbl = table([route("A")], config(job_finalize=good), hook_keyword="RD")
    r, src, dst = make_router(tbl, allow_hooks=True)
    (key,) = submit(src)
    r.poll(T0 + 10)
    dest = r.jobs[key].dest_key
    schedd_set(dst, dest, T0 + 11, JobStatus=4, JobFinishedHookDone=int(T0 + 11))
    r.poll(T0 + 20)
    assert get(src, key, "FinalizedBy") == '"hook"'
    assert r.jobs[key].outcome == "success"
    assert "\n\n------\n" in seen.read_text()

    bad = hook(tmp_path, "bad.sh", "exit 1\n")
    tbl = table([route("A")], config(job_finalize=bad), hook_keyword="RD")
    r, src, dst = make_router(tbl, allow_hooks=True)
    (key,) = submit(src)
    r.poll(T0 + 10)
    dest = r.jobs[key].dest_key
    schedd_set(dst, dest, T0 + 11, JobStatus=4, JobFinishedHookDone=int(T0 + 11))
    r.poll(T0 + 20)
    assert r.jobs[key].outcome == "failure"
    assert get(src, key, "Managed") == '"Schedd"'
    # SetJobIdle cannot undo the mirrored Completed: the schedd refuses to change JobStatus of a
    # Completed job (htcondor.md §1.6 "Pushing to the schedd")
    assert get(src, key, "JobStatus") == "4"
    assert get(dst, dest, "RemoveReason") == '"JobRouter aborted job"'
    assert "job-rerouted" in kinds(r)


def test_cleanup_hook_retries_bounded(tmp_path):
    """§1.8 JOB_CLEANUP: non-zero exit keeps the job in CLEANUP and retries next poll; RouteDeck
    gives up after max_attempts with a hook-failed event (HTCondor retries forever)."""
    c = hook(tmp_path, "c.sh", "cat > /dev/null\nexit 3\n")
    tbl = table([route("A")], config(job_cleanup=c), hook_keyword="RD")
    r, src, dst = make_router(tbl, hook_attempts=2, allow_hooks=True)
    (key,) = submit(src)
    r.poll(T0 + 10)
    schedd_set(src, key, T0 + 11, JobStatus=3)  # user removes the source: cleanup
    r.poll(T0 + 20)
    assert r.jobs[key].state is State.CLEANUP
    r.poll(T0 + 30)
    assert kinds(r).count("hook-failed") == 2
    ev_state = r.jobs.get(key)
    assert ev_state is None or ev_state.state is State.RETIRED
