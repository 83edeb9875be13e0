"""Macro expansion, macro functions, line joining and ``if`` conditions
(engine/lang/macros.py, macros_funcs.py, macros_cond.py).

Source of the expected behaviour: HTCondor's src/condor_utils/config.cpp
(next_config_macro, evaluate_macro_func, expand_self_macro, getline_implementation,
Evaluate_config_if) and htcondor.md §1.3 (macro functions in transforms).
"""

from __future__ import annotations

import pytest

from engine.lang import macros as mx
from engine.lang import macro_cond as mc


def ex(text: str, **macros: str) -> str:
    table = {k.lower(): v for k, v in macros.items()}
    return mx.expand(text, lambda n: table.get(n.lower()), env={"HOME": "/h"})


def test_plain_default_and_nested():
    # Source: config.cpp next_config_macro / expand_macro (author's reading of HTCondor's config.cpp, not in htcondor.md)
    assert ex("$(A)-$(B:x)-$(C:$(A))", A="a") == "a-x-a"
    assert ex("$(A)", A="$(B) $(B)", B="b") == "b b"


def test_not_macros_stay_literal():
    # body characters are restricted: the CE's SYSTEM_PERIODIC_HOLD has "$(JobStatus != 3)"
    # (tests/data/config/ce-head/01-ce-router-defaults.conf), which HTCondor leaves alone.
    assert ex("$(JobStatus != 3) && $$(TotalMemory:0) $x $(", JobStatus="2") == "$(JobStatus != 3) && $$(TotalMemory:0) $x $("


def test_cycle_is_an_error_naming_the_macro():
    # Source: config.cpp expand_macro cycle check (author's reading of HTCondor's config.cpp, not in htcondor.md)
    with pytest.raises(mx.MacroError) as info:
        ex("$(A)", A="x$(B)", B="$(A)")
    assert info.value.name in ("A", "B") and "refers to itself" in info.value.message


def test_int_real_string_eval():
    # Source: htcondor.md §1.3 ($INT(), $STRING() work in transforms); exact forms: config.cpp evaluate_macro_func (author's reading of HTCondor's config.cpp, not in htcondor.md)
    assert ex("$INT(N)", N="2*5") == "10"
    assert ex("$INT(N,%03d)", N="7") == "007"
    assert ex("$REAL(R)", R="1.5") == "1.5"
    assert ex("$REAL(R,%.2f)", R="2") == "2.00"
    assert ex("$STRING(S)", S='"quoted"') == "quoted"
    assert ex("$STRING(S)", S="not a string") == "not a string"
    assert ex("$EVAL(E)", E="1 + 2") == "3"
    with pytest.raises(mx.MacroError):
        ex("$INT(N)", N="abc")


def test_substr_choice_env():
    # Source: config.cpp evaluate_macro_func $SUBSTR/$CHOICE/$ENV (author's reading of HTCondor's config.cpp, not in htcondor.md)
    assert ex("$SUBSTR(A,2)", A="abcdef") == "cdef"
    assert ex("$SUBSTR(A,0,-2)", A="abcdef") == "abcd"
    assert ex("$SUBSTR(A,-2)", A="abcdef") == "ef"
    assert ex("$CHOICE(1,a,b,c)") == "b"
    assert ex("$CHOICE(I,L)", I="2", L="x, y, z") == "z"
    assert ex("$ENV(HOME) $ENV(NOPE) $ENV(NOPE:dflt)") == "/h UNDEFINED dflt"


def test_filename_functions():
    # Source: config.cpp evaluate_macro_func $F[pdnxq]() (author's reading of HTCondor's config.cpp, not in htcondor.md)
    f = "/a/b/file.tar.gz"
    assert ex("$Fn(F)", F=f) == "file.tar"
    assert ex("$Fx(F)", F=f) == ".gz"
    assert ex("$Fnx(F)", F=f) == "file.tar.gz"
    assert ex("$Fp(F)", F=f) == "/a/b/"
    assert ex("$Fpb(F)", F=f) == "/a/b"
    assert ex("$Fqn(F)", F=f) == '"file.tar"'
    assert ex("$BASENAME(F) $DIRNAME(F)", F=f) == "file.tar.gz /a/b/"
    assert ex("$F(Q)", Q='"quoted"') == "quoted"


def test_unknown_function_left_with_warning():
    # Source: config.cpp next_config_macro (author's reading of HTCondor's config.cpp, not in htcondor.md)
    warnings: list[str] = []
    assert mx.expand("$NOSUCH(x) ok", lambda n: None, warnings=warnings) == "$NOSUCH(x) ok"
    assert warnings == ["unknown macro function $NOSUCH() left as is"]


def test_ad_lookup_for_my_names():
    # Source: htcondor.md §1.3 ($(MY.attr) expands the attribute's unevaluated text; strings without quotes)
    out = mx.expand("$(MY.Owner)/$(MY.Missing:none)", lambda n: None, ad_lookup={"Owner": "alice"}.get)
    assert out == "alice/none"


def test_expand_self_only_touches_self():
    # Source: htcondor.md §6 Config-file facts (only self references are expanded at parse time)
    assert mx.expand_self("$(X) $(Y) $(x:d)", "X", "old") == "old $(Y) old"
    assert mx.expand_self("$(X:dflt) more", "X", None) == "dflt more"


def test_logical_lines():
    # Source: config.cpp getline_implementation (author's reading of HTCondor's config.cpp, not in htcondor.md); htcondor.md §6 Config-file facts
    src = "a = 1 \\\n  2\n# c \\\nb = 3\n  \nc = x \\\n# out \\\n y\n"
    assert mc.logical_lines(src) == [(1, "a = 1 2"), (3, "# c \\"), (4, "b = 3"), (5, ""), (6, "c = x y")]


@pytest.mark.parametrize("expr, expected", [
    ("true", True), ("FALSE", False), ("1", True), ("0.0", False), ("yes", True), ("f", False),
    ("defined A", True), ("defined NOPE", False), ("! defined NOPE", True), ("defined 0", True),
    ("version >= 8.1.2", True), ("version < 24.0.0", False), ("version == 25.14", True),
    ("$(A)", True), ("$(NOPE)", False),
])
def test_conditions(expr, expected):
    # Source: htcondor.md §1.3 (if/elif in transforms); config.cpp Evaluate_config_if (author's reading of HTCondor's config.cpp, not in htcondor.md)
    table = {"a": "1"}

    def get(n):
        return table.get(n.lower())

    value = mc.test_condition(expr, get, lambda t: mx.expand(t, get))
    assert value is expected


def test_complex_condition_quirk():
    # Evaluate_config_if returns the boolean as the *validity*: a false complex condition is an
    # "invalid if condition" error; without an ad complex conditions are unsupported.
    # Source: config.cpp Evaluate_config_if (author's reading of HTCondor's config.cpp, not in htcondor.md)
    with pytest.raises(mc.ConditionError, match="not supported"):
        mc.test_condition("A == B", {}.get, lambda t: t)
    assert mc.test_condition("1 == 1", {}.get, lambda t: t, eval_complex=lambda e: True) is True
    with pytest.raises(mc.ConditionError, match="evaluated to false"):
        mc.test_condition("1 == 2", {}.get, lambda t: t, eval_complex=lambda e: False)
    with pytest.raises(mc.ConditionError, match="not a conditional"):
        mc.test_condition("someword", {}.get, lambda t: t)
