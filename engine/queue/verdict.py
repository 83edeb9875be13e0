"""What a queue log decides: the exit status of a command that reads one, and the one line that
says why (the rule of every command, engine.cli.args "What the input decides"). Below the CLI so
that the launchers (engine.launch) tell a file that is not a job queue log the same way."""

from __future__ import annotations

OK, FINDINGS, USAGE = 0, 1, 2


def log_verdict(problems, not_a_log: str | None = None) -> tuple[int, str | None]:
    """The exit status a queue log decides, and the one line that says why (None with 0): see
    the module docstring. ``problems`` are ``engine.queue.result.Problem`` (record 0 with
    severity ``fatal``: the file could not be read); ``not_a_log`` is ``LoadResult.not_a_log()``
    (None for an empty or blank file: an empty queue)."""
    problems = list(problems)
    for p in problems:
        if p.severity == "fatal" and p.record == 0:
            return USAGE, str(p)
    if not_a_log:
        return USAGE, not_a_log
    for p in problems:
        if p.severity == "fatal":
            return FINDINGS, str(p)
    return OK, None


def load_verdict(res) -> tuple[int, str | None]:
    """:func:`log_verdict` of an ``engine.queue.result.LoadResult``."""
    return log_verdict(res.problems, res.not_a_log())
