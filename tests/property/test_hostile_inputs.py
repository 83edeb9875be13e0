"""Hostile input on the command line and in job_queue.log / job-ads files (issue 18, items 3, 4,
6 and 7): a clear one-line error (file, line, what is wrong) with exit 2, or the good part
loaded and the bad part reported, never a traceback, a crash or an empty queue "at 1970-01-01".

Sources: htcondor.md §3.1 (record format: one record per line, a NUL byte is an error), §3.3
(the owner's reading rules), §3.4 (a brand-new log is one 107 record), §3.5 (the follower); and
HTCondor's src/condor_utils/classad_log.cpp ``LogSetAttribute::ReadBody`` (with
``CLASSAD_LOG_STRICT_PARSING`` off an unparsable value is a WARNING and reading goes on). The
argument checks and the raw-text attribute are RouteDeck decisions (project rule: bad input gets a
one-line error; exit 2 for usage or unreadable input) and say so.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.helpers.paths import REPO
from engine.queue.reader import load_bytes
from tui.cli import main as cli_main
import tui.app

ROOT = REPO
REAL = str(ROOT / "tests" / "data" / "queuelog" / "real_job_submission.log")
ROUTER_CONFIG = str(ROOT / "tests" / "data" / "router" / "job_router_xform.run.config")
DEEP = "(" * 10_000 + "1" + ")" * 10_000  # classad2 refuses nesting this deep
CHAIN = "+".join(["1"] * 200_000)  # a left-deep tree: classad2 crashed unparsing it (SIGSEGV)
GARBAGE = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00" + bytes(range(256)) * 4


def lines(*ls: str) -> bytes:
    return "".join(line + "\n" for line in ls).encode()


HEAD = ("107 1 CreationTimestamp 1736935000", "101 0.0 Job Machine", "103 0.0 NextClusterNum 1")


def three_jobs(bad_value: str) -> bytes:
    """One committed transaction submitting jobs 1.0, 2.0, 3.0; 3.0's Foo is ``bad_value``."""
    recs = ["105 "]
    for c in (1, 2, 3):
        recs += [f"101 0{c}.-1 Job Machine", f"103 0{c}.-1 Owner \"u{c}\"", f"101 {c}.0 Job Machine",
                 f"103 {c}.0 JobStatus 1", f"103 {c}.0 ProcId 0"]
    recs.insert(len(recs) - 1, f"103 3.0 Foo {bad_value}")
    return lines(*HEAD, *recs, "106 ")


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        rc = cli_main(list(argv))
    except SystemExit as exc:  # argparse's own exit (usage errors)
        rc = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return rc, out, err


def one_line(err: str) -> str:
    text = err.strip()
    assert text and "\n" not in text, f"expected a one-line error, got: {err!r}"
    return text


@pytest.fixture
def no_screen(monkeypatch):
    """The dashboard must not open: validation happens before the screen."""
    def refuse(*a, **kw):
        raise AssertionError("the screen was opened")

    monkeypatch.setattr(tui.app, "make_app", refuse)


def write(tmp_path, name: str, data: bytes) -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


# ------------------------------------------------------------------------------ item 3: arguments

TZ_BAD = "../../etc/passwd"


@pytest.mark.parametrize("argv", [
    ["replay", REAL, "--tz", TZ_BAD, "--at", "end"],
    ["replay", REAL, "--tz", TZ_BAD, "--json"],
    ["replay", REAL, "--tz", TZ_BAD],  # the screen entry
    ["watch", "--queue-log", REAL, "--once", "--tz", TZ_BAD],
    ["router-q", "--queue-log", REAL, "--tz", TZ_BAD],
    ["router-history", "--history", REAL, "--tz", TZ_BAD],
    ["cron", "next", "--after", "0", "--tz", TZ_BAD],
], ids=["replay-at", "replay-json", "replay-screen", "watch", "router-q", "router-history", "cron"])
def test_a_path_as_time_zone_is_one_usage_error_everywhere(capsys, no_screen, argv):
    """RouteDeck decision (issue 18 item 3): every --tz is checked by one shared argparse type
    (the zone lookup cron used) before anything runs: exit 2, one line naming --tz and the
    value, nothing on stdout (was a ZoneInfo traceback in replay, silently accepted by watch)."""
    rc, out, err = cli(capsys, *argv)
    msg = one_line(err)
    assert rc == 2 and out == ""
    assert "--tz" in msg and f"unknown time zone '{TZ_BAD}'" in msg and msg.startswith(f"routedeck {argv[0]}:")


