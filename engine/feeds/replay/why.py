"""Why each idle source job of a recording waits, at the player's moment: the one computation of
``routedeck why`` and of the dashboard's why-not in replay (issue 29: it answered "this engine
offers no routing explanation" there). The ledger (engine.views.ledger) over the replayed queue,
with the routes' state at the router's next poll on replay's poll grid (engine.feeds.replay.stats).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from engine.views.figures import next_close
from engine.views.ledger import ledger


def replay_ledger(player: Any, table: Any, get: Any, jobs: list[str] | None = None) -> list:
    """The ledger's entries at the player's moment (``jobs``: only these)."""
    now = player.time()
    hist = player.history
    figures = hist.figures(player.position, now)
    first = hist.start + hist.period / 2  # the poll grid replay's figures use (engine.feeds.replay.stats)
    poll = first if now < first else first + (math.floor((now - first) / hist.period) + 1) * hist.period
    return ledger(table, player.state.table, now, figures=figures, get=get, jobs=jobs, poll=poll,
                  close_of=lambda begin: next_close(hist.start, hist.period, begin))


@dataclass(frozen=True)
class Explanation:
    """One job's ledger entry as the why-not screen shows it: the verdict and one step per route
    in match order (``ok``: the route takes the job), then the hold countdown."""

    verdict: str
    steps: tuple[dict, ...]


def explanation(entry: Any) -> Explanation:
    steps = [{"route": r["route"], "label": r["verdict"], "ok": r["verdict"] == "matched", "detail": r["detail"]}
             for r in entry.routes]
    if entry.hold:
        h = entry.hold
        steps.append({"label": f"periodic {h.get('action', 'hold')} in {int(h['in'])} s", "ok": None,
                      "detail": f"{h['policy']}: {h['reason']}"})
    verdict = f"{entry.verdict}: {entry.detail}" if entry.detail else entry.verdict
    return Explanation(verdict, tuple(steps))
