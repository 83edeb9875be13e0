"""Regular expressions written by the user (a config knob, a transform statement), matched with a bound.

HTCondor compiles these with PCRE2 and matches them with ``pcre2_match`` and no match context, so
PCRE2's default match limit (10,000,000) stops a catastrophic backtracking; the error code is
then read as "no match" (``Regex::match`` in ``src/condor_utils/condor_regex.cpp``: ``return rc >
0``). Python's ``re`` has no limit, so one hostile ``LOCAL_CONFIG_DIR_EXCLUDE_REGEXP`` would hang
the config reader. The ``regex`` library (a superset of ``re``'s syntax, closer to PCRE, with a
per-call timeout) plays the part of the match limit: a match that runs out of time is no match,
and the caller is told so it can warn.
"""

from __future__ import annotations

from typing import Any

import regex

MATCH_TIMEOUT = 0.25  # seconds per match: a realistic pattern on a file or attribute name takes microseconds

error = regex.error
IGNORECASE = regex.IGNORECASE
MULTILINE = regex.MULTILINE
DOTALL = regex.DOTALL
VERBOSE = regex.VERBOSE


class BoundedPattern:
    """A compiled pattern whose ``search``/``match`` give up after :data:`MATCH_TIMEOUT`."""

    __slots__ = ("pattern", "_re", "limited")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._re = regex.compile(pattern, flags | regex.VERSION0)
        self.limited: list[str] = []  # subjects a match gave up on (the caller may warn)

    def _run(self, fn: Any, subject: str) -> Any:
        try:
            return fn(subject, timeout=MATCH_TIMEOUT)
        except TimeoutError:
            self.limited.append(subject)
            return None

    def search(self, subject: str) -> Any:
        return self._run(self._re.search, subject)

    def match(self, subject: str) -> Any:
        return self._run(self._re.match, subject)

    def fullmatch(self, subject: str) -> Any:
        return self._run(self._re.fullmatch, subject)


def compile_bounded(pattern: str, flags: int = 0) -> BoundedPattern:
    """Compile ``pattern`` (raises :data:`error` when it is not a valid expression)."""
    return BoundedPattern(pattern, flags)
