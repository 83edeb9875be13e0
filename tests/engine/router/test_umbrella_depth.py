"""The router's umbrella on tables of many routes (issue 25 item 6).

JobRouter::GetCandidateJobs (src/condor_job_router/JobRouter.cpp, htcondor.md §1.4) ORs every
accepting route's REQUIREMENTS into one query. The ClassAd parser builds that ``||`` chain
left-deep, one level per term (ClassAdParser::parseLogicalORExpression, src/classad/source.cpp),
and evaluation fails past ``EvalState::MAX_CLASSAD_RECURSION`` = 400 levels
(src/classad/classad/exprTree.h; the RecursionGuard of src/classad/operators.cpp): from about 400
distinct REQUIREMENTS the query fails for every job and HTCondor's router takes none. RouteDeck
does the same, and says so — a lint, the router's cycle, ``routedeck route``'s verdict — instead
of calling every job "not a candidate: no accepting route's requirements are true".

``route`` parses that umbrella once per set of accepting routes, not once per job.
"""

from __future__ import annotations

import pytest

from engine import classad
from engine.lang.config import Config
from engine.router import candidates, whynot
from engine.router.candidates import Scanner, umbrella_core
from engine.router.loader import load_routing_table
from tests.engine.router.test_route_scaling import many_routes
from tests.helpers.counting import count_calls
from tui.cli import main as cli_main

LIMIT = "MAX_CLASSAD_RECURSION"
BASE = 'ProcId = 0\nJobStatus = 1\nWantJobRouter = true\nOwner = "u"\nJobUniverse = 5\n'


def jobs_file(tmp_path, n_jobs: int = 2) -> str:
    """Idle jobs the first matching route of ``many_routes`` takes (Site7, VO vo7)."""
    ads = tmp_path / "jobs.ad"
    ads.write_text("\n".join(f'ClusterId = {c + 1}\n{BASE}VO = "vo7"\nRequestMemory = 1024\n' for c in range(n_jobs)))
    return str(ads)


def test_classad_evaluation_fails_on_a_chain_of_400_terms():
    # The premise, in the library HTCondor's router uses (classad2 is HTCondor's ClassAd code):
    # the chain parses, and its evaluation call fails rather than giving a value.
    ad = classad.make_ad({"VO": '"vo0"'})

    def chain(n):
        return classad.parse_expr("( " + " || ".join(f'(VO == "vo{i}")' for i in range(n)) + " )")

    assert classad.evaluate(chain(300), classad.ClassAd(), ad) is True
    assert not classad.evaluation_fails(chain(300), classad.ClassAd(), ad)
    assert classad.evaluation_fails(chain(classad.MAX_CLASSAD_RECURSION), classad.ClassAd(), ad)
    assert classad.evaluate(chain(classad.MAX_CLASSAD_RECURSION), classad.ClassAd(), ad) is classad.ERROR


@pytest.mark.parametrize("n", [500, 2000])
def test_a_table_too_deep_for_the_umbrella_is_reported_at_load(n):
    table = load_routing_table(Config.from_text(many_routes(n), env={}))
    found = [d for d in table.diagnostics if LIMIT in d.message]
    assert len(found) == 1 and found[0].level == "warning", table.diagnostics[:3]
    assert f"{n:,} accepting routes" in found[0].message and "routes none" in found[0].message


def test_a_table_the_umbrella_can_evaluate_has_no_such_warning():
    table = load_routing_table(Config.from_text(many_routes(300), env={}))
    assert not [d for d in table.diagnostics if LIMIT in d.message]


@pytest.mark.parametrize("n", [500, 2000])
def test_routedeck_route_names_the_limit_instead_of_no_route_matching(n, tmp_path, capsys):
    # Site7's REQUIREMENTS are true for these jobs: only the depth of the umbrella stops them, as
    # in HTCondor. The verdict says that, not that no route's requirements are true.
    cfg = tmp_path / "routes.conf"
    cfg.write_text(many_routes(n))
    cli_main(["route", "-c", str(cfg), "--jobads", jobs_file(tmp_path), "--now=1700000000"])
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    for line in out:
        job, route, verdict = line.split("\t")
        assert route == "-" and verdict.startswith("not a candidate: ") and LIMIT in verdict, line
        assert "no accepting route's requirements are true" not in verdict


