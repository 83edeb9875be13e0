"""The ClassAd layer: the only module that imports ``classad2`` (HTCondor's ClassAd library).

Design decisions and invariants:

- Parsing and evaluation are always done by classad2; nothing here interprets ClassAd syntax,
  except one lexical rewrite: calls to ``time()`` become a reference to ``CurrentTime`` in the
  *evaluation* copy of an expression, and ``CurrentTime`` is bound to the engine's ``now`` in the
  scope ad while evaluating. classad2's ``time()`` reads the wall clock and, once ``htcondor2`` is
  imported, so does an unbound ``CurrentTime``; replay and simulation must be deterministic, so
  neither may leak through (product.md §3).
- Importing ``htcondor2`` registers HTCondor's extra functions (``mergeEnvironment``,
  ``userHome``, ``stringListMember``, …); without it they evaluate to ``error`` (product.md §3).
  Both are imported together on the first use of the library (:func:`_lib`: every parse and
  evaluation goes through it, so htcondor2 is always there before classad2 parses anything),
  not when this module is: a replay moment whose values are plain literals uses neither, and
  they are about a sixth of a new process's start-up (issue 27). ``ClassAd``, ``ExprTree``,
  ``Value``, ``UNDEFINED`` and ``ERROR`` are this module's attributes as before, looked up then
  (:func:`__getattr__`); a value is tested for a ``classad2.Value`` without importing the library
  (:func:`_is_value`: none exists before it is imported, by this module or by anyone).
- Values are kept as *text* (old-ClassAd unparse syntax, exactly as job_queue.log stores them,
  htcondor.md §3.1 "Values") until something needs them evaluated. :func:`format_value` produces
  that text; :func:`make_ad` builds an evaluation ad from texts.
- ``classad2.Value.Error`` and ``.Undefined`` are int-like (1 and 2): results are normalised to
  the sentinels :data:`UNDEFINED` / :data:`ERROR` and tested with :func:`is_true` so that an error
  is never mistaken for the number 1.
- Hostile text must not crash the process: classad2 refuses brackets nested more than ~165 deep
  itself, but builds a left-deep tree for a flat chain (``1+1+…``) and then crashes (SIGSEGV)
  unparsing or walking one about 40,000 deep. Text that can hold more than
  :data:`MAX_OPERATORS` operators in one expression is refused before classad2 sees it (a
  RouteDeck limit; real values have a few hundred at most). A value that does not parse stays
  text wherever values are kept, and evaluates to ``error`` (:func:`make_ad`).
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from engine.classad_text import (  # noqa: F401  (part of this module's API, kept where callers import it)
    _split_strings,
    rewrite_time_calls,
    old_to_new_syntax,
    MAX_OPERATORS,
    longest_chain,
    _max_nesting,
    _clip,
    _skip_separators,
    _matching_bracket,
    rewrite_scope_prefix,
    string_chunks,
)

_classad2: Any = None  # the classad2 module, once imported (_lib)


def _lib() -> Any:
    """classad2, imported on the first call with htcondor2 (module docstring)."""
    global _classad2
    if _classad2 is None:
        import classad2  # noqa: PLC0415 - on first use (module docstring)
        import htcondor2  # noqa: F401, PLC0415 - registers HTCondor's ClassAd functions into classad2

        _classad2 = classad2
    return _classad2


def load_library() -> None:
    """Import the library now rather than on its first use: the dashboard's launchers call this
    before the screen takes the terminal, so that htcondor2's warning on stderr (CONDOR_CONFIG naming
    no file) is written before the screen and not over it, and the load is not paid on the UI
    thread. A headless run keeps it lazy (module docstring)."""
    _lib()


# this module's names for parts of classad2, looked up on first use (module docstring)
_LIBRARY_NAMES = {
    "ClassAd": lambda lib: lib.ClassAd,
    "ExprTree": lambda lib: lib.ExprTree,
    "Value": lambda lib: lib.Value,
    "UNDEFINED": lambda lib: lib.Value.Undefined,
    "ERROR": lambda lib: lib.Value.Error,
}


def __getattr__(name: str) -> Any:
    """Called only until the name is bound: bound here on first use (the library's own constants,
    the same for every caller), so later look-ups are plain attribute reads."""
    if name not in _LIBRARY_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = _LIBRARY_NAMES[name](_lib())
    return value


def _is_value(value: Any) -> bool:
    """``value`` is a ``classad2.Value`` (undefined or error). Its class is looked up once anyone
    imported classad2 (not only :func:`_lib`: a caller may import it first and hand its values
    here); before that no value of it can exist."""
    lib = sys.modules.get("classad2")
    return lib is not None and isinstance(value, lib.Value)


# How deep one evaluation may nest: each operator, pair of brackets and attribute look-up is a
# level, and one level more makes the evaluation call fail (EvalState::MAX_CLASSAD_RECURSION,
# src/classad/classad/exprTree.h; the RecursionGuard of src/classad/operators.cpp). A chain
# ``a || b || c …`` parses left-deep, one level per ``||`` (ClassAdParser::parseLogicalORExpression,
# src/classad/source.cpp): from about this many terms it cannot be evaluated at all.
MAX_CLASSAD_RECURSION = 400


class ClassAdError(ValueError):
    """A ClassAd or expression that does not parse. ``line`` is 1-based when known."""

    def __init__(self, message: str, text: str = "", line: int | None = None) -> None:
        super().__init__(message)
        self.text = text
        self.line = line


# --------------------------------------------------------------------------------------------
# expressions


@dataclass(frozen=True, eq=False)
class Expr:
    """A parsed expression. ``text`` is what the user wrote; ``tree`` is the evaluation copy.

    ``stored``: when the evaluation copy had ``time()`` rewritten, the (new-syntax) text classad2
    parses for everything that is *written* (:func:`unparse_old`): HTCondor stores ``time()``, so
    the engine's ``CurrentTime`` must never reach a routed ad, a trace or a queue value."""

    text: str
    tree: Any  # classad2.ExprTree
    uses_time: bool
    stored: str | None = None

    @functools.cached_property
    def refs(self) -> frozenset[str] | None:
        """The attribute names the expression references, lower-cased (asked for by few callers,
        so worked out on the first ask, not at every parse); None when they are unknown
        (:func:`_refs_of`): the expression may read any attribute."""
        return _refs_of(self.tree)

    @functools.cached_property
    def names(self) -> frozenset[str] | None:
        """Every part of every attribute reference, lower-cased (``a.b`` gives ``a`` and ``b``):
        a superset of the attributes of MY the expression can read by name; None when they are
        unknown (:func:`_refs_of`): the expression may read any attribute."""
        return _refs_of(self.tree, parts=True)

    def __str__(self) -> str:
        return self.text

    def eval(self, my: Any = None, target: Any = None, now: float | None = None) -> Any:
        return evaluate(self, my, target, now)


