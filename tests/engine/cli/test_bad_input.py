"""Hostile input through the CLI and the engine: every case gives a clear message naming the file,
the line (where there is one) and what is wrong, never a traceback; the engine keeps the last
good state (project rule, product.md "bad input").

HTCondor sources for the expected behaviour are named per test (htcondor.md sections). Cases
where HTCondor itself has no rule (a NUL byte in a config file, a hook flooding its stdout) are
RouteDeck decisions and say so.
"""

from __future__ import annotations

import textwrap

import pytest

from engine.lang.config import Config
from engine.router.loader import load_routing_table
from tui.cli import main as cli_main
from tests.helpers.router_fixtures import T0, TWO_ROUTES, make_router, submit

GOOD = TWO_ROUTES


def write(tmp_path, name, data):
    p = tmp_path / name
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data)
    return str(p)


def run_cli(capsys, *argv):
    try:
        rc = cli_main([str(a) for a in argv])
    except SystemExit as exc:  # a usage error refused by argparse (one line, exit 2)
        rc = exc.code
    cap = capsys.readouterr()
    assert "Traceback" not in cap.out + cap.err
    return rc, cap.out, cap.err


def routes(table):
    return [r.name for r in table.routes]


# ------------------------------------------------------------------------------ routing table


def test_bad_tables_in_a_row_keep_the_last_good_one(tmp_path):
    """product.md: a bad table keeps the last good one in force, also on the 2nd bad reload
    (a kept table carries the rejected table's errors, which must not make it "bad")."""
    good = load_routing_table(Config.from_text(GOOD, "g.conf"))
    assert routes(good) == ["A", "B"] and not good.errors
    bad_text = GOOD.replace('REQUIREMENTS Owner == "alice"', 'REQUIREMENTS Owner == ("alice"')
    bad1 = load_routing_table(Config.from_text(bad_text, "b.conf"), previous=good)
    assert bad1.kept_previous and routes(bad1) == ["A", "B"]
    assert any(d.file == "b.conf" and d.line == 4 and "REQUIREMENTS" in d.message for d in bad1.errors)
    bad2 = load_routing_table(Config.from_text(bad_text, "b.conf"), previous=bad1)
    assert bad2.kept_previous and routes(bad2) == ["A", "B"] and bad2.version == good.version
    fixed = load_routing_table(Config.from_text(GOOD.replace("alice", "bob"), "g.conf"), previous=bad2)
    assert not fixed.kept_previous and fixed.version == good.version + 1


def test_config_cut_inside_an_at_block_keeps_the_last_good_table(tmp_path):
    """A file cut in the middle of route B's @= block: the config reader's error (htcondor.md
    §1.3: B is then only "not found in the routing table", a warning) must still keep the good
    table; the kept table names the file and line of the cut block."""
    good = load_routing_table(Config.from_text(GOOD, "g.conf"))
    cut = GOOD.rsplit("@jrt", 1)[0]
    cfg = Config.from_text(cut, "cut.conf")
    new = load_routing_table(cfg, previous=good)
    assert new.kept_previous and routes(new) == ["A", "B"]
    err = [d for d in new.errors if "end of file while scanning" in d.message]
    assert err and err[0].file == "cut.conf" and err[0].line == 6
    # without a previous table it is used as HTCondor would (B missing)
    assert routes(load_routing_table(cfg)) == ["A"]


def test_router_keeps_routing_after_set_table_with_a_kept_table():
    """JobRouter.set_table with the kept table: same routes, routing goes on (htcondor.md §1.3
    SetRoutingTable keeps per-route state by name)."""
    good = load_routing_table(Config.from_text(GOOD.replace('Owner == "alice"', "true"), "g.conf"))
    r, src, _dst = make_router(good)
    (k1,) = submit(src)
    r.poll(T0 + 10)
    assert r.jobs[k1].route_name == "A"
    kept = load_routing_table(Config.from_text("JOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=x\n", "c.conf"),
                              previous=good)
    assert kept.kept_previous
    r.set_table(kept, T0 + 15)
    (k2,) = submit(src)
    r.poll(T0 + 20)
    assert r.jobs[k2].route_name == "A" and r.jobs[k1].route_name == "A"


