"""The old-to-new route converter against HTCondor's own ``ConvertClassadJobRouterRouteToXForm``
(issue 17 items 12 and 13).

Sources: ``src/condor_utils/xform_utils.cpp`` ``ConvertClassadJobRouterRouteToXForm`` and
``unparse_special`` (HTCondor 24.0/25.x), ``src/classad/attrrefs.cpp``
``AttributeReference::_Flatten`` (the ``flattenAndInline`` branch), ``src/condor_job_router/JobRouter.cpp``
(24.0 branch) ``ParseRoutingEntries`` / ``JobRoute::ParseNext``; htcondor.md §1.2, §1.3a.
"""

from __future__ import annotations


from tests.helpers.paths import REPO, TESTS
from engine import classad as C
from engine.lang.config import Config
from engine.router.loader import load_routing_table
from engine.router.routed_copy import build_routed_ad
from engine.lang.xform_iter import cut_at_transform
import classad2
from engine.router.trace import trace_route
from engine.router.convert import convert_classic_table
import json
from engine.router.convert import knob_suffix


def load(text: str):
    return load_routing_table(Config.from_text(text, "old.conf"))


def job(**attrs):
    return {k: v if isinstance(v, str) else C.format_value(v) for k, v in attrs.items()}


def test_nameless_route_is_kept_under_its_source_label():
    """17.12 — JobRouter.cpp (24.0) ``ParseRoutingEntries`` passes ``entries:N`` as the route's
    config name; ``ConvertClassadJobRouterRouteToXForm`` overwrites it only from a ``Name``
    attribute, so a route with neither ``Name`` nor ``GridResource`` is kept, named ``entries:N``."""
    t = load('JOB_ROUTER_ENTRIES = [ Name = "a"; Requirements = true; ] '
             '[ Requirements = TARGET.Owner == "u"; TargetUniverse = 5; ]\n')
    assert sorted(r.name for r in t.routes) == ["a", "entries:1"]
    r = t.route("entries:1")
    assert r.matches(C.make_ad(job(Owner='"u"', JobUniverse=5)))
    assert not [d for d in t.diagnostics if d.level == "error"]
    assert any("entries:1" in str(d) and "neither Name nor GridResource" in str(d) for d in t.diagnostics)


def test_route_attributes_that_do_not_fold_are_inlined_not_set_and_deleted():
    """17.13 — xform_utils.cpp ``unparse_special`` flattens ``eval_set_`` expressions with
    ``ClassAd::FlattenAndInline``; attrrefs.cpp ``AttributeReference::_Flatten`` then inlines an
    attribute whose value does not fold (``if (state.flattenAndInline) return true``), so no route
    attribute is left to be "temporarily SET" and DELETEd. RouteDeck used to emit ``SET X $(X)`` …
    ``DELETE X``, which deleted the job's own ``X``."""
    t = load('JOB_ROUTER_ENTRIES = [ Name = "r"; Requirements = true; '
             'X = ifThenElse(TARGET.RequestMemory > 100, TARGET.RequestMemory, 100); '
             'eval_set_RequestMemory = X + 1; ]\n')
    text = t.route("r").transform.text
    assert "DELETE X" not in text and "SET X" not in text
    assert "EVALSET RequestMemory 1 + ifThenElse(MY.RequestMemory > 100,MY.RequestMemory,100)" in text
    ad = build_routed_ad(t, t.route("r"), job(JobUniverse=5, RequestMemory=200, X='"mine"'),
                         now=0, source_id=(1, 0))
    assert ad["X"] == '"mine"' and ad["RequestMemory"] == "201"