@pytest.mark.parametrize("n", [500, 5000])
def test_the_router_cycle_says_why_no_job_is_a_candidate(n):
    # 5,000 one-clause routes: the umbrella text has more operators than RouteDeck parses
    # (MAX_OPERATORS); the cycle raised ClassAdError. It is not parsed at all: its depth alone
    # decides.
    names = [f"S{i}" for i in range(n)]
    text = "JOB_ROUTER_ROUTE_NAMES = " + " ".join(names) + "\n" + "".join(
        f'JOB_ROUTER_ROUTE_S{i} @=rt\n  REQUIREMENTS VO == "vo{i}"\n@rt\n' for i in range(n))
    table = load_routing_table(Config.from_text(text, env={}))
    scanner = Scanner(table.routes, table.knobs.source_job_constraint, "jr")
    assert scanner.begin_cycle([True] * n, 0) is not None
    assert scanner.umbrella_problem is not None and LIMIT in scanner.umbrella_problem
    job = classad.make_ad({"VO": '"vo0"'})
    assert not candidates.umbrella(None, tuple(f'VO == "vo{i}"' for i in range(n))).test(job, 0)


def test_route_parses_the_umbrella_once_for_all_jobs(monkeypatch, tmp_path, capsys):
    # `routedeck route` built and parsed the umbrella (every accepting route's REQUIREMENTS) for
    # each job: jobs × routes. With the same routes accepting, one parse serves every job.
    cfg = tmp_path / "routes.conf"
    cfg.write_text(many_routes(50))
    if hasattr(candidates, "umbrella"):  # a fresh cache (absent before the fix)
        candidates.umbrella.cache_clear()
    # whynot: where route built it per job
    calls = count_calls(monkeypatch, candidates.umbrella_core, (candidates, "umbrella_core"), (whynot, "umbrella_core"))
    # a job routed fills nothing here (MaxJobs defaults to 200): the accepting routes stay the same
    assert cli_main(["route", "-c", str(cfg), "--jobads", jobs_file(tmp_path, 30), "--now=1700000000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 30 and all(line.endswith("would be routed to Site7") for line in out)
    assert calls[0] <= 2, calls  # the lint's umbrella (with the source constraint) and route's


def test_umbrella_text_is_unchanged():
    # The cached Umbrella holds the same text as before (htcondor.md §1.4).
    reqs = ("x == 1", None, "x == 1", " y ")
    assert candidates.umbrella("c", reqs).text == umbrella_core("c", reqs) == "(c) && ( (x == 1) || (True) || (y) )"
    assert candidates.umbrella(None, ()).text is None


def test_route_does_not_choose_a_route_for_jobs_no_umbrella_can_pass(monkeypatch, tmp_path, capsys):
    # HTCondor calls ChooseRoute only for the umbrella query's results (JobRouter::GetCandidateJobs,
    # htcondor.md §1.4): with the umbrella too deep there are none, and route evaluated up to
    # every route's REQUIREMENTS per job for nothing (jobs × routes).
    from engine.router.table import Route  # noqa: PLC0415 - counted here only

    cfg = tmp_path / "routes.conf"
    cfg.write_text(many_routes(2000))
    calls = count_calls(monkeypatch, Route.matches, (Route, "matches"))
    cli_main(["route", "-c", str(cfg), "--jobads", jobs_file(tmp_path, 4), "--now=1700000000", "--explain"])
    out = capsys.readouterr().out
    assert out.count("not a candidate: the router's umbrella") == 4 and LIMIT in out
    assert calls[0] == 0, calls


def test_route_asks_each_route_state_again_only_when_a_job_changed_it(monkeypatch, tmp_path, capsys):
    # One poll (htcondor.md §1.4): each route's accepting state changes only when a job is routed
    # to it (IncrementRoutedJobs). route asked every route's state for every job: jobs × routes.
    from engine.router import dryrun, throttle  # noqa: PLC0415 - counted here only

    cfg = tmp_path / "routes.conf"
    cfg.write_text(many_routes(50))
    calls = count_calls(monkeypatch, throttle.route_state, (whynot, "route_state"), (dryrun, "route_state"))
    assert cli_main(["route", "-c", str(cfg), "--jobads", jobs_file(tmp_path, 30), "--now=1700000000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 30 and all(line.endswith("would be routed to Site7") for line in out)
    assert calls[0] <= 50 + 30, calls
