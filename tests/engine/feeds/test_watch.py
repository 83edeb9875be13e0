"""Watch mode (engine.feeds.watch, ``routedeck watch``).

Sources: htcondor.md §3.5 (the follower: records apply as read, a partial last line waits, a
new 107 sequence after a rotation reloads), §3.4 (rotation by the writer), §1.5 (JobRouterLog
table), §1.9 (routed copy = RouteName defined); product.md §2 ("watch": queue log from
``--queue-log`` or ``JOB_QUEUE_LOG``/``SPOOL`` of the HTCondor config, read-only).
"""

from __future__ import annotations

import json
import os

import pytest
import threading

from engine.clock import ManualClock
from engine.queue.writer import open_queue
from engine.feeds.watch.follow import WatchEngine
from engine.feeds.watch.setup import WatchError, WatchSetup, resolve
from tui.cli import main
from engine.clock import SystemClock
from engine.queue.filewatch import run_watch
from engine.runtime import Runtime
from engine.feeds.watch.feed import WatchFeed
from engine.feeds.watch.setup import condor_config_paths

T0 = 1795300000.0


def submit(q, now, route=None, status=1, src=None):
    with q.transaction(now=now) as t:
        c = t.new_cluster()
        key = f"0{c}.-1"
        t.set_attribute(key, "Owner", '"alice"')
        t.set_attribute(key, "QDate", str(int(now)))
        if route:
            t.set_attribute(key, "RouteName", f'"{route}"')
            t.set_attribute(key, "RoutedFromJobId", f'"{src}"')
        cp = t.new_proc(c)
        t.set_attribute(cp, "ProcId", "0")
        t.set_attribute(cp, "JobStatus", str(status))
    return f"{c}.0"


def set_status(q, now, job, status, source=None):
    """A status change of ``job``; with ``source``, also the router's status check that mirrors
    it into the source job (htcondor.md §1.6), which is when the router counts it (§1.5)."""
    with q.transaction(now=now) as t:
        t.set_attribute(job, "JobStatus", str(status))
        if source:
            t.set_attribute(source, "RoutedToJobId", f'"{job}"')
            t.set_attribute(source, "JobStatus", str(status))


def counts(snap):
    return {r.name: (r.routed, r.idle, r.running) for r in snap.routes}


def test_follows_appends_partial_lines_and_a_rotation(tmp_path):
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, T0)
    engine = WatchEngine(WatchSetup(str(log)), ManualClock(T0))
    assert engine.poll() and engine.snapshot().total_jobs == 0
    assert not engine.poll()  # nothing new: no snapshot to print
    src = submit(q, T0 + 1)
    copy = submit(q, T0 + 2, route="Site1", src=src)
    assert engine.poll()
    assert counts(engine.snapshot()) == {"Site1": (1, 1, 0)}
    set_status(q, T0 + 3, copy, 2, source=src)
    with open(log, "a") as fh:  # a torn write: the follower keeps the offset and waits (§3.5)
        fh.write("105 \n103 %s JobStat" % copy)
    assert engine.poll()
    assert counts(engine.snapshot()) == {"Site1": (1, 0, 1)}
    q.writer.compact(q)  # rotation: the torn tail is gone, sequence 2 → bulk reload (§3.4, §3.5)
    assert engine.poll()
    assert engine.snapshot().total_jobs == 2 and counts(engine.snapshot()) == {"Site1": (1, 0, 1)}
    assert engine.follower.seq == 2
    set_status(q, T0 + 4, copy, 5, source=src)
    engine.poll()
    snap = engine.snapshot()
    assert counts(snap) == {"Site1": (1, 1, 0)} and snap.routes[0].held == 1 and snap.mode == "watch"
    assert snap.readonly


def test_router_log_figures_beside_our_own(tmp_path):
    """§1.5: the real router's row (submitted/idle/throttle/recent) is attached to the route."""
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, T0)
    submit(q, T0 + 1, route="Site1", src="1.0")
    rl = tmp_path / "JobRouterLog"
    rl.write_text(
        "11/21/26 14:30:05 JobRouter: Checking for candidate jobs. routing table is:\n"
        "Route Name               Source      Submitted/Max        Idle/Max     Throttle Recent: Started Succeeded Failed\n"
        + "%-24s %-11s %7d/%7d %7d/%7d %8s" % ("Site1", "entries:001", 1, 100, 1, 50, "0.00566667 jobs/sec")
        + "         %7d %9d %6d\n" % (4, 2, 39)
        + "%-24s %-11s %7d/%7d %7d/%7d %8s" % ("Idle2", "entries:002", 0, 10, 0, 5, "none")
        + "         %7d %9d %6d\n" % (0, 0, 0))
    engine = WatchEngine(WatchSetup(str(log), router_log=str(rl)), ManualClock(T0), router_log_tz="UTC")
    engine.poll()
    routes = {r.name: r for r in engine.snapshot().routes}
    s1 = routes["Site1"]
    assert (s1.routed, s1.reported.submitted, s1.reported.recent_failed) == (1, 1, 39)
    assert s1.throttle == pytest.approx(3.4, rel=1e-5) and s1.recent_failed == 39
    assert routes["Idle2"].reported.max_jobs == 10 and routes["Idle2"].routed == 0
    doc = engine.snapshot().to_json()
    assert doc["routes"][0]["router_log"]["recent_failed"] == 39


