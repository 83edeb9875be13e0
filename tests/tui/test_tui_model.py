"""Units under the dashboard: the jobs model (filter/sort over 100,000 rows), config file writes
with versioned backups, cutting a route's definition out of its file, formatting.

The route-definition shapes (``@=tag`` blocks, ``[ ]`` ClassAd entries, ``\\`` continuations)
are the config language's, htcondor.md §1.2/§1.3.
"""

from __future__ import annotations

import os
import random
import stat

import pytest
from types import SimpleNamespace

from engine.queue.records import job_order
from engine.rowseq import ChunkedRows, RowSeq
from engine.contract.snapshot import JobRow
from tui.files.config_files import atomic_write, backups_of, unified_diff, write_with_backup
from tui.text.format import duration, short
from tui.text.route_text import cut_definition, route_text
from engine.views.build import row_order
from tui.widgets.job_model import JobModel, copy_routes

from tests.helpers.tui_fixtures import make_jobs
from engine.router.whynot import Explanation, Step
from engine.contract.feed import FeedBase
from tui.engine_api import NO_EXPLANATION, why_not
from tui.engine_api import lint_config
from tui.widgets.gauge import gauge, sparkline


def _row(job, status=1, owner="alice", route=None, kind="plain", cmd="/bin/true"):
    return JobRow(job, status, owner, route, kind, None, None, 100, 100, cmd)


ROWS = (
    _row("10.0", 1, "bob", cmd="/a"),
    _row("2.0", 2, "alice", "Site1", "routed", cmd="/b"),
    _row("10.1", 5, "carol", cmd="/c"),
    _row("9.0", 1, "alice", cmd="/d"),
)


def test_default_order_is_queue_order_without_copying():
    m = JobModel()
    m.set_rows(ROWS, 1)
    assert [m.row(i).job for i in range(len(m))] == ["10.0", "2.0", "10.1", "9.0"]
    assert isinstance(m.order, range)  # no per-row work for the first paint


def test_sort_by_job_is_numeric_and_reversible():
    m = JobModel()
    m.set_rows(ROWS, 1)
    m.set_sort("job")
    assert [m.row(i).job for i in range(len(m))] == ["2.0", "9.0", "10.0", "10.1"]
    m.set_sort("job", reverse=True)
    assert [m.row(i).job for i in range(len(m))] == ["10.1", "10.0", "9.0", "2.0"]


def test_text_filter_matches_any_column_and_combines_with_sort():
    m = JobModel()
    m.set_rows(ROWS, 1)
    m.set_sort("job")
    m.set_filter("ALICE")
    assert [m.row(i).job for i in range(len(m))] == ["2.0", "9.0"]
    m.set_filter("alice site1")  # narrowing keeps the sort
    assert len(m) == 0
    m.set_filter("held")  # status names are searchable
    assert [m.row(i).job for i in range(len(m))] == ["10.1"]
    m.set_filter("")
    assert len(m) == 4


def test_constraint_hits_are_job_ids_that_survive_new_rows():
    m = JobModel()
    m.set_rows(ROWS, 1)
    m.set_constraint_hits(frozenset({"9.0", "2.0"}))
    assert sorted(m.row(i).job for i in range(len(m))) == ["2.0", "9.0"]
    m.set_rows(ROWS[1:] + (_row("11.0"),), 2)
    assert sorted(m.row(i).job for i in range(len(m))) == ["2.0", "9.0"]


def test_unknown_sort_column_is_refused():
    with pytest.raises(ValueError, match="unknown column"):
        JobModel().set_sort("nope")


def test_filter_over_100k_rows_matches_a_plain_scan():
    rows = make_jobs(100_000)
    m = JobModel()
    m.set_rows(rows, 1)
    m.set_filter("icecube")
    expected = [i for i, r in enumerate(rows) if r.owner == "icecube"]
    assert list(m.order) == expected


def test_model_over_the_engines_chunked_rows_shows_what_it_shows_over_a_tuple():
    """The engine hands out a RowSeq (engine.rowseq): filter, constraint, sort, reverse and
    position_of give the same view as over the same rows in a tuple, and adopting one does not
    flatten it (only a constraint over a sorted view makes a flat copy, once per sequence)."""
    rows = make_jobs(5_000)
    chunked = RowSeq.of(rows, 64)
    hits = frozenset(r.job for r in rows[::7])
    steps = [lambda m: None, lambda m: m.set_filter("icecube"), lambda m: m.set_filter(""),
             lambda m: m.set_constraint_hits(hits), lambda m: m.set_sort("owner"),
             lambda m: m.set_sort("qdate", reverse=True), lambda m: m.set_filter("held"),
             lambda m: m.set_sort(None), lambda m: m.set_constraint_hits(None)]
    plain, model = JobModel(), JobModel()
    plain.set_rows(rows, 1)
    model.set_rows(chunked, 1)
    assert model.rows is chunked and model._flat_rows is None and isinstance(model.order, range)
    for step in steps:
        step(plain)
        step(model)
        assert list(plain.order) == list(model.order)
        assert [plain.row(i) for i in range(len(plain))] == [model.row(i) for i in range(len(model))]
        for job in (rows[0].job, rows[2_500].job, rows[-1].job, "nope.0"):
            assert plain.position_of(job) == model.position_of(job)
    model.set_filter("")
    model.set_constraint_hits(hits)  # and both are what a plain scan gives
    assert list(model.order) == [i for i, r in enumerate(rows) if r.job in hits]
    model.set_sort("owner", reverse=True)
    assert sorted(model.order) == [i for i, r in enumerate(rows) if r.job in hits]
    owners = [model.row(i).owner for i in range(len(model))]
    assert owners == sorted(owners, reverse=True) and model._flat_rows == rows


