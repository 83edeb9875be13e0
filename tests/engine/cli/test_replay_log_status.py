"""``replay``/``why`` read the log once (issue 30): the schedd's verdict on it (exit status and
the line on stderr, ``engine.cli.replay.log_status``) comes from the bytes the index's pass read,
and equals the verdict of a second read with the schedd's rules (``load_log``) on every kind of log.

Sources: htcondor.md §3.3 (the owner's reading: a corrupt record inside a committed transaction is
fatal, a torn last line and an unfinished last transaction are discarded, records outside a
transaction — a compacted log's body — apply as they are) and §3.1 (a NUL byte ends the log).
"""

from __future__ import annotations

import builtins
import os

import pytest

from engine.cli.replay import log_status
from engine.feeds.replay.index import build_index
from engine.queue import reader
from engine.queue.reader import load_log
from engine.cli import args as argcheck
from tests.helpers.replay_logs import Recording
from tui.cli import main

CONFIG = "sample_configs/demo/condor_config"
FROM_THE_INDEX = {"whole", "truncated", "truncated at a line end", "compacted", "compacted and truncated", "only the 107"}


def _old_status(path: str, command: str) -> int:
    """The computation before issue 30's change: the whole log read again with the schedd's rules."""
    return argcheck.refused_log_status(load_log(path, validate=False), command)


def _variants(text: str) -> dict[str, str]:
    lines = text.split("\n")
    mid = len(lines) // 2
    while not lines[mid].startswith("103 "):
        mid += 1
    body = [x for x in lines[:40] if not x.startswith(("105", "106"))]  # a compacted body: no transaction
    return {
        "whole": text,
        "truncated": text[: len(text) * 2 // 3],  # a torn last line inside an unfinished transaction
        "truncated at a line end": text[: text.rindex("\n105 \n") + 5],  # an open 105, whole lines
        "compacted": "\n".join(body + lines[40:]),
        "compacted and truncated": "\n".join(body + lines[40:])[: len(text) // 2],
        "corrupt in a committed transaction": "\n".join(lines[:mid] + ["999 bogus"] + lines[mid + 1:]),
        "corrupt at the torn end": text.rstrip("\n") + "\n105 \n999 bogus\n103 1.0 X 1",
        "blank line": "\n".join(lines[:mid] + [""] + lines[mid:]),
        "105 without its blank": "\n".join(lines[:mid] + ["105"] + lines[mid:]),
        "NUL byte": "\n".join(lines[:mid] + [lines[mid][:5] + "\0" + lines[mid][5:]] + lines[mid + 1:]),
        "only the 107": lines[0] + "\n",
        "empty": "",
    }


@pytest.mark.parametrize("name", list(_variants("107 1 CreationTimestamp 0\n105 \n103 0.0 A 1\n106 \n")))
def test_status_from_the_index_equals_a_second_read(tmp_path, capsys, monkeypatch, name):
    text = _variants(Recording(5, steps=120).text())[name]
    log = tmp_path / "job_queue.log"
    log.write_bytes(text.encode("utf-8", "surrogateescape"))
    want = _old_status(str(log), "replay"), capsys.readouterr().err
    index = build_index(log)
    reads = []
    monkeypatch.setattr(reader, "load_log", lambda *a, **k: reads.append(a) or load_log(*a, **k))
    got = log_status(str(log), "replay", index=index), capsys.readouterr().err
    assert got == want
    # the logs the schedd reads without a corrupt record are decided from the index's bytes alone
    assert (not reads) == (name in FROM_THE_INDEX)
    if name == "corrupt in a committed transaction":  # the case is one that decides 1 (§3.3)
        assert want[0] == 1 and "fatal: the schedd would refuse to start on this log" in want[1]


class _Opens:
    """Counts the opens of one file (every reader of a log opens it: the index's pass, load_log)."""

    def __init__(self, monkeypatch, path: str) -> None:
        self.path, self.count = os.path.realpath(path), 0
        real = builtins.open

        def counting(file, *a, **k):
            if isinstance(file, (str, os.PathLike)) and os.path.realpath(file) == self.path:
                self.count += 1
            return real(file, *a, **k)

        monkeypatch.setattr(builtins, "open", counting)


@pytest.mark.parametrize("argv", [
    ["replay", "{log}", "--json"],
    ["replay", "{log}", "--at", "end"],
    ["replay", "{log}", "--json", "--reroute", "--config", CONFIG],
    ["why", "{log}", "--config", CONFIG],
])
def test_the_log_is_read_once(tmp_path, capsys, monkeypatch, argv):
    log = tmp_path / "job_queue.log"
    log.write_text(Recording(7, steps=80).text())
    opens = _Opens(monkeypatch, str(log))
    rc = main([a.format(log=log) for a in argv])
    capsys.readouterr()
    assert rc == 0 and opens.count == 1