# ------------------------------------------------------------------------------ ClassAd routes


ENTRIES = """\
JOB_ROUTER_DEFAULTS = [ MaxJobs = 10; MaxIdleJobs = 5; requirements = target.x == 1 ]
JOB_ROUTER_ENTRIES @=end
[ name = "A"; GridResource = "batch slurm"; ]
[ name = "B"; GridResource = "batch pbs"; requirements = ((( ; ]
[ name = "C"; GridResource = "batch sge"; ]
[ name = "D"; GridResource = "batch lsf";
[ name = "E"; GridResource = "batch htcondor"; ]
@end
"""


def test_malformed_entries_in_the_middle_are_skipped_and_the_rest_load(tmp_path, capsys):
    """htcondor.md §1.2: a malformed JOB_ROUTER_ENTRIES entry is logged and skipped; the entries
    after it still load. Unbalanced parentheses (B) and a missing ']' (D) must not hide C and E."""
    path = write(tmp_path, "entries.conf", ENTRIES)
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1
    assert f"{path}:4: error: JOB_ROUTER_ENTRIES: malformed route entry entries:1 ignored" in out
    assert f"{path}:6: error: JOB_ROUTER_ENTRIES: malformed route entry entries:3 ignored" in out
    table = load_routing_table(Config.load([path]))
    assert sorted(routes(table)) == ["A", "C", "E"]


def test_defaults_that_do_not_parse_disable_routing_with_file_and_line(tmp_path, capsys):
    """htcondor.md §1.2: a JOB_ROUTER_DEFAULTS parse error disables routing entirely."""
    path = write(tmp_path, "d.conf", "X = 1\nJOB_ROUTER_DEFAULTS = [ MaxJobs = 10; requirements = (( ]\n"
                 'JOB_ROUTER_ENTRIES = [ name = "A"; GridResource = "a b"; ]\n')
    rc, out, _ = run_cli(capsys, "check", path)
    assert rc == 1 and f"{path}:2: error: JOB_ROUTER_DEFAULTS does not parse" in out
    assert "routing DISABLED" in out


# ------------------------------------------------------------------------------ route --jobads


def test_job_ads_not_utf8_name_the_line(tmp_path, capsys):
    """RouteDeck decision: job ads must be UTF-8 text; other bytes are an error naming the line
    (was a UnicodeDecodeError traceback)."""
    cfg = write(tmp_path, "g.conf", GOOD)
    ads = write(tmp_path, "jobs.ads", b'Owner = "alice"\nClusterId = 1\nCmd = "caf\xe9"\n')
    rc, _, err = run_cli(capsys, "route", "-c", cfg, "--jobads", ads, "--now", "1")
    assert rc == 2 and f"{ads}:3: not UTF-8 text (byte 0xe9)" in err


@pytest.mark.parametrize("data, line, what", [
    (b'Owner = "a"\nClusterId = 1\nBad = ((\n', 3, "cannot parse the value of Bad"),
    (b'Owner = "a"\nA = 1\x00\n', 2, "cannot parse the value of A"),
])
def test_bad_job_ads_name_file_and_line(tmp_path, capsys, data, line, what):
    """Old-syntax lines each parse alone (engine.classad_ads parse_old_ads); exit 2 when no ad can
    be read (one bad ad among good ones: tests/test_hostile_inputs.py, exit 1)."""
    cfg = write(tmp_path, "g.conf", GOOD)
    ads = write(tmp_path, "jobs.ads", data)
    rc, _, err = run_cli(capsys, "route", "-c", cfg, "--jobads", ads, "--now", "1")
    assert rc == 2 and f"{ads}:{line}: " in err and what in err


