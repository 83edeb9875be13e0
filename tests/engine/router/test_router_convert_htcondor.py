"""The old-to-new route converter against HTCondor's own ``ConvertClassadJobRouterRouteToXForm``
(issue 17 items 12 and 13).

Sources: ``src/condor_utils/xform_utils.cpp`` ``ConvertClassadJobRouterRouteToXForm`` and
``unparse_special`` (HTCondor 24.0/25.x), ``src/classad/attrrefs.cpp``
``AttributeReference::_Flatten`` (the ``flattenAndInline`` branch), ``src/condor_job_router/JobRouter.cpp``
(24.0 branch) ``ParseRoutingEntries`` / ``JobRoute::ParseNext``; htcondor.md §1.2, §1.3a.
"""

from __future__ import annotations

from engine import classad as C
from engine.lang.config import Config
from engine.router.loader import load_routing_table
from engine.router.routed_copy import build_routed_ad
from engine.lang.xform_iter import cut_at_transform


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
