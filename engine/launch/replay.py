"""Opening a recording (a job_queue.log, or a recorder's archive directory) and replay's runtime
for a screen. The headless ``routedeck replay`` and ``routedeck why`` open a recording the same
way: :func:`index_of`, :func:`check_recording`, :func:`moment`, :func:`make_player`."""

from __future__ import annotations

import os
from typing import Any

from engine.clock import ManualClock
from engine.contract.commands import Seek
from engine.feeds.replay.index import build_index
from engine.feeds.replay.moment import MomentError, parse_moment
from engine.feeds.replay.player import Player
from engine.launch.options import ReplayOptions
from engine.queue.verdict import USAGE, load_verdict


def moment(opts: ReplayOptions, start: float, end: float, transactions: int) -> Seek | None:
    """``opts.at`` / ``opts.transaction`` as a ``Seek`` (None: neither given); MomentError in words."""
    if opts.transaction is not None and opts.at is not None:
        raise MomentError("give --at or --transaction, not both")
    if opts.transaction is not None:
        return parse_moment(f"#{opts.transaction}", start=start, end=end, transactions=transactions, tz=opts.tz)
    if opts.at is not None:
        return parse_moment(opts.at, start=start, end=end, transactions=transactions, tz=opts.tz)
    return None


def load_routing(paths: tuple[str, ...] | list[str]):
    """``--config``'s config and routing table (engine.router.loader.load_config_and_table), read
    once for the player's limits, ``routedeck why`` and the why-not screen; None without a config."""
    if not paths:
        return None
    from engine.router.loader import load_config_and_table  # noqa: PLC0415 - only when a config is given

    return load_config_and_table(paths)


def load_table(paths: tuple[str, ...] | list[str], loaded=None) -> tuple[dict | None, dict | None, float, list[str]]:
    """(limits, failure rules for engine.feeds.replay.stats, JOB_ROUTER_POLLING_PERIOD, errors) of
    ``paths`` (``loaded``: their :func:`load_routing`, when read already)."""
    from engine.views.figures import DEFAULT_POLLING_PERIOD, table_rules  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    if not paths:
        return None, None, DEFAULT_POLLING_PERIOD, []
    loaded = loaded if loaded is not None else load_routing(paths)
    limits, rules, period = table_rules(loaded.table)
    return limits, rules, period, loaded.problems


def make_player(index, opts: ReplayOptions, clock=None, loaded=None, jobs: bool = True,
                collect_events: bool = True) -> tuple[Player, list[str]]:
    """A player on ``index`` with the config's limits and failure rules (and the table's errors);
    ``loaded``: the config's :func:`load_routing`, when read already; ``jobs`` False: its views
    have no jobs table; ``collect_events`` False: it keeps no router events (``Player``)."""
    from engine.views.figures import route_locations  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    if loaded is None and opts.config:
        loaded = load_routing(opts.config)
    limits, rules, period, errors = load_table(opts.config, loaded)
    player = Player(index, clock or ManualClock(0.0), speed=opts.speed, limits=limits, tz=opts.tz or "UTC",
                    rules=rules, polling_period=period, jobs=jobs, collect_events=collect_events)
    if loaded is not None:
        player.locations = route_locations(loaded.table)
    return player, errors


class NotARecording(ValueError):
    """The file is not a job queue log (engine.cli.replay's docstring); the message is one line."""


class NothingToReplay(Exception):
    """The log is an empty queue: no committed transaction (engine.cli.replay's docstring); the
    message is one line. Not an error: the screen is not opened, the exit status is 0."""


def index_of(path: str, tz: str | None, follow: Any = None):
    """(LogIndex, ArchiveReplay or None): a recorder's archive directory (engine.record) is
    replayed as the one log it holds (engine.feeds.replay.archive); anything else is a log,
    indexed with ``follow`` fed in the same pass (``build_index``; an archive does not feed it)."""
    from engine.feeds.replay.archive import is_archive, open_archive  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    if is_archive(path):
        archive = open_archive(path, tz=tz)
        return archive.index, archive
    return build_index(path, tz=tz, follow=follow), None


def check_recording(index, path: str) -> str | None:
    """None when ``index`` (of ``path``) has a step to replay; else the line saying that the log
    is an empty queue with nothing to replay, or :class:`NotARecording` when the file is not a
    job queue log at all (the schedd's reading of the whole file, engine.queue.reader)."""
    if index.steps:
        return None
    if os.path.isdir(path):
        return f"{path}: the archive holds no transaction; nothing to replay"
    from engine.queue.reader import load_log  # noqa: PLC0415 - only for a file without steps

    res = load_log(path)
    status, why = load_verdict(res)
    if status == USAGE:
        raise NotARecording(why)
    what = res.no_record() or f"{path}: no committed transaction: an empty queue"
    return f"{what}; nothing to replay"


def replay_runtime(opts: ReplayOptions, publish=None):
    """For a screen: an ``engine.runtime.Runtime`` playing the log (paused at its start, or at
    the moment asked) at ``opts.speed`` on a virtual clock; the UI sends Seek/Step/Pause/Resume/SetSpeed and
    ``engine.contract.commands.AddBookmark``/``GotoBookmark``."""
    from engine.clock import VirtualClock  # noqa: PLC0415 - kept off `routedeck --help`'s start-up
    from engine.feeds.replay.feed import ReplayFeed  # noqa: PLC0415 - kept off `routedeck --help`'s start-up
    from engine.runtime import Runtime  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    index, archive = index_of(opts.log, opts.tz)
    if (empty := check_recording(index, opts.log)) is not None:
        raise NothingToReplay(empty)
    loaded = load_routing(opts.config)
    player, _errors = make_player(index, opts, loaded=loaded)
    if archive is not None:  # the replay bar marks its generation boundaries and gaps
        from engine.feeds.replay.archive import replay_marks  # noqa: PLC0415 - only for an archive

        player.marks = replay_marks(archive)
    target = moment(opts, player.start, player.end, index.steps)  # MomentError: a ValueError
    if target is not None:
        player.move(step=target.transaction, time=target.time)  # the feed settles it
    feed = ReplayFeed(player, opts.config, loaded, archive=opts.log if archive is not None else None, tz=opts.tz)
    clock = VirtualClock(start=feed.now, speed=opts.speed, paused=True)
    return Runtime(feed, clock, publish=publish, snapshot_interval=0.25)