def parse_problem(text: str) -> str:
    """Why ``text`` does not parse as one expression, in a few words ("" when it parses)."""
    try:
        parse_expr(text)
    except ClassAdError as exc:
        return str(exc)
    return ""


@functools.lru_cache(maxsize=65536)
def parse_expr(text: str, new: bool = False) -> Expr:
    """Parse one expression written in old-ClassAd syntax (job_queue.log values, config and route
    text, hook output). The whole text must be one expression: trailing garbage is an error (the
    old parser of classad2 would silently ignore it, so the strict new parser is used after
    :func:`old_to_new_syntax`). As in the old parser, a backslash in a string is literal and two
    adjacent string literals are an error. ``new``: new-ClassAd syntax instead (backslash
    escapes, adjacent strings joined), as ``EVALSET`` parses (xform_utils.cpp)."""
    src = text.strip()
    if not src:
        raise ClassAdError("empty expression", text)
    if not new and '"' in src:
        chunks = _split_strings(src)
        for (s1, c1), (s2, c2), (s3, c3) in zip(chunks, chunks[1:], chunks[2:]):
            if s1 and s3 and not s2 and not c2.strip():
                raise ClassAdError(f"two adjacent string literals: {_clip(src, 200)}", text)
        for (s1, c1), (s2, c2) in zip(chunks, chunks[1:]):
            if s1 and s2:
                raise ClassAdError(f"two adjacent string literals: {_clip(src, 200)}", text)
    chain = longest_chain(src)
    if chain > MAX_OPERATORS:
        raise ClassAdError(f"{chain} operators and brackets in one expression, more than RouteDeck's limit of "
                           f"{MAX_OPERATORS}: {_clip(src, 40)}", text)
    plain = src if new else old_to_new_syntax(src)
    rewritten = rewrite_time_calls(plain)
    lib = _lib()  # outside the try: a library that cannot be imported is its ImportError, not a parse error
    try:
        tree = lib.ExprTree(rewritten)
    except Exception as exc:  # classad2 raises its own exception type
        depth = _max_nesting(src) if len(src) > 300 else 0
        if depth > 150:
            raise ClassAdError(f"brackets nested {depth} deep, more than the ClassAd parser takes: "
                               f"{_clip(src, 40)}", text) from exc
        raise ClassAdError(f"cannot parse expression: {_clip(src, 200)}", text) from exc
    # a reference to CurrentTime is spelled in the text: the references are listed only then
    # (unknown references: it may)
    uses_time = "CurrentTime" in rewritten or ("currenttime" in src.lower()
                                               and ((refs := _refs_of(tree)) is None or "currenttime" in refs))
    return Expr(src, tree, uses_time, plain if rewritten != plain else None)


