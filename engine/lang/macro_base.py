"""The base of HTCondor's macro language: the error type and the expansion context.

:mod:`engine.lang.macros` (references, expansion) builds on :mod:`engine.lang.macro_funcs`
(``$INT``, ``$F…``…), which builds on this module; imports go one way only (an import-linter
contract in ``pyproject.toml``). The context carries the expansion callbacks, so a macro
function expands its arguments without importing the expander.

Design decisions and invariants:

- ``MacroCtx.lenient`` is HTCondor's ``might_EXCEPT`` without ``allow_except`` (config.cpp):
  a transform (``MACRO_EVAL_CONTEXT_EX`` with an ad) records a macro function's error and
  substitutes a value (usually ``""``), and the transform goes on. The config reader is strict:
  a daemon's ``param()`` sets ``ConfigMacroSetAllowExcept`` and HTCondor EXCEPTs, so RouteDeck
  raises :class:`MacroError` there.
- The budget counters (``refs``, ``live``, ``work``, ``nest``) are owned by the expander.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

Lookup = Callable[[str], "str | None"]

_IDCHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./")


class MacroError(Exception):
    """A macro that cannot be expanded (cycle, bad function argument). For a cycle, ``chain`` is
    the loop as referenced, first name repeated at the end (``("A", "B", "A")``): a caller that
    knows where macros are defined names each (``engine.lang.macros.loop_message``)."""

    def __init__(self, message: str, name: str | None = None, chain: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.name = name
        self.chain = chain


_NAME = re.compile(r"[A-Za-z0-9_./]+")  # _IDCHARS, one or more


def is_valid_name(name: str) -> bool:
    return _NAME.fullmatch(name) is not None


@dataclass
class MacroCtx:
    """One top-level expansion: where names are looked up, the callbacks back into the
    expander, the budgets, and whether function errors raise (config) or are recorded (transform)."""

    lookup_raw: Lookup
    ad_lookup: Lookup | None
    env: Mapping[str, str]
    evaluate: Callable[[str], Any] | None
    warnings: list[str] | None
    expand_text: Callable[[str, "MacroCtx"], str]
    expand_named_raw: Callable[[str, str, "MacroCtx"], str]
    lenient: bool = False
    errors: list[str] = field(default_factory=list)  # lenient mode: the recorded function errors
    stack: list[str] = field(default_factory=list)  # the named macros being expanded (lower case)
    names: list[str] = field(default_factory=list)  # the same, as referenced (for messages)
    refs: int = 0
    live: int = 0  # characters of partial text held by all levels now (MAX_SIZE)
    work: int = 0  # characters produced so far (MAX_WORK)
    nest: int = 0  # _expand calls active (MAX_NEST)

    def lookup(self, name: str) -> str | None:
        """``lookup_macro``: the macro, else ``MY.attr`` from the ad."""
        raw = self.lookup_raw(name)
        if raw is None and self.ad_lookup is not None and name[:3].lower() == "my.":
            raw = self.ad_lookup(name[3:])
        return raw

    def expand(self, text: str) -> str:
        return self.expand_text(text, self)

    def expand_named(self, name: str, raw: str) -> str:
        return self.expand_named_raw(name, raw, self)

    def arg_value(self, arg: str) -> str:
        """A function argument: a macro name is looked up, otherwise the literal; then expanded."""
        arg = arg.strip()
        raw = self.lookup(arg) if is_valid_name(arg) else None
        if raw is None:
            return self.expand(arg)
        return self.expand_named(arg, raw)

    def fail(self, message: str, name: str | None = None, substitute: str = "") -> str:
        """``might_EXCEPT``: raise (config) or record the error and return ``substitute`` (transform)."""
        if not self.lenient:
            raise MacroError(message, name)
        self.errors.append(message)
        return substitute
