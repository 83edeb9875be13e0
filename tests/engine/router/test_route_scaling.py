"""Routing tables of many routes: the lints and the loader grow with the routes, not their square
(issue 25 item 6), with exactly the diagnostics of the quadratic algorithms they replace.

The old algorithms are kept here only, as oracles: ``old_lint_shadowing`` compared every route
with every earlier one, ``old_lint_unused_macros`` scanned all the table's text once per macro,
``old_umbrella_core`` kept the umbrella's terms in a list. No test here reads a clock: growth is
shown by counting the work (comparisons, names read), never by timing.

Shadowing is HTCondor's route order: the first route whose REQUIREMENTS match and that is
accepting takes the job (``JobRouter::ChooseRoute``, htcondor.md §1.4); the real tables are the
copies of shared/data/real under tests/data/config (tests/data/PROVENANCE.md).
"""

from __future__ import annotations

import dataclasses
import random
import re

import pytest

from engine import classad
from engine.lang import xform as X
from engine.lang.config import Config
from engine.lang.xform import XformError
from engine.router import classic, lints, loader, whynot
from engine.router.candidates import umbrella_core
from engine.router.lints import _diag, _normal, lint_shadowing, lint_unused_macros, ROUTER_MACROS, _where
from engine.router.loader import load_routing_table
from engine.router.table import JOB_EXPR_ATTRS, Diagnostic, DisabledRoute, RoutingTable
from tests.helpers.counting import count_calls
from tests.helpers.router_fixtures import route as fixture_route, table as fixture_table
from tests.helpers.real_configs import BUNDLES, DATA
from tui.cli import main as cli_main
from engine.lang import macros as mx
from engine.lang.xform_apply import MacroSet, Run

# ------------------------------------------------------------------------------------------- oracles


def old_lint_shadowing(table: RoutingTable) -> list[Diagnostic]:
    """engine/router/lints.py before issue 25: every route against every earlier one; with issue
    29's clause rule (an earlier route whose ``&&`` clauses are some of the later's, compared
    with every earlier route when no earlier one is ``true`` or equal)."""
    out: list[Diagnostic] = []
    rule = ("round-robin selection shares jobs between them" if table.knobs.round_robin else
            "first match wins: JOB_ROUTER_ROUND_ROBIN_SELECTION is false")
    level = "info" if table.knobs.round_robin else "warning"
    earlier = []
    for route in table.routes:
        key = lints._normal(route.requirements)
        clauses = lints.clause_set(key)
        what = prev = None
        for prev_key, _prev_set, p in earlier:
            if prev_key == "true" or prev_key == key:
                prev = p
                what = ("has the same REQUIREMENTS" if prev_key == key and prev_key != "true" else
                        "has no REQUIREMENTS (matches every job)" if not p.requirements else
                        "has REQUIREMENTS true (matches every job)")
                break
        if prev is None and (len(clauses) > 1 or (clauses and clauses != {key})):
            for _prev_key, prev_set, p in earlier:
                if prev_set and prev_set <= clauses:
                    prev = p
                    what = ("has the same REQUIREMENTS clauses" if prev_set == clauses else
                            f"requires only some of its clauses, {p.requirements.strip()}, so it matches every "
                            f"job {route.name} matches")
                    break
        if prev is not None:
            out.append(_diag(level, f"route {route.name} is shadowed: {prev.name}, earlier in the route order, "
                             f"{what}; {route.name} gets such jobs only while {prev.name} is not accepting "
                             f"({rule})", route))
        earlier.append((key, clauses, route))
    return out


def old_lint_unused_macros(table: RoutingTable) -> list[Diagnostic]:
    """engine/router/lints.py before issue 25: the whole text searched once per macro."""
    sources = [(f"JOB_ROUTER_TRANSFORM_{t.name}", t, None) for t in list(table.pre_transforms) + list(table.post_transforms)]
    sources += [(r.source_label, r.transform, r) for r in table.routes if r.syntax == "transform"]
    texts = "\n".join(getattr(t, "text", "") for _, t, _ in sources).lower()
    out = []
    for label, t, route in sources:
        for name in getattr(t, "local_macros", {}) or {}:
            low = name.lower()
            if low in ROUTER_MACROS or f"$({low}" in texts or re.search(rf"\bdefined\s+{re.escape(low)}\b", texts):
                continue
            where = route.location if route else table.config.location(label)
            out.append(Diagnostic("info", f"{label} assigns the macro {name}, which no route or transform of this "
                                  f"table uses (no $({name}), no 'defined {name}'); a macro does not edit the job",
                                  *_where(where), route.name if route else None))
    return out