def test_route_exits_1_when_the_table_has_errors(tmp_path, capsys):
    """A route whose REQUIREMENTS does not parse is left out (htcondor.md §1.3); the jobs are
    still matched against the rest, and the exit status says the input had errors."""
    cfg = write(tmp_path, "b.conf", GOOD.replace('Owner == "alice"', 'Owner == ("alice"'))
    ads = write(tmp_path, "jobs.ads", 'Owner = "alice"\nClusterId = 1\nProcId = 0\nJobStatus = 1\n')
    rc, out, err = run_cli(capsys, "route", "-c", cfg, "--jobads", ads, "--now", "1")
    assert rc == 1 and f"{cfg}:4: error: route A" in err and out.startswith("1.0\t")


# ------------------------------------------------------------------------------ config files


@pytest.mark.parametrize("name, data, line, level, what", [
    # htcondor.md §1.3 route knobs use @= blocks; config.cpp: "end of file while scanning for '@tag'"
    ("unterminated.conf", "JOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=jrt\n  REQUIREMENTS true\n",
     2, "error", "end of file while scanning for '@jrt'"),
    # RouteDeck decision: HTCondor silently ends the value; a cut file is likely
    ("cont.conf", "X = 1\nJOB_ROUTER_ROUTE_NAMES = A \\\n", 2, "warning", "continues ('\\') past the end"),
    ("latin1.conf", b"X = 1\nY = caf\xe9\n", 2, "warning", "not UTF-8"),
    ("nul.conf", b"X = 1\nY = a\x00b\nZ = 3\n", 2, "error", "NUL byte in the line"),
    ("garbage.conf", b"X = 1\n\xff\xfe\x80garbage\n", 2, "error", "syntax error, missing '=' or ':'"),
])
def test_broken_config_files_name_file_and_line(tmp_path, capsys, name, data, line, level, what):
    path = write(tmp_path, name, data)
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert f"{path}:{line}: {level}: " in out and what in out
    assert rc == (1 if level == "error" else 0)


def test_nul_byte_ends_the_line_and_binary_files_are_not_read(tmp_path):
    """RouteDeck decision (HTCondor's C strings end at a NUL): the line is read up to the NUL;
    a file with NULs on many lines is not a config file and is not read at all."""
    cfg = Config.load([write(tmp_path, "n.conf", b"Y = ab\x00cd\nZ = 3\n")])
    assert cfg.get_raw("Y") == "ab" and cfg.get_raw("Z") == "3"
    binary = write(tmp_path, "bin.conf", b"A = 1\x00\n" * 10 + b"B = 2\n")
    cfg = Config.load([binary])
    assert "B" not in cfg and [str(e) for e in cfg.errors] == [f"{binary}:1: not a text file (NUL bytes in 10 lines); not read"]


@pytest.mark.parametrize("include, what", [
    ("include : {dir}/missing.conf", "cannot open included file"),
    ("include : {self}", "include cycle"),
])
def test_bad_includes_name_the_including_line(tmp_path, capsys, include, what):
    """config.cpp include handling (engine/lang/config.py docstring): a missing file and a cycle are
    errors at the include line."""
    path = tmp_path / "main.conf"
    path.write_text("X = 1\n" + include.format(dir=tmp_path, self=path) + "\n")
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1 and f"{path}:2: error: " in out and what in out


def test_include_of_a_directory_reads_its_files(tmp_path):
    """condor_config.cpp: ``include : <dir>`` reads the files of the directory in order."""
    d = tmp_path / "conf.d"
    d.mkdir()
    (d / "10.conf").write_text("A = 1\n")
    (d / "20.conf").write_text("A = 2\nB = 3\n")
    cfg = Config.load([write(tmp_path, "m.conf", f"include : {d}\n")])
    assert not cfg.errors and cfg.get("A") == "2" and cfg.get("B") == "3"