_EMPTY_AD = None


# a reference classad2 lists as one plain chain of attribute names (``A``, ``MY.A``, ``A.B``; a
# name it quotes, as the scope in ``'parent'.A``, is one too)
_REF_CHAIN = re.compile(r"'?[A-Za-z_][A-Za-z0-9_]*'?(?:\.'?[A-Za-z_][A-Za-z0-9_]*'?)*")


def _refs_of(tree: Any, parts: bool = False) -> frozenset[str] | None:
    """The referenced names (``Expr.refs``: the last part of a dotted one; ``parts``: every part,
    ``Expr.names``), or None when classad2 cannot tell them: its ``externalRefs`` raises when an
    attribute selection's base is a defined non-ad value in the empty ad (``CurrentTime.x``,
    ``{1}.x``), and it lists a selection on anything but a name as one reference holding the
    whole text (``ifThenElse(A, 1, 0).x``: the names inside are not listed). A caller then
    takes it that the expression may read any attribute."""
    global _EMPTY_AD
    if _EMPTY_AD is None:
        _EMPTY_AD = _lib().ClassAd()
    try:
        names = set(_EMPTY_AD.externalRefs(tree)) | set(_EMPTY_AD.internalRefs(tree))
    except Exception:  # classad2 raises its own exception type
        return None
    out = set()
    for name in names:
        if not name:
            continue
        if _REF_CHAIN.fullmatch(name) is None:
            return None
        if parts:
            out.update(p.strip("'").lower() for p in name.split("."))
        else:
            out.add((name.split(".")[-1] if "." in name else name).strip("'").lower())
    return frozenset(out)


# A lone integer or a string literal of printable ASCII without a backslash: what parse_expr
# accepts without a doubt (no adjacent strings, no operators, the same text in both syntaxes), so
# a route's ``SET RoutedSite = "site7"`` is not parsed only to be found valid
_PLAIN_LITERAL = re.compile(r'"[ !#-\[\]-~]*"|0|[1-9][0-9]{0,17}')


def is_plain_literal(text: str) -> bool:
    """A string without escapes or a decimal integer of up to 18 digits, as it stands (the texts
    :func:`is_valid_expr` accepts without a parse): it reads no attribute."""
    return _PLAIN_LITERAL.fullmatch(text) is not None