def old_umbrella_core(source_constraint, route_reqs):
    """engine/router/candidates.py before issue 25: the terms in a list, ``not in`` for each."""
    seen: list[str] = []
    for req in route_reqs:
        text = (req or "").strip() or "True"
        if text not in seen:
            seen.append(text)
    if not seen:
        return None
    out = f"({source_constraint}) && " if source_constraint and source_constraint.strip() else ""
    return out + "( " + " || ".join(f"({t})" for t in seen) + " )"


def both_selections(table: RoutingTable) -> list[RoutingTable]:
    """The table as loaded and with the other JOB_ROUTER_ROUND_ROBIN_SELECTION (level and wording change)."""
    other = dataclasses.replace(table.knobs, round_robin=not table.knobs.round_robin)
    return [table, dataclasses.replace(table, knobs=other)]


# ------------------------------------------------------------------------------------------- real tables


@pytest.mark.parametrize("files", [b[0] for b in BUNDLES] + [[p] for p in sorted(DATA.rglob("*")) if p.is_file()],
                         ids=lambda files: "+".join(p.name for p in files))
def test_lints_equal_the_quadratic_oracles_on_every_real_table(files):
    # Source: the configs of shared/data/real (copies in tests/data/config, tests/data/PROVENANCE.md),
    # each alone and in the bundles test_check_convert loads; shadowing per htcondor.md §1.4.
    table = load_routing_table(Config.load(files))
    for t in both_selections(table):
        assert lint_shadowing(t) == old_lint_shadowing(t)
    assert lint_unused_macros(table) == old_lint_unused_macros(table)


def test_real_tables_do_exercise_both_lints():
    # The oracle comparison above is not vacuous: the real tables shadow routes (htcondor.md §1.4)
    # and leave macros unused (osg-test's default_MaxMemory, htcondor.md §6).
    shadowed = load_routing_table(Config.load([DATA / "condor_tests" / "job_router_xform.run.config"]))
    assert [d.route for d in lint_shadowing(shadowed)] == ["Production2", "Analysis4"]
    osg = load_routing_table(Config.load([DATA / "osg-test" / "99-osgtest.condor-ce.conf.new-syntax"]))
    assert any("default_MaxMemory" in d.message for d in lint_unused_macros(osg))


# ------------------------------------------------------------------------------------------- generated tables

# texts that normalise alike or not: absent, "true" in several spellings (§1.4: a route without
# REQUIREMENTS, or with true, takes every job), the same test spelled differently, different
# tests, texts that do not parse (compared as written)
REQUIREMENTS = [None, "", "true", "TRUE", " true ", "(true)", "True", "x == 1", "x==1", "X == 1", "(x == 1)",
                "x == 2", 'y == "a"', 'y == "A"', 'y=="a"', "x ==", "x == 1 ||", "x = = 1", "MY.x == 1",
                "x == 1 && true", "x =?= undefined", "x is undefined", "x == 1 && y == \"a\"", "(y == \"a\") && x==1",
                "x == 2 && z > 3 && y == \"a\"", "z > 3 && (x == 2)"]


@pytest.mark.parametrize("seed", range(150))
def test_shadowing_lint_equals_the_oracle_on_generated_tables(seed):
    rng = random.Random(seed)
    pool = rng.sample(REQUIREMENTS, rng.randint(1, len(REQUIREMENTS)))
    routes = [fixture_route(f"R{i}", rng.choice(pool)) for i in range(rng.randint(0, 40))]
    for t in both_selections(fixture_table(routes)):
        assert lint_shadowing(t) == old_lint_shadowing(t)