def test_macro_cycle_names_the_knob(tmp_path, capsys):
    """config.cpp expand: a macro that refers to itself through others is an error."""
    path = write(tmp_path, "cyc.conf", "A = $(B)\nB = $(A)\nJOB_ROUTER_ROUTE_NAMES = $(A)\n")
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1 and f"{path}:1: error: " in out and "refers to itself" in out


def test_unreadable_config_file(tmp_path, monkeypatch, capsys):
    """Permission denied (simulated: the tests may run as root) is an error naming the file."""
    path = write(tmp_path, "secret.conf", GOOD)
    real = type(tmp_path).read_bytes

    def deny(self):
        if str(self) == path:
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(type(tmp_path), "read_bytes", deny)
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1 and f"{path}: error: cannot open config source {path!r}: Permission denied" in out


def test_convert_output_that_cannot_be_written(tmp_path, capsys):
    """``convert -o`` into a missing directory: a message, exit 2 (was a traceback)."""
    cfg = write(tmp_path, "g.conf", GOOD)
    rc, _, err = run_cli(capsys, "convert", cfg, "-o", tmp_path / "nope" / "out.conf")
    assert rc == 2 and "cannot write" in err and "No such file or directory" in err


@pytest.mark.parametrize("special", ["/dev/null", "/dev/zero"])
def test_device_given_as_input_is_refused_not_read(tmp_path, capsys, special):
    """RouteDeck decision: configs, job ads and logs are regular files; /dev/zero would be read
    until memory runs out (was a MemoryError)."""
    rc, out, err = run_cli(capsys, "check", "-q", special)  # issue 11 item 19: unreadable input is 2
    assert (rc, out) == (2, "") and err == f"routedeck check: cannot read {special}: not a regular file\n"
    rc, _, err = run_cli(capsys, "route", "-c", write(tmp_path, "g.conf", GOOD), "--jobads", special)
    assert rc == 2 and f"cannot read {special}: not a regular file" in err
    rc, _, err = run_cli(capsys, "queue", special)
    assert rc == 2 and f"cannot read {special}: not a regular file" in err


# ------------------------------------------------------------------------------ job_queue.log

LOG = """\
107 1 CreationTimestamp 1700000000
105 
101 0.0 Job Machine
103 0.0 NextClusterNum 3
101 01.-1 Job Machine
103 01.-1 Owner "alice"
101 1.0 Job Machine
103 1.0 JobStatus 1
106 
105 
101 02.-1 Job Machine
103 02.-1 Owner "bob"
101 2.0 Job Machine
103 2.0 JobStatus 2
106 
"""


def test_log_truncated_mid_record_keeps_the_committed_jobs(tmp_path, capsys):
    """htcondor.md §3.3: an unterminated last line and an uncommitted trailing transaction are
    discarded (the schedd starts; exit 0), each reported with record number and offset."""
    path = write(tmp_path, "job_queue.log", LOG[:200])
    rc, out, err = run_cli(capsys, "queue", path)
    assert rc == 0 and "1 jobs" in out
    assert f"{path}: record 11 (byte offset 181): error: unterminated last line" in err
    assert f"{path}: record 10 (byte offset 176): error: transaction begun here was not committed" in err


def test_log_corrupt_record_inside_a_committed_transaction_is_fatal(tmp_path, capsys):
    """htcondor.md §3.3: a corrupt record followed by a 106 makes the schedd EXCEPT; RouteDeck
    reports it (exit 1) and keeps the state before that transaction. (A value that only fails to
    parse keeps its transaction: tests/test_hostile_inputs.py.)"""
    path = write(tmp_path, "job_queue.log", LOG.replace('103 02.-1 Owner "bob"', '103 02.-1 Owner'))
    rc, out, err = run_cli(capsys, "queue", path)
    assert rc == 1 and "1 jobs" in out
    assert f"{path}: record 12 (byte offset " in err and "fatal: corrupt record: 103 record needs" in err


