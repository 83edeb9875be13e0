"""Applying a parsed transform to one job ad (``TransformClassAd`` / ``ParseRulesCallback``).

Design decisions and invariants:

- The ad is a ``dict`` {attribute name: old-syntax text}, edited in place, in statement order.
  Attribute names are case-insensitive; an edit of an existing attribute keeps the name as it
  was (``ClassAd::Insert`` replaces the value only); RENAME/COPY use the new name as written.
- ``$()`` in statement text is expanded when the statement runs. Lookup order is HTCondor's
  ``lookup_macro``: the shared :class:`MacroSet`, the transform defaults (``IsLinux``, ``Row``…),
  then ``MY.<attr>`` from the ad (strings without quotes, other values as unevaluated text), then
  the config (``also_in_config``; the raw value, expanded with this same lookup).
- SET/DEFAULT store the expression's old-syntax unparse (what the schedd would write);
  an expression that does not parse is a warning and the transform goes on. EVALSET stores the
  literal result; EVALMACRO stores a string without quotes or the unparsed value.
- DEFAULT tests presence only: an attribute whose value is ``undefined`` is kept (htcondor.md §1.3).
- A COPY/RENAME of a missing attribute does nothing; an invalid new name is a warning.
  Regex forms match attribute names case-insensitively anywhere (``re.search``), collect all
  matches first, then apply them in name order (HTCondor's ``std::map``); ``\\0``..``\\9`` are
  replaced only for groups below PCRE's match count.
- Evaluation uses the engine clock (``now``), never the wall clock.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any, Callable, Iterator

from engine import classad as ca
from engine.lang import macros as mx
from engine.lang import macro_cond as mc
from engine.lang.xform_parse import Statement, XformError

if TYPE_CHECKING:
    from engine.lang.config import Config

# XFormMacroDefaults in xform_utils.cpp (ARCH/OPSYS* come from the config when it has them):
# condor_transform_ads and the schedd's iterating transforms
XFORM_DEFAULTS = {"islinux": "1", "iswindows": "0", "itemindex": "0", "iterating": "0", "row": "0",
                  "step": "0", "xformid": "0", "rulesfile": ""}
# XFormBasicMacroDefaults: the Job Router's XFormHash(Flavor::Basic) (JobRouter.cpp
# ApplyRoutingJobEdits); $(Row), $(Step), $(ItemIndex), $(XFormId) are undefined there
XFORM_BASIC_DEFAULTS = {"isclusterad": "0", "islinux": "1", "iswindows": "0", "iterating": "0",
                        "latematerialization": "0"}

_ATTR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"\Z')


class MacroSet(MutableMapping[str, str]):
    """Case-insensitive macro variables shared by the pre-route, route and post-route transforms
    of one job; iteration yields names in the case they were first set."""

    def __init__(self, initial: dict[str, str] | None = None) -> None:
        self._data: dict[str, tuple[str, str]] = {}
        for k, v in (initial or {}).items():
            self[k] = v

    def __getitem__(self, key: str) -> str:
        return self._data[key.lower()][1]

    def __setitem__(self, key: str, value: str) -> None:
        old = self._data.get(key.lower())
        self._data[key.lower()] = (old[0] if old else key, value)

    def get(self, key: str, default: Any = None) -> Any:  # one dict look-up, not a KeyError per missing name
        hit = self._data.get(key.lower())
        return default if hit is None else hit[1]

    def __delitem__(self, key: str) -> None:
        del self._data[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._data.values())

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._data

    def copy(self) -> "MacroSet":
        return MacroSet(dict(self.items()))

    def __repr__(self) -> str:
        return f"MacroSet({dict(self.items())!r})"


def attr_value_for_macro(text: str) -> str:
    """``$(MY.attr)``: a string literal without quotes, anything else as written."""
    if _STRING_LITERAL.match(text):
        try:
            value = ca.evaluate(ca.parse_expr(text))
            if isinstance(value, str):
                return value
        except ca.ClassAdError:
            pass
    return text


class Run:
    """The state of one application: ad, macros, config, clock, warnings."""

    def __init__(self, ad: dict[str, str] | None, macros: MacroSet, config: "Config | None", now: float | None,
                 defaults: dict[str, str] = XFORM_DEFAULTS) -> None:
        self.ad = ad
        self.defaults = defaults
        self.macros = macros
        self.config = config
        self.now = now
        self.warnings: list[str] = []
        # attribute names HTCondor's transform inserts but the schedd refuses (qmgmt.cpp IsValidAttrName)
        self.rejected: list[str] = []
        self._index = {k.lower(): k for k in ad} if ad is not None else {}
        self._cad: Any = None
        self.lines: dict[str, int] = {}  # macro (lower case) -> transform line of its last assignment

    def where(self, name: str) -> str | None:
        """Where macro ``name`` is defined: ``line N`` of the transform, else the config's ``file:line``."""
        line = self.lines.get(name.lower())
        if line is not None:
            return f"line {line}"
        if name.lower() in self.macros or name.lower() in self.defaults:
            return None
        return self.config.where(name) if self.config is not None else None

    # ------------------------------------------------------------------ lookups / expansion

    def lookup(self, name: str) -> str | None:
        low = name.lower()
        if low in self.macros:
            return self.macros[low]
        if low in self.defaults:
            return self.defaults[low]
        if self.ad is not None and low.startswith("my."):
            key = self._index.get(low[3:])
            if key is not None:
                return attr_value_for_macro(self.ad[key])
        if self.config is not None:
            return self.config.get_raw(name)
        return None

    def expand(self, text: str, st: Statement) -> str:
        """``$()`` expansion of statement text. A macro function that fails is logged and gives
        its substitute (``might_EXCEPT`` in a transform, config.cpp); only a cycle or a budget
        fails the transform."""
        errors: list[str] = []
        try:
            out = mx.expand(text, self.lookup, env=self.config.env if self.config else None,
                            evaluate=self.evaluate, warnings=self.warnings, errors=errors)
        except mx.MacroError as exc:
            raise XformError(st.line, st.column, mx.located(exc, self.where)) from None
        self.warnings.extend(f"line {st.line}: ERROR {e} (HTCondor substitutes it and goes on)" for e in errors)
        return out

    def classad(self) -> Any:
        if self._cad is None:
            self._cad = ca.make_ad(self.ad or {})
        return self._cad

    def evaluate(self, expr_text: str) -> Any:
        return ca.evaluate(ca.parse_expr(expr_text), my=self.classad(), now=self.now)

    # ------------------------------------------------------------------ ad edits

    def key(self, attr: str) -> str | None:
        return self._index.get(attr.lower())

    def put(self, attr: str, text: str) -> None:
        assert self.ad is not None
        key = self._index.get(attr.lower())
        if key is None:
            self._index[attr.lower()] = key = attr
        self.ad[key] = text
        self._cad = None

    def remove(self, attr: str) -> str | None:
        assert self.ad is not None
        key = self._index.pop(attr.lower(), None)
        if key is None:
            return None
        self._cad = None
        return self.ad.pop(key)

    # ------------------------------------------------------------------ statements

    # Tracing hook (engine/router/trace.py): called after each statement with (statement, the ad
    # before it, this run); ``ifs.enabled`` then tells whether it was in a branch taken.
    observer: Callable[[Statement, dict[str, str], "Run"], None] | None = None

    def _observed(self, statements: list[Statement]) -> Iterator[Statement]:
        for st in statements:
            before = dict(self.ad or {})
            yield st
            self.observer(st, before, self)  # type: ignore[misc]

    def run(self, statements: list[Statement], *, validate_only: bool = False) -> None:
        ifs = self.ifs = mc.IfStack()
        for st in (self._observed(statements) if self.observer and not validate_only else statements):
            if st.kind == "if":
                try:
                    ifs.handle(st.text, lambda expr, s=st: self.test(expr, s))
                except mc.ConditionError as exc:
                    if validate_only:
                        continue
                    raise XformError(st.line, 0, f"{st.rhs} is not a valid {st.keyword} condition because {exc}") from None
                continue
            if not ifs.enabled:
                continue
            if st.kind == "assign":
                self.assign(st)
            elif validate_only:
                continue
            elif st.kind == "invalid":
                raise XformError(st.line, st.column, st.rhs)
            elif st.kind == "error":
                raise XformError(st.line, 0, f"Error : {self.expand(st.rhs, st)}")
            elif st.kind == "warning":
                self.warnings.append(f"line {st.line}: Warning : {self.expand(st.rhs, st)}")
            elif st.kind == "action" and not st.invalid:
                self.action(st)

    def test(self, expr: str, st: Statement) -> bool:
        def complex_value(text: str) -> Any:
            if self.ad is None:
                return None
            try:
                return self.evaluate(text)
            except ca.ClassAdError:
                return None

        return mc.test_condition(expr, self.lookup, lambda t: self.expand(t, st), complex_value)

    def assign(self, st: Statement) -> None:
        name = self.expand(st.attr, st) if "$" in st.attr else st.attr
        if not mx.is_valid_name(name):
            raise XformError(st.line, 1, f"illegal identifier <{name}>")
        try:
            value = mx.expand_self(st.rhs, name, self.lookup(name))
        except mx.MacroError as exc:
            raise XformError(st.line, st.column, exc.message) from None
        self.macros[name] = value
        self.lines[name.lower()] = st.line

    def _warn(self, st: Statement, message: str) -> None:
        self.warnings.append(f"line {st.line}: {st.keyword} {st.attr}: {message}")

    def _invalid_name(self, st: Statement) -> None:
        """HTCondor's transform inserts the attribute as named (``InsertAdExpr`` checks no name);
        RouteDeck leaves it out, warns, and records it: the schedd refuses the routed copy."""
        self.rejected.append(st.attr)
        self._warn(st, "invalid attribute name: HTCondor's transform inserts it, and the schedd then rejects the "
                       "routed copy's submit (qmgmt.cpp IsValidAttrName), so routing the job fails")

    def action(self, st: Statement) -> None:
        kw = st.keyword
        if kw in ("NAME", "UNIVERSE", "REQUIREMENTS", "TRANSFORM"):
            return  # envelope information, no edit
        rhs = self.expand(st.rhs, st) if st.rhs else ""
        if kw == "DEFAULT" and self.key(st.attr) is not None:
            return
        if kw in ("SET", "DEFAULT"):
            try:
                text = ca.unparse_old(ca.parse_expr(rhs))
            except (ca.ClassAdError, Exception):  # noqa: BLE001 - whatever the library refuses is a warning (HTCondor)
                return self._warn(st, f"invalid expression : {rhs}")
            if not _ATTR_NAME.match(st.attr):
                return self._invalid_name(st)
            self.put(st.attr, text)
        elif kw in ("EVALSET", "EVALMACRO"):
            try:  # the new ClassAd parser (xform_utils.cpp ParseRulesCallback, kw_EVALSET)
                value = ca.evaluate(ca.parse_expr(rhs, new=True), my=self.classad(), now=self.now)
            except ca.ClassAdError:
                return self._warn(st, f"could not evaluate : {rhs}")
            if kw == "EVALMACRO":
                self.macros[st.attr] = value if isinstance(value, str) else ca.format_value(value)
            elif not _ATTR_NAME.match(st.attr):
                self._invalid_name(st)
            else:
                self.put(st.attr, ca.format_value(value))
        elif st.regex is not None:
            self._regex_op(st, rhs)
        else:
            self._plain_op(st, kw, st.attr, rhs)

    def _plain_op(self, st: Statement, kw: str, attr: str, new: str) -> None:
        if kw == "DELETE":
            self.remove(attr)
            return
        if not _ATTR_NAME.match(new):
            return self._warn(st, f"new name {new!r} is not valid")
        key = self.key(attr)
        if key is None:
            return
        text = self.remove(attr) if kw == "RENAME" else self.ad[key]  # type: ignore[index]
        self.put(new, text)  # type: ignore[arg-type]

    def _regex_op(self, st: Statement, pattern: str) -> None:
        assert self.ad is not None and st.regex is not None
        matched: dict[str, str] = {}
        for name in list(self.ad):
            m = st.regex.search(name)
            if st.regex.limited:
                st.regex.limited.clear()
                self.warnings.append(f"line {st.line}: {st.keyword} /{st.attr}/: the regex ran out of time on "
                                     f"{name!r} (catastrophic backtracking?); no match, as PCRE2's match limit "
                                     f"gives in HTCondor")
            if m is None:
                continue
            matched[name] = "" if st.keyword == "DELETE" else substitute(m, pattern)
        for name in sorted(matched):
            self._plain_op(st, st.keyword, name, matched[name])


def substitute(m: Any, pattern: str) -> str:
    """``append_substituted_regex``: ``\\N`` for N below PCRE's count of set groups."""
    count = 1 + max([i for i in range(1, (m.re.groups or 0) + 1) if m.start(i) >= 0] or [0])
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1].isdigit() and int(pattern[i + 1]) < count:
            out.append(m.group(int(pattern[i + 1])) or "")
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)
