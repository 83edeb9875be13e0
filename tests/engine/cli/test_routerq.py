"""routedeck router-q: condor_router_q's constraint building and -S summary format
(htcondor.md §1.9; src/condor_job_router/condor_router_q: printf "%7s %2s %-20s %s", lines
"%2s %-20s %s" through `sort | uniq -c | sort -k 3`)."""

import subprocess
import sys

from tests.helpers.paths import REPO
from engine.cli.routerq import build_constraint, summary_lines
from engine.queue.writer import open_queue

ROOT = REPO


def test_option_loop():
    c, summary, rest = build_constraint(["-S"])
    assert (c, summary, rest) == ("RouteName =!= UNDEFINED", True, [])
    c, summary, _ = build_constraint(["-R", "-route", "Site1"])
    assert summary and c == 'RouteName =!= UNDEFINED && JobStatus == 2 && RouteName =?= "Site1"'
    c, summary, rest = build_constraint(["-idle", "-constraint", "Owner == \"x\"", "-nobatch", "-S"])
    assert not summary and c == 'RouteName =!= UNDEFINED && JobStatus == 1 && (Owner == "x")'
    assert rest == ["-nobatch", "-S"]  # anything else ends option parsing


def test_summary_counts_and_sort_order():
    ads = ([{"JobStatus": "2", "RouteName": '"B"', "GridResource": '"gr b"'}] * 3
           + [{"JobStatus": "1", "RouteName": '"B"', "GridResource": '"gr b"'}] * 12
           + [{"JobStatus": "5", "RouteName": '"A"', "GridResource": '"gr a"'}])
    lines = summary_lines(ads)
    assert lines[0] == "   JOBS ST Route                GridResource"
    # sort -k 3 orders by route; for equal keys sort compares whole lines, and the blank that
    # pads "      3" sorts before the "1" of "     12"
    assert lines[1:] == [
        "      1  H A                    gr a",
        "      3  R B                    gr b",
        "     12  I B                    gr b",
    ]


def test_cli_on_a_written_log(tmp_path):
    log = tmp_path / "job_queue.log"
    q, _ = open_queue(log, now=1_700_000_000, durable=False)
    with q.transaction(now=1_700_000_000) as tx:
        c = tx.new_cluster()
        for status, route in (("1", "Alpha"), ("2", "Alpha"), ("2", "Beta")):
            _, p = tx.new_proc(c)
            tx.set_attribute(f"{c}.{p}", "JobStatus", status)
            tx.set_attribute(f"{c}.{p}", "RouteName", f'"{route}"')
            tx.set_attribute(f"{c}.{p}", "GridResource", '"batch slurm"')
            tx.set_attribute(f"{c}.{p}", "Owner", '"u"')
        _, p = tx.new_proc(c)  # a source job: no RouteName, not shown
        tx.set_attribute(f"{c}.{p}", "JobStatus", "1")
    q.writer.close() if hasattr(q.writer, "close") else None

    def run(*a):
        return subprocess.run([sys.executable, "-m", "tui.cli", "router-q", *a, "--queue-log", str(log)],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)

    out = run("-S")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1:] == ["      1  I Alpha                batch slurm",
                                           "      1  R Alpha                batch slurm",
                                           "      1  R Beta                 batch slurm"]
    out = run("-R")
    assert [ln.split()[2] for ln in out.stdout.splitlines()[1:]] == ["Alpha", "Beta"]
    out = run("-route", "Beta")
    assert out.returncode == 0 and "Total for query: 1 jobs;" in out.stdout
