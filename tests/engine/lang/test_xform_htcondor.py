"""Issue 17: the transform language as a 25.x Job Router runs it, one minimal case per item.

Each test names the HTCondor source place it follows (read in htcondor/htcondor at HEAD:
src/condor_utils/config.cpp ``evaluate_macro_func``, xform_utils.cpp, condor_universe.cpp,
basename.cpp, condor_config.cpp ``string_is_long_param``, src/condor_job_router/JobRouter.cpp
``ApplyRoutingJobEdits`` / ``ParseNext``, src/classad/sink.cpp ``UnparseReal``).
"""

from __future__ import annotations

import io
import argparse
import pytest

from engine.cli import check
from engine.lang import macros as mx
from engine.lang.xform import parse_transform
from engine.lang.xform import XformError


def routed(text: str, ad: dict[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
    """Apply ``text`` as the router does (one application, XFormHash(Basic) defaults)."""
    out = dict(ad or {"JobUniverse": "5", "Owner": '"u"'})
    warnings = parse_transform(text).apply(out, router=True)
    return out, warnings


def test_item6_filename_functions_of_an_undefined_name_use_the_text_itself():
    """config.cpp SPECIAL_MACRO_ID_FILENAME/BASENAME/DIRNAME: ``if ( ! mval) mval = body;`` —
    an argument that is not a macro is the path itself."""
    ad, _ = routed("SET A \"$Fn(/data/run.sub)\"\nSET B \"$BASENAME(/x/y.tar)\"\nSET C \"$DIRNAME(/x/y.tar)\"\n"
                   "SET D \"$Fx(job.sh)\"")
    assert ad["A"] == '"run"'
    assert ad["B"] == '"y.tar"'
    assert ad["C"] == '"/x/"'
    assert ad["D"] == '".sh"'


def test_item1_macro_function_errors_substitute_and_the_transform_goes_on():
    """config.cpp ``might_EXCEPT`` without allow_except in a transform context (the error is
    pushed to the macro set and logged), each special macro's substitute (``tvalue = ""``; a bad
    $INT format gives the format text); JobRouter.cpp ApplyRoutingJobEdits fails a route only
    when TransformClassAd returns < 0."""
    ad, warnings = routed("SET A \"x$INT(abc)y\"\nSET B \"$REAL(zz)\"\nSET C \"$CHOICE(7,a,b)\"\n"
                          "SET D \"$SUBSTR(Owner,q)\"\nSET E \"$INT(3,%Q)\"\nSET F 1")
    assert ad["A"] == '"xy"' and ad["B"] == '""' and ad["C"] == '""' and ad["D"] == '""'
    assert ad["E"] == '"%Q"'
    assert ad["F"] == "1"
    assert sum("ERROR" in w for w in warnings) == 5
    # $CHOICE with an invalid index goes on with item 0
    ad, _ = routed('SET G "$CHOICE(x,a,b)"')
    assert ad["G"] == '"a"'
    # the config reader stays strict: a daemon's param() EXCEPTs (ConfigMacroSetAllowExcept)
    try:
        mx.expand("$INT(abc)", lambda n: None)
    except mx.MacroError:
        pass
    else:
        raise AssertionError("the config reader must raise")


def test_item4_router_defaults_are_xformhash_basic():
    """xform_utils.cpp XFormBasicMacroDefaults (IsClusterAd, IsLinux, IsWindows, Iterating,
    LateMaterialization) used by JobRouter.cpp ApplyRoutingJobEdits ``XFormHash
    mset(XFormHash::Flavor::Basic)``; Row/Step/ItemIndex/XFormId are not defined there."""
    ad, _ = routed('SET A "$(IsClusterAd)-$(LateMaterialization)-$(Row:none)-$(Step:none)-$(ItemIndex:none)-'
                   '$(XFormId:none)-$(IsLinux)"')
    assert ad["A"] == '"0-0-none-none-none-none-1"'


def test_item5_universe_docker_sets_none_and_the_last_universe_wins():
    """xform_utils.cpp ``setUniverse`` (``CondorUniverseNumberEx``: atoi, else
    condor_universe.cpp ``CondorUniverseNumber``, which refuses the docker topping and knows no
    "container"); JobRouter.cpp ParseNext falls back to TargetUniverse when it is 0."""
    assert parse_transform("UNIVERSE docker\nSET A 1").universe is None
    assert parse_transform("UNIVERSE container").universe is None
    assert parse_transform("UNIVERSE vanilla\nUNIVERSE docker").universe is None
    assert parse_transform("UNIVERSE docker\nUNIVERSE local").universe == 12
    t = parse_transform("UNIVERSE docker")
    assert any("sets none" in w and "vanilla (5)" in w for w in t.warnings)


def test_item7_int_of_a_job_attribute_is_evaluated_without_the_job_ad():
    """condor_config.cpp ``string_is_long_param``: strtoll, else the text evaluated in an empty
    ``ClassAd rhs`` (``me`` is NULL from config.cpp SPECIAL_MACRO_ID_INT) — the job ad is not used."""
    ad, warnings = routed('SET A "$INT(RequestCpus)"', {"JobUniverse": "5", "RequestCpus": "4"})
    assert ad["A"] == '""'
    assert any("does not evaluate to an integer" in w for w in warnings)


def test_item8_eval_of_unparsable_text_and_real_formatting():
    """config.cpp SPECIAL_MACRO_ID_EVAL: a text that does not parse gives "" unless it was macro
    expanded (then the expansion); a real is unparsed by ClassAdUnParser (sink.cpp
    ``UnparseReal``: ``%1.15E``, 0 as ``0.0``)."""
    ad, _ = routed('SET A "$EVAL(1 +)"\nSET B "$EVAL(1.5)"\nSET C "$EVAL(0.0)"\nFOO = 2 +\nBAR = $(FOO)\n'
                   'SET D "$EVAL(BAR)"\nSET E "$EVAL(FOO)"')
    assert ad["A"] == '""'
    assert ad["B"] == '"1.500000000000000E+00"'
    assert ad["C"] == '"0.0"'
    assert ad["D"] == '"2 +"'
    assert ad["E"] == '""'


def test_item10_backslash_is_not_a_path_separator_on_linux():
    """basename.cpp ``condor_basename``: ``\\\\`` separates only ``#ifdef WIN32``."""
    ad, _ = routed('P = dir\\joe.txt\nSET A "$BASENAME(P)"')
    assert ad["A"] == '"dir\\joe.txt"'


def test_basename_suffix_argument():
    """config.cpp SPECIAL_MACRO_ID_BASENAME: ``$BASENAME(file, .tar.gz)`` drops a matching
    suffix (found in HTCondor's source on the way; RouteDeck read the comma as part of the name)."""
    ad, _ = routed('F = /x/pkg.tar.gz\nSET A "$BASENAME(F, .tar.gz)"')
    assert ad["A"] == '"pkg"'


def test_set_with_a_comma_glued_to_the_name_is_flagged_by_check(tmp_path):
    """HTCondor defect (not copied): xform_utils.cpp ParseRulesCallback ``attr[attr.size()-1] = 0``
    keeps a NUL byte in the name, so ``SET A, x`` makes an attribute named "A\\\\0". ``check``
    names the file, the line and what HTCondor will do."""
    cfg = tmp_path / "router.conf"
    cfg.write_text("JOB_ROUTER_ROUTE_NAMES = R1\nJOB_ROUTER_ROUTE_R1 @=end\n  REQUIREMENTS true\n"
                   "  GridResource = \"batch slurm\"\n  SET Foo, 1\n  UNIVERSE docker\n@end\n")
    out = io.StringIO()
    check.run(argparse.Namespace(configs=[str(cfg)], allow_cmd=False, quiet=False), out)
    text = out.getvalue()
    nul = [ln for ln in text.splitlines() if "NUL byte" in ln]
    assert nul and nul[0].startswith(f"{cfg}:5:") and "Foo\\0" in nul[0]
    uni = [ln for ln in text.splitlines() if "UNIVERSE docker" in ln]
    assert uni and uni[0].startswith(f"{cfg}:6:")


def test_item2_set_uses_the_old_parser_and_evalset_the_new_one():
    """xform_utils.cpp ParseRulesCallback: kw_SET/kw_DEFAULT parse with a ClassAdParser set to
    ``SetOldClassAd(true)`` (a backslash is literal; two adjacent string literals do not parse),
    kw_EVALSET/kw_EVALMACRO with ``ad.EvaluateExpr`` (the new parser: ``\\\\`` escapes)."""
    ad, warnings = routed('SET A "a\\tb"\nSET B "x" "y"\nEVALSET C "a\\\\b"')
    assert ad["A"] == '"a\\tb"'  # backslash t kept as two characters
    assert "B" not in ad and any("invalid expression" in w for w in warnings)
    assert ad["C"] == '"a\\b"'  # one backslash after the new parser's escape


def test_item10_if_defined_of_a_signed_number_fails_the_transform():
    """config.cpp ``Characterize_config_if_expression``: in ``defined -0.5`` the ``-`` after
    the keyword is a ``ct_sum``, so the whole condition is not CIFT_IFDEF but CIFT_COMPLEX;
    ``Evaluate_config_if`` then fails ("complex conditionals are not supported") and
    ``Parse_macros`` fails the transform. ``defined 0.5`` stays valid (CIFT_NUMBER argument)."""
    with pytest.raises(XformError, match="not a valid if condition"):
        routed("if defined -0.5\n  SET A 1\nendif")
    ad, _ = routed("if defined 0.5\n  SET A 1\nendif")
    assert ad["A"] == "1"


def test_item10_my_attr_of_a_unary_expression_keeps_the_unparser_space():
    """classad sink.cpp ``Unparse`` of a unary operator writes ``" !"`` (the opString table),
    so ``$(MY.A)`` of ``A = !B`` is `` !B`` with its leading space (xform_utils.cpp lookup of
    MY. unparses the attribute's expression)."""
    ad, _ = routed('SET A !B\nSET C "[$(MY.A)]"')
    assert ad["C"] == '"[ !B]"'


def test_item9_an_invalid_line_in_a_branch_not_taken_is_never_read(tmp_path):
    """config.cpp ``Parse_macros`` (which xform_utils.cpp ``TransformClassAd`` drives with
    ``ParseRulesCallback``): ``if ( ! ifstack.enabled()) continue;`` comes before the line is
    tokenised, so a line of a branch not taken is never parsed; only a taken one fails the
    transform ("FROB is not a valid transform keyword", ``return -1``). ``check`` warns."""
    text = "if false\n  FROB A 1\nelse\n  SET A 2\nendif"
    ad, _ = routed(text)
    assert ad["A"] == "2"
    with pytest.raises(XformError, match="FROB is not a valid transform keyword"):
        routed(text.replace("if false", "if true"))
    cfg = tmp_path / "router.conf"
    cfg.write_text("JOB_ROUTER_ROUTE_NAMES = R1\nJOB_ROUTER_ROUTE_R1 @=end\n  REQUIREMENTS true\n"
                   "  GridResource = \"batch slurm\"\n  if $(Nope)\n    SET\n  endif\n@end\n")
    out = io.StringIO()
    check.run(argparse.Namespace(configs=[str(cfg)], allow_cmd=False, quiet=False), out)
    lines = [ln for ln in out.getvalue().splitlines() if "HTCondor ignores it only while the branch is not taken" in ln]
    assert lines and lines[0].startswith(f"{cfg}:6:") and "SET needs 2 arguments" in lines[0]


def test_catastrophic_regex_in_a_transform_is_bounded_and_matches_nothing():
    """``COPY /regex/`` matches attribute names with HTCondor's ``Regex::match`` (PCRE2 with its
    default match limit; ``rc > 0`` or no match — src/condor_utils/condor_regex.cpp); a pattern that
    backtracks catastrophically stops there. RouteDeck bounds the match in time
    (engine/lang/bounded_re.py): the name is not matched, a warning names the line, the other
    names still are, and the transform ends instead of hanging."""
    t = parse_transform("COPY /^(a|aa)+$/ Copied_\\0\n", name="t")
    ad = {"a" * 40 + "b": "1", "aaaa": "2"}
    warnings = t.apply(ad)
    assert ad.get("Copied_aaaa") == "2"
    assert not any(k.startswith("Copied_") and k.endswith("b") for k in ad)
    assert any("ran out of time" in w and w.startswith("line 1") for w in warnings)