MACRO_NAMES = ["m1", "M1", "m1x", "m1_x", "default_maxMemory", "x1", "mem", "m.dot", "MaxJobs", "gridresource"]
USES = ["# uses $({n})", "# uses $({n}:2000)", "# uses $({n}x)", "# uses $(Q{n})", "# if defined {n}",
        "# if defined  {n} else", "# ifdefined {n}", "# undefined {n}", "# defined {n}_more", "# defined\t{n}.",
        "# DEFINED {N}", "# $( {n})", "# defined defined {n}"]


def generated_macro_table(rng: random.Random) -> RoutingTable:
    names = [f"R{i}" for i in range(rng.randint(1, 12))]
    lines = ["JOB_ROUTER_SOURCE_JOB_CONSTRAINT = true", "JOB_ROUTER_ROUTE_NAMES = " + " ".join(names)]
    for name in names:
        body = [f"  REQUIREMENTS x == {rng.randint(0, 3)}"]
        for _ in range(rng.randint(0, 3)):
            body.append(f"  {rng.choice(MACRO_NAMES)} = {rng.randint(0, 9)}")
        for _ in range(rng.randint(0, 3)):
            n = rng.choice(MACRO_NAMES)
            body.append(rng.choice(USES).format(n=n if rng.random() < 0.5 else n.upper(), N=n.upper()))
        lines += [f"JOB_ROUTER_ROUTE_{name} @=rt", *body, "@rt"]
    return load_routing_table(Config.from_text("\n".join(lines) + "\n", env={}))


@pytest.mark.parametrize("seed", range(150))
def test_unused_macro_lint_equals_the_oracle_on_generated_tables(seed):
    table = generated_macro_table(random.Random(seed))
    assert table.routes and not table.errors, table.diagnostics
    assert lint_unused_macros(table) == old_lint_unused_macros(table)


def test_generated_macro_tables_cover_used_and_unused_macros():
    found = [lint_unused_macros(generated_macro_table(random.Random(seed))) for seed in range(150)]
    assert any(found) and not all(found)


@pytest.mark.parametrize("seed", range(100))
def test_umbrella_core_equals_the_list_version(seed):
    # The umbrella string of JobRouter::GetCandidateJobs (htcondor.md §1.4): duplicates removed,
    # first occurrence kept, an empty requirement counted as True.
    rng = random.Random(seed)
    reqs = [rng.choice(REQUIREMENTS + ["  x == 1  ", "\tTrue"]) for _ in range(rng.randint(0, 30))]
    for constraint in (None, "", "  ", "WantJobRouter =?= true"):
        assert umbrella_core(constraint, reqs) == old_umbrella_core(constraint, reqs)


# ------------------------------------------------------------------------------------------- growth, counted


class CountingKey(str):
    """A normalised REQUIREMENTS text that counts the comparisons made with it."""
    comparisons = 0
    __hash__ = str.__hash__

    def __eq__(self, other):
        CountingKey.comparisons += 1
        return str.__eq__(self, other)

    def __ne__(self, other):
        CountingKey.comparisons += 1
        return str.__ne__(self, other)


def shadowing_comparisons(monkeypatch, routes) -> tuple[int, list[Diagnostic]]:
    monkeypatch.setattr(lints, "_normal", lambda text, parsed=None: CountingKey(_normal(text, parsed)))
    CountingKey.comparisons = 0
    diags = lint_shadowing(fixture_table(routes))
    return CountingKey.comparisons, diags


def test_shadowing_lint_compares_each_route_a_bounded_number_of_times(monkeypatch):
    # 1,500 routes with different REQUIREMENTS, then 1,500 repeating them (each shadowed by its
    # twin, htcondor.md §1.4): the old lint made ~2.25 million comparisons here, one per pair.
    n = 1500
    routes = [fixture_route(f"R{i}", f"x == {i}") for i in range(n)]
    routes += [fixture_route(f"S{i}", f"x=={i}") for i in range(n)]
    count, diags = shadowing_comparisons(monkeypatch, routes)
    assert [d.route for d in diags] == [f"S{i}" for i in range(n)]
    assert all(f"R{i}, earlier in the route order, has the same REQUIREMENTS" in d.message for i, d in enumerate(diags))
    assert count <= 4 * len(routes), count


