"""Job policy expressions: ``PeriodicHold`` / ``PeriodicRelease`` / ``PeriodicRemove``,
``OnExitHold`` / ``OnExitRemove`` and the ``SYSTEM_PERIODIC_*`` knobs.

Follows HTCondor's ``UserPolicy::AnalyzePolicy`` (``src/condor_utils/user_job_policy.cpp``,
non-mutating version):

- Order: periodic hold (only if the job is not Held), periodic release (only if Held), periodic
  remove; then, on exit only, ``OnExitHold`` and ``OnExitRemove``. The first that fires wins.
- A job attribute fires when it evaluates to a non-zero number (booleans count). If it evaluates
  to anything else (undefined, error, a string) it *also* fires, as "undefined" (hold code 5,
  ``JobPolicyUndefined``), except when the expression is the literal ``undefined``.
- For each periodic check the job attribute is tried first; if it does not fire, the system knob
  (``SYSTEM_PERIODIC_HOLD`` …) is tried. A system expression fires only when it evaluates to a
  non-zero number (undefined never fires); a knob that is the literal ``0``/``false`` is ignored.
- A missing ``OnExitRemove`` means remove on exit. ``OnExitRemove`` false means the job stays
  in the queue (it is requeued).
- Reasons: ``<Attr>Reason`` / ``<Attr>SubCode`` of the job (or ``<KNOB>_REASON`` /
  ``<KNOB>_SUBCODE``) when they evaluate; otherwise
  ``The job attribute <Attr> expression '<text>' evaluated to TRUE`` (or ``UNDEFINED``; ``system
  macro`` for knobs). Hold codes: 3 job policy, 5 job policy undefined, 26 system policy,
  27 system policy undefined (``condor_holdcodes.h``).

Everything is evaluated with the engine's ``now`` bound to ``time()``/``CurrentTime``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Mapping

from engine.classad import ClassAdError, evaluate, is_plain_literal, is_undefined, is_valid_expr, make_ad, parse_expr
from engine.contract.codes import HoldCode, JobStatus


POLICY_KNOBS = {"SYSTEM_PERIODIC_HOLD": "hold", "SYSTEM_PERIODIC_RELEASE": "release",
                "SYSTEM_PERIODIC_REMOVE": "remove"}
_TRIVIAL = re.compile(r"\(*\s*(?P<v>false|true|[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*\)*", re.IGNORECASE)
_NOT_A_MACRO = re.compile(r"\$\([^()]*[^A-Za-z0-9_.:()][^()]*\)")


def trivially_false(text: str | None) -> bool:
    """``JobPolicyExpr::is_trivial``: empty, or a literal (in parentheses or not) whose number is 0
    (``ExprTreeIsLiteralBool``: ``false``, ``0``, ``0.5`` truncated to 0). Such a knob is left out."""
    if text is None or not text.strip():
        return True
    m = _TRIVIAL.fullmatch(text.strip())
    if not m or text.count("(") != text.count(")"):
        return False
    v = m.group("v").lower()
    return v == "false" or (v != "true" and int(float(v)) == 0)


@dataclass(frozen=True)
class NamedPolicy:
    """One ``SYSTEM_PERIODIC_<ACTION>_<Tag>`` of a ``SYSTEM_PERIODIC_<ACTION>_NAMES`` list (one
    that parses and is not trivially false: the others are left out, as the schedd leaves them)."""

    base: str  # SYSTEM_PERIODIC_HOLD, _RELEASE or _REMOVE
    knob: str  # SYSTEM_PERIODIC_HOLD_<Tag>
    text: str
    reason: str | None = None
    subcode: str | None = None


@dataclass(frozen=True)
class SystemPolicy:
    """The ``SYSTEM_PERIODIC_*`` knobs (expression text or None) and their _REASON/_SUBCODE.

    ``named`` holds the policies of the ``_NAMES`` lists (``ENABLE_JOB_POLICY_LISTS``,
    ``user_job_policy.cpp`` ``load_policy_list``), which are tried before the nameless knob of
    their action, in list order."""

    hold: str | None = None
    release: str | None = None
    remove: str | None = None
    hold_reason: str | None = None
    hold_subcode: str | None = None
    release_reason: str | None = None
    remove_reason: str | None = None
    named: tuple[NamedPolicy, ...] = ()

    @classmethod
    def from_knobs(cls, get) -> "SystemPolicy":
        """``get(name) -> str | None`` reads a config knob."""

        def expr(name: str) -> str | None:
            text = get(name)
            if trivially_false(text):
                return None  # a literal false or zero disables the knob (JobPolicyExpr::is_trivial)
            return str(text).strip()

        named = tuple(NamedPolicy(base, knob, text.strip(), get(knob + "_REASON"), get(knob + "_SUBCODE"))
                      for base, knob, text in _named_knobs(get)
                      if is_valid_expr(text.strip()) and not trivially_false(text))
        return cls(expr("SYSTEM_PERIODIC_HOLD"), expr("SYSTEM_PERIODIC_RELEASE"), expr("SYSTEM_PERIODIC_REMOVE"),
                   get("SYSTEM_PERIODIC_HOLD_REASON"), get("SYSTEM_PERIODIC_HOLD_SUBCODE"),
                   get("SYSTEM_PERIODIC_RELEASE_REASON"), get("SYSTEM_PERIODIC_REMOVE_REASON"), named)

    def any(self) -> bool:
        """Whether any system policy can fire at all."""
        return bool(self.hold or self.release or self.remove or self.named)

    def for_action(self, base: str) -> list[tuple[str, str, str | None, str | None]]:
        """(knob, text, reason expression, subcode expression) of ``base``'s policies in the order
        the schedd tries them: the named ones in list order, then the nameless knob."""
        out = [(p.knob, p.text, p.reason, p.subcode) for p in self.named if p.base == base]
        text = {"SYSTEM_PERIODIC_HOLD": self.hold, "SYSTEM_PERIODIC_RELEASE": self.release,
                "SYSTEM_PERIODIC_REMOVE": self.remove}[base]
        if text:
            reason = {"SYSTEM_PERIODIC_HOLD": self.hold_reason, "SYSTEM_PERIODIC_RELEASE": self.release_reason,
                      "SYSTEM_PERIODIC_REMOVE": self.remove_reason}[base]
            out.append((base, text, reason, self.hold_subcode if base == "SYSTEM_PERIODIC_HOLD" else None))
        return out


def _named_knobs(get) -> list[tuple[str, str, str]]:
    """(base, knob, text) of every tag of the ``_NAMES`` lists that has a non-empty text:
    ``param_and_insert_unique_items`` (comma and/or space separated, unique without regard to
    case, ``NAMES`` itself skipped)."""
    out = []
    for base in POLICY_KNOBS:
        seen: set[str] = set()
        for tag in re.split(r"[,\s]+", get(base + "_NAMES") or ""):
            if not tag or tag.lower() in seen or tag.lower() == "names":
                continue
            seen.add(tag.lower())
            text = get(f"{base}_{tag}")
            if text is not None and text.strip():
                out.append((base, f"{base}_{tag}", text))
    return out


@dataclass(frozen=True)
class PolicyCheck:
    """What the schedd makes of one system policy knob (``routedeck check`` and ``why``)."""

    knob: str
    parses: bool
    note: str
    text: str


def policy_checks(get) -> list[PolicyCheck]:
    """Every ``SYSTEM_PERIODIC_{HOLD,RELEASE,REMOVE}`` knob and named policy that is set, whether it
    parses as a ClassAd expression, and what the schedd does with it (htcondor.md §8,
    ``user_job_policy.cpp``): a nameless knob that does not parse is kept and never fires (its
    expression is NULL); a named one that does not parse is ignored with a warning in the
    SchedLog. A ``$(…)`` that is not a macro name is left in the value as written
    (``config.cpp`` ``next_config_macro``), the usual cause."""
    out = []
    named = [(base, knob, text) for base, knob, text in _named_knobs(get)]
    bases = [(base, base, get(base)) for base in POLICY_KNOBS]
    for base, knob, text in [*named, *bases]:
        if text is None or not text.strip() or (knob == base and trivially_false(text)):
            continue
        text = text.strip()
        if is_valid_expr(text):
            what = "false as written: left out" if trivially_false(text) else \
                f"evaluated for every job every PERIODIC_EXPR_INTERVAL ({POLICY_KNOBS[base]})"
            out.append(PolicyCheck(knob, True, what, text))
            continue
        if knob == base:
            note = ("does not parse as a ClassAd expression: the schedd keeps it and never fires it "
                    "(user_job_policy.cpp: a policy that does not parse is NULL, and a NULL policy never fires)")
        else:
            note = ("does not parse as a ClassAd expression: the schedd ignores it "
                    f"(SchedLog: 'WARNING: ignoring invalid {knob} expression')")
        bad = _NOT_A_MACRO.search(text)
        if bad:
            note += (f"; {bad.group(0)} is not a macro (a macro name has only letters, digits, '_' and '.'), so "
                     f"the config reader leaves it as written: write {bad.group(0)[1:]} without the '$'")
        out.append(PolicyCheck(knob, False, note, text))
    return out


@dataclass(frozen=True)
class Decision:
    action: str  # "hold" | "release" | "remove" | "stay" (exit: requeue) | "none"
    expr: str | None = None  # the attribute or knob that fired
    source: str | None = None  # "job attribute" | "system macro"
    value: int = 0  # 1 true, -1 undefined
    text: str = ""
    reason: str = ""
    code: int = 0
    subcode: int = 0


NONE = Decision("none")


def _number(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and not is_undefined(value):
        return 1 if value != 0 else 0
    return None


def _is_literal_undefined(text: str) -> bool:
    return text.strip().lower() == "undefined"


def _reason_text(source: str, name: str, text: str, value: int) -> str:
    what = {1: "TRUE", -1: "UNDEFINED", 0: "FALSE"}[value]
    return f"The {source} {name} expression '{text}' evaluated to {what}"


def _eval_str(ad: Any, text: str | None, now: float | None) -> str | None:
    if not text:
        return None
    try:
        v = evaluate(text, my=ad, now=now)
    except ClassAdError:
        return None
    return v if isinstance(v, str) else None


def _eval_int(ad: Any, text: str | None, now: float | None) -> int:
    if not text:
        return 0
    try:
        v = evaluate(text, my=ad, now=now)
    except ClassAdError:
        return 0
    n = v if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    return int(n) if n is not None else 0


def _job_attr(ad: Any, texts: Mapping[str, str], name: str, action: str, now: float | None) -> Decision | None:
    text = texts.get(name)
    if text is None:
        return None
    try:
        value = evaluate(parse_expr(text), my=ad, now=now)
    except ClassAdError:
        value = None
    n = _number(value)
    if n == 0 or (n is None and _is_literal_undefined(text)):
        return None
    if n is None:  # undefined/error/non-number: fires as "undefined" -> hold
        return Decision("hold", name, "job attribute", -1, text,
                        _reason_text("job attribute", name, text, -1), HoldCode.JobPolicyUndefined, 0)
    reason = _eval_str(ad, texts.get(name + "Reason"), now) or _reason_text("job attribute", name, text, 1)
    subcode = _eval_int(ad, texts.get(name + "SubCode"), now)
    return Decision(action, name, "job attribute", 1, text, reason, HoldCode.JobPolicy, subcode)


def _system(ad: Any, system: SystemPolicy, base: str, now: float | None) -> Decision | None:
    """The first of ``base``'s system policies that fires (``AnalyzeSinglePeriodicPolicy``'s loop);
    a text that does not parse never fires. Fired from a named policy, the decision names the
    nameless knob (``m_fire_expr = policy_name``) and reads the named knob's _REASON/_SUBCODE."""
    for knob, text, reason_expr, subcode_expr in system.for_action(base):
        try:
            value = evaluate(text, my=ad, now=now)
        except ClassAdError:
            continue
        if _number(value) != 1:  # undefined system expressions never fire
            continue
        reason = _eval_str(ad, reason_expr, now) or _reason_text("system macro", base, text, 1)
        return Decision(POLICY_KNOBS[base], base, "system macro", 1, text, reason, HoldCode.SystemPolicy,
                        _eval_int(ad, subcode_expr, now))
    return None


