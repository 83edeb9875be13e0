"""Hostile configuration files (issue 18, items 2, 5 and 8): the config reader's memory and work
are bounded, a directory given as a config source is read as a config directory, and a symlink
loop in an included directory is reported. Every bad input gives a ``file:line`` diagnostic and the
rest of the config still loads (product.md "bad input").

Memory is measured with ``tracemalloc`` (Python allocations). Cases that used to exhaust memory run
in a child process whose address space is capped (``RLIMIT_AS``), so a regression fails the test
instead of taking the machine down.

HTCondor has no limit on macro expansion (``src/condor_utils/config.cpp``: ``expand_macro`` and
``expand_self_macro`` loop until no macro is left, with a fresh ``malloc`` per substitution; the
only nesting bound is ``CONFIG_MAX_NESTING_DEPTH`` 20, for ``include`` and ``use``). The size,
work and depth bounds here are RouteDeck decisions and say so.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.paths import REPO
from tests.helpers.router_fixtures import TWO_ROUTES
from engine.lang import macros as mx
from engine.lang.config import Config, ConfigError, MAX_SELF_GROWTH, MAX_FILE_SIZE
from engine.router.loader import load_routing_table
from tui.cli import main as cli_main

REPO = REPO
MIB = 1 << 20
PEAK_BOUND = 64 * MIB  # the fuzz test's fixed memory bound (tracemalloc peak)

ROUTES = TWO_ROUTES


def write(path: Path, data: str | bytes) -> str:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return str(path)


def run_cli(capsys, *argv) -> tuple[int, str]:
    rc = cli_main([str(a) for a in argv])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.out + cap.err
    return rc, cap.out + cap.err


_CHILD = """
import json, resource, sys, tracemalloc
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))  # 1 GiB: a regression dies here, not the host
sys.path.insert(0, {repo!r})
from engine.lang.config import Config, ConfigError
from engine.router.loader import load_routing_table
tracemalloc.start()
cfg = Config.load([{path!r}], env={{}})
got = {{}}
for name in {knobs!r}:
    try:
        v = cfg.get(name)
        got[name] = None if v is None else len(v)
    except ConfigError as exc:
        got[name] = str(exc)
table = load_routing_table(cfg)
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({{"peak": peak, "errors": [str(e) for e in cfg.errors], "got": got,
                  "routes": [r.name for r in table.routes]}}))