def test_log_of_binary_garbage_quotes_it_short_and_escaped(tmp_path, capsys):
    """htcondor.md §3.3: a corrupt first record with no 106 after it is a torn write; the message
    quotes the bad bytes as \\xNN, cut short (was thousands of raw surrogate characters). With
    no valid record at all the file is not a job queue log: exit 2 (issue 18 item 4)."""
    path = write(tmp_path, "job_queue.log", b"\xff\xfe\x01" + b"\x80\x81garbage" * 400 + b"\n")
    rc, _, err = run_cli(capsys, "queue", path)
    assert rc == 2 and "not a job queue log" in err and "bad op code '\\xff\\xfe\\x01\\x80\\x81garbage" in err and "characters)" in err
    assert len(err) < 400


def test_empty_log_and_unreadable_log(tmp_path, capsys, monkeypatch):
    """An empty file is an empty queue, as the schedd reads it (issue 25 item 5; was exit 2):
    src/condor_utils/classad_log.cpp LoadClassAdLog reads no record and, with none (``!count``),
    writes a fresh 107 and starts with no job. A log that cannot be read is fatal, exit 2
    (permission denied simulated)."""
    empty = write(tmp_path, "empty.log", "")
    rc, out, err = run_cli(capsys, "queue", empty)
    assert rc == 0 and out.startswith(f"{empty}: 0 jobs") and err == ""
    rc, _, err = run_cli(capsys, "queue", tmp_path)
    assert rc == 2 and f"routedeck queue: cannot read {tmp_path}: Is a directory" in err
    path = write(tmp_path, "job_queue.log", LOG)
    real_open = open

    def deny(file, *a, **kw):
        if str(file) == path:
            raise PermissionError(13, "Permission denied")
        return real_open(file, *a, **kw)

    monkeypatch.setattr("builtins.open", deny)
    rc, _, err = run_cli(capsys, "queue", path)
    assert rc == 2 and f"{path}: record 0 (byte offset 0): fatal: cannot read the log: Permission denied" in err


# ------------------------------------------------------------------------------ cron options


@pytest.mark.parametrize("after", ["1e30", "-1e30", "nan", "inf", "99999999999999", "garbage", "2026-13-45"])
def test_cron_after_out_of_range_is_a_usage_error(capsys, after):
    """--after must be a time the calendar can hold (was an OverflowError / ValueError traceback
    for nan, inf and far epochs)."""
    rc, _, err = run_cli(capsys, "cron", "next", f"--after={after}", "--tz", "UTC", "--minute", "5")
    assert rc == 2 and f"routedeck cron: --after: '{after}' is" in err


@pytest.mark.parametrize("argv, rc_want, what", [
    (["--minute", "abc"], 1, "Invalid parameter value 'abc' for CronMinute"),  # htcondor.md §2.2
    (["--minute", "*/0"], 1, "a step of 0"),  # htcondor.md §2.2 validateParameter
    (["--tz", "Nowhere/Zone"], 2, "unknown time zone 'Nowhere/Zone'"),
    (["-n", "0"], 2, "-n must be between 1 and"),
])
def test_cron_garbage_options(capsys, argv, rc_want, what):
    rc, out, err = run_cli(capsys, "cron", "next", "--after", "1700000000", *argv)
    assert rc == rc_want and what in out + err


