"""The machine anchor the CPU-bound benches print beside their figures: a fixed Python loop
(summing 3,000,000 squares), so a figure from one machine or session can be set against another's
(issue 27's catch-up, issue 30's demo). ``ANCHOR`` runs it in a new process; ``anchor_cpu`` here."""

from __future__ import annotations

import sys
import time

ANCHOR = [sys.executable, "-c", "sum(i * i for i in range(3_000_000))"]  # a new process running the loop


def anchor_cpu(best_of: int = 1) -> float:
    """The anchor loop in this process: its CPU seconds, the best of ``best_of`` runs."""
    best = float("inf")
    for _ in range(best_of):
        c = time.process_time()
        sum(i * i for i in range(3_000_000))
        best = min(best, time.process_time() - c)
    return best