def plain_string(text: str) -> str | None:
    """The value of a string literal without escapes as it stands (``"…"`` holding no ``"`` and no
    backslash): its text between the quotes, what classad2 evaluates it to, read without the
    library; None for any other text."""
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"' and '"' not in text[1:-1] and "\\" not in text:
        return text[1:-1]
    return None


def is_valid_expr(text: str) -> bool:
    if is_plain_literal(text.strip()):
        return True
    try:
        parse_expr(text)
        return True
    except ClassAdError:
        return False


def _normalise(value: Any) -> Any:
    if _is_value(value):
        return type(value).Error if value == type(value).Error else type(value).Undefined
    return value


def evaluate(expr: Expr | str, my: Any = None, target: Any = None, now: float | None = None) -> Any:
    """Evaluate ``expr`` with ``my`` as MY and ``target`` as TARGET.

    When the expression (or any attribute it reaches) uses ``time()``/``CurrentTime`` and ``now``
    is given, ``CurrentTime`` is bound to ``now`` in MY for the duration of the call.
    Returns a Python value (bool, int, float, str, list, ClassAd) or :data:`UNDEFINED`/:data:`ERROR`.
    """
    if isinstance(expr, str):
        expr = parse_expr(expr)
    lib = _lib()  # outside the try (parse_expr)
    try:
        return _evaluate_or_raise(expr, my, target, now)
    except Exception:  # the evaluation call failed (see evaluation_fails): error, as HTCondor
        return lib.Value.Error


def evaluation_fails(expr: Expr | str, my: Any = None, target: Any = None, now: float | None = None) -> bool:
    """True when the evaluation *call* fails, which :func:`evaluate` reports as ``error`` like an
    error value: the ClassAd library stops an evaluation nested deeper than
    :data:`MAX_CLASSAD_RECURSION` levels (or past its step budget) and its caller gets false, not
    a value. HTCondor counts such a constraint as not matching."""
    if isinstance(expr, str):
        expr = parse_expr(expr)
    try:
        _evaluate_or_raise(expr, my, target, now)
    except Exception:  # classad2 raises its own exception type for a failed call
        return True
    return False


def _evaluate_or_raise(expr: Expr, my: Any, target: Any, now: float | None) -> Any:
    if my is None:
        my = _lib().ClassAd()
    if now is None:
        return _normalise(expr.tree.eval(my, target))
    saved = my.get("CurrentTime") if "CurrentTime" in my else None
    my["CurrentTime"] = int(now)
    try:
        return _normalise(expr.tree.eval(my, target))
    finally:
        if saved is None:
            del my["CurrentTime"]
        else:
            my["CurrentTime"] = saved


def is_true(value: Any) -> bool:
    """HTCondor's "true" test: boolean true or a non-zero number; undefined/error are false."""
    if _is_value(value):  # undefined or error
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    return False


def is_undefined(value: Any) -> bool:
    return _is_value(value) and value == type(value).Undefined


def is_error(value: Any) -> bool:
    return _is_value(value) and value == type(value).Error


def as_int(value: Any) -> int | None:
    """Integer value as HTCondor's ``EvaluateAttrInt`` sees it (reals truncate, bools 0/1)."""
    if _is_value(value):
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return None


# --------------------------------------------------------------------------------------------
# old-syntax text (job_queue.log values, condor_q -l, hook stdin/stdout)


def quote(s: str) -> str:
    """A string literal in old-ClassAd unparse form: ``"`` escaped, backslashes left alone."""
    return '"' + s.replace('"', '\\"') + '"'


def format_value(value: Any) -> str:
    """Old-syntax text of a Python value or expression, exactly as job_queue.log writes it.

    Reals use ``%.16G`` with ``.0`` added when the result looks like an integer
    (htcondor.md §3.1 "Values").
    """
    if isinstance(value, Expr):
        return value.text
    if _is_value(value):
        return "error" if value == type(value).Error else "undefined"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))  # an IntEnum code (engine.contract.codes) as its number
    if isinstance(value, float):
        return format_real(value)
    if isinstance(value, str):
        return quote(value)
    # lists, nested ads, ExprTrees: let classad2 unparse them in old syntax
    tmp = _lib().ClassAd()
    tmp["x"] = value
    return tmp.printOld().split("=", 1)[1].strip()