def test_inlining_is_recursive_and_requirements_too():
    """17.13 — ``FlattenAndInline`` recurses through attribute references (attrrefs.cpp
    ``_Flatten`` → ``tree->Flatten``); ``Requirements`` goes through the same ``unparse_special``
    (flags Flatten|UnTarget)."""
    t = load('JOB_ROUTER_ENTRIES = [ Name = "r"; Lim = TARGET.RequestCpus * 2; Big = Lim; '
             'Requirements = TARGET.Want == Big; eval_set_Cap = Big; ]\n')
    text = t.route("r").transform.text
    assert "SET Big" not in text and "DELETE" not in text
    # the classad library's combine() puts the folded constant first (classad2 is that library)
    assert "EVALSET Cap 2 * MY.RequestCpus" in text
    assert "REQUIREMENTS Want == 2 * RequestCpus" in text


def test_reading_stops_at_transform_and_check_says_so():
    """17.11 — xform_utils.cpp ``MacroStreamXFormSource::open`` (which JobRouter.cpp uses for
    routes and pre/post-route transforms) sets ``at_end`` on a ``TRANSFORM`` line and ``break``s:
    the statements after it are never loaded. A bare ``TRANSFORM`` at the end of a line is not the
    statement (``is_xform_statement`` wants a space after the keyword)."""
    t = load("JOB_ROUTER_ROUTE_NAMES = A\n"
             "JOB_ROUTER_ROUTE_A @=end\n  REQUIREMENTS true\n  SET X 1\n  TRANSFORM 2\n  SET Y 2\n  # c\n@end\n")
    ad = build_routed_ad(t, t.route("A"), job(JobUniverse=5), now=0, source_id=(1, 0))
    assert ad["X"] == "1" and "Y" not in ad
    [w] = [d for d in t.diagnostics if "TRANSFORM" in d.message]
    assert w.level == "warning" and "(line 5)" in w.message and "1 statement line" in w.message
    assert w.file == "old.conf" and w.line == 6  # the first dropped line, "SET Y 2"
    assert cut_at_transform("SET A 1\nTRANSFORM\nSET B 2\n").transform_line is None
    assert cut_at_transform("SET A 1\ntransform = 3\nSET B 2\n").transform_line is None


def test_inlining_without_parentheses_is_flagged():
    """HTCondor defect, predicted and flagged: ``FlattenAndInline`` (classad attrrefs.cpp) puts the
    attribute's tree in place and ``ClassAdUnParser::UnparseAux`` (sink.cpp) writes operators
    without adding parentheses, so ``X = a + b; eval_set_Y = X * 2`` converts to ``a + b * 2``.
    RouteDeck emits the same text (the routed ad is HTCondor's) and warns in ``check``."""
    t = load('JOB_ROUTER_ENTRIES = [ Name = "r"; Requirements = true; X = TARGET.A + TARGET.B; '
             'eval_set_Y = X * 2; ]\n')
    assert "EVALSET Y 2 * MY.A + MY.B" in t.route("r").transform.text
    [w] = [d for d in t.diagnostics if "without parentheses" in d.message]
    assert w.level == "warning" and w.file == "old.conf" and w.line == 1
    ad = build_routed_ad(t, t.route("r"), job(JobUniverse=5, A=1, B=10), now=0, source_id=(1, 0))
    assert ad["Y"] == "12"  # what HTCondor computes: 2 * 1 + 10, not 22
    ok = load('JOB_ROUTER_ENTRIES = [ Name = "r"; Requirements = true; X = (TARGET.A + TARGET.B); '
              'eval_set_Y = X * 2; ]\n')
    assert not [d for d in ok.diagnostics if "without parentheses" in d.message]


def _htcondor_stores(text: str) -> str:
    """What HTCondor stores for ``SET A <text>``: ``ParseRulesCallback`` parses the value with the
    old ClassAd parser and the schedd writes the old-syntax unparse (htcondor.md §1.3, §3.1
    "Values"). Computed with HTCondor 25.14's own ClassAd library (classad2), not with RouteDeck."""
    ad = classad2.parseOne(f"A = {text}", classad2.ParserType.Old)
    return ad.printOld().split("=", 1)[1].strip()


