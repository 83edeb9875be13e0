"""CPU cost of ``engine.queue.steps.scan_steps`` alone (issue 27: the recorder's catch-up reads
every record of the log through it; replay's index reads a whole log through it).

Scans the demo repeated ``--copies`` times (``tests.helpers.demo_days.long_log``) into a sink that
applies nothing, keeping each step as the recorder does (``on_step`` appends it), two ways: in
``READ_CHUNK`` pieces as the recorder reads (its step list emptied after each piece), and in one
piece as replay's index does (every step kept). Each is timed with the collector paused for the
scan (what ``scan_steps`` does) and running (``_scan_steps``, the scan without the pause: the
code before it). Prints the best CPU time of ``--repeat`` runs (``time.process_time``, not
cProfile: its per-call cost distorts a per-line loop) and the load average beside it.

    python bench/scan_steps.py [--copies N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from engine.queue.steps import _scan_steps, scan_steps
from engine.record.recorder import READ_CHUNK
from tests.helpers.demo_days import long_log


class _Sink:
    __slots__ = ()

    @staticmethod
    def apply_quiet(records: list) -> int:
        return 0


def _chunked(scan, data: bytes) -> None:
    steps: list = []
    pos = 0
    while pos < len(data):  # whole lines of READ_CHUNK bytes
        end = data.rfind(b"\n", pos, pos + READ_CHUNK) + 1
        scan(data, pos, end, _Sink(), lambda s, e, _l, r, x=None: steps.append((s, e, r, x)), None, 1)
        steps.clear()
        pos = end


def _whole(scan, data: bytes) -> None:
    steps: list = []
    scan(data, 0, len(data), _Sink(), lambda s, e, _l, r, x=None: steps.append((s, e, r, x)), None, 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    data = long_log(a.copies)
    txns = data.count(b"\n106 ")
    mb = len(data) / 1e6
    lines = data.count(b"\n")
    print(f"log: demo-3h x{a.copies}: {mb:.1f} MB, {lines:,} lines, {txns:,} transactions")
    best: dict[tuple[str, str], float] = {}
    for _ in range(a.repeat):  # interleaved, so that a burst of load hits both alike
        for how, run in (("READ_CHUNK pieces (recorder)", _chunked), ("one piece (replay index)", _whole)):
            for label, scan in (("collector running", _scan_steps), ("collector paused", scan_steps)):
                c0 = time.process_time()
                run(scan, data)
                dt = time.process_time() - c0
                best[how, label] = min(best.get((how, label), dt), dt)
    for (how, label), dt in best.items():
        print(f"scan_steps, {how}, {label}: best CPU {dt:.2f} s = {txns / dt:,.0f} tx/s, "
              f"{dt / mb * 1e3:.0f} ms/MB")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
