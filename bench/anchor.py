"""The machine anchor the CPU-bound benches print beside their figures: a fixed Python loop
(summing 3,000,000 squares), so a figure from one machine or session can be set against another's
(issue 27's catch-up, issue 30's demo). ``ANCHOR`` runs it in a new process; ``anchor_cpu`` here
(``best_cpu``: any piece of work's CPU, best of N)."""

from __future__ import annotations

import sys
import time

ANCHOR = [sys.executable, "-c", "sum(i * i for i in range(3_000_000))"]  # a new process running the loop


def best_cpu(fn, runs: int) -> float:
    """``fn()``'s CPU seconds in this process (``time.process_time``), the best of ``runs`` runs."""
    best = float("inf")
    for _ in range(runs):
        c = time.process_time()
        fn()
        best = min(best, time.process_time() - c)
    return best


def anchor_cpu(best_of: int = 1) -> float:
    """The anchor loop in this process: its CPU seconds, the best of ``best_of`` runs."""
    return best_cpu(lambda: sum(i * i for i in range(3_000_000)), best_of)
