"""Reading ClassAds from text, with the file and line of each error: old-syntax ``Attr = expr``
lines (condor_q -long, hook output, history), several of them separated by blank or ``***``
lines, and new-syntax ``[ … ]`` ads (the ClassAd route syntax, schedd workloads). Every value
and ad is parsed by classad2 through :mod:`engine.classad`; text that would crash it (more than
:data:`~engine.classad_text.MAX_OPERATORS` operators) is refused first."""

from __future__ import annotations

import re
from typing import Any, Iterator

from engine.classad import ClassAdError, is_valid_expr, new_syntax_ad, parse_problem
from engine.classad_text import MAX_OPERATORS, _clip, _matching_bracket, _skip_separators, longest_chain


def parse_old_ad(text: str, source: str = "<text>") -> dict[str, str]:
    """Parse ``Attr = expr`` lines (condor_q -l, hook output) into {name: text}.

    Every non-empty line must parse on its own (HTCondor rejects the whole output otherwise,
    htcondor.md §1.8); the error names the line. ``#`` comment lines are skipped.
    """
    out: dict[str, str] = {}
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        bad = _undecodable(line)
        if bad is not None:
            raise ClassAdError(f"{source}:{n}: not UTF-8 text (byte 0x{bad:02x})", raw, n)
        name, eq, value = line.partition("=")
        name = name.strip()
        if not eq or not name or not re.fullmatch(r"[A-Za-z_][\w.]*", name):
            raise ClassAdError(f"{source}:{n}: not an 'Attr = expr' line: {_clip(raw)}", raw, n)
        value = value.strip()
        if not is_valid_expr(value):
            why = parse_problem(value).removeprefix("cannot parse expression: ")
            raise ClassAdError(f"{source}:{n}: cannot parse the value of {name[:80]}: {why}", raw, n)
        out[name] = value
    return out


_SURROGATE = re.compile("[\udc80-\udcff]")


def _undecodable(text: str) -> int | None:
    """The first byte that was not UTF-8 (decoded with ``surrogateescape``), or None."""
    if text.isascii():
        return None
    m = _SURROGATE.search(text)
    return None if m is None else ord(m[0]) - 0xDC00


def _bad_ad(errors: list | None, exc: ClassAdError, position: int) -> None:
    """Tolerant reading: keep ``exc`` (``position``: the ad's 0-based place in the text), or raise."""
    if errors is None:
        raise exc
    exc.position = position  # type: ignore[attr-defined]
    errors.append(exc)


def parse_old_ads(text: str, source: str = "<text>", errors: list | None = None) -> list[dict[str, str]]:
    """Several old-syntax ads separated by blank lines (or ``***`` / ``---`` separator lines).

    An ad with a bad line raises :class:`ClassAdError`; with an ``errors`` list it is left out
    instead and its error appended (with ``position``, the ad's 0-based place in the text)."""
    ads: list[dict[str, str]] = []
    block: list[str] = []
    start = 1

    def flush(end_line: int) -> None:
        nonlocal block, start
        if any(b.strip() for b in block):
            try:
                ads.append(parse_old_ad("\n".join(block), source))
            except ClassAdError as exc:
                line = (exc.line or 1) + start - 1
                _bad_ad(errors, ClassAdError(f"{source}:{line}: {str(exc).split(': ', 1)[-1]}", exc.text, line),
                        len(ads) + len(errors or ()))
        block = []
        start = end_line + 1

    for n, raw in enumerate(text.split("\n"), 1):
        s = raw.strip()
        if not s or s.startswith("***") or s.startswith("---"):
            flush(n)
        else:
            if not block:
                start = n
            block.append(raw)
    flush(len(text.split("\n")))
    return ads


def parse_new_ads(text: str, source: str = "<text>", errors: list | None = None) -> list[Any]:
    """One or more new-syntax ads ``[ … ] [ … ]``, whitespace/commas and ``/* */`` or ``//``
    comments between them. Returns classad2 ads; errors name the line. With an ``errors`` list a
    bad ad is left out and its error appended (as :func:`parse_old_ads`); text that is not an ad,
    or an unterminated ad, still ends the reading."""
    ads: list[Any] = []
    pos = 0
    n = len(text)
    while True:
        pos = _skip_separators(text, pos)
        if pos >= n:
            break
        here = len(ads) + len(errors or ())
        if text[pos] != "[":
            line = line_of_offset(text, pos)
            _bad_ad(errors, ClassAdError(f"{source}:{line}: expected '[' to start a ClassAd", text, line), here)
            break
        end = _matching_bracket(text, pos)
        if end < 0:
            line = line_of_offset(text, pos)
            _bad_ad(errors, ClassAdError(f"{source}:{line}: unterminated ClassAd", text, line), here)
            break
        chunk = text[pos : end + 1]
        line = line_of_offset(text, pos)
        bad = _undecodable(chunk)
        if bad is not None:
            at = line + chunk[: chunk.index(chr(0xDC00 + bad))].count("\n")
            _bad_ad(errors, ClassAdError(f"{source}:{at}: not UTF-8 text (byte 0x{bad:02x})", chunk, at), here)
            pos = end + 1
            continue
        try:
            if longest_chain(chunk) > MAX_OPERATORS:
                raise ValueError("too many operators")
            ad = new_syntax_ad(chunk)
        except Exception:  # noqa: BLE001 - classad2 raises several kinds for text that is not an ad
            _bad_ad(errors, ClassAdError(f"{source}:{line}: ClassAd does not parse", chunk, line), here)
        else:
            ads.append(ad)
        pos = end + 1
    return ads


def parse_new_ad(text: str, source: str = "<text>") -> Any:
    ads = parse_new_ads(text, source)
    if len(ads) != 1:
        raise ClassAdError(f"{source}: expected one ClassAd, found {len(ads)}", text)
    return ads[0]


# the ClassAd route syntax (engine/router/classic.py) walks its routes with these: raw classad2
# ads, so ``time()`` is never rewritten in converted text


def iter_new_ads(text: str) -> Iterator[tuple[int, int, Any, str | None]]:
    """Walk ``[ … ] [ … ]`` new-syntax ads separated by whitespace, commas or comments.

    Yields ``(start, end, ad, error)`` with character offsets into ``text``: ``ad`` is a classad2
    ad, or None with ``error`` set when that one ad does not parse (the walk goes on after its
    closing bracket, so one malformed route does not hide the others). Text that is not an ad,
    or an unterminated ad, ends the walk with an error.
    """
    pos, n = 0, len(text)
    while True:
        pos = _skip_separators(text, pos)
        if pos >= n:
            return
        if text[pos] != "[":
            yield pos, n, None, "expected '[' to start a ClassAd"
            return
        end = _matching_bracket(text, pos)
        if end < 0:
            yield pos, n, None, "unterminated ClassAd (no matching ']')"
            return
        if longest_chain(text[pos : end + 1]) > MAX_OPERATORS:  # classad2 would crash on it
            yield pos, end + 1, None, f"ClassAd does not parse (more than {MAX_OPERATORS} operators in one expression)"
            pos = end + 1
            continue
        try:
            yield pos, end + 1, new_syntax_ad(text[pos : end + 1]), None
        except Exception:  # noqa: BLE001 - classad2 raises several kinds for text that is not an ad
            yield pos, end + 1, None, "ClassAd does not parse"
        pos = end + 1


def line_of_offset(text: str, offset: int) -> int:
    """1-based line number of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1
