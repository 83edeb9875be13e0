"""Workload file: job templates (old-syntax ClassAd text), Poisson arrivals, cron jobs (issue 5
part 4). Errors name file and line (preamble)."""

import pytest

from engine.schedd.workload import Arrivals, WorkloadError, parse_workload
from engine.schedd.workload import load_workload

TEXT = '''
[[job]]
name = "ana"
rate = 60
initial = 3
procs = [1, 3]
ad = """
Owner = "alice"
JobUniverse = 5
"""

[[cron]]
name = "sync"
site = "local"
runtime = "fixed 60"
ad = """
CronMinute = "*/10"
JobUniverse = 12
"""
'''


def test_parse_templates_and_cron():
    w = parse_workload(TEXT, "w.toml")
    assert [t.name for t in w.jobs] == ["ana"] and w.jobs[0].attrs == {"Owner": '"alice"', "JobUniverse": "5"}
    assert w.cron[0].cron and w.cron[0].site == "local" and w.cron[0].runtime.a == 60


def test_arrivals_deterministic_and_rate_about_right():
    w = parse_workload(TEXT, "w.toml")
    a1 = Arrivals(w, seed=5, start=1000.0)
    a2 = Arrivals(w, seed=5, start=1000.0)
    first = a1.due(1000.0)
    # 3 initial clusters + the cron job at the start
    assert sum(1 for t, _ in first if t.name == "ana") == 3 and sum(1 for t, _ in first if t.cron) == 1
    assert first == a2.due(1000.0)
    got = a1.due(1000.0 + 100 * 3600)
    assert got == a2.due(1000.0 + 100 * 3600)
    assert 4800 <= len(got) <= 7200  # 60 per hour for 100 hours
    assert all(1 <= n <= 3 for _, n in got)


def test_bad_ad_line_names_the_file_line():
    bad = TEXT.replace('JobUniverse = 5\n', 'JobUniverse = (5\n')
    with pytest.raises(WorkloadError, match=r"w\.toml:9: .*JobUniverse"):
        parse_workload(bad, "w.toml")


def test_unknown_key_and_bad_toml():
    with pytest.raises(WorkloadError, match="unknown key"):
        parse_workload('[[job]]\nname="x"\nad="A = 1"\nrte = 3\n', "w.toml")
    with pytest.raises(WorkloadError, match="w.toml"):
        parse_workload('[[job]\n', "w.toml")


def test_bounds_and_encoding(tmp_path):
    with pytest.raises(WorkloadError, match="initial must be an integer from 0"):
        parse_workload('[[job]]\nname="x"\ninitial=1000000000\nad="A = 1"\n', "w.toml")
    with pytest.raises(WorkloadError, match="procs per cluster"):
        parse_workload('[[job]]\nname="x"\nprocs=[1, 10000000]\nad="A = 1"\n', "w.toml")
    p = tmp_path / "w.toml"
    p.write_bytes(b'[[job]]\nname = "\xff"\n')
    with pytest.raises(WorkloadError, match="not UTF-8"):
        load_workload(p)
    with pytest.raises(WorkloadError, match="not a regular file"):
        load_workload(tmp_path)
