"""Property tests: RouteDeck's transform engine against HTCondor's transform semantics (issue 13
item 3).

Transforms and job ads are generated (values of every ClassAd type: integers, reals, booleans,
strings with escaped quotes and backslashes, lists, nested ads, ``undefined``, ``error``,
expressions) and RouteDeck's result (``engine.lang.xform``, applied as the Job Router applies it,
``router=True``) is checked against expectations written from htcondor.md §1.3 "Transform
statements" and the HTCondor source — ``src/condor_utils/xform_utils.cpp``
(``ActionKeywordItems``; ``XFormHash``; the SET/DEFAULT/EVALSET/EVALMACRO/COPY/RENAME/DELETE
handlers with their regex forms and ``\\0``..``\\9`` substitutions) and ``src/condor_utils/config.cpp``
(``$INT``/``$REAL``/``$STRING``/``$F*``/``$CHOICE`` special macros; ``$(name:default)``;
``Evaluate_config_if``). The oracle never calls the transform engine: values are compared with
the ClassAd library alone (``engine.classad``: old-syntax parse and unparse, evaluation).

Every property is bounded (``max_examples``, a deadline) so the suite stays fast (about 5 s;
run at 200-300 examples each while writing them, all passing). Forms found unsupported while
writing these: none of the statement forms listed in the issue fails. Deliberate limits, each
explicit rather than silent: ``TRANSFORM`` iteration is not modelled — in a route HTCondor stops
reading at the ``TRANSFORM`` line and the router never iterates, and ``check`` warns at the first
dropped line (tested here); ``$RANDOM_CHOICE``/``$RANDOM_INTEGER`` are deterministic with a
warning (``engine/lang/macro_funcs.py``). The forms HTCondor itself refuses (``include``, an
unknown keyword, a two-argument keyword with one argument) are load errors naming the line
(checked at the end).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engine import classad as C
from engine.lang.xform import XformError, parse_transform
from engine.lang.config import Config
from engine.router.dryrun import route_jobs
from engine.router.loader import load_routing_table

BOUND = settings(max_examples=25, deadline=2000, suppress_health_check=[HealthCheck.too_slow])

RESERVED = {"true", "false", "undefined", "error", "parent", "my", "target", "is", "isnt", "root",
            "if", "elif", "else", "endif", "set", "default", "evalset", "evalmacro", "copy", "rename",
            "delete", "name", "universe", "requirements", "transform", "include", "use"}

names = st.from_regex(r"\A[A-Za-z][A-Za-z0-9_]{0,7}\Z").filter(lambda n: n.lower() not in RESERVED)

# string contents: printable, with quotes and backslashes, never '$' (a macro) nor a trailing '\';
# nor a backslash just before a quote: RouteDeck refuses that value (test_backslash_before_a_quote below)
_chars = st.characters(min_codepoint=32, max_codepoint=126, blacklist_characters="$")
strings = st.text(_chars, max_size=12).filter(lambda s: not s.endswith("\\") and '\\"' not in s)

scalars = st.one_of(
    st.integers(-10**9, 10**9).map(str),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e9, max_value=1e9).map(C.format_real),
    st.booleans().map(lambda b: "true" if b else "false"),
    strings.map(C.quote),
    st.just("undefined"), st.just("error"),
)


def _list(items):
    return "{ " + ", ".join(items) + " }"


def _nested(pairs):
    return "[ " + "; ".join(f"{k} = {v}" for k, v in pairs) + " ]"


values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(_list),
        st.lists(st.tuples(names, inner), max_size=3, unique_by=lambda kv: kv[0].lower()).map(_nested),
        st.tuples(names, st.integers(0, 99)).map(lambda t: f"{t[0]} + {t[1]}"),  # an expression
        st.tuples(inner, inner).map(lambda t: f"ifThenElse(true, {t[0]}, {t[1]})"),
    ),
    max_leaves=5,
)

ads = st.dictionaries(names, values, max_size=6).map(
    lambda d: {k: v for k, v in d.items() if list(map(str.lower, d)).count(k.lower()) == 1})


def canon(text: str) -> str:
    """A value as the old ClassAd parser reads it, unparsed again (the oracle's equality)."""
    return C.unparse_old(C.parse_expr(text))


def lower(ad):
    return {k.lower(): v for k, v in ad.items()}


def run(text: str, ad: dict[str, str]) -> dict[str, str]:
    out = dict(ad)
    parse_transform(text).apply(out, router=True)
    return out


def unchanged_except(before, after, *names_):
    skip = {n.lower() for n in names_}
    lb, la = lower(before), lower(after)
    return {k: v for k, v in lb.items() if k not in skip} == {k: v for k, v in la.items() if k not in skip}


# ---------------------------------------------------------------------------------- SET / DEFAULT


@BOUND
@given(ads, names, values)
def test_set_inserts_the_parsed_value(ad, attr, value):
    """htcondor.md §1.3: ``SET attr expr`` parses the expression (old parser) and inserts it;
    nothing else changes."""
    out = run(f"SET {attr} {value}", ad)
    assert canon(lower(out)[attr.lower()]) == canon(value)
    assert unchanged_except(ad, out, attr)


@pytest.mark.xfail(strict=True, reason="known divergence, found by hypothesis in CI (session 8): the old "
                   "ClassAd syntax reads a backslash before an escaped quote literally; RouteDeck's parse "
                   "refuses the value as two adjacent strings")
def test_backslash_before_a_quote_in_a_set_value():
    """htcondor.md §1.3: SET parses with the old parser, where only ``\\"`` is an escape: the
    string whose contents are a backslash and a quote is written ``"\\\\""`` (C.quote), which
    HTCondor stores; RouteDeck warns "invalid expression" and drops the SET."""
    value = C.quote('\\"')
    out = run(f"SET A {value}", {})
    assert "A" in out


@BOUND
@given(ads, names, values)
def test_default_never_overwrites(ad, attr, value):
    """§1.3: ``DEFAULT`` sets only an absent attribute (``Lookup()`` presence: an attribute that is
    ``undefined`` is kept)."""
    out = run(f"DEFAULT {attr} {value}", ad)
    if attr.lower() in lower(ad):
        assert out == ad
    else:
        assert canon(lower(out)[attr.lower()]) == canon(value) and unchanged_except(ad, out, attr)


# ---------------------------------------------------------------------------------- EVALSET / EVALMACRO

arith = st.tuples(st.integers(-1000, 1000), st.sampled_from(["+", "-", "*"]), st.integers(-1000, 1000))


@BOUND
@given(ads, names, names, st.integers(-10**6, 10**6), arith)
def test_evalset_stores_the_evaluated_literal(ad, target, src, n, op):
    """§1.3: ``EVALSET attr expr`` evaluates ``expr`` in the ad being transformed and stores the
    literal result; the oracle evaluates the same expression with the ClassAd library."""
    assume(target.lower() != src.lower())
    ad = {k: v for k, v in ad.items() if k.lower() != src.lower()} | {src: str(n)}
    expr = f"{src} {op[1]} {op[0]}"
    out = run(f"EVALSET {target} {expr}", ad)
    expected = C.evaluate(C.parse_expr(expr), my=C.make_ad(ad))
    assert canon(lower(out)[target.lower()]) == canon(C.format_value(expected))
    assert unchanged_except(ad, out, target)


@BOUND
@given(ads, names, st.integers(-1000, 1000), st.integers(-1000, 1000))
def test_evalmacro_value_reaches_a_later_set(ad, attr, a, b):
    """§1.3: ``EVALMACRO var expr`` stores the evaluated value as a macro (others unparsed
    old-style), used by a later ``$(var)``; the macro itself edits nothing."""
    out = run(f"EVALMACRO m {a} * {b}\nSET {attr} $(m)", ad)
    assert lower(out)[attr.lower()] == str(a * b)
    assert unchanged_except(ad, out, attr)


@BOUND
@given(ads, names, strings.filter(lambda s: '"' not in s and "\\" not in s))
def test_evalmacro_string_is_unquoted(ad, attr, s):
    """§1.3: EVALMACRO stores a string result without its quotes."""
    out = run(f'EVALMACRO m strcat("{s}", "")\nSET {attr} "$(m)"', ad)
    assert C.evaluate(C.parse_expr(lower(out)[attr.lower()])) == s


# ---------------------------------------------------------------------------------- COPY / RENAME / DELETE


@BOUND
@given(ads, names, names)
def test_copy_rename_delete_plain(ad, src, dst):
    """§1.3: ``COPY a b`` copies a's expression to b (a missing source is a no-op); ``RENAME``
    moves it and deletes the source; ``DELETE`` removes it."""
    assume(src.lower() != dst.lower())
    la = lower(ad)
    copied = run(f"COPY {src} {dst}", ad)
    renamed = run(f"RENAME {src} {dst}", ad)
    deleted = run(f"DELETE {src}", ad)
    if src.lower() not in la:
        assert copied == ad and renamed == ad and deleted == ad
        return
    assert canon(lower(copied)[dst.lower()]) == canon(la[src.lower()])
    assert lower(copied)[src.lower()] == la[src.lower()] and unchanged_except(ad, copied, dst)
    assert canon(lower(renamed)[dst.lower()]) == canon(la[src.lower()])
    assert src.lower() not in lower(renamed) and unchanged_except(ad, renamed, src, dst)
    assert src.lower() not in lower(deleted) and unchanged_except(ad, deleted, src)


prefixes = st.sampled_from(["Req", "Max", "Orig", "x"])


@BOUND
@given(ads, st.lists(st.tuples(prefixes, names), max_size=4), prefixes, st.sampled_from(["COPY", "RENAME"]))
def test_regex_copy_and_rename_with_back_references(ad, extra, prefix, keyword):
    """§1.3 and xform_utils.cpp: ``COPY /regex/ pattern`` (and RENAME) apply to every attribute
    whose name matches (PCRE2, case-insensitive); ``\\0`` is the whole match and ``\\1`` the first
    group in the new name. RENAME deletes each source."""
    for p, n in extra:
        ad = {k: v for k, v in ad.items() if k.lower() != (p + n).lower()} | {p + n: "1"}
    rx = re.compile(f"^{prefix}(.+)$", re.IGNORECASE)
    matching = {k: v for k, v in ad.items() if rx.match(k)}
    out = run(f"{keyword} /^{prefix}(.+)$/ New\\1_\\0", ad)
    lo = lower(out)
    targets = {f"New{rx.match(k).group(1)}_{k}".lower(): v for k, v in matching.items()}
    for t, v in targets.items():
        assert canon(lo[t]) == canon(v)
    if keyword == "RENAME":
        for k in matching:
            assert k.lower() not in lo or k.lower() in targets
    else:
        for k, v in matching.items():
            assert lo[k.lower()] == v
    untouched = {k.lower() for k in ad} - {k.lower() for k in matching} - set(targets)
    assert all(lo[k] == lower(ad)[k] for k in untouched)


@BOUND
@given(ads, prefixes)
def test_regex_delete(ad, prefix):
    """§1.3: ``DELETE /regex/`` removes every matching attribute (case-insensitive), only those."""
    rx = re.compile(f"^{prefix}", re.IGNORECASE)
    out = run(f"DELETE /^{prefix}/", ad)
    assert {k for k in out} == {k for k in ad if not rx.match(k)}


# ---------------------------------------------------------------------------------- macros


@BOUND
@given(ads, names, strings.filter(lambda s: '"' not in s and "\\" not in s),
       values.filter(lambda v: not v.startswith('"')), st.from_regex(r"\A[A-Za-z0-9_./]{0,8}\Z"))
def test_my_attr_and_default_macros(ad, attr, s, value, default):
    """§1.3: ``$(MY.attr)`` expands to the attribute's unevaluated text, a string without its
    quotes; ``$(name:default)`` gives the default when ``name`` is not defined (config.cpp
    ``MACRO_BODY_IDCHAR_COLON``: a default of identifier characters)."""
    ad = {k: v for k, v in ad.items() if k.lower() not in ("s", "v")} | {"S": C.quote(s), "V": value}
    out = run(f'SET {attr}1 "$(MY.S)"\nSET {attr}2 $(MY.V)\nSET {attr}3 "$(NoSuchMacro:{default})"', ad)
    lo = lower(out)
    assert C.evaluate(C.parse_expr(lo[f"{attr}1".lower()])) == s
    assert canon(lo[f"{attr}2".lower()]) == canon(value)
    assert C.evaluate(C.parse_expr(lo[f"{attr}3".lower()])) == default


@BOUND
@given(st.integers(-10**6, 10**6), st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: round(f, 3)),
       st.lists(st.from_regex(r"\A[a-z]{1,6}\Z"), min_size=2, max_size=5), st.data())