# ------------------------------------------------------------------------------ the evaluation ad
#
# The policy expressions (the system knobs, a job's Periodic*/OnExit* attributes and their
# Reason/SubCode) read the job's attributes by name, and those attributes' own texts read others by
# name in turn. An ad of just the attributes so reached (:func:`policy_ad`) gives every one of
# those expressions the value the whole job ad gives, unless a text reaches an attribute another
# way: ``eval()`` of a string, a scope used as a value (``MY``, ``SELF``, ``TARGET``, ``PARENT``,
# ``TOPLEVEL``, ``ROOT`` not followed by ``.``), a nested ad or a subscript (``[``), or when the
# names it reads are unknown (``Expr.names`` is None: ``CurrentTime.x``, ``ifThenElse(A, 1, 0).x``).
# Then the whole ad is needed: HTCondor evaluates them on the whole job ad (htcondor.md §1.4 for
# JobFailureTest, §1.6 and §7 for the periodic policy: user_job_policy.cpp). ``CurrentTime`` (a
# special name that externalRefs leaves out) is always looked up.

_POLICY_ATTRS = tuple(base + part for base in ("PeriodicHold", "PeriodicRelease", "PeriodicRemove", "OnExitHold",
                                                "OnExitRemove") for part in ("", "Reason", "SubCode"))