def format_real(x: float) -> str:
    if x != x:
        return "real(\"NaN\")"
    if x in (float("inf"), float("-inf")):
        return 'real("INF")' if x > 0 else 'real("-INF")'
    s = "%.16G" % x
    if _SIGN_DIGITS(s):  # looks like an integer: ".0" added
        s += ".0"
    return s


_SIGN_DIGITS = re.compile(r"[-0-9]+").fullmatch


def value_text_of(ad: Any, name: str) -> str | None:
    """Old-syntax text of one attribute of a classad2 ad (None when absent)."""
    if name not in ad:
        return None
    expr = ad.lookup(name)
    tmp = _lib().ClassAd()
    tmp[name] = expr
    return tmp.printOld().split("=", 1)[1].strip()


def ad_to_texts(ad: Any) -> dict[str, str]:
    """All attributes of a classad2 ad as {name: old-syntax text}, in the ad's order."""
    out: dict[str, str] = {}
    for line in ad.printOld().splitlines():
        if not line.strip():
            continue
        name, _, text = line.partition("=")
        out[name.strip()] = text.strip()
    return out


def format_ad(attrs: Mapping[str, str], sort: bool = True) -> str:
    """``Name = value`` lines (sPrintAd style), values given as old-syntax text."""
    items = sorted(attrs.items(), key=lambda kv: kv[0].lower()) if sort else attrs.items()
    return "".join(f"{k} = {v}\n" for k, v in items)


# --------------------------------------------------------------------------------------------
# building evaluation ads from text


def make_ad(attrs: Mapping[str, str], strict: bool = False) -> Any:
    """A classad2 ad built from {name: old-syntax value text}.

    ``time()`` in values is rewritten for the engine's clock. An unparsable value becomes
    ``error`` (or raises :class:`ClassAdError` with ``strict``).

    The trees go to classad2 in one call (``ClassAd(dict)``: the same copy and ``Insert`` per
    attribute, in the dict's order, as ``ad[name] = tree`` one by one, without a Python call
    per attribute; a routed copy has ~40).
    """
    lib = _lib()
    trees: dict[str, Any] = {}
    for name, text in attrs.items():
        try:
            trees[name] = _tree(text)
        except ClassAdError:
            if strict:
                raise
            trees[name] = lib.Value.Error
    return lib.ClassAd(trees)


def _tree(text: str) -> Any:
    """What an ad holds for a value text: a plain decimal integer of 4 to 18 digits (most unique
    texts of a job ad: times, ids) as the Python int, which classad2 stores as the integer literal
    its parse would give, without a parse (a parse costs some 20 times classad2's conversion of an
    int; a shorter one is most likely in parse_expr's cache, which is cheaper still); anything
    else parsed (:func:`parse_expr`, which raises ClassAdError)."""
    if 3 < len(text) < 19 and text.isdigit() and text.isascii() and text[0] != "0":
        return int(text)
    return parse_expr(text).tree