def test_special_macro_functions(i, r, items, data):
    """config.cpp special macros: ``$INT(name)`` and ``$REAL(name)`` evaluate the macro's value;
    ``$STRING(name)`` gives a string value's contents; ``$CHOICE(n, list)`` the n-th item
    (0-based; with a single argument after the index, that is the name of a macro holding the
    list); ``$Fn``/``$Fx``/``$Fp``/``$Fd`` the file name without extension, the extension,
    the directory with its slash, the last directory name."""
    n = data.draw(st.integers(0, len(items) - 1))
    stem, ext = data.draw(st.from_regex(r"\A[a-z]{1,5}\Z")), data.draw(st.from_regex(r"\A[a-z]{1,3}\Z"))
    text = (f"I = {i}\nR = {r!r}\nS = \"{stem}\"\nP = /top/{stem}/{stem}.{ext}\n"
            f"SET A $INT(I)\nSET B $REAL(R)\nSET C \"$STRING(S)\"\nSET D \"$CHOICE({n}, {', '.join(items)})\"\n"
            f"L = {', '.join(items)}\nSET K \"$CHOICE({n}, L)\"\n"
            f"SET E \"$Fn(P)\"\nSET F \"$Fx(P)\"\nSET G \"$Fp(P)\"\nSET H \"$Fd(P)\"")
    out = run(text, {})
    ev = {k: C.evaluate(C.parse_expr(v)) for k, v in out.items()}
    assert ev["A"] == i and ev["B"] == pytest.approx(r)
    assert ev["C"] == stem and ev["D"] == ev["K"] == items[n]
    assert (ev["E"], ev["F"], ev["G"], ev["H"]) == (stem, f".{ext}", f"/top/{stem}/", f"{stem}/")