def test_bad_numeric_and_boolean_knobs_are_warnings_not_crashes(tmp_path, capsys):
    """A macro cycle in a numeric knob was a traceback (get_int raised); 1e400 overflowed int().
    Both, and words where numbers belong, are diagnostics naming the line; defaults from
    htcondor.md §1.3 (JOB_ROUTER_MAX_JOBS -1, MaxJobs 100, MaxIdleJobs 50)."""
    path = write(tmp_path, "k.conf", textwrap.dedent("""\
        A = $(B)
        B = $(A)
        JOB_ROUTER_MAX_JOBS = $(A)
        JOB_ROUTER_POLLING_PERIOD = often
        JOB_ROUTER_ROUND_ROBIN_SELECTION = maybe
        JOB_ROUTER_ROUTE_NAMES = A
        JOB_ROUTER_ROUTE_A @=x
          REQUIREMENTS true
          MaxJobs = 1e400
          MaxIdleJobs = lots
        @x
        """))
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1
    assert f"{path}:1: error: JOB_ROUTER_MAX_JOBS: macro $(A) refers to itself" in out
    assert f"{path}:4: warning: JOB_ROUTER_POLLING_PERIOD = 'often' is not an integer; using the default 10" in out
    assert f"{path}:5: warning: JOB_ROUTER_ROUND_ROBIN_SELECTION = 'maybe' is not a boolean" in out
    assert "MaxJobs = '1e400' is not a number; using 100" in out and "MaxIdleJobs = 'lots'" in out
    table = load_routing_table(Config.load([path]))
    assert table.knobs.max_jobs == -1 and table.routes[0].max_jobs == 100


def test_entries_file_that_is_a_device_is_not_read(tmp_path, capsys):
    """htcondor.md §1.2: JOB_ROUTER_ENTRIES_FILE that cannot be read makes HTCondor EXCEPT;
    /dev/zero would be read forever (was a hang)."""
    path = write(tmp_path, "e.conf", "JOB_ROUTER_DEFAULTS = [ requirements = true ]\n"
                 "JOB_ROUTER_ENTRIES_FILE = /dev/zero\n")
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1 and f"{path}:2: error: JOB_ROUTER_ENTRIES_FILE: cannot read /dev/zero: not a regular file" in out


@pytest.mark.parametrize("now", ["nan", "inf", "1e300", "soon"])
def test_route_now_must_be_a_real_time(tmp_path, capsys, now):
    """``route --now``: nan/inf/huge were tracebacks deep in classad2 (ValueError, SystemError);
    now a usage error (argparse, exit 2)."""
    cfg = write(tmp_path, "g.conf", GOOD)
    ads = write(tmp_path, "j.ads", 'Owner = "alice"\n')
    with pytest.raises(SystemExit) as exc:
        cli_main(["route", "-c", cfg, "--jobads", ads, f"--now={now}"])
    assert exc.value.code == 2 and "argument --now" in capsys.readouterr().err


def test_macro_doubling_bomb_is_an_error_not_a_hang(tmp_path, capsys):
    """RouteDeck decision (HTCondor has no limit): ``L<n> = $(L<n-1>)$(L<n-1>)`` 39 levels deep
    is 2^39 substitutions; it ends with an error naming the knob (was a hang)."""
    lines = ["L0 = xxxxxxxx"] + [f"L{i} = $(L{i - 1})$(L{i - 1})" for i in range(1, 40)] + ["JOB_ROUTER_NAME = $(L39)"]
    path = write(tmp_path, "bomb.conf", "\n".join(lines) + "\n")
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1 and "JOB_ROUTER_NAME: more than 100000 macro substitutions" in out


def test_requirements_written_as_a_macro_assignment_gets_a_hint(tmp_path, capsys):
    """htcondor.md §1.3: ``var = value`` is a macro assignment and a route without a REQUIREMENTS
    statement is "Missing Requirements in job route"; the message says why for the common slip."""
    path = write(tmp_path, "r.conf", 'JOB_ROUTER_ROUTE_NAMES = A\nJOB_ROUTER_ROUTE_A @=x\n  REQUIREMENTS = Owner == "a"\n@x\n')
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1 and f"{path}:2: error: route A (JOB_ROUTER_ROUTE_A): Missing Requirements in job route" in out
    assert "'REQUIREMENTS = …' assigns a macro" in out


