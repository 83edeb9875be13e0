"""A read chunk of the live log cut into committed steps, for the recorder (issue 27).

Moved from ``engine.record.recorder`` (the recorder keeps ``Recorder._chunk_steps`` calling
:func:`chunk_steps`): one parser, ``engine.queue.steps.scan_steps``, with the plain-transaction
fast path (``PLAIN_TXN``/``PLAIN_FIELDS``) and the schedd-reader verdict (``first_corrupt``,
``plain_end_ok``) that ``record --once`` reports.
"""

from __future__ import annotations

from pathlib import Path

from engine.queue.steps import PLAIN_FIELDS, PLAIN_TXN, first_corrupt, plain_end_ok, scan_steps
from engine.record.report import Report


class _Sink:
    __slots__ = ()

    @staticmethod
    def apply_quiet(records: list) -> int:
        return 0


def scan_part(data: bytes, start: int, end: int, path: Path, problems: list,
              first_line: int = 1) -> tuple[list, bool]:
    """(the steps of ``data[start:end]`` as ``(start, end, records, end_line)``, whether it
    ends at a step boundary: ``scan_steps``); its problems go to ``problems``."""
    steps: list = []

    def on_step(s: int, e: int, _line: int, records: list, end_line: str | None = None) -> None:
        steps.append((s, e, records, end_line))

    def on_problem(line_no: int, message: str) -> None:
        if not message.startswith("warning: the last transaction has no EndTransaction"):
            problems.append(f"{path}: {message} (line {line_no} of the part read)")

    clean = scan_steps(data, start, end, _Sink(), on_step, on_problem, first_line)  # type: ignore[arg-type]
    return steps, clean

def chunk_steps(data: bytes, end: int, path: Path, rep: Report, base: int = 0):
    """The committed steps of ``data[:end]`` (whole lines), in order, as ``(start, end,
    end_line, records, fields, stamp)``: a plain transaction as its ``PLAIN_FIELDS``
    (``records`` the keys of its 101s and 102s, None when it has none) and its 106's stamp
    as ``PLAIN_TXN`` reads it (minute, seconds; None when the line is not that), any other
    step as its ``records`` as ``scan_steps`` gives them (``fields`` and ``stamp`` None).

    The same steps as one ``scan_steps`` over ``data[:end]``: a plain transaction
    (``PLAIN_TXN``, what ``scan_steps`` matches whole too) is taken here, at a step boundary;
    anything else is scanned by ``scan_steps`` up to the end of the next line that starts
    with ``106``, kept when that part ends at a step boundary, else scanned again up to
    ``end`` (a part that does not end at a boundary is read as the whole scan reads it).

    The first line the schedd's reader finds corrupt is told to ``rep.saw_corrupt`` (``data``
    starts at byte ``base`` of the file): a plain transaction's lines are unless its 106 line
    is not one the schedd writes (``plain_end_ok``) or the text holds a NUL byte (then the
    whole text is looked at, ``first_corrupt``); anything else, by ``first_corrupt``."""
    if not data[:end].isascii():  # offsets in the text would not be byte offsets
        bad = first_corrupt(data, 0, end)
        if bad is not None:
            rep.saw_corrupt(path, base + bad)
        steps, _clean = scan_part(data, 0, end, path, rep.problems)
        for s, e, records, end_line in steps:
            yield s, e, end_line, records, None, None
        return
    text = data[:end].decode("ascii")
    plain, fields = PLAIN_TXN, PLAIN_FIELDS
    checked = "\0" in text  # then every line is looked at here, once
    if checked and (bad := first_corrupt(data, 0, end)) is not None:
        rep.saw_corrupt(path, base + bad)
    i = 0
    counted, lines = 0, 1  # line number (1-based, of data) at offset counted: problems only
    while i < end:
        m = plain(text, i)
        if m is not None:
            e = m.end()
            body, end_line, minute, seconds = m.groups()
            if minute is None and not checked and not plain_end_ok(end_line):
                rep.saw_corrupt(path, base + e - len(end_line) - 1)
            f = fields(body)
            # the keys of its 101s and 102s (taken from the fields: a second regex pass over
            # the body cost 4-5x more, most of these bodies being a submit's long one)
            keys = [k for o, k, _n, _v in f if o != "3"] if "101 " in body or "102 " in body else None
            yield i, e, end_line, keys, f, None if minute is None else (minute, seconds)
            i = e
            continue
        if text.startswith("106", i):
            at = i
        else:
            at = text.find("\n106", i)
            at = at + 1 if at >= 0 else -1
        k = text.find("\n", at) + 1 if at >= 0 else end  # the end of that 106 line, else of the text
        lines += text.count("\n", counted, i)
        counted = i
        problems: list = []
        steps, clean = scan_part(data, i, k, path, problems, lines)
        if not clean and k < end:
            problems = []
            steps, _clean = scan_part(data, i, end, path, problems, lines)
            k = end
        rep.problems.extend(problems)
        if not checked and (bad := first_corrupt(data, i, k)) is not None:
            rep.saw_corrupt(path, base + bad)
        for s, e, records, end_line in steps:
            yield s, e, end_line, records, None, None
        i = k