# ---------------------------------------------------------------------------------- if / elif / else


@BOUND
@given(ads, st.sampled_from(["A", "B", "Cq"]), st.sampled_from(["true", "false", "1", "0", "yes", "no"]))
def test_if_branches_select_statements(ad, present, flag):
    """config.cpp ``Evaluate_config_if`` as transforms use it (htcondor.md §1.3): ``defined MY.x``
    is true when the ad has x; ``true``/``yes``/non-zero numbers are true. Exactly the statements
    of the first true branch run; ``else`` runs when none is."""
    ad = {k: v for k, v in ad.items() if k.lower() not in ("a", "b", "branch", "flagged")} | {present: "1"}
    text = ("if defined MY.A\n  SET Branch 1\nelif defined MY.B\n  SET Branch 2\nelse\n  SET Branch 3\nendif\n"
            f"f = {flag}\nif $(f)\n  SET Flagged true\nendif\n")
    out = run(text, ad)
    assert out["Branch"] == {"A": "1", "B": "2", "Cq": "3"}[present]
    assert ("Flagged" in out) == (flag in ("true", "1", "yes"))


# ---------------------------------------------------------------------------------- envelope


@BOUND
@given(ads, names, st.sampled_from([("vanilla", 5), ("VANILLA", 5), ("grid", 9), ("9", 9), ("local", 12)]),
       st.tuples(names, st.integers(0, 9)))
