"""Why each idle source job of a recording waits, at the player's moment: the one computation of
``routedeck why`` and of the dashboard's why-not in replay (issue 29: it answered "this engine
offers no routing explanation" there). The ledger (engine.views.ledger.ledger_at) over the
replayed queue, with the routes' state at the router's next poll on replay's poll grid
(engine.feeds.replay.stats).
"""

from __future__ import annotations

from typing import Any

from engine.views.ledger import ledger_at


def replay_ledger(player: Any, table: Any, get: Any, jobs: list[str] | None = None) -> list:
    """The ledger's entries at the player's moment (``jobs``: only these)."""
    now = player.time()
    hist = player.history
    return ledger_at(table, player.state.table, now, hist.figures(player.position, now), hist.start, hist.period,
                     get, jobs)