_REACHES_OTHERWISE = re.compile(r"\beval\s*\(|\[|\b(?:my|self|target|parent|toplevel|root)\b(?!\s*\.)",
                                re.IGNORECASE)


@functools.lru_cache(maxsize=16)
def policy_roots(system: SystemPolicy) -> tuple[str, ...]:
    """The texts of ``system``'s knobs (expressions, reasons, subcodes) :func:`policy_ad` starts
    from; a caller making many ads asks once."""
    return tuple(t for base in POLICY_KNOBS for _, text, reason, subcode in system.for_action(base)
                 for t in (text, reason, subcode) if t)


_NONE: frozenset[str] = frozenset()


def _names(text: str) -> frozenset[str] | None:
    """The lower-case names ``text`` reads (None: it may read others, see above)."""
    if is_plain_literal(text):
        return _NONE  # an integer or one string literal (most texts: not kept)
    return _expr_names(text)


# job ads repeat the same expression texts (the knobs, cluster attributes): kept per text, a bounded number
@functools.lru_cache(maxsize=8192)
def _expr_names(text: str) -> frozenset[str] | None:
    if _REACHES_OTHERWISE.search(text):
        return None
    try:
        return parse_expr(text).names
    except ClassAdError:
        return _NONE  # an error value: it reads nothing