def test_a_route_without_requirements_shadows_every_later_route_once(monkeypatch):
    # A route without REQUIREMENTS (allowed with JOB_ROUTER_SOURCE_JOB_CONSTRAINT, §1.3) shadows
    # every later one: each later route is reported once, naming it.
    routes = [fixture_route("First", "x == 0"), fixture_route("All", None)]
    routes += [fixture_route(f"R{i}", f"x == {i}") for i in range(2000)]
    count, diags = shadowing_comparisons(monkeypatch, routes)
    assert len(diags) == 2000 and all("All, earlier in the route order, has no REQUIREMENTS" in d.message
                                      for d in diags[1:])
    assert "First, earlier in the route order, has the same REQUIREMENTS" in diags[0].message  # R0: x == 0
    assert count <= 4 * len(routes), count


def test_route_names_listed_but_not_defined_are_checked_once_each(monkeypatch):
    # htcondor.md §1.3: a name in JOB_ROUTER_ROUTE_NAMES without its JOB_ROUTER_ROUTE_<name> is
    # skipped with a warning. The loader asked, for each, whether any disabled route had that
    # name: ~2 million names read for 2,000 missing routes.
    reads = [0]

    class CountingDisabled(DisabledRoute):
        def __getattribute__(self, attr):
            if attr == "name":
                reads[0] += 1
            return super().__getattribute__(attr)

    monkeypatch.setattr(loader, "DisabledRoute", CountingDisabled)
    n = 2000
    text = "JOB_ROUTER_ROUTE_NAMES = " + " ".join(f"Gone{i}" for i in range(n)) + " Real\n" \
           "JOB_ROUTER_ROUTE_Real @=rt\n  REQUIREMENTS x == 1\n@rt\n"
    table = load_routing_table(Config.from_text(text, env={}))
    assert [r.name for r in table.routes] == ["Real"]
    assert sum("from JOB_ROUTER_ROUTE_NAMES not found" in d.message for d in table.diagnostics) == n
    assert reads[0] <= 3 * n, reads[0]


def test_classad_entries_number_their_routes_without_listing_the_table_each_time(monkeypatch):
    # htcondor.md §1.2: without JOB_ROUTER_ROUTE_NAMES, ClassAd routes are matched in the order of
    # HTCondor's HashTable (engine/router/classic.py CondorHashOrder). Each entry's position was
    # the length of the whole listing: ~2 million names listed for 2,000 entries.
    listed = [0]
    names = classic.CondorHashOrder.names

    def counting_names(self):
        out = names(self)
        listed[0] += len(out)
        return out

    monkeypatch.setattr(classic.CondorHashOrder, "names", counting_names)
    n = 2000
    entries = "\n".join(f'  [ Name = "Site{i}"; GridResource = "batch slurm s{i}"; Requirements = (TARGET.VO == "v{i}"); ]'
                        for i in range(n))
    text = f"JOB_ROUTER_ENTRIES @=jre\n{entries}\n@jre\n"
    table = load_routing_table(Config.from_text(text, env={}))
    assert len(table.routes) == n and not table.errors
    order = classic.CondorHashOrder()
    for i in range(n):
        order.insert(f"Site{i}", i)
    assert [r.name for r in table.routes] == order.names()
    # each entry's line is the line of its '[' (the entries start on line 2 of the file)
    assert all(r.location.line == int(r.name[4:]) + 2 for r in table.routes)
    assert listed[0] <= 2 * n, listed[0]


def test_looking_up_a_route_by_name_does_not_scan_the_table():
    # The router looks a job's route up by name on each of its events (RouteName, htcondor.md §1.5).
    reads = [0]

    class CountingName(str):
        def lower(self):
            reads[0] += 1
            return str.lower(self)

    n = 1000
    tbl = fixture_table([fixture_route(CountingName(f"Site{i}"), "true") for i in range(n)] +
                        [fixture_route(CountingName("site7"), "true")])
    assert [tbl.route(f"SITE{i}").name for i in range(n)] == [f"Site{i}" for i in range(n)]
    assert tbl.route("site7").name == "Site7"  # the first of two routes named alike, as before
    assert tbl.route("nope") is None
    assert reads[0] <= 2 * n, reads[0]


