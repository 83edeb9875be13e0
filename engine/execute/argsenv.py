"""A job's command line and environment from its ad (``Arguments``/``Args``, ``Environment``/``Env``).

HTCondor facts followed (``src/condor_utils/condor_arglist.cpp``, ``env.cpp``, the
condor_submit manual "arguments" and "environment"):

- ``Arguments`` (V2) wins over ``Args`` (V1). V2: words are separated by whitespace; a single
  quote starts and ends a quoted part (whitespace kept); ``''`` inside quotes is one literal
  quote. V1: words are separated by whitespace, no quoting.
- ``Environment`` (V2) wins over ``Env`` (V1). V2: whitespace-separated ``NAME=VALUE`` words with
  the same quoting as V2 arguments. V1 (Unix): ``;``-separated ``NAME=VALUE``.
- A word without ``=`` in an environment is an error (HTCondor refuses the job).

Bounded: at most :data:`MAX_WORDS` words; longer lists are an error, never a hang.
"""

from __future__ import annotations

from typing import Mapping

MAX_WORDS = 10_000


class ArgsError(ValueError):
    """An argument or environment string HTCondor would refuse (names the attribute)."""


def split_v2(text: str, attr: str = "Arguments") -> list[str]:
    """V2 raw syntax: whitespace separates words; '...' quotes; '' inside quotes is a quote."""
    words: list[str] = []
    cur: list[str] = []
    have = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "'":
            have = True
            i += 1
            while True:
                if i >= n:
                    raise ArgsError(f"{attr}: unterminated single quote in {text!r}")
                if text[i] == "'":
                    if i + 1 < n and text[i + 1] == "'":
                        cur.append("'")
                        i += 2
                        continue
                    i += 1
                    break
                cur.append(text[i])
                i += 1
            continue
        if c.isspace():
            if have:
                words.append("".join(cur))
                cur, have = [], False
                if len(words) > MAX_WORDS:
                    raise ArgsError(f"{attr}: more than {MAX_WORDS} words")
            i += 1
            continue
        cur.append(c)
        have = True
        i += 1
    if have:
        words.append("".join(cur))
    return words


def job_arguments(attrs: Mapping[str, object]) -> list[str]:
    """The job's arguments; ``attrs`` maps attribute names to *evaluated* values (str or None)."""
    low = {k.lower(): v for k, v in attrs.items()}
    v2 = low.get("arguments")
    if isinstance(v2, str):
        return split_v2(v2, "Arguments")
    v1 = low.get("args")
    if isinstance(v1, str):
        words = v1.split()
        if len(words) > MAX_WORDS:
            raise ArgsError(f"Args: more than {MAX_WORDS} words")
        return words
    return []


def job_environment(attrs: Mapping[str, object]) -> dict[str, str]:
    """The job's own environment variables (``Environment`` V2, else ``Env`` V1)."""
    low = {k.lower(): v for k, v in attrs.items()}
    v2 = low.get("environment")
    if isinstance(v2, str):
        return env_pairs(split_v2(v2, "Environment"), "Environment")
    v1 = low.get("env")
    if isinstance(v1, str):
        return env_pairs([w for w in (p.strip() for p in v1.split(";")) if w], "Env")
    return {}


def env_pairs(words: list[str], attr: str) -> dict[str, str]:
    """``NAME=VALUE`` words as a dict; a word without ``=`` or a name is an :class:`ArgsError`."""
    out: dict[str, str] = {}
    for w in words:
        name, eq, value = w.partition("=")
        if not eq or not name:
            raise ArgsError(f"{attr}: {w!r} is not NAME=VALUE")
        out[name] = value
    return out