def test_atomic_write_keeps_mode_and_backups_are_numbered(tmp_path):
    p = tmp_path / "routes.conf"
    p.write_text("A = 1\n")
    os.chmod(p, 0o640)
    b1 = write_with_backup(p, "A = 2\n")
    b2 = write_with_backup(p, "A = 3\n")
    assert p.read_text() == "A = 3\n"
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    assert [b.name for b in backups_of(p)] == ["routes.conf.1", "routes.conf.2"]
    assert (b1.read_text(), b2.read_text()) == ("A = 1\n", "A = 2\n")
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_atomic_write_creates_a_new_file(tmp_path):
    p = tmp_path / "new.conf"
    atomic_write(p, "X = 1\n")
    assert p.read_text() == "X = 1\n"
    assert write_with_backup(tmp_path / "other.conf", "Y\n") is None


def test_unified_diff_names_the_file():
    d = unified_diff("a\nb\n", "a\nc\n", "routes.conf")
    assert "-b" in d and "+c" in d and "routes.conf" in d
    assert unified_diff("same\n", "same\n", "x") == ""


def test_cut_definition_follows_block_shapes(tmp_path):
    lines = [
        "JOB_ROUTER_ROUTE_NAMES = A B",      # 0
        "JOB_ROUTER_ROUTE_A @=jrt",           # 1
        '  GridResource = "batch slurm"',     # 2
        "@jrt",                               # 3
        "JOB_ROUTER_ENTRIES = [ name = \"x]\"; \\",  # 4: a ] inside a string does not close
        "   MaxJobs = 3 ] \\",                # 5
        "   [ name = \"y\" ]",                # 6
        "X = 1 \\",                           # 7
        "  2",                                # 8
    ]
    assert cut_definition(lines, 1) == (1, 4)
    assert cut_definition(lines, 4) == (4, 6)
    assert cut_definition(lines, 7) == (7, 9)
    p = tmp_path / "r.conf"
    p.write_text("\n".join(lines) + "\n")
    where, text = route_text(f"{p}:2")
    assert where == f"{p}:2" and text.splitlines()[-1] == "@jrt"
    assert route_text(f"{p}:99") is None and route_text(None) is None and route_text("/nope:1") is None


def test_durations():
    assert duration(252) == "4m12s"
    assert duration(5273) == "1h27m53s"
    assert duration(-60) == "-1m00s"
    assert duration(86400 + 11 * 3600) == "1d11h"
    assert (short(300), short(0), short(90), short(7200)) == ("5m", "0s", "90s", "2h")


class _Runtime:
    """``Runtime.query`` over a feed, run here."""

    def __init__(self, feed):
        self.feed = feed

    def query(self, fn, timeout=None):
        return fn(self.feed)


def test_why_not_reads_the_routers_explanation():
    """The router's ``why_not`` returns ``engine.router.whynot.Explanation`` (verdict + steps); the
    demo's feed answers it as a ``WhyNot`` (``Explanation.answer``), a step on a route labelled
    ``[route] check``; a feed that offers no why-not (FeedBase's default) gets NO_EXPLANATION."""
    class Demo(FeedBase):
        def why_not(self, job, now):
            return Explanation(job, None, "no route accepts it", (
                Step("routing enabled", True, "5 routes"),
                Step("REQUIREMENTS", False, "false (VO = undefined)", route="CMS_T2"),
                Step("note", None))).answer()

    verdict, checks = why_not(_Runtime(Demo()), "4.0", 0.0)
    assert verdict == "no route accepts it"
    assert [(c.label, c.ok, c.detail) for c in checks] == [
        ("routing enabled", True, "5 routes"), ("[CMS_T2] REQUIREMENTS", False, "false (VO = undefined)"),
        ("note", None, "")]
    assert why_not(_Runtime(FeedBase()), "4.0", 0.0) == (None, NO_EXPLANATION)


def test_source_rows_without_a_route_take_their_copys_route():
    src = JobRow("5.0", 2, "bob", None, "source", "9.0", None, 1, 1)
    copy = JobRow("9.0", 2, "bob", "Site1", "routed", None, "5.0", 1, 1)
    m = JobModel()
    m.set_rows((src, copy, _row("6.0")), 1)
    assert [m.route_of(m.row(i)) for i in range(3)] == ["Site1", "Site1", None]


