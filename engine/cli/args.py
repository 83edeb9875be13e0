"""Checks of command-line arguments, shared by every subcommand (argparse ``type=`` functions).

Design decisions and invariants:

- One check per kind of argument, used by every command that takes one: ``--tz`` (:func:`zone`),
  a file or directory path (:func:`path`), a job id (:func:`job_id`). A value that fails is a
  usage error: argparse reports it before the command runs, as one line (see :class:`Parser`),
  exit status 2. Nothing reaches the system or a library unchecked (``ZoneInfo`` took
  ``../../etc/passwd`` as a path and raised; ``os.stat`` raised on a NUL byte).
- :func:`zone` is the lookup ``routedeck cron`` always used (``engine.crondor.get_zone``); it
  returns a name that ``zoneinfo.ZoneInfo`` also accepts (a UTC alias it does not know, such
  as ``Z``, becomes ``UTC``), so commands may keep passing the name on.
- :func:`path` checks only what no file system accepts (an empty name, a NUL byte). Whether the
  file exists and can be read stays with each command, whose message says what it tried to do.
- :func:`job_id` takes ``condor_q``'s forms, ``CLUSTER`` or ``CLUSTER.PROC`` with cluster ≥ 1,
  proc ≥ 0 (htcondor.md §3.1 "Keys"), each a 32-bit integer as in HTCondor's ``PROC_ID``.
- The functions return the checked text unchanged (or canonical), never an object, so a command
  called with a hand-made ``Namespace`` behaves as before.
- One convention for every command (issue 11 item 19): exit status 0 ok, 1 findings or problems
  in the input, 2 usage or unreadable input (:func:`usage_error`: one line on stderr, nothing on
  stdout); an input file is checked with :func:`unreadable` before anything is printed; a queue
  log is ``LOG`` (positional) in every command that reads one, ``--queue-log`` kept as its alias
  (:func:`add_log_argument`, :func:`log_of`); help texts come from module docstrings through
  :func:`help_text` (no reStructuredText markup on screen).
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys

_JOB_ID = re.compile(r"([0-9]{1,10})(?:\.([0-9]{1,10}))?")
_INT_MAX = 2**31 - 1


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:80] + "…")


def zone(text: str) -> str:
    """``--tz``: an IANA time zone name (or a UTC alias)."""
    from engine.crondor import ZoneError, get_zone  # noqa: PLC0415
    from engine.crondor.zones import FixedZone  # noqa: PLC0415

    try:
        found = get_zone(text)
    except ZoneError:
        raise argparse.ArgumentTypeError(f"unknown time zone {_shown(text)} (an IANA name such as "
                                         "Europe/Paris, or UTC)") from None
    if isinstance(found, FixedZone):
        from zoneinfo import ZoneInfo  # noqa: PLC0415

        try:
            ZoneInfo(text)
        except Exception:  # noqa: BLE001 - an alias only RouteDeck's table knows (e.g. "Z")
            return "UTC"
    return text


def path(text: str) -> str:
    """A file or directory path: non-empty and without a NUL byte."""
    if not text:
        raise argparse.ArgumentTypeError("empty path")
    if "\0" in text:
        raise argparse.ArgumentTypeError(f"path {_shown(text)} contains a NUL byte, which no file name can")
    return text


def job_id(text: str) -> str:
    """``CLUSTER`` or ``CLUSTER.PROC`` (cluster >= 1, proc >= 0)."""
    m = _JOB_ID.fullmatch(text)
    if m is None or not 1 <= int(m[1]) <= _INT_MAX or (m[2] is not None and int(m[2]) > _INT_MAX):
        raise argparse.ArgumentTypeError(f"not a job id: {_shown(text)} (give CLUSTER or CLUSTER.PROC, "
                                         "e.g. 12 or 12.0)")
    return text


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line, ``routedeck CMD: message``, exit 2
    (subcommand parsers inherit the class). ``--help`` still prints the full usage."""

    def error(self, message: str):  # type: ignore[override]
        words = self.prog.split()
        prefix = " ".join(words[:2]) if words else "routedeck"
        text = " ".join(message.split())  # argparse may wrap; keep it one line
        self.exit(2, f"{prefix}: {text}\n")


OK, FINDINGS, USAGE = 0, 1, 2


def usage_error(command: str, message: str) -> int:
    """Print ``routedeck COMMAND: message`` (one line) on stderr; return exit status 2."""
    print(f"routedeck {command}: {' '.join(str(message).split())}", file=sys.stderr)
    return USAGE


def unreadable(path: str, *, directory: bool = False) -> str | None:
    """Why ``path`` cannot be read as an input file (or, with ``directory``, a directory too), in
    one line (``cannot read X: No such file or directory``); None when it can. Never opens the
    file (a FIFO would block)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    if stat.S_ISDIR(st.st_mode):
        if not directory:
            return f"cannot read {path}: Is a directory"
    elif not stat.S_ISREG(st.st_mode):
        return f"cannot read {path}: not a regular file"
    if not os.access(path, os.R_OK):
        return f"cannot read {path}: Permission denied"
    return None


def add_log_argument(p: argparse.ArgumentParser, what: str = "the schedd's job_queue.log", required: bool = True) -> None:
    """``LOG`` (positional) with ``--queue-log LOG`` as its alias (the spelling ``router-q`` and
    ``watch`` used); read the value with :func:`log_of`."""
    p.add_argument("log", metavar="LOG", nargs="?", type=path, help=what + ("" if required else " (optional)"))
    p.add_argument("--queue-log", dest="queue_log_alias", metavar="LOG", type=path, help="the same as LOG")
    p.set_defaults(log_required=required)


def log_of(args: argparse.Namespace, command: str, *, readable: bool = False) -> str | None:
    """The log given as LOG or ``--queue-log``; raises :class:`UsageError` when both differ, a
    required one is missing or (``readable``) the one given cannot be read (:func:`unreadable`)."""
    given = [v for v in (getattr(args, "log", None), getattr(args, "queue_log_alias", None),
                         getattr(args, "queue_log", None)) if v]
    if len(set(given)) > 1:
        raise UsageError(f"give the log once (LOG or --queue-log), not {' and '.join(given)}")
    if not given and getattr(args, "log_required", False):
        raise UsageError("give the job_queue.log to read (LOG)")
    if readable and given and (why := unreadable(given[0])):
        raise UsageError(why)
    return given[0] if given else None


class UsageError(ValueError):
    """A usage problem found after parsing; the message is one line (see :func:`usage_error`)."""


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def help_text(doc: str | None, paragraph: int = 0) -> str | None:
    """Paragraph ``paragraph`` of a module docstring, for ``--help``, without reStructuredText
    markup (``literal``, :role:`target`) and re-flowed by argparse."""
    if not doc:
        return None
    parts = [p for p in doc.strip().split("\n\n") if p.strip()]
    text = parts[min(paragraph, len(parts) - 1)]
    text = _ROLE.sub(lambda m: m[1].rsplit(".", 1)[-1] if m[1].startswith("engine.") else m[1], text)
    return " ".join(text.replace("``", "").split())