# ------------------------------------------------------------------------------ macro loops (issue 25 item 8c)


def test_macro_loop_names_every_macro_of_the_cycle_at_its_line(tmp_path, capsys):
    """src/condor_utils/config.cpp ``expand_macro`` substitutes until no ``$()`` is left (no loop
    check: ``CONFIG_MAX_NESTING_DEPTH``, condor_config.h, bounds include/metaknob nesting only), so
    HTCondor would never return; RouteDeck stops and names the whole cycle, each at file:line."""
    path = write(tmp_path, "loop.conf", "A = $(B)\nB = $(C)\nC = $(A)\nJOB_ROUTER_ROUTE_NAMES = $(A)\n")
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1
    assert (f"{path}:1: error: JOB_ROUTER_ROUTE_NAMES: macro $(A) refers to itself through a loop: "
            f"A ({path}:1) -> B ({path}:2) -> C ({path}:3) -> A") in out


@pytest.mark.parametrize("where", ["config", "route"])
def test_requirements_naming_a_macro_loop_says_it_is_a_loop(tmp_path, capsys, where):
    """xform_utils.cpp ``MacroStreamXFormSource::open``: the REQUIREMENTS text goes to
    ``setRequirements`` unexpanded, and one that does not parse is "invalid REQUIREMENTS : %s" — so
    ``REQUIREMENTS $(B)`` is HTCondor's error whatever B holds. The message adds why, and here that
    B is a loop with A (both named, with their file:line)."""
    loop = "A = $(B)\nB = $(A)\n"
    route = "JOB_ROUTER_ROUTE_R @=jrt\n{inner}  UNIVERSE 5\n  REQUIREMENTS $(B)\n@jrt\n"
    text = ("JOB_ROUTER_ROUTE_NAMES = R\n" + (loop + route.format(inner="") if where == "config" else
            route.format(inner="".join("  " + line + "\n" for line in loop.splitlines()))))
    path = write(tmp_path, "r.conf", text)
    a, b = (3, 4) if where == "route" else (2, 3)
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1 and "invalid REQUIREMENTS : $(B)" in out
    assert f"B ({path}:{b}) -> A ({path}:{a}) -> B" in out and "loop" in out


def test_requirements_naming_a_macro_says_it_is_not_expanded(tmp_path, capsys):
    """The same HTCondor rule (xform_utils.cpp): a macro in REQUIREMENTS is not expanded; the
    message shows what the macro holds, to write instead."""
    path = write(tmp_path, "r.conf", 'MYREQ = Owner == "alice"\nJOB_ROUTER_ROUTE_NAMES = R\n'
                                     'JOB_ROUTER_ROUTE_R @=jrt\n  UNIVERSE 5\n  REQUIREMENTS $(MYREQ)\n@jrt\n')
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1 and f"{path}:5: error: " in out
    assert "without expanding macros: $(MYREQ) would be 'Owner == \"alice\"'" in out


def test_macro_loop_inside_a_route_is_an_error_when_the_table_loads(tmp_path, capsys):
    """A loop among a route's own macros, expanded by a SET: HTCondor's router would loop forever
    on the first job (config.cpp ``expand_macro``); ``check`` reported nothing. Now an error at the
    statement, naming both macros at their file:line."""
    path = write(tmp_path, "r.conf", 'JOB_ROUTER_ROUTE_NAMES = R\nJOB_ROUTER_ROUTE_R @=jrt\n  A = $(B)\n  B = $(A)\n'
                                     '  UNIVERSE 5\n  REQUIREMENTS true\n  SET Foo "$(A)"\n@jrt\n')
    rc, out, _ = run_cli(capsys, "check", "-q", path)
    assert rc == 1
    assert f"{path}:7: error: route R (JOB_ROUTER_ROUTE_R): macro $(A) refers to itself through a loop: " \
           f"A ({path}:3) -> B ({path}:4) -> A" in out
