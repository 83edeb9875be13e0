"""The real router's JobRouterLog at a replay's moment (issue 27: ``routedeck record --router-log``
archives its lines beside the transactions), for the dashboard's router-log screen."""

from __future__ import annotations

from engine.contract.feed import NOT_OFFERED, FeedBase
from engine.views.queries.access import Queries, ask

NOT_AN_ARCHIVE = ("this feed reads no recorder's archive: the real router's log is archived by "
                  "`routedeck record --router-log FILE` and shown when `routedeck replay DIR` opens the archive")
NO_ROUTER_LOG = ("this archive holds no JobRouterLog: it was recorded without `--router-log FILE` "
                 "(`routedeck record … --router-log /var/log/condor-ce/JobRouterLog`)")


def router_log(runtime: Queries, now: float) -> tuple[dict | None, str]:
    """``(router_log, note)``: the feed's ``router_log(now)`` (``now``: the recorded moment) — the
    ``router_log`` of ``replay DIR --at T --json``: ``table`` and ``lines`` — or ``(None, why there
    is none)``: not an archive, or an archive recorded without ``--router-log``."""
    def on_feed(feed: FeedBase) -> tuple[dict | None, str]:
        out = feed.router_log(now)
        if out is NOT_OFFERED:
            return None, NOT_AN_ARCHIVE
        return (None, NO_ROUTER_LOG) if out is None else (out, "")

    return ask(runtime, on_feed)