def test_name_universe_requirements_are_envelope(ad, name, universe, req):
    """§1.3: ``NAME``, ``UNIVERSE`` (a number or a name, any case) and ``REQUIREMENTS`` are meta
    statements removed from the body: they do not edit the ad; the transform records them."""
    t = parse_transform(f"NAME {name}\nUNIVERSE {universe[0]}\nREQUIREMENTS {req[0]} > {req[1]}\n")
    assert t.declared_name == name and t.universe == universe[1]
    assert canon(t.requirements) == canon(f"{req[0]} > {req[1]}")
    out = dict(ad)
    t.apply(out, router=True)
    assert out == ad
    has = lower(ad).get(req[0].lower())
    value = C.evaluate(C.parse_expr(t.requirements), my=C.make_ad(ad))
    assert t.matches(ad) == (value is True), has


@BOUND
@given(ads, names, names, values)
def test_evalset_of_an_attribute_copies_any_value(ad, target, src, value):
    """§1.3: ``EVALSET`` stores the evaluated literal, lists and nested ads copied — for a value
    of any ClassAd type held by ``src`` (the oracle evaluates the reference with the library)."""
    assume(target.lower() != src.lower())
    ad = {k: v for k, v in ad.items() if k.lower() != src.lower()} | {src: value}
    out = run(f"EVALSET {target} {src}", ad)
    expected = C.evaluate(C.parse_expr(src), my=C.make_ad(ad))
    assert canon(lower(out)[target.lower()]) == canon(C.format_value(expected))


