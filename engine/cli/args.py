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
"""

from __future__ import annotations

import argparse
import re

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
        except Exception:  # an alias only RouteDeck's table knows (e.g. "Z")
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