def policy_ad(get: Any, roots: tuple[str, ...]) -> Any | None:
    """The evaluation ad :func:`analyze_periodic` and :func:`analyze_exit` need for a job whose
    attribute texts ``get(name)`` returns (any case), with the system policy's texts ``roots``
    (:func:`policy_roots`): ``make_ad`` of the attributes its policy expressions reach (see
    above), or None when the whole job ad is needed."""
    texts: dict[str, str] = {}
    todo = list(roots)
    for name in _POLICY_ATTRS:
        text = get(name)
        if text is not None:
            texts[name.lower()] = text
            todo.append(text)
    seen = set(texts)
    seen.add("currenttime")
    text = get("CurrentTime")
    if text is not None:
        texts["currenttime"] = text
        todo.append(text)
    while todo:
        names = _names(todo.pop())
        if names is None:
            return None
        for name in names:
            if name not in seen:
                seen.add(name)
                text = get(name)
                if text is not None:
                    texts[name] = text
                    todo.append(text)
    return make_ad(texts)


def policy_ad_of(attrs: Mapping[str, str], system: SystemPolicy, roots: tuple[str, ...] | None = None) -> Any | None:
    """:func:`policy_ad` of a {name: text} dict of a job, or None (the whole ad is needed): also
    when a name is spelled twice in it (the whole ad then takes the later text, as ``make_ad``
    does, where a lookup by name could take either). ``roots``: ``policy_roots(system)`` when the
    caller has it (a pass over many jobs)."""
    low = {k.lower(): v for k, v in attrs.items()}
    if len(low) != len(attrs):
        return None
    return policy_ad(lambda n: low.get(n.lower()), policy_roots(system) if roots is None else roots)