# ------------------------------------------------------------------------------------------- route macros, one run


def old_macro_value(transform, name, config):
    """engine/lang/xform.py before issue 25: the body run again for each macro read."""
    run = Run(None, MacroSet(), config, None)
    run.run(transform.statements, validate_only=True)
    raw = run.macros.get(name)
    if raw is None:
        return None
    try:
        return mx.expand(raw, run.lookup, env=config.env if config else None, warnings=run.warnings)
    except mx.MacroError as exc:
        raise XformError(0, 0, exc.message) from None


def outcome(read, name):
    try:
        return read(name)
    except Exception as exc:  # noqa: BLE001
        return (type(exc).__name__, str(exc))


READ_BY_LOADER = ["MaxJobs", "MaxIdleJobs", "FailureRateThreshold", "TargetUniverse", "GridResource",
                  *JOB_EXPR_ATTRS, "SendIDTokens", "A", "B"]
FAILING_BODIES = [  # a cycle in the body, one through the config, a macro function error, a bad 'if'
    "REQUIREMENTS true\nA = $(B)\nB = $(A)\nMaxJobs = $(A)\nMaxIdleJobs = 3\n",
    "REQUIREMENTS true\nMaxJobs = $(CFGX)\nGridResource = batch $(B)\n",
    "REQUIREMENTS true\nMaxJobs = $INT(x)\nMaxIdleJobs = $(MaxJobs)\n",
    "REQUIREMENTS true\nif $(CFGX)\n  MaxJobs = 1\nendif\nGridResource = g\n",
    "REQUIREMENTS true\nMaxJobs = $(MaxJobs) 2\nSendIDTokens = $(CFGY:x)\n",
]


def test_one_run_of_a_route_body_reads_every_macro_as_one_run_per_macro_did():
    # JobRoute::ParseNext reads a route's macros once at config time (htcondor.md §1.3 table):
    # the values, and the errors the loader reports per macro, as before, on every real route
    # and on bodies whose macros cannot expand.
    cfg = Config.from_text("CFGX = $(CFGY)\nCFGY = $(CFGX)\n", env={})
    cases = [(X.parse_transform(b), cfg) for b in FAILING_BODIES]
    for files, _ in BUNDLES:
        table = load_routing_table(Config.load(files))
        cases += [(r.transform, table.config) for r in table.routes if r.syntax == "transform"]
    failed = 0
    for transform, config in cases:
        read = transform.macro_reader(config)
        for name in READ_BY_LOADER:
            got, want = outcome(read, name), outcome(lambda n: old_macro_value(transform, n, config), name)
            assert got == want, (transform.text, name)
            failed += isinstance(want, tuple)
    assert failed >= 10  # the failing bodies did fail, and more than once each


# ------------------------------------------------------------------------------------------- parses, counted


def many_routes(n: int) -> str:
    """A transform table like bench/routes_scaling.py's: every route's REQUIREMENTS differ."""
    names = [f"Site{i}" for i in range(n)]
    lines = ["JOB_ROUTER_SOURCE_JOB_CONSTRAINT = WantJobRouter =?= true",
             "JOB_ROUTER_ROUTE_NAMES = " + " ".join(names)]
    for i, name in enumerate(names):
        lines += [f"JOB_ROUTER_ROUTE_{name} @=rt",
                  f'  REQUIREMENTS VO == "vo{i % 10}" && RequestMemory <= {1024 * (i + 1)} && '
                  f'(DESIRED_Sites is undefined || stringListMember("site{i}", DESIRED_Sites))',
                  f'  GridResource = "batch slurm site{i}"', f'  SET RoutedSite = "site{i}"', "@rt"]
    return "\n".join(lines) + "\n"