# ---------------------------------------------------------------------------------- TRANSFORM


@BOUND
@given(st.lists(st.tuples(names, st.integers(0, 99)), min_size=1, max_size=4, unique_by=lambda t: t[0].lower()),
       st.integers(0, 4), st.sampled_from(["3", "a,b from (x y)", "1 x"]))
def test_a_route_ends_at_its_transform_statement(sets, cut, args):
    """xform_utils.cpp ``MacroStreamXFormSource::open`` breaks at the first ``TRANSFORM`` line
    (htcondor.md §1.3; ``engine/lang/xform_iter.py``): in a route, statements after it are never
    applied — the router does not iterate — and ``check`` says so at the dropped line."""
    cut = min(cut, len(sets))
    body = [f"  SET {n} {v}" for n, v in sets]
    body.insert(cut, f"  TRANSFORM {args}")
    text = ("JOB_ROUTER_ROUTE_NAMES = R\nJOB_ROUTER_ROUTE_R @=jrt\n  UNIVERSE vanilla\n  REQUIREMENTS true\n"
            + "\n".join(body) + "\n@jrt\n")
    table = load_routing_table(Config.from_text(text, name="t.conf"))
    job = {"ClusterId": "1", "ProcId": "0", "JobUniverse": "5", "JobStatus": "1", "Owner": '"u"'}
    [r] = route_jobs(table, [job], 1_700_000_000)
    lo = lower(r["routed_ad"])
    for k, (n, v) in enumerate(sets):
        assert (lo.get(n.lower()) == str(v)) == (k < cut), (k, cut, n)
    dropped = [d for d in table.diagnostics if "stops reading at the TRANSFORM" in d.message]
    assert bool(dropped) == (cut < len(sets))
    if dropped:
        assert dropped[0].line == 6 + cut  # the first statement line after TRANSFORM


# ---------------------------------------------------------------------------------- refused forms


@pytest.mark.parametrize("text, what", [
    ("SET A 1\ninclude : /etc/passwd\n", "include"),
    ("SET A 1\nFROB A 2\n", "FROB"),
    ("SET A 1\nCOPY A\n", "2 arguments"),
])
def test_forms_htcondor_refuses_are_errors_naming_the_line(text, what):
    """xform_utils.cpp ``ParseRulesCallback``: an unknown keyword, ``include`` and a two-argument
    keyword with one argument are errors; RouteDeck reports them at load time with the line."""
    with pytest.raises(XformError) as err:
        parse_transform(text)
    assert "line 2" in str(err.value) and what.lower() in str(err.value).lower()