def analyze_periodic(ad: Any, texts: Mapping[str, str], status: int, system: SystemPolicy,
                     now: float | None) -> Decision:
    """The periodic part of ``AnalyzePolicy``. ``ad`` is the evaluation ad built from ``texts``."""
    if status != JobStatus.HELD:
        d = _job_attr(ad, texts, "PeriodicHold", "hold", now) or _system(ad, system, "SYSTEM_PERIODIC_HOLD", now)
        if d:
            return d
    if status == JobStatus.HELD:
        d = _job_attr(ad, texts, "PeriodicRelease", "release", now) or _system(
            ad, system, "SYSTEM_PERIODIC_RELEASE", now)
        if d:
            return d
    d = _job_attr(ad, texts, "PeriodicRemove", "remove", now) or _system(ad, system, "SYSTEM_PERIODIC_REMOVE", now)
    return d or NONE


def analyze_exit(ad: Any, texts: Mapping[str, str], status: int, system: SystemPolicy,
                 now: float | None) -> Decision:
    """``AnalyzePolicy(PERIODIC_THEN_EXIT)`` for a job that just exited (exit attributes set)."""
    d = analyze_periodic(ad, texts, status, system, now)
    if d.action != "none":
        return d
    d = _job_attr(ad, texts, "OnExitHold", "hold", now)
    if d:
        return d
    if "OnExitRemove" not in texts:
        return Decision("remove", "OnExitRemove", "job attribute", 1, "true", "", 0, 0)
    d = _job_attr(ad, texts, "OnExitRemove", "remove", now)
    if d:
        return d
    return Decision("stay", "OnExitRemove", "job attribute", 0, texts["OnExitRemove"],
                    _reason_text("job attribute", "OnExitRemove", texts["OnExitRemove"], 0))


# ------------------------------------------------------------------------------ time dependence
#
# HTCondor re-evaluates every job's periodic policy every PERIODIC_EXPR_INTERVAL. RouteDeck's
# schedd re-evaluates only jobs that changed, plus jobs whose result may change with time alone:
# :func:`time_deadline` says, for a job's attribute texts and the system knobs, from which time
# on the periodic result may differ from the one computed at ``now`` (None: never, with this ad;
# UNBOUNDED: cannot tell, evaluate at every interval as HTCondor does).
#
# What is analysed: a comparison ``time() - Attr OP C`` or ``(time() - Attr) OP C`` (also with
# ``CurrentTime``), OP one of < <= > >= == !=, C a number literal, standing as a whole operand of
# ``&&`` / ``||`` or inside parentheses, with ``Attr`` a number literal in the job ad. Its truth
# can change only when ``time()`` crosses ``Attr + C``; ``time()`` is ``int(now)``, within a
# second of ``now``, hence the one-second margin on either side. Any other use of ``time()`` /
# ``CurrentTime`` / ``eval()`` / ``random()`` / ``formatTime()`` in any attribute or knob text
# makes the job UNBOUNDED.