def counted_parses(monkeypatch):
    """Count every call of engine.classad.parse_expr (cache hits included: a parse cache smaller
    than the table, 65,536 entries for 100,000 routes, turns each of them back into a parse)."""
    calls = [0]
    real = classad.parse_expr

    def counting(text, new=False):
        calls[0] += 1
        return real(text, new)

    monkeypatch.setattr(classad, "parse_expr", counting)
    return calls


def test_loading_and_linting_a_table_parses_each_route_requirements_once(monkeypatch):
    # issue 25 item 6: check -q took ~32 s on 100,000 routes, most of it parsing each route's
    # REQUIREMENTS three times (the transform parser, the shadowing lint's normal form, and the
    # SET literal the transform-text lint checks). One parse per route, at any size.
    calls = counted_parses(monkeypatch)
    counts = {}
    for n in (500, 1000):
        cfg = Config.from_text(many_routes(n), env={})
        calls[0] = 0
        table = load_routing_table(cfg)
        assert len(table.routes) == n and not table.errors
        # the one warning: that many REQUIREMENTS are too deep for the umbrella (test_umbrella_depth.py)
        others = [d for d in table.diagnostics if d.level != "info" and "MAX_CLASSAD_RECURSION" not in d.message]
        assert not others, others[:3]
        counts[n] = calls[0]
    assert counts[1000] <= n + 5, counts
    assert counts[1000] <= 2 * counts[500] + 5, counts


def test_matching_a_job_against_every_route_does_not_parse_requirements_again(monkeypatch):
    # The router evaluates each route's REQUIREMENTS for each job (JobRouter::ChooseRoute,
    # htcondor.md §1.4): with the route's own parse, not one from a cache that 100,000 routes evict.
    table = load_routing_table(Config.from_text(many_routes(300), env={}))
    job = classad.make_ad({"VO": '"vo7"', "RequestMemory": "2048", "WantJobRouter": "true"})
    calls = counted_parses(monkeypatch)
    matched = [r.name for r in table.routes if r.matches(job, now=1_700_000_000)]
    assert matched == [f"Site{i}" for i in range(300) if i % 10 == 7 and i >= 1]
    assert calls[0] == 0, calls


def test_routedeck_route_without_explain_does_not_explain_every_failing_route(monkeypatch, tmp_path, capsys):
    # `routedeck route` (no --explain, no --json) prints one line per job: route and verdict. It
    # built the clause-by-clause explanation of every route before the chosen one for each job
    # (parsing each clause): on 100,000 routes, jobs × routes parses. The lines stay the same;
    # --explain still explains every route (JobRouter::ChooseRoute order, htcondor.md §1.4).
    # 300 routes: from about 400 the umbrella's chain of || is deeper than ClassAd evaluates and no
    # job is a candidate, as in HTCondor (test_umbrella_depth.py)
    cfg = tmp_path / "routes.conf"
    cfg.write_text(many_routes(300))
    base = 'ProcId = 0\nJobStatus = 1\nWantJobRouter = true\nOwner = "u"\nJobUniverse = 5\n'
    ads = tmp_path / "jobs.ad"
    ads.write_text(f'ClusterId = 1\n{base}VO = "vo7"\nRequestMemory = 1024\n\n'
                   f'ClusterId = 2\n{base}VO = "vo3"\nRequestMemory = 1024\nDESIRED_Sites = "site293"\n')
    calls = count_calls(monkeypatch, whynot.clause_steps, (whynot, "clause_steps"))
    argv = ["route", "-c", str(cfg), "--jobads", str(ads), "--now=1700000000"]
    assert cli_main(argv) == 0
    lines = capsys.readouterr().out
    assert lines == "1.0\tSite7\twould be routed to Site7\n2.0\tSite293\twould be routed to Site293\n"
    assert calls[0] <= 2, calls  # JOB_ROUTER_SOURCE_JOB_CONSTRAINT, once per job
    calls[0] = 0
    assert cli_main([*argv, "--explain"]) == 0
    explained = capsys.readouterr().out
    assert explained.startswith("Job 1.0: would be routed to Site7\n") and "Job 2.0: would be routed to Site293" in explained
    assert calls[0] >= 293, calls  # every route before Site293 explained, as before