"""


def load_in_child(path: str, knobs: tuple[str, ...] = ()) -> dict:
    """Load ``path`` (and expand ``knobs``, then build the routing table) in a child process capped
    at 1 GiB of address space; returns the tracemalloc peak, the errors and the knob results."""
    code = _CHILD.format(repo=str(REPO), path=path, knobs=knobs)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@contextlib.contextmanager
def address_space_cap(extra: int = 1 << 30):
    """Cap this process's address space at its current size plus ``extra`` while the block runs,
    so a reader that regresses into a memory bomb raises MemoryError instead of exhausting the
    host (Linux; elsewhere, no cap)."""
    try:
        import resource  # noqa: PLC0415 - POSIX only: where it is missing the block runs without a cap

        with open("/proc/self/status") as f:
            vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
        old = resource.getrlimit(resource.RLIMIT_AS)
        cap = vm + extra if old[1] == resource.RLIM_INFINITY else min(vm + extra, old[1])
        resource.setrlimit(resource.RLIMIT_AS, (cap, old[1]))
    except (ImportError, OSError, StopIteration, ValueError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, old)


# ---------------------------------------------------------------------------- item 2: macro bombs


def test_self_reference_bomb_is_an_error_at_its_line_and_the_rest_loads():
    """config.cpp ``expand_self_macro`` expands ``$(N)`` in ``N = $(N) $(N) $(N)`` when the line is
    read (htcondor.md §6 "only self references are expanded at parse time"), without a size limit.
    RouteDeck decision: a value past ``MAX_SIZE`` (1 Mi characters) is an error at the line that
    made it so long, the knob becomes empty, and the lines after it still load.
    Twelve triplings of ``xx`` are 3**13 - 1 characters, the first past 1 Mi."""
    bomb = ["N = xx"] + ["N = $(N) $(N) $(N)"] * 14
    text = "\n".join(bomb) + "\nAFTER = still read\n" + ROUTES
    cfg = Config.from_text(text, "bomb.conf", env={})
    errs = [e for e in cfg.errors if "N" in e.message and str(mx.MAX_SIZE) in e.message]
    assert [(e.file, e.line) for e in errs] == [("bomb.conf", 13)]  # line 1 is N = xx
    assert len(cfg.get_raw("N")) < 100  # emptied at line 13, then two more triplings of ""
    assert cfg.get("AFTER") == "still read"
    assert [r.name for r in load_routing_table(cfg).routes] == ["A", "B"]


def test_self_reference_continues_to_work():
    """config.cpp ``expand_self_macro``: ``X = $(X) more`` appends (HTCondor-CE does this with
    ``JOB_ROUTER_DEFAULTS``, htcondor.md §6); the bound must not break it, also near the bound."""
    cfg = Config.from_text("X = a\nX = $(X) b\nX = $(X:zz) c\nBIG = " + "y" * (mx.MAX_SIZE - 10)
                           + "\nBIG = $(BIG)+tail\n", "ok.conf", env={})
    assert not cfg.errors
    assert cfg.get("X") == "a b c"
    assert cfg.get("BIG").endswith("y+tail") and len(cfg.get("BIG")) == mx.MAX_SIZE - 5


def test_issue_bomb_through_check_stays_small(tmp_path):
    """The issue's case: forty lines of ``N = $(N) $(N) $(N)`` (3**40 copies in HTCondor, whose
    ``expand_self_macro`` has no bound) grew ``routedeck check`` past 9 GB. Now: errors naming
    bomb.conf and the lines, the routing table after the bomb loads, peak memory < 64 MiB."""
    path = write(tmp_path / "bomb.conf", "N = x\n" + "N = $(N) $(N) $(N)\n" * 40 + ROUTES)
    res = load_in_child(path, ("N",))
    assert res["peak"] < PEAK_BOUND
    assert res["errors"] and all(e.startswith(f"{path}:") and "N" in e for e in res["errors"])
    assert res["routes"] == ["A", "B"]


def test_wide_fan_out_is_bounded_by_size_not_only_by_count(tmp_path):
    """RouteDeck decision (HTCondor: no limit). ``L2`` is a thousand ``$(L1)``, each a million
    characters: a few hundred substitutions, far under ``MAX_REFS``, but a gigabyte of text.
    The error names the knob and its file:line, and the partial text never passes the size bound."""
    text = ("L0 = " + "x" * 1000 + "\nL1 = " + "$(L0)" * 1000 + "\nL2 = " + "$(L1)" * 1000
            + "\nJOB_ROUTER_NAME = $(L2)\n" + ROUTES)
    path = write(tmp_path / "fan.conf", text)
    res = load_in_child(path, ("JOB_ROUTER_NAME", "L1"))
    assert res["peak"] < 8 * MIB  # two 1 Mi-character strings plus the file; was ~200 MiB
    assert res["got"]["L1"] == 1_000_000  # a 1 MB value under the bound is fine
    assert res["got"]["JOB_ROUTER_NAME"].startswith(f"{path}:")
    assert str(mx.MAX_SIZE) in res["got"]["JOB_ROUTER_NAME"]


def test_mutual_recursion_is_an_error_not_a_blow_up():
    """config.cpp ``expand_macro`` would loop forever on ``A = $(B)$(B)`` / ``B = $(A)$(A)``
    (it re-scans the substituted text); RouteDeck stops at the first repeated name, naming it,
    before any doubling happens (peak well under 1 MiB)."""
    cfg = Config.from_text("A = $(B)$(B)$(B)\nB = $(C)$(A)$(A)\nC = c\nX = $(A)\n", "m.conf", env={})
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match=r"refers to itself through a loop: (A \(m\.conf:1\) -> B \(m\.conf:2\) -> A|"
                                              r"B \(m\.conf:2\) -> A \(m\.conf:1\) -> B)") as info:
            cfg.get("X")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.file == "m.conf" and info.value.line in (1, 2)
    assert peak < MIB


def test_format_width_cannot_allocate_a_gigabyte(tmp_path):
    """config.cpp ``evaluate_macro_func`` formats ``$INT(X,fmt)``/``$REAL``/``$STRING`` with printf;
    a width of 999999999 would build a 1 GB string. RouteDeck decision: a width or precision above
    ``MAX_FORMAT_WIDTH`` is an error naming the format; the rest of the config loads."""
    text = ("X = 7\nW = $INT(X,%999999999d)\nP = $REAL(X,%.999999999f)\nS = $STRING(X,%999999999s)\n"
            "OK = $INT(X,%05d)\n" + ROUTES)
    path = write(tmp_path / "fmt.conf", text)
    res = load_in_child(path, ("W", "P", "S", "OK"))
    for knob, line in (("W", 2), ("P", 3), ("S", 4)):
        assert res["got"][knob].startswith(f"{path}:{line}: ") and "width" in res["got"][knob]
    assert res["got"]["OK"] == 5 and res["routes"] == ["A", "B"]
    assert res["peak"] < 8 * MIB


def test_choice_of_a_huge_list_does_not_split_it():
    """config.cpp ``$CHOICE(i, LIST)`` picks the i-th item of a comma list. RouteDeck finds the
    item without building a list of every item (a 900 KB list of 300,000 items cost ~18 MiB)."""
    cfg = Config.from_text("L = " + "ab," * 300_000 + "last\nC = $CHOICE(300000, L)\nD = $CHOICE(2, L)\n"
                           "R = $RANDOM_CHOICE(L)\n", "c.conf", env={})
    tracemalloc.start()
    try:
        values = cfg.get("C"), cfg.get("D"), cfg.get("R")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert values == ("last", "ab", "ab")
    assert peak < 4 * MIB
    with pytest.raises(ConfigError, match="index 300001 is out of range"):
        Config.from_text("L = a,b\nL = $(L)\nC = $CHOICE(300001, L)\n", "c.conf", env={}).get("C")


def test_substr_of_a_big_value_many_times_is_a_work_error_not_a_hang():
    """RouteDeck decision: each ``$SUBSTR(BIG,0,1)`` expands BIG (a million characters) to keep one;
    fifty thousand of them were 50 G characters of copying (seconds, and more with every knob that
    refers to X). The work of one expansion is bounded (``MAX_WORK``); the error names the knob."""
    cfg = Config.from_text("E =\nBIG = " + "x" * 1_000_000 + "$(E)\nX = " + "$SUBSTR(BIG,0,1)" * 50_000
                           + "\nY = $SUBSTR(BIG,0,3)\n", "s.conf", env={})
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match=r"copies more than \d+ characters") as info:
        cfg.get("X")
    assert time.perf_counter() - t0 < 2.0  # ~16 expansions of BIG, not 50,000
    assert (info.value.file, info.value.line) == ("s.conf", 3)
    assert cfg.get("Y") == "xxx"


@pytest.mark.parametrize("text", [
    "$INT(" * 40_000,          # quadratic scan: ~250 s (8,000 took ~10 s); linear: ~0.2 s
    "$(x:(" * 200_000 + ")",   # each default's '(' searched for the same far ')': ~2.5 s
], ids=["unclosed-functions", "defaults-with-groups"])
def test_unclosed_macro_openers_are_scanned_in_linear_time(text):
    """config.cpp ``next_config_macro`` scans for the closing ')'; RouteDeck's scanner must not
    re-scan the rest of the line for every ``$NAME(`` (8,000 took seconds before). The bound is
    generous (a loaded 2-core CI machine) and still far below the quadratic scanner's time for the
    first input."""
    t0 = time.perf_counter()
    out = mx.expand(text, lambda n: None, env={})
    assert time.perf_counter() - t0 < 20.0
    assert out.startswith(text[:10])


def test_self_reference_growth_is_bounded_over_all_knobs(tmp_path):
    """RouteDeck decision: each knob below 1 Mi characters, but sixty of them made by self
    references (``K = $(K)$(K)…``) would hold 60 Mi characters; the total such growth is bounded
    (``MAX_SELF_GROWTH``), the knobs past it are errors at their lines and left empty."""
    text = "".join(f"K{i} = " + "q" * 1000 + f"\nK{i} = " + f"$(K{i})" * 1000 + "\n" for i in range(60))
    cfg = Config.from_text(text + "AFTER = 1\n", "g.conf", env={})
    held = sum(len(cfg.get_raw(f"K{i}")) for i in range(60))
    assert held <= MAX_SELF_GROWTH + 60 * 1000
    errs = [e for e in cfg.errors if str(MAX_SELF_GROWTH) in e.message]
    assert errs and all(e.file == "g.conf" and e.line % 2 == 0 for e in errs)
    assert cfg.get_raw("K0") == "q" * 1_000_000 and cfg.get_raw("K59") == "" and cfg.get("AFTER") == "1"


def test_a_huge_file_is_not_read(tmp_path):
    """RouteDeck decision: a "config" file over ``MAX_FILE_SIZE`` (16 MiB; real ones are
    kilobytes) is an error naming it, not read into memory; the other sources still load."""
    huge = tmp_path / "huge.log"
    with open(huge, "wb") as f:
        f.truncate(MAX_FILE_SIZE + 1)  # sparse: costs no disk
    good = write(tmp_path / "good.conf", "A = 1\n")
    cfg = Config.load([huge, good], env={})
    assert [str(e) for e in cfg.errors] == [f"{huge}:0: config source {str(huge)!r} is {MAX_FILE_SIZE + 1} bytes, "
                                            f"more than {MAX_FILE_SIZE}: not read (is it a config file?)"]
    assert cfg.get("A") == "1"


# ---------------------------------------------------------------------------- item 5: a directory


def test_check_of_a_directory_reads_it_as_a_config_dir(tmp_path, capsys):
    """condor_config.cpp ``get_config_dir_file_list``: the files of a config directory, in lexical
    order, not subdirectories, skipping ``LOCAL_CONFIG_DIR_EXCLUDE_REGEXP`` whose default
    (param_info.in) is ``^((\\..*)|(.*\\.pl)|(.*\\.py)|(.*\\.sh)|(.*~)|(#.*)|(.*\\.rpmsave)|(.*\\.rpmnew)|
    (.*\\.dpkg-old)|(.*\\.dpkg-dist)|(.*\\.cfsaved))$``."""
    d = tmp_path / "config.d"
    (d / "sub").mkdir(parents=True)
    write(d / "10-routes.conf", ROUTES)
    write(d / "20-name.conf", "JOB_ROUTER_NAME = second\n")
    write(d / "sub" / "30.conf", "JOB_ROUTER_NAME = not_read\n")
    for skipped in (".hidden", "x.conf~", "#x#", "x.rpmsave", "x.rpmnew", "x.dpkg-old", "x.dpkg-dist",
                    "x.cfsaved", "hook.py", "hook.sh", "hook.pl"):
        write(d / skipped, "JOB_ROUTER_NAME = excluded_was_read\nJOB_ROUTER_ROUTE_NAMES = none\n")
    cfg = Config.load([d], env={})
    assert [Path(f).name for f in cfg.files] == ["10-routes.conf", "20-name.conf"]
    rc, out = run_cli(capsys, "check", "-q", d)
    assert rc == 0 and "routing enabled; router name second" in out and "2 route(s)" in out


def test_check_of_a_directory_without_config_files_names_it(tmp_path, capsys):
    """A directory with nothing to read (here: only a subdirectory and a backup file) was taken
    as an empty config: "routing DISABLED", exit 0, the directory never named. RouteDeck decision:
    a directory given as a config source that holds no config file is an error naming it."""
    d = tmp_path / "sample_configs"
    (d / "demo").mkdir(parents=True)
    write(d / "demo" / "condor_config", ROUTES)
    write(d / "old.conf~", ROUTES)
    rc, out = run_cli(capsys, "check", "-q", d)
    assert rc == 1
    assert f"{d}: error: config directory {str(d)!r} holds no config file" in out
    assert "1 subdirectory (not read)" in out and "1 excluded by LOCAL_CONFIG_DIR_EXCLUDE_REGEXP" in out


# ---------------------------------------------------------------------------- item 8: symlink loops


def test_include_of_a_directory_with_a_symlink_loop_warns_and_goes_on(tmp_path, capsys):
    """condor_config.cpp ``get_config_dir_file_list`` lists every entry that is not a directory, so
    HTCondor would try to open a looping symlink and fail. RouteDeck: a warning naming the
    include's file:line and the looping path; the directory's other files are read."""
    d = tmp_path / "conf.d"
    d.mkdir()
    write(d / "10.conf", "A = 1\n")
    os.symlink(d / "self", d / "self")          # a link to itself
    os.symlink(d / "pong", d / "ping")          # two links to each other
    os.symlink(d / "ping", d / "pong")
    main = write(tmp_path / "main.conf", "X = 1\ninclude : " + str(d) + "\n" + ROUTES)
    cfg = Config.load([main], env={})
    loops = [w for w in cfg.warnings if "symbolic link loop" in w.message]
    assert {(w.file, w.line) for w in loops} == {(main, 2)}
    assert sorted(w.message for w in loops) == [f"symbolic link loop, not read: {d / n}" for n in ("ping", "pong", "self")]
    assert cfg.get("A") == "1" and not cfg.errors
    rc, out = run_cli(capsys, "check", "-q", main)
    assert rc == 0 and f"{main}:2: warning: symbolic link loop" in out and "2 route(s)" in out


def test_include_of_a_symlink_loop_itself_says_so(tmp_path):
    """``include : loop`` where ``loop`` links to itself was "no such file or directory"; now the
    error names the loop (the include is required) and the next lines load."""
    os.symlink(tmp_path / "loop", tmp_path / "loop")
    main = write(tmp_path / "main.conf", f"include : {tmp_path / 'loop'}\nB = 2\n")
    cfg = Config.load([main], env={})
    assert [(e.file, e.line) for e in cfg.errors] == [(main, 1)]
    assert "symbolic link loop" in cfg.errors[0].message and cfg.get("B") == "2"


# ---------------------------------------------------------------------------- fuzz: memory bound

_LINES = st.sampled_from([
    "N = $(N) $(N) $(N)", "N = $(N)$(N)$(N)$(N)$(N)$(N)$(N)$(N)", "A = $(B)$(B)", "B = $(A)$(A)",
    "C = $(C:$(C:$(C)))", "J = $INT(N,%999999d)", "K = $CHOICE(0, N)", "S = $SUBSTR(N,1)",
    "include : .", "if $(N)", "endif", "else", "X @=end", "@end", "F = $Fpnx(N)", "E = $EVAL(N)",
    "JOB_ROUTER_NAME = $(N)$(A)", "JOB_ROUTER_ROUTE_NAMES = $(N)", "use role : x", "  \\",
])

_ADVERSARIAL = st.one_of(
    st.binary(max_size=2000),
    st.lists(_LINES, max_size=60).map(lambda ls: ("N = xy\n" + "\n".join(ls)).encode()),
    st.integers(1, 45).map(lambda k: ("N = x\n" + "N = $(N) $(N) $(N)\n" * k).encode()),
    st.integers(1, 10_000).map(lambda k: b"X = " + b"$(" * k + b"\nY = $(X)\n"),
    st.just(b"X = " + b"$(" * 10_000 + b")" * 10_000 + b"\nJOB_ROUTER_NAME = $(X)\n"),
    st.just(b"X = " + b"$INT(" * 10_000 + b"\n"),
    st.integers(1, 8).map(lambda k: "\n".join(
        ["L0 = " + "z" * 100] + [f"L{i} = " + f"$(L{i - 1})" * 50 for i in range(1, k)]
        + [f"JOB_ROUTER_NAME = $(L{k - 1})"]).encode()),
    st.binary(min_size=1, max_size=200).map(lambda b: b"A = \xff\xfe" + b + b"\0\nB = \x80\n" * 3),
    st.integers(10_000, 2 * MIB).map(lambda n: b"LONG = " + b"w" * n + b"\n"),
    st.integers(1, 50_000).map(lambda n: b"C = a\\\n" * n + b"end\n"),
)


@pytest.mark.slow
# no per-example deadline: the largest bombs took 12.8 s on a loaded 2-core machine; the
# expansion budgets (macros.MAX_WORK, MAX_SIZE) bound the work of every example
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                      HealthCheck.data_too_large])
@given(data=_ADVERSARIAL)
def test_config_reader_fuzz_memory_bound(data):
    """Arbitrary bytes and adversarial structures (macro bombs, 10,000 nested ``$(``, invalid UTF-8,
    NUL bytes, megabyte lines, long continuations). RouteDeck decisions throughout (HTCondor has no
    expansion bound, config.cpp): loading never raises, expanding any knob gives a value or a
    ``ConfigError`` with a file and line, and the tracemalloc peak stays under 64 MiB."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.conf"
        path.write_bytes(data)
        tracemalloc.start()
        try:
            with address_space_cap():
                cfg = Config.load([path], env={})
                for name in cfg.names()[:50]:
                    try:
                        value = cfg.get(name)
                    except ConfigError as exc:
                        assert exc.file and str(exc).startswith(f"{exc.file}:{exc.line}: ")
                    else:  # only a literal in the file may be longer than the expansion bound
                        assert value is None or len(value) <= max(mx.MAX_SIZE, len(cfg.get_raw(name)))
                load_routing_table(cfg)
                peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < PEAK_BOUND
    for problem in cfg.errors + cfg.warnings:
        assert problem.file and problem.message


def test_catastrophic_exclude_regexp_is_bounded_and_reads_as_no_match(tmp_path):
    """``Regex::match`` (src/condor_utils/condor_regex.cpp) calls ``pcre2_match`` with PCRE2's
    default match limit and returns ``rc > 0``: a pattern that backtracks catastrophically on a
    file name stops at the limit and counts as no match, so the file is read. RouteDeck bounds
    the match the same way (engine/lang/bounded_re.py) and warns at the include's line; a plain
    ``re`` search of this name would run for hours."""
    d = tmp_path / "conf.d"
    d.mkdir()
    bad_name = "a" * 48 + "!"
    write(d / bad_name, "FROM_BAD = read\n")
    write(d / "aaaa", "FROM_SHORT = read\n")
    main = tmp_path / "condor_config"
    write(main, f"LOCAL_CONFIG_DIR_EXCLUDE_REGEXP = ^(a|aa)+$\nLOCAL_CONFIG_DIR = {d}\n")
    cfg = Config.load([main], env={})
    assert [Path(f).name for f in cfg.files] == ["condor_config", bad_name]  # "aaaa" excluded
    assert cfg.get("FROM_BAD") == "read" and cfg.get("FROM_SHORT") is None
    warned = [w for w in cfg.warnings if "ran out of time" in str(w)]
    assert len(warned) == 1 and bad_name in str(warned[0]) and f"{main}" in str(warned[0])