def test_routed_ad_keeps_time_calls_as_htcondor_stores_them():
    """Issue 25 item 1 — the V9 manual's old-syntax example (``shared/data/real``
    ``docs-V9_0_0/extracted/job-router-old-syntax-example.conf``) converts
    ``set_PeriodicRemove = … (time() - QDate) > 3600*6`` to ``SET PeriodicRemove … time() …``
    (xform_utils.cpp ``ConvertClassadJobRouterRouteToXForm``, old unparse). HTCondor's SET stores
    that expression, ``time()`` and all; the engine's clock is for evaluation only (classad.py).
    The routed ad, its trace and every SET/DEFAULT must keep ``time()``."""
    conf = TESTS / "data" / "config" / "manual-9.0" / "job-router-old-syntax-example.conf"
    t = load_routing_table(Config.load([conf]))
    [stmt] = [ln.strip() for ln in t.route("Site_1").transform.text.splitlines() if "PeriodicRemove" in ln]
    rhs = stmt.split(None, 2)[2]
    assert "time()" in rhs  # the converter keeps it (raw classad2 trees)
    attrs = job(ClusterId=1, ProcId=0, JobUniverse=5, JobStatus=1, Owner="u", QDate=1000, WantJobRouter=True)
    ad = build_routed_ad(t, t.route("Site_1"), attrs, now=5000, source_id=(1, 0))
    assert ad["PeriodicRemove"] == _htcondor_stores(rhs)
    assert "CurrentTime" not in ad["PeriodicRemove"]
    blocks, traced, _err = trace_route(t, "Site_1", attrs, now=5000, source_id=(1, 0))
    assert traced["PeriodicRemove"] == ad["PeriodicRemove"]
    shown = [c for b in blocks for ev in b.statements for c in ev.changes if c.attr == "PeriodicRemove"]
    assert shown and all("CurrentTime" not in (c.new or "") for c in shown)
    # The same for hand-written transform routes: SET and DEFAULT (old parser), COPY/RENAME of a
    # job attribute holding time(); evaluation still sees the engine's clock.
    t2 = load("JOB_ROUTER_ROUTE_NAMES = R\nJOB_ROUTER_ROUTE_R @=end\n  REQUIREMENTS time() > 100\n"
              "  SET A time() - QDate\n  DEFAULT B (time() + 60)\n  COPY Deadline D2\n"
              "  EVALSET Age time() - Mine\n@end\n")
    ad2 = build_routed_ad(t2, t2.route("R"), job(JobUniverse=5, QDate=1000, Mine=1000, Deadline=C.parse_expr("time() + 5")),
                          now=5000, source_id=(1, 0))
    assert ad2["A"] == _htcondor_stores("time() - QDate") and ad2["B"] == _htcondor_stores("(time() + 60)")
    assert ad2["D2"] == ad2["Deadline"] == "time() + 5" and ad2["Age"] == "4000"
    assert t2.route("R").matches(C.make_ad(job(JobUniverse=5)), now=5000)


NAMES_ORACLE = TESTS / "data" / "router" / "convert_names_oracle.json"


def _converted_knobs(cfg) -> dict[str, str]:
    """Route name in the input → JOB_ROUTER_ROUTE_<knob> in ``routedeck convert``'s output (routes
    are written in the table's order, the same order as JOB_ROUTER_ROUTE_NAMES)."""
    table = load_routing_table(cfg)
    text = convert_classic_table(cfg, table=table)
    [names] = [ln.split("=", 1)[1].split() for ln in text.splitlines() if ln.startswith("JOB_ROUTER_ROUTE_NAMES")]
    assert len(names) == len(table.routes)
    converted = load_routing_table(Config.from_text(text, "converted.conf"))
    assert [r.name for r in converted.routes] == names and not converted.errors
    return {r.name: knob for r, knob in zip(table.routes, names)}


