"""Why-not-routed explanations follow the router's decision path (htcondor.md §1.4, §1.5)."""

from __future__ import annotations

from tests.helpers.router_fixtures import T0, make_router, route, submit, table

from engine.router.whynot import split_and


def failed(expl):
    return [s for s in expl.steps if s.ok is False]


def test_split_and_top_level_only():
    # Source: RouteDeck explainer helper (top-level && split); no HTCondor behaviour
    assert split_and("(A == 1 && (B || C)) && D =?= \"x && y\"") == ["A == 1", "(B || C)", 'D =?= "x && y"']
    assert split_and("A || B") == ["A || B"]


def test_source_constraint_clause_named_with_values():
    """§1.4: JOB_ROUTER_SOURCE_JOB_CONSTRAINT is part of the umbrella; the failing clause is named."""
    tbl = table([route("A")], source_job_constraint="WantRoute =?= true && Owner == \"bob\"")
    r, src, dst = make_router(tbl)
    (key,) = submit(src, WantRoute="true")
    e = r.why_not(key, T0)
    assert e.route is None and e.verdict.startswith("not a candidate")
    (bad,) = failed(e)
    assert bad.check == 'JOB_ROUTER_SOURCE_JOB_CONSTRAINT: Owner == "bob"'
    assert 'Owner = "alice"' in bad.detail


def test_sanity_clause_for_a_running_job():
    """§1.4 umbrella: target.JobStatus == 1."""
    tbl = table([route("A")])
    r, src, dst = make_router(tbl)
    (key,) = submit(src, JobStatus="2")
    (bad,) = failed(r.why_not(key, T0))
    assert bad.check.startswith("umbrella: JobStatus == 1") and "JobStatus = 2" in bad.detail


def test_each_route_requirements_and_capacity_in_order():
    """§1.4/§1.5: routes in order; a full route is skipped with its figures; requirements with values."""
    tbl = table([route("Full", max_jobs=1), route("Picky", "Memory > 4096 && Arch == \"X86_64\""), route("Last")])
    r, src, dst = make_router(tbl)
    (first,) = submit(src)
    r.poll(T0 + 10)  # fills "Full"
    (key,) = submit(src, Memory="2048", Arch='"X86_64"')
    e = r.why_not(key, T0 + 10)
    assert e.route == "Last" and e.verdict == "would be routed to Last"
    by = [(s.route, s.check, s.ok) for s in e.steps if s.route]
    assert by[0] == ("Full", "accepting jobs", False)
    assert [s for s in e.steps if s.route == "Full"][0].detail == "full: 1 ≥ MaxJobs 1"
    assert ("Picky", "REQUIREMENTS (job as MY): Memory > 4096", False) in by
    assert ("Picky", 'REQUIREMENTS (job as MY): Arch == "X86_64"', True) in by
    assert by[-1] == ("Last", "REQUIREMENTS (job as MY)", True)
    assert "Memory = 2048" in [s for s in e.steps if s.check.endswith("Memory > 4096")][0].detail


def test_throttled_route_reason_has_numbers():
    """§1.5: throttle > 0 and throttle <= recent_routed → not accepting."""
    tbl = table([route("BH")])
    r, src, dst = make_router(tbl)
    r.book.get("BH").throttle = 3.4
    r.book.get("BH").recent_routed = 4
    (key,) = submit(src)
    e = r.why_not(key, T0)
    assert "no route is accepting jobs" in e.verdict
    assert "throttled: 4 routed ≥ throttle 3.4 per 600 s" in e.verdict


def test_tracked_job_and_global_limit():
    # Source: htcondor.md §1.3 JOB_ROUTER_MAX_JOBS (managed jobs across routes), §1.4 (managed jobs are not candidates)
    tbl = table([route("A")], max_jobs=1)
    r, src, dst = make_router(tbl)
    a, b = submit(src, 2)
    r.poll(T0 + 10)
    ea = r.why_not(a, T0 + 10)
    assert ea.route == "A" and ea.verdict.startswith("already managed (submitted)")
    eb = r.why_not(b, T0 + 10)
    assert failed(eb)[0].check == "JOB_ROUTER_MAX_JOBS" and failed(eb)[0].detail == "1 managed, limit 1"


def test_my_prefix_is_the_empty_ad_in_the_umbrella():
    """§1.4: the umbrella evaluates route requirements with an empty MY ad and the job as TARGET,
    while ChooseRoute uses the job as MY; a requirement written MY.x passes ChooseRoute's test but
    not the umbrella's, so the job is never a candidate."""
    tbl = table([route("Mine", "MY.WantMine == true")])
    r, src, dst = make_router(tbl)
    (key,) = submit(src, WantMine="true")
    e = r.why_not(key, T0)
    assert e.route is None
    assert failed(e)[0].check.startswith("umbrella: one accepting route's requirements")
    r.poll(T0 + 10)
    assert key not in r.jobs


def test_clause_values_of_a_text_whose_references_classad2_cannot_list():
    """§1.4: a failing clause shows the job attributes it reads; for a selection on a call (Expr.refs
    unknown) those are the job's attributes the text names."""
    tbl = table([route("Pick", "ifThenElse(RequestCpus > 1, [a = 20], [a = 5]).a > 10")])
    r, src, dst = make_router(tbl)
    (key,) = submit(src, RequestCpus="1")
    (bad,) = [s for s in failed(r.why_not(key, T0)) if s.route == "Pick"]
    assert bad.check.startswith("REQUIREMENTS") and bad.detail == "false (RequestCpus = 1)"