class AdMirror:
    """The evaluation ad of a {name: text} dict that changes a few attributes at a time.

    :meth:`sync` builds it once (:func:`make_ad`) and afterwards sets or deletes only the
    attributes whose text changed since its last call, so the ad equals ``make_ad(attrs)`` of
    the dict as it is now (``test_ad_mirror_equals_a_rebuilt_ad``). A dict with two spellings of
    one name is rebuilt whole (which one wins depends on the dict's order). ``texts`` is replaced
    at each sync, never edited: a holder may keep it as the texts the ad was made of."""

    __slots__ = ("texts", "ad")

    def __init__(self) -> None:
        self.texts: dict[str, str] | None = None  # the texts ``ad`` was made of
        self.ad: Any = None

    def sync(self, attrs: Mapping[str, str]) -> Any:
        old, ad = self.texts, self.ad
        if old is None or (old.keys() != attrs.keys() and len({k.lower() for k in attrs}) != len(attrs)):
            self.ad = make_ad(attrs)
            if len({k.lower() for k in attrs}) != len(attrs):
                self.texts = None  # built whole again next time
                return self.ad
        else:
            for name in old.keys() - attrs.keys():
                del ad[name]
            get = old.get
            for name, text in attrs.items():
                if get(name) != text:
                    try:
                        ad[name] = _tree(text)
                    except ClassAdError:
                        ad[name] = _lib().Value.Error
        self.texts = dict(attrs)
        return self.ad


def new_syntax_ad(text: str) -> Any:
    """The classad2 ad of one new-syntax ``[ … ]`` text (engine.classad_ads reads files of them);
    raises what classad2 raises when it does not parse. The caller has checked
    :data:`MAX_OPERATORS` (module docstring)."""
    return _lib().ClassAd(text)


def flatten(ad: Any, expr: Expr | str) -> str:
    """Partially evaluate ``expr`` against ``ad`` (classad2 ``flatten``), as text."""
    if isinstance(expr, str):
        expr = parse_expr(expr)
    try:
        return str(ad.flatten(expr.tree))
    except Exception:
        return expr.text


def unparse_old(expr: Expr | str) -> str:
    """Old-syntax unparse of an expression (``is`` → ``=?=``, ``True`` → ``true``), as HTCondor
    writes it: ``time()`` stays ``time()`` (the ``CurrentTime`` rewrite is for evaluation only)."""
    tmp = _lib().ClassAd()
    # an Expr keeps the tree its own parser made (re-parsing its text with the new parser would
    # read an old-syntax backslash as an escape); ``stored`` is that same text before the rewrite
    if isinstance(expr, Expr):
        tmp["x"] = expr.tree if expr.stored is None else _lib().ExprTree(expr.stored)
    else:
        tmp["x"] = _lib().ExprTree(expr)
    # "x = " then the unparse as is: a unary operator keeps its leading space (sink.cpp " !")
    text = tmp.printOld()
    return text[text.index("=") + 2:].rstrip("\n")


def iter_attr_names(ad: Any) -> Iterable[str]:
    return list(ad.keys())


def copy_ad(ad: Any) -> Any:
    """An independent copy of a classad2 ad (same attribute names and expressions)."""
    return _lib().ClassAd({k: ad.lookup(k) for k in ad.keys()})


def unparse_tree_old(tree: Any) -> str:
    """Old-syntax text of a classad2 tree or Python value (``is`` → ``=?=``, ``True`` → ``true``)."""
    if not isinstance(tree, _lib().ExprTree):
        return format_value(_normalise(tree))
    tmp = _lib().ClassAd()
    tmp["x"] = tree
    return tmp.printOld().split("=", 1)[1].strip()


def flatten_tree(ad: Any, tree: Any) -> Any:
    """classad2 ``flatten`` of a raw tree in ``ad``: a tree, or a Python value when it folds."""
    try:
        return ad.flatten(tree)
    except Exception:
        return tree


def internal_refs(ad: Any, tree: Any) -> list[str]:
    """Names in ``tree`` that resolve to attributes of ``ad`` (HTCondor's GetExprReferences)."""
    try:
        return [str(x) for x in ad.internalRefs(tree) if x]
    except Exception:
        return []




def literal_string(tree: Any) -> str | None:
    """The value of ``tree`` when it is a string literal (HTCondor's ExprTreeIsLiteralString)."""
    text = unparse_tree_old(tree)
    if not text.startswith('"'):
        return None
    is_tree = isinstance(tree, _lib().ExprTree)  # outside the try (parse_expr)
    try:
        value = tree.eval() if is_tree else tree
    except Exception:
        return None
    return value if isinstance(value, str) and quote(value) == text else None