def test_converted_route_names_are_condor_transform_ads_names():
    """Issue 25 item 2 — ``condor_transform_ads -convert:file`` (src/condor_tools/transform_ads.cpp
    ``ConvertJobRouterRoutes``) writes each route as ``JOB_ROUTER_ROUTE_<tag>``, ``tag`` =
    ``cleanStringForUseAsAttr(name)`` (src/condor_utils/classad_helpers.cpp, default
    ``chReplace = 0``: every character outside ``[A-Za-z0-9_]`` removed, leading digits kept);
    htcondor.md §8. Oracle: tests/data/router/convert_names_oracle.json, HTCondor 25.14.1's own
    ``ConvertClassadJobRouterRouteToXForm`` and ``cleanStringForUseAsAttr`` run on the real tables
    of tests/data/config (copies of shared/data/real) and on odd names."""
    oracle = json.loads(NAMES_ORACLE.read_text())
    for name, tag in oracle["clean"].items():
        if tag and tag.upper() != "NAMES":  # RouteDeck keeps its clash handling (see below)
            assert knob_suffix(name, set()) == tag, name
    assert knob_suffix("!!!", set()) == "Route"  # HTCondor would write a broken 'JOB_ROUTER_ROUTE_ @=jre'
    assert knob_suffix("NAMES", set()) == "NAMES_2"  # JOB_ROUTER_ROUTE_NAMES is the list, not a route
    taken: set[str] = set()
    assert [knob_suffix(n, taken) for n in ("A B", "AB", "a-b")] == ["AB", "AB_2", "ab_3"]
    root = REPO
    compared = 0
    for case in oracle["tables"]:
        if "files" in case:
            cfg = Config.load([root / f for f in case["files"]])
        else:
            cfg = Config.from_text(f"JOB_ROUTER_ENTRIES = {case['entries']}\n", "entries.conf")
        knobs = _converted_knobs(cfg)
        for route in case["routes"]:
            if route["knob"] is None:
                continue  # -convert:file writes no route without a Name; RouteDeck keeps it (below)
            assert knobs[route["name"]] == route["knob"], (case.get("files"), route)
            compared += 1
    assert compared == sum(r["knob"] is not None for c in oracle["tables"] for r in c["routes"]) == 15


def test_converted_route_body_names_the_route_as_condor_transform_ads_does():
    """transform_ads.cpp: ``if (tag == xfm.getName()) { xfm.setName(""); }`` — no ``NAME`` line
    when the name is already the knob suffix, ``NAME <original>`` when the tag differs; a 25.x
    router names the route after the knob anyway and prints nothing about a different ``NAME``
    (JobRouter.cpp ``JobRoute::ParseNext`` compares with ``m_name`` before setting it; htcondor.md §8),
    so routed jobs get ``RouteName = "AnalysisQueue"``."""
    cfg = Config.from_text('JOB_ROUTER_ENTRIES = [ Name = "Analysis Queue"; Requirements = TARGET.Z == 3; '
                           'GridResource = "batch pbs"; ] [ Name = "Plain"; Requirements = TARGET.Y == 2; '
                           'GridResource = "batch slurm"; ] [ Requirements = TARGET.X == 1; GridResource = "arc x"; ]\n',
                           "old.conf")
    text = convert_classic_table(cfg)
    assert "JOB_ROUTER_ROUTE_AnalysisQueue @=jrt\n  NAME Analysis Queue\n  REQUIREMENTS Z == 3\n" in text
    assert "JOB_ROUTER_ROUTE_Plain @=jrt\n  REQUIREMENTS Y == 2\n" in text
    # a route without Name (named after its GridResource) is kept, which -convert:file does not do
    assert "JOB_ROUTER_ROUTE_arcx @=jrt\n  REQUIREMENTS X == 1\n" in text
    assert "-convert:file writes no route without a Name" in text
    t = load_routing_table(Config.from_text(text, "new.conf"))
    assert sorted(r.name for r in t.routes) == ["AnalysisQueue", "Plain", "arcx"]
    assert not t.warnings, [str(w) for w in t.warnings]
    ad = build_routed_ad(t, t.route("AnalysisQueue"), job(JobUniverse=5), now=0, source_id=(1, 0))
    assert ad["RouteName"] == '"AnalysisQueue"'