def test_resolve_from_condor_config(tmp_path):
    """product.md §2: the log is JOB_QUEUE_LOG, else $(SPOOL)/job_queue.log; LOCAL_CONFIG_DIR
    files are read as HTCondor does (the config reader's job)."""
    d = tmp_path / "config.d"
    d.mkdir()
    (tmp_path / "condor_config").write_text(f"LOCAL_DIR = {tmp_path}\nSPOOL = $(LOCAL_DIR)/spool\n"
                                            f"LOCAL_CONFIG_DIR = {d}\n")
    (d / "50-router.conf").write_text("JOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=jrt\n"
                                      "  UNIVERSE grid\n  GridResource = batch slurm a\n  MaxJobs = 7\n"
                                      "  MaxIdleJobs = 3\n  REQUIREMENTS true\n@jrt\n")
    setup = resolve(env={"CONDOR_CONFIG": str(tmp_path / "condor_config")})
    assert setup.queue_log == f"{tmp_path}/spool/job_queue.log"
    assert setup.limits == {"A": (7, 3)}
    (d / "60-log.conf").write_text("JOB_QUEUE_LOG = /var/q/job_queue.log\n")
    assert resolve(env={"CONDOR_CONFIG": str(tmp_path / "condor_config")}).queue_log == "/var/q/job_queue.log"
    (tmp_path / "empty").write_text("X = 1\n")
    with pytest.raises(WatchError, match="neither JOB_QUEUE_LOG nor SPOOL"):
        resolve(config=[str(tmp_path / "empty")], env={})
    with pytest.raises(WatchError, match="no queue log"):
        resolve(env={"CONDOR_CONFIG": "ONLY_ENV"})


def test_watch_command_once_and_json_lines(tmp_path, capsys):
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, T0)
    submit(q, T0 + 1, route="Site1", src="99.0", status=2)  # source gone: the copy's own status
    assert main(["watch", "--queue-log", str(log), "--once", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["mode"] == "watch" and doc["routes"][0]["running"] == 1 and doc["total_jobs"] == 1
    assert main(["watch", "--queue-log", str(log), "--json", "--count", "1", "--slow-poll", "0.05"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["queue"] == {"idle": 0, "running": 1, "held": 0, "removed": 0, "completed": 0}
    assert main(["watch", "--config", str(tmp_path / "nope.conf")]) == 2  # unreadable input (issue 11 item 19)


def test_watch_feed_under_the_runtime_wakes_on_a_change(tmp_path):
    """The runtime thread polls the follower when the file watcher says the log changed."""
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, T0)
    feed = WatchFeed(WatchEngine(WatchSetup(str(log)), SystemClock()), poll_interval=3600)
    got = threading.Event()

    def publish(snap):
        if snap.total_jobs == 1:
            got.set()

    rt = Runtime(feed, SystemClock(), publish, snapshot_interval=0.05).start()
    stop = threading.Event()
    watcher = threading.Thread(target=run_watch, args=(feed.waker(rt), stop), kwargs={"slow_poll": 0.2}, daemon=True)
    watcher.start()
    try:
        submit(q, T0 + 1)
        assert got.wait(10), "the change never reached a snapshot"
    finally:
        stop.set()
        rt.stop()
        watcher.join(5)
    assert rt.latest().mode == "watch"


def test_condor_config_dev_null_means_no_config():
    """HTCondor's idiom CONDOR_CONFIG=/dev/null ("no config file"; the Python bindings set it when
    they find none) is not a config source: no error, no empty routing table."""
    assert os.devnull not in condor_config_paths(None, {"CONDOR_CONFIG": os.devnull})
    assert condor_config_paths(None, {"CONDOR_CONFIG": "/etc/x/condor_config"}) == ["/etc/x/condor_config"]


def test_a_replaced_log_drops_the_old_files_problems_and_says_so(tmp_path):
    """htcondor.md §3.4/§3.5: a rotation (new 107 sequence) is a bulk reload from the new file;
    ``problems`` keeps the current file's only (the old file's corrupt record stayed listed), and
    the events say that the log was replaced — in the headless JSON too (issue 25 item 8b)."""
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, T0)
    submit(q, T0 + 1)
    q.writer.close()
    with open(log, "ab") as fh:
        fh.write(b"103 1.0 Foo\n")  # an empty value: a corrupt record
    engine = WatchEngine(WatchSetup(str(log)), ManualClock(T0 + 5))
    engine.poll()
    assert len(engine.problems) == 1 and "corrupt" in engine.problems[0]
    fresh = tmp_path / "fresh"
    q2, _ = open_queue(fresh, T0 + 10)  # a new log: 107 sequence 1 again, a new file at the same path
    submit(q2, T0 + 11)
    submit(q2, T0 + 12)
    q2.writer.close()
    data = fresh.read_bytes().replace(b"107 1 ", b"107 7 ", 1)
    fresh.write_bytes(data)
    os.replace(fresh, log)
    assert engine.poll()
    assert engine.problems == []
    snap = engine.snapshot(2)
    assert snap.total_jobs == 2
    said = [e for e in snap.events if e.kind == "log-replaced"]
    assert len(said) == 1 and str(log) in said[0].message and "rotated (sequence 1 -> 7)" in said[0].message
    assert not engine.poll() and [e.kind for e in engine.snapshot(3).events] == ["log-replaced"]  # said once


def test_a_deleted_log_is_one_problem_until_a_new_one_comes(tmp_path):
    """A log that is gone: one "cannot open" problem, not one per poll; the log written again at
    the path is a new generation: the problem goes, and the events say the log was replaced."""
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, T0)
    submit(q, T0 + 1)
    q.writer.close()
    engine = WatchEngine(WatchSetup(str(log)), ManualClock(T0 + 5))
    engine.poll()
    os.unlink(log)
    for _ in range(3):
        engine.poll()
    assert len(engine.problems) == 1 and "cannot open" in engine.problems[0]
    q2, _ = open_queue(log, T0 + 10)
    submit(q2, T0 + 11)
    q2.writer.close()
    engine.poll()
    assert engine.problems == [] and [e.kind for e in engine.snapshot(1).events] == ["log-replaced"]
