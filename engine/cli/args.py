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
  called with a hand-made ``Namespace`` behaves as before. Numbers are checked the same way
  (issue 25 item 8f): a speed or an interval is :func:`positive`, a duration
  :func:`non_negative`, a count :func:`count`, a transaction number :func:`index`, a time
  :func:`epoch`; NaN and infinities are never accepted (``demo --speed -5`` used to run).
- ``--config FILE`` is :func:`add_config_argument` in every command that takes it: one file per
  flag, repeatable, so ``--config CFG LOG`` keeps LOG as the positional.
- One convention for every command (issue 11 item 19): exit status 0 ok, 1 findings or problems
  in the input, 2 usage or unreadable input (:func:`usage_error`: one line on stderr, nothing on
  stdout); an input file is checked with :func:`unreadable` before anything is printed; a queue
  log is ``LOG`` (positional) in every command that reads one, ``--queue-log`` kept as its alias
  (:func:`add_log_argument`, :func:`log_of`); help texts come from module docstrings through
  :func:`help_text` (no reStructuredText markup on screen).
- What the input decides (issue 25 item 5): one rule for every command, here.

  - A queue log (``queue``, ``router-q``, ``replay``, ``watch --once``, ``route --queue-log``),
    :func:`log_verdict`: 2 when it cannot be read or is not a job queue log at all (bytes other
    than blanks and not one valid record). An empty file or one of blank lines is an empty
    queue, as the schedd reads it (``engine.queue.result``), and so is a log of just its 107:
    0, with 0 jobs. 1 when the log has a fatal problem (the schedd would refuse to start on it:
    a corrupt record inside a committed transaction, htcondor.md §3.3; in watch, where the
    router would assert, §3.5): the command still prints what it read, and stderr names the
    problem. Problems HTCondor gets over (a torn last line, an unfinished last transaction, a
    value that does not parse) are reported and do not change the status. A value a command
    shows that is not of its type (``router-q``'s JobStatus, QDate, RouteName, …:
    ``engine.queue.job.bad_values``) is a finding too: 1, each named on stderr (job id,
    attribute, text; :func:`bad_value_lines`).
  - A config (``--config`` of watch, replay and route, ``check``'s CONFIG, demo's
    ``--config-dir``), :func:`config_status`: 2 when a file cannot be read (missing, a
    directory where a file is needed, not a regular file, permission denied). A config that
    reads but has errors (the config reader's or the routing table's, each named with its file
    and line on stderr) is a finding: 1. The command still does what it can with the rest (a
    route that does not parse is left out, as HTCondor does), except the demo, which does not
    start on a config with errors.
  - Several findings: the worst status wins (:func:`worst`).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import stat
import sys

# the queue log's verdict lives below the CLI (engine.queue.verdict), so the launchers share it
from engine.queue.verdict import FINDINGS as FINDINGS, OK as OK, USAGE as USAGE
from engine.queue.verdict import load_verdict as load_verdict, log_verdict as log_verdict

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


def _number(text: str, kind: type = float) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {'an integer' if kind is int else 'a number'}: {_shown(text)}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not a finite number")
    return value


def positive(text: str) -> float:
    """A number of seconds or a speed: finite and > 0 (``--speed``, ``--interval``, ``--slow-poll``)."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {_shown(text)}")
    return value


def non_negative(text: str) -> float:
    """A duration: finite and >= 0 (``--duration``)."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {_shown(text)}")
    return value


def count(text: str) -> int:
    """A number of things: an integer >= 1 (``--count``)."""
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {_shown(text)}")
    return value


def index(text: str) -> int:
    """A position counted from 0: an integer >= 0 (``--transaction``, where 0 is before the first)."""
    value = int(_number(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {_shown(text)}")
    return value


def epoch(text: str) -> float:
    """A time in epoch seconds: finite, within years 1-9999 (ClassAd times are 64-bit integers)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not epoch seconds") from None
    if not (math.isfinite(value) and -62135596800 <= value <= 253402300799):
        raise argparse.ArgumentTypeError(f"{text!r} is outside years 1-9999")
    return value


def add_config_argument(p: argparse.ArgumentParser, help: str, *, dest: str = "config",
                        flags: tuple[str, ...] = ("--config",), metavar: str = "CONFIG") -> None:
    """``--config FILE``, repeatable (``--config A --config B`` reads A, then B), one file per
    flag: a positional after it (``--config CFG LOG``) stays the positional (issue 25 item 8e;
    ``nargs='+'`` took LOG as a second config file). ``hook run`` always had this form."""
    p.add_argument(*flags, dest=dest, action="append", default=[], metavar=metavar, type=path,
                   help=help + " (repeat --config for more files, read in order)")


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line, ``routedeck CMD: message``, exit 2
    (subcommand parsers inherit the class). ``--help`` still prints the full usage."""

    def error(self, message: str):  # type: ignore[override]
        words = self.prog.split()
        prefix = " ".join(words[:2]) if words else "routedeck"
        text = " ".join(message.split())  # argparse may wrap; keep it one line
        self.exit(2, f"{prefix}: {text}\n")


def register_headless(subparsers, name: str, help: str, doc: str | None, add_arguments, run) -> None:
    """Register the headless form of a mode that also has a screen (replay, watch, fleet): when the
    TUI's own command of that name is there, it owns the name (and calls the headless run)."""
    if name in getattr(subparsers, "_name_parser_map", {}):
        return
    p = subparsers.add_parser(name, help=help, description=(doc or "").split("\n\n")[0])
    add_arguments(p)
    p.set_defaults(func=run)


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


def refused_log_status(res, command: str, after: str = "skips that record and shows the rest") -> int:
    """:func:`load_verdict` of ``res`` (a ``LoadResult`` read with the schedd's rules, values not
    parsed), saying on stderr which record the schedd would refuse to start on when it is not 0.
    ``after`` says what ``command`` does about it. One message for every command that reads a log
    the index read leniently (replay, why, record)."""
    status, _why = load_verdict(res)
    fatal = next((p for p in res.problems if p.severity == "fatal"), None)
    if status and fatal is not None:
        print(f"routedeck {command}: {fatal.file}: record {fatal.record} (byte offset {fatal.offset}): fatal: the "
              f"schedd would refuse to start on this log ({fatal.message.split(';')[0]}, inside a committed "
              f"transaction); {command} {after}", file=sys.stderr)
    return status


def config_status(errors) -> int:
    """The exit status a config that could be read decides: 1 when it has errors, else 0."""
    return FINDINGS if list(errors) else OK


def worst(*statuses: int) -> int:
    """The status of a command with several findings: the worst (2 over 1 over 0)."""
    return max(statuses, default=OK)


MAX_VALUE_LINES = 20


def bad_value_lines(bad: list, log: str) -> list[str]:
    """Lines naming the values not of their type (``engine.queue.job.BadValue``): at most
    :data:`MAX_VALUE_LINES`, then a count of the rest."""
    lines = [f"{log}: {b}" for b in bad[:MAX_VALUE_LINES]]
    if len(bad) > MAX_VALUE_LINES:
        lines.append(f"{log}: … and {len(bad) - MAX_VALUE_LINES} more values not of their type")
    return lines


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
