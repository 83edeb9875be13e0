"""RouteDeck's commands, in one table used by the ``:`` line, the Ctrl+P palette and ``?`` help.

Each command is ``name, argument hint, help, method`` where method is the name of a
``RouteDeckApp.cmd_<x>`` taking the argument text. Keeping one table means the three entry
points cannot drift apart (the help test checks every command is listed).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    name: str
    arg: str  # "" when the command takes none
    help: str
    aliases: tuple[str, ...] = ()
    # what the ``:`` line completes, one kind per argument: route, job, column, order, bookmark, seek
    complete: str = ""
    # the feed control it needs (engine.contract.snapshot.CONTROLS); "" = always available
    control: str = ""


COMMANDS: tuple[Command, ...] = (
    Command("board", "", "routes board (home; key b)", ("b", "routes")),
    Command("jobs", "[TEXT]", "jobs screen, optionally filtered by text (key j)", ("j",)),
    Command("cron", "", "crondor screen (key c)", ("c", "crondor")),
    Command("hooks", "[TEXT]", "execute node's hook invocations, optionally filtered (key h)", (), control="execute"),
    Command("slots", "", "execute node's slots (key o)", (), control="execute"),
    Command("edit", "[NAME]", "route editor (at route NAME)", ("e",), "route"),
    Command("why", "JOB", "why is this idle job not routed", ("whynot",), "waiting"),
    Command("ledger", "", "every idle source job: its verdict, route or why it waits, hold countdown (key l)",
            ("verdicts",)),
    Command("routerlog", "", "replay: the real router's JobRouterLog at this moment beside RouteDeck's "
            "figures (key R; an archive recorded with --router-log)", ("rlog",)),
    Command("trace", "JOB", "the job's routed ad built step by step (transform tracer)", (), "job"),
    Command("chain", "[JOB]", "source job → routed copy → grid job, lags and orphans (key x)", ("xray",), "job"),
    Command("where", "EXPR", "jobs matching a ClassAd constraint", ()),
    Command("sort", "COLUMN [desc]", "sort the jobs by a column", (), "column order"),
    Command("pause", "", "pause the engine", (), control="pause"),
    Command("resume", "", "resume the engine", ("play",), control="pause"),
    Command("step", "[N]", "advance N engine cycles while paused", (), control="step"),
    Command("speed", "X", "set the virtual clock's speed (×X)", (), control="speed"),
    Command("seek", "TIME|+SECONDS|#N", "replay: go to a recorded time, an offset or a transaction", (), "seek", control="seek"),
    Command("mark", "[NAME]", "replay: bookmark this moment", (), control="seek"),
    Command("bookmark", "NAME", "replay: go to a bookmark", (), "bookmark", control="seek"),
    Command("hold", "JOB", "hold a job (asks first)", (), "job", control="jobs"),
    Command("release", "JOB", "release a held job (asks first)", (), "job", control="jobs"),
    Command("rm", "JOB", "remove a job (asks first)", ("remove",), "job", control="jobs"),
    Command("export", "[csv|json] [PATH]", "save the table shown as CSV (or JSON)", ()),
    Command("export-json", "[PATH]", "save the table shown as JSON", ()),
    Command("screenshot", "[PATH]", "save the screen as SVG", ("svg",)),
    Command("copy", "", "copy the selected job id or route name", ("yank",)),
    Command("undo", "", "restore the routing table before the last apply", (), control="routes"),
    Command("error", "", "the engine's full error text, after a crash", ()),
    Command("help", "", "list every key and command", ("?",)),
    Command("quit", "", "leave RouteDeck", ("q", "q!")),
)


def lookup(word: str) -> Command | None:
    word = word.lower()
    for c in COMMANDS:
        if word == c.name or word in c.aliases:
            return c
    return None
