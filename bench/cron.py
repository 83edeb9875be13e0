"""Benchmark: microseconds per next-run for RouteDeck's crondor, cronsim and croniter.

Each library chains ``K`` next runs from the same start over the same corpus of schedules, in
the same process; parsing happens outside the timed loop for all three. A schedule's figure is
the best of ``REPEAT`` runs (the machine is shared), divided by ``K``; the script prints the
median and 90th percentile over the corpus, and the ratios to RouteDeck.

Target (issue 3): median <= 10 us and >= 3x faster than cronsim.

Run: ``python bench/cron.py [K] [REPEAT]``. Prints figures only; not a test.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cronsim import CronSim
from croniter import croniter

from engine.crondor import get_zone, next_run, parse_schedule, schedd_next_run

# Five-field cron lines that all three libraries accept (numbers only, no N/step forms).
CORPUS = [
    "* * * * *", "*/5 * * * *", "*/15 * * * *", "0 * * * *", "30 */2 * * *", "0 9 * * *",
    "0 9 * * 1-5", "15 14 1 * *", "0 22 * * 1-5", "23 0-20/2 * * *", "5 4 * * 0", "0 0,12 1 */2 *",
    "0 4 8-14 * *", "0 0 1,15 * 3", "0 12 * * 6", "0 0 13 * 5", "10-30/5 * * * *", "0 0 1 1 *",
    "0 12 29 2 *", "0 0 31 * *", "45 23 * * 0", "0 6,18 * 3-10 *", "0 2 * * *", "30 2 * * *",
    "0 1 * * *", "*/10 0-11 18 1 *", "0 8-17 * * 1-5", "0 0 1-7 * 1", "7 7 7 7 *", "0 */3 * * *",
]

START = datetime(2024, 1, 1, 0, 0, 30)


def time_ours(fields, zone, start_ts: int, k: int, repeat: int, fn) -> float:
    s = parse_schedule(*fields)
    z = get_zone(zone)
    best = float("inf")
    for _ in range(repeat):
        t = start_ts
        t0 = time.perf_counter()
        for _ in range(k):
            t = fn(s, t, z)
        best = min(best, time.perf_counter() - t0)
    return best / k * 1e6


def time_cronsim(expr: str, start: datetime, k: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        it = CronSim(expr, start)
        t0 = time.perf_counter()
        for _ in range(k):
            next(it)
        best = min(best, time.perf_counter() - t0)
    return best / k * 1e6


def time_croniter(expr: str, start: datetime, k: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        it = croniter(expr, start)
        t0 = time.perf_counter()
        for _ in range(k):
            it.get_next(float)
        best = min(best, time.perf_counter() - t0)
    return best / k * 1e6


def ours_correct(s, t, z):
    return next_run(s, t, z)


def ours_schedd(s, t, z):
    return schedd_next_run(s, t, z).time


def summary(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


def main() -> None:
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print(f"crondor next-run benchmark: {len(CORPUS)} schedules x {k} chained runs, best of {repeat}")
    print(f"{'zone':<18} {'library':<22} {'median us':>10} {'p90 us':>9} {'vs RouteDeck':>13}")
    for zone in ("UTC", "America/Chicago"):
        start = START.replace(tzinfo=ZoneInfo(zone))
        start_ts = int(start.timestamp())
        fields = [tuple(line.split()) for line in CORPUS]
        results = {
            "RouteDeck (correct)": [time_ours(f, zone, start_ts, k, repeat, ours_correct) for f in fields],
            "RouteDeck (schedd)": [time_ours(f, zone, start_ts, k, repeat, ours_schedd) for f in fields],
            "cronsim": [time_cronsim(e, start, k, repeat) for e in CORPUS],
            "croniter": [time_croniter(e, start, k, repeat) for e in CORPUS],
        }
        base = summary(results["RouteDeck (correct)"])[0]
        for name, values in results.items():
            med, p90 = summary(values)
            print(f"{zone:<18} {name:<22} {med:>10.2f} {p90:>9.2f} {med / base:>12.1f}x")
        med = summary(results["RouteDeck (correct)"])[0]
        verdict = "met" if med <= 10 and summary(results["cronsim"])[0] >= 3 * med else "NOT met"
        print(f"{zone:<18} target (median <= 10 us, >= 3x faster than cronsim): {verdict}")


if __name__ == "__main__":
    main()