def _nul_cases():
    log = "a\0b"
    return [
        ["queue", log], ["replay", log, "--json"], ["replay", log], ["watch", "--queue-log", log, "--once"],
        ["router-q", "--queue-log", log], ["router-history", "--history", log],
        ["route", "-c", ROUTER_CONFIG, "--jobads", log], ["route", "-c", log, "--jobads", REAL],
        ["check", log], ["convert", ROUTER_CONFIG, "-o", log],
        ["replay", REAL, "--reroute", "--config", ROUTER_CONFIG, "--sites", log, "--json"],
        ["watch", "--queue-log", REAL, "--router-log", log, "--once"],
        ["demo", "--headless", "--state-dir", log, "--duration", "1", "--max-speed"],
    ]


@pytest.mark.parametrize("argv", _nul_cases(), ids=lambda a: "-".join(x for x in a[:3] if "\0" not in x))
def test_a_nul_byte_in_a_path_is_one_usage_error(capsys, no_screen, argv):
    """RouteDeck decision (issue 18 item 3): a path the system cannot take (a NUL byte; every
    path argument goes through one shared argparse type) is a usage error, exit 2, one line
    (was a ValueError traceback from os.stat/open in most commands)."""
    rc, out, err = cli(capsys, *argv)
    msg = one_line(err)
    assert rc == 2 and out == "" and "NUL" in msg and msg.startswith(f"routedeck {argv[0]}:")


@pytest.mark.parametrize("jobid", ["-3", "1.-1", "1.x", "99999999999999999999", "1.0.0", ""])
def test_queue_long_takes_only_a_job_id(capsys, jobid):
    """condor_q's job ids are CLUSTER or CLUSTER.PROC, cluster >= 1 and proc >= 0 as 32-bit
    integers (htcondor.md §3.1 "Keys": `<c>.<p>` with p >= 0); anything else is a usage error
    from the shared argparse type, exit 2 ("-3" and "1.-1" were "no job", exit 1)."""
    rc, out, err = cli(capsys, "queue", REAL, "--long", jobid)
    msg = one_line(err)
    assert rc == 2 and out == "" and "--long" in msg and "not a job id" in msg


def test_good_arguments_still_work(capsys):
    """The checks accept what they should: an IANA zone, a UTC alias, a job id (the real log's
    only job is 1.0, htcondor.md §6 golang-htcondor test)."""
    rc, out, _ = cli(capsys, "queue", REAL, "--long", "1.0")
    assert rc == 0 and "JobStatus = 5" in out
    rc, out, _ = cli(capsys, "router-q", "--queue-log", REAL, "--tz", "America/Chicago")
    assert rc == 0 and "Total for query" in out
    rc, out, _ = cli(capsys, "replay", REAL, "--at", "end", "--tz", "Z")
    assert rc == 0 and "transaction 5 of 5" in out


# ------------------------------------------------------------------------------ item 4: not a log


@pytest.mark.parametrize("command", [
    ["queue"], ["queue", "--json"], ["replay", "--json"], ["replay", "--at", "end"], ["replay"], ["router-q"],
    ["watch", "--once"],
], ids=lambda c: "-".join(c))
def test_a_file_without_any_record_is_refused(tmp_path, capsys, no_screen, command):
    """RouteDeck decision (issue 18 item 4): a file with bytes but no valid record at all (not an
    empty one: tests/test_cli_consistency.py, an empty queue) is not shown as an empty queue "at
    1970-01-01" (exit 0): one line naming the file and the line of the first bad record, exit 2,
    nothing on stdout; the replay screen is not opened."""
    log = write(tmp_path, "job_queue.log", GARBAGE)
    argv = ["router-q", "--queue-log", log] if command == ["router-q"] else [command[0], log, *command[1:]]
    rc, out, err = cli(capsys, *argv)
    msg = one_line(err)
    assert rc == 2 and out == "" and "not a job queue log" in msg and f"{log}:1:" in msg