def test_position_of_in_the_engines_table_is_a_bisection_not_an_index():
    """The engine's table is a RowSeq in job id order (RowIndex): a job far from its last known
    row is found by bisection, with no job id -> row index built (a pass over every row)."""
    rows = tuple(sorted(make_jobs(20_000), key=row_order))
    table = ChunkedRows(row_order, 64)
    table.reset(rows)
    m, plain = JobModel(), JobModel()
    m.set_rows(table.freeze(), 1)
    plain.set_rows(rows, 1)
    for job in (rows[0].job, rows[12_345].job, rows[-1].job, "999999.0", "1.-1", "x"):
        assert m.position_of(job) == plain.position_of(job)
    assert m.position_of(rows[12_345].job) == 12_345
    table.remove(rows[100])  # the rows before it move by one: the hint finds it
    table.insert(JobRow("0.5", 1, "a", None, "plain", None, None, 1, 1))
    m.set_rows(table.freeze(), 2)
    assert m.row(m.position_of(rows[12_345].job)) is rows[12_345]
    assert m.position_of(rows[100].job) is None and m.position_of("0.5") == 0
    assert m._row_of is None


def test_copy_routes_follow_the_engines_chunks_reading_only_new_ones():
    """Over the engine's RowSeq the copy -> route map is kept from one sequence to the next:
    after random changes it equals a full ``copy_routes`` of the rows, and the chunks a change
    did not touch are not read again (their part is the same dict)."""
    rnd = random.Random(5)
    table = ChunkedRows(lambda r: job_order(r.job), 8)

    def copy(n: int, route: str | None) -> JobRow:
        return JobRow(f"{n}.0", 2, "bob", route, "routed", None, f"{n - 1000}.0", 1, 1)

    live = {n: copy(n, f"Site{n % 3}") for n in range(1000, 1200, 2)}
    sources = [JobRow(f"{n - 1000}.0", 2, "bob", None, "source", f"{n}.0", None, 1, 1) for n in range(1000, 1200)]
    table.reset(sorted([*live.values(), *sources], key=lambda r: job_order(r.job)))
    m = JobModel()
    for version in range(1, 30):
        seq = table.freeze()
        before = {k: part for k, (_, part) in m._copies.parts.items()}
        m.set_rows(seq, version)
        assert [m.route_of(r) for r in sources] == [copy_routes(tuple(seq)).get(r.routed_to) for r in sources]
        kept = {id(c) for c in seq.chunks} & set(before)
        assert all(m._copies.parts[k][1] is before[k] for k in kept)
        for _ in range(rnd.randint(1, 4)):
            n = rnd.randrange(1000, 1200)
            new = copy(n, rnd.choice(["Site7", None]))
            if n in live and rnd.random() < 0.5:
                table.remove(live.pop(n))
            elif n in live:
                table.replace(live[n], new)
                live[n] = new
            else:
                table.insert(new)
                live[n] = new
    assert len(before) > 10 and kept  # most chunks were kept between sequences


def test_editor_lint_sees_the_other_config_files(tmp_path):
    """A route file is linted with the files loaded around it: here MaxJobs comes from a macro
    of the main file (config macros, htcondor.md §1.3), and MaxIdleJobs > MaxJobs is the
    router's lint."""
    main = tmp_path / "condor_config"
    main.write_text("SITE_MAX = 500\nJOB_ROUTER_ROUTE_NAMES = Site1\n")
    routes = tmp_path / "routes.conf"
    text = "JOB_ROUTER_ROUTE_Site1 @=jrt\n  REQUIREMENTS true\n  MaxJobs = $(SITE_MAX)\n  MaxIdleJobs = 50\n@jrt\n"
    routes.write_text(text)
    snap = SimpleNamespace(config_files=(str(main), str(routes)), routes=())
    edited = text.replace("MaxIdleJobs = 50", "MaxIdleJobs = 900")
    result = lint_config(edited, str(routes), snap)
    assert result.route_names == ["Site1"]
    assert any("MaxIdleJobs (900) > MaxJobs (500)" in d.message for d in result.diagnostics), result.diagnostics
    assert routes.read_text() == text  # linting never writes
    alone = lint_config(edited, str(routes), SimpleNamespace(config_files=(), routes=()))
    assert not any("MaxJobs (500)" in d.message for d in alone.diagnostics)  # no macro without main


def test_gauge_and_sparkline_text():
    assert gauge(2, 100).plain.endswith("▁···")  # a sliver is still visible
    assert gauge(50, 50).plain.endswith("████") and gauge(0, 50).plain.endswith("····")
    assert gauge(3, -1).plain.strip() == "3/∞"  # negative MaxIdleJobs: no limit (htcondor.md §1.5)
    assert sparkline((0.0, 0.01, 0.065), reference=0.03).plain.startswith("▁▂█")  # scaled to the max