UNBOUNDED = float("-inf")

_TIMEISH = re.compile(r"\b(?:time\s*\(|currenttime\b|eval\s*\(|random\s*\(|formattime\s*\(|localtimeoffset\b)",
                      re.IGNORECASE)
_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_NOW = r"(?:time\s*\(\s*\)|currenttime\b)"
_CMP = re.compile(
    r"(?:^|(?<=\()|(?<=&&)|(?<=\|\|))\s*"
    rf"(?:{_NOW}\s*-\s*(?P<a>[A-Za-z_]\w*)|\(\s*{_NOW}\s*-\s*(?P<b>[A-Za-z_]\w*)\s*\))"
    rf"\s*(?:<=|>=|==|!=|<|>)\s*(?P<c>{_NUM})\s*(?=$|\)|&&|\|\|)",
    re.IGNORECASE)


def _literal(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None


# A text's analysis: None (no time dependence), UNBOUNDED, or the (attribute, constant) pairs of
# its ``time() - Attr OP C`` comparisons. Job ads repeat the same texts (cluster attributes, the
# knobs), so the analysis is kept per text, a bounded number of them.
_ANALYSIS: dict[str, Any] = {}
_ANALYSIS_MAX = 8192


def _analyze_text(text: str) -> Any:
    found = _ANALYSIS.get(text)
    if found is not None or text in _ANALYSIS:
        return found
    if not _TIMEISH.search(text):
        result: Any = None
    elif len(text) > 4096 or _TIMEISH.search(_CMP.sub(" 0 ", text)):
        result = UNBOUNDED
    else:
        result = tuple((m.group("a") or m.group("b"), float(m.group("c"))) for m in _CMP.finditer(text))
    if len(_ANALYSIS) >= _ANALYSIS_MAX:
        _ANALYSIS.clear()
    _ANALYSIS[text] = result
    return result


def time_deadline(get: Any, texts: Any, system: SystemPolicy, now: float,
                  status: int | None = None) -> float | None:
    """When this job's periodic result may next change with time alone (see above).

    ``get(name)`` reads a job attribute's text (any case); ``texts`` are all the job's attribute
    texts. Returns None (never), UNBOUNDED, or a time: re-evaluate at the first interval at or
    after it (a time at or before ``now`` means "at the next interval"). With the job's
    ``status``, only the knobs :func:`analyze_periodic` reads in that status count (the release
    knobs only while held, the hold knobs only while not): a change of status is a change of the
    job, which is evaluated again anyway. Job attribute texts always count (one may refer to
    another)."""
    if status is None:
        bases: tuple[str, ...] = tuple(POLICY_KNOBS)
    elif status == JobStatus.HELD:
        bases = ("SYSTEM_PERIODIC_RELEASE", "SYSTEM_PERIODIC_REMOVE")
    else:
        bases = ("SYSTEM_PERIODIC_HOLD", "SYSTEM_PERIODIC_REMOVE")
    knobs = [t for base in bases for _, text, reason, subcode in system.for_action(base) for t in (text, reason, subcode)]
    deadline: float | None = None
    for text in [*texts, *(k for k in knobs if k)]:
        found = _analyze_text(text)
        if found is None:
            continue
        if found is UNBOUNDED:
            return UNBOUNDED
        for name, c in found:
            raw = get(name)
            if raw is None:
                continue  # time() - undefined is undefined, whatever the time
            base = _literal(raw)
            if base is None:
                return UNBOUNDED
            cross = base + c
            if now <= cross + 1:
                deadline = cross - 1 if deadline is None else min(deadline, cross - 1)
    return deadline