def test_a_brand_new_log_is_an_empty_queue_with_nothing_to_replay(tmp_path, capsys, no_screen):
    """htcondor.md §3.4: a brand-new log is just `107 1 CreationTimestamp <now>`; `queue` shows
    its empty queue (exit 0). Replay shows that empty queue at the log's CreationTimestamp and
    says there is nothing to replay (exit 0, issue 25 item 5; was exit 2); the screen is not
    opened for it."""
    log = write(tmp_path, "job_queue.log", b"107 1 CreationTimestamp 1736935000\n")
    rc, out, _ = cli(capsys, "queue", log, "--json")
    assert rc == 0 and json.loads(out)["total_jobs"] == 0
    rc, out, err = cli(capsys, "replay", log, "--json")
    doc = json.loads(out)
    assert rc == 0 and doc["total_jobs"] == 0 and doc["time"] == 1736935000
    assert (doc["replay"]["transaction"], doc["replay"]["transactions"]) == (0, 0)
    assert "nothing to replay" in one_line(err)
    rc, out, err = cli(capsys, "replay", log)  # the screen form
    assert rc == 0 and out == "" and "nothing to replay" in one_line(err)


def test_watching_an_empty_log_waits_for_the_first_transaction(tmp_path, capsys):
    """htcondor.md §3.5: the follower reads what is there and polls again; a live schedd may not
    have written its log yet, so an empty file is not an error: watch says it is waiting."""
    log = write(tmp_path, "job_queue.log", b"")
    rc, out, err = cli(capsys, "watch", "--queue-log", log, "--once", "--json")
    assert rc == 0 and json.loads(out)["total_jobs"] == 0
    assert "waiting for the first transaction" in one_line(err) and log in err


# ------------------------------------------------------------------------------ item 6: one bad value


@pytest.mark.parametrize("bad", [DEEP, "::"], ids=["10000-deep", "colons"])
def test_an_unparsable_value_keeps_its_committed_transaction(bad):
    """A value that does not parse inside a committed transaction: HTCondor with
    CLASSAD_LOG_STRICT_PARSING off (classad_log.cpp LogSetAttribute::ReadBody) warns and goes
    on; the python bindings' LogReader gives such a value as an error (htcondor.md §6, `::`).
    RouteDeck keeps the transaction and the value's raw text, and names job, attribute and line
    (was: the whole transaction dropped, every good job in it lost)."""
    data = three_jobs(bad)
    for mode in ("owner", "follow"):
        res = load_bytes(data, source="q.log", mode=mode)
        assert res.queue.ids() == [(1, 0), (2, 0), (3, 0)] and not res.fatal
        line = data.split(b"\n").index(b"103 3.0 Foo " + bad.encode()) + 1
        [p] = [p for p in res.problems if "does not parse" in p.message]
        assert (p.record, p.severity) == (line, "warning")
        assert p.message.startswith("job 3.0 attribute Foo: value does not parse (")
        assert "\n" not in str(p) and len(str(p)) < 400
    owner = load_bytes(data, source="q.log")
    assert owner.queue.get((3, 0)).get("Foo") == bad  # the raw text, evaluated as error


def test_queue_long_shows_the_raw_text(tmp_path, capsys):
    """RouteDeck decision (item 6): `queue --long` prints the raw text of a value that does not
    parse, and the problem names file, line, job and attribute on stderr; the other jobs count."""
    log = write(tmp_path, "job_queue.log", three_jobs(DEEP))
    rc, out, err = cli(capsys, "queue", log, "--long", "3.0")
    assert rc == 0 and f"Foo = {DEEP}\n" in out
    assert f"{log}: record " in err and "job 3.0 attribute Foo: value does not parse" in err
    rc, out, _ = cli(capsys, "queue", log, "--json")
    assert rc == 0 and json.loads(out)["total_jobs"] == 3


def test_a_very_long_operator_chain_does_not_crash_the_reader():
    """A 200,000-term `1+1+…` value is a 200,000-deep tree; classad2 crashed (SIGSEGV) unparsing
    one this deep. RouteDeck decision: such a value is refused as too deep and kept as raw text
    (item 6); the process survives. Run in a child so a crash cannot take the test run down."""
    code = (
        "import sys\n"
        "from engine.queue.reader import load_bytes\n"
        f"chain = '+'.join(['1'] * {CHAIN.count('+') + 1})\n"
        "head = b'107 1 CreationTimestamp 1\\n101 0.0 Job Machine\\n105 \\n101 1.0 Job Machine\\n'\n"
        "res = load_bytes(head + b'103 1.0 Foo ' + chain.encode() + b'\\n103 1.0 JobStatus 1\\n106 \\n')\n"
        "job = res.queue.get((1, 0))\n"
        "assert job is not None and job.status == 1 and job.get('Foo') == chain, res.problems\n"
        "print(res.problems[0])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "job 1.0 attribute Foo: value does not parse" in proc.stdout


# ------------------------------------------------------------------------------ item 7: job-ads files


def _route(capsys, path):
    return cli(capsys, "route", "-c", ROUTER_CONFIG, "--jobads", path, "--now", "1700000000")


def _ad(proc: int, extra: str = "") -> str:
    return f'ClusterId = 5\nProcId = {proc}\nJobStatus = 1\nOwner = "alice"\nJobUniverse = 5\nRouteMe = 1\n{extra}'


def test_one_bad_old_syntax_ad_does_not_reject_the_file(tmp_path, capsys):
    """RouteDeck decision (issue 18 item 7): the good ads are routed and printed exactly as from
    a file holding only them; each bad ad (a byte that is not UTF-8, a value nested 10,000 deep)
    is reported on stderr with its line, and the exit status is 1."""
    data = (_ad(1).encode() + b"\n" + _ad(2).encode() + b'Cmd = "caf\xe9"\n' + b"\n" + _ad(3).encode()
            + b"\n" + _ad(4, f"Deep = {DEEP}\n").encode() + b"\n" + _ad(6).encode())
    path = write(tmp_path, "jobs.ads", data)
    alone = write(tmp_path, "good.ads", "\n".join(_ad(p) for p in (1, 3, 6)).encode())
    rc, expected, _ = _route(capsys, alone)
    assert rc == 0 and [line.split("\t")[0] for line in expected.splitlines()] == ["5.1", "5.3", "5.6"]
    rc, out, err = _route(capsys, path)
    assert rc == 1 and out == expected  # the good ads routed as if the bad ones were not there
    bad_lines = [i + 1 for i, raw in enumerate(data.split(b"\n")) if b"\xe9" in raw or b"Deep" in raw]
    errs = err.strip().splitlines()
    assert len(errs) == 2
    assert f"{path}:{bad_lines[0]}: not UTF-8 text (byte 0xe9)" in errs[0]
    assert f"{path}:{bad_lines[1]}: cannot parse the value of Deep" in errs[1]


def test_one_bad_new_syntax_ad_does_not_reject_the_file(tmp_path, capsys):
    """RouteDeck decision (item 7), new syntax: the bad ad (its value nested too deep) is
    reported with its line; the ads before and after it are routed; exit 1."""
    good = '[ ClusterId = 7; ProcId = {p}; JobStatus = 1; Owner = "bob"; JobUniverse = 5; RouteMe = 1 ]\n'
    data = good.format(p=0) + f"[ ClusterId = 7; ProcId = 1; JobStatus = 1; X = {DEEP} ]\n" + good.format(p=2)
    path = write(tmp_path, "jobs.new", data.encode())
    rc, out, err = _route(capsys, path)
    assert rc == 1 and [line.split("\t")[0] for line in out.splitlines()] == ["7.0", "7.2"]
    assert f"{path}:2: ClassAd does not parse" in one_line(err)


def test_a_cut_last_ad_does_not_hide_the_ones_before(tmp_path, capsys):
    """RouteDeck decision (item 7): a file cut inside its last new-syntax ad (no ']'): the ads
    before it are routed, the cut one is reported with the line it starts on, exit 1."""
    good = '[ ClusterId = 7; ProcId = 0; JobStatus = 1; Owner = "bob"; JobUniverse = 5; RouteMe = 1 ]\n'
    path = write(tmp_path, "jobs.new", (good + '[ ClusterId = 7; ProcId = 1; Owner = "b"\n').encode())
    rc, out, err = _route(capsys, path)
    assert rc == 1 and [line.split("\t")[0] for line in out.splitlines()] == ["7.0"]
    assert f"{path}:2: unterminated ClassAd" in one_line(err)


def test_a_file_of_only_bad_ads_cannot_be_read(tmp_path, capsys):
    """RouteDeck decision (project rule: exit 2 for unreadable input): when no ad at all can be
    read there is nothing to route; one line per bad ad, nothing on stdout."""
    path = write(tmp_path, "jobs.ads", b'Owner = "a"\nBad = ((\n')
    rc, out, err = _route(capsys, path)
    assert rc == 2 and out == "" and f"{path}:2: cannot parse the value of Bad" in one_line(err)


# ------------------------------------------------------------------------------ fuzz: the reader

_LIMIT_FIXED = 2 << 20  # bytes: interpreter noise, the ClassAd layer's caches, a few problems
_LIMIT_PER_BYTE = 24  # worst case measured: 21 for lines of two characters (one str object each)


def _peak_of(fn) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


_record = st.sampled_from([
    "105 ", "106 ", "106 # 2025-01-15T10:00:00", "101 1.0 Job Machine", "101 01.-1 Job Machine",
    "103 1.0 JobStatus 2", '103 01.-1 Owner "u"', "103 1.0 Foo ::", f"103 1.0 Deep {DEEP}", "102 1.0",
    "104 1.0 JobStatus", "107 2 CreationTimestamp 5", "ZMG 1.0 x", "103 1.0", "",
])
_hostile = st.one_of(
    st.binary(max_size=4096),
    st.lists(_record, max_size=40).map(lambda rs: lines(*HEAD, *rs)),
    st.tuples(st.lists(_record, max_size=20), st.binary(max_size=64)).map(
        lambda t: lines(*HEAD, *t[0]) + t[1] + b"\n"),
)


@settings(max_examples=150, deadline=10_000, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=_hostile)  # ~1 s on the 2-core dev machine: not marked slow
@example(data=b"")
@example(data=GARBAGE)
@example(data=three_jobs(DEEP))
@example(data=lines(*HEAD, "105 ", "101 1.0 Job Machine", "103 1.0 Cmd \"caf\xe9\"", "106 ").replace(b"\xc3\xa9", b"\xe9"))
@example(data=lines(*HEAD, "105 ", "101 1.0 Job Machine", "103 1.0 A 1\0", "106 "))
@example(data=lines(*HEAD) + b"103 0.0 Long \"" + b"x" * (1 << 20) + b"\"\n")
@example(data=lines(*HEAD, "101 1.0 Job Machine") + b"103 1.0 Chain " + CHAIN.encode() + b"\n")
@example(data=b"ab\n" * 20_000)
def test_fuzz_reader_never_raises_and_stays_within_memory(data):
    """htcondor.md §3.3/§3.5 and the project rule: whatever the bytes (binary, a 10,000-deep
    value, invalid UTF-8, NUL bytes, a 1 MB line, a 200,000-term chain), loading gives a result
    whose problems are one line each, never an exception or a crash, within a deadline of 10 s
    an example, and peak Python memory (tracemalloc) stays within a fixed bound plus a constant
    factor of the input size."""
    for mode in ("owner", "follow"):
        box = {}
        peak = _peak_of(lambda: box.setdefault("res", load_bytes(data, source="fuzz.log", mode=mode)))
        res = box["res"]
        assert all("\n" not in str(p) and len(str(p)) < 1000 for p in res.problems)
        assert res.records <= data.count(b"\n")
        assert peak <= _LIMIT_FIXED + _LIMIT_PER_BYTE * len(data), (mode, peak, len(data))
