"""Key → screen switch in a real terminal: ``routedeck demo`` in tmux at 132x40 (issue 30).

Starts the demo (its default speed, ×60) in a detached tmux session, waits for the routes board,
then presses the keys that switch the main screens (``c`` crondor, ``j`` jobs, ``b`` board,
``?`` help and ``escape``) and times each from ``tmux send-keys`` until ``tmux capture-pane``
shows the new screen with its first row drawn from the snapshot. The anchor, in the same run:
the same measurement on a pane running ``cat`` (tmux's echo of one key), i.e. what the method
itself costs. Target (issue 30): ≤ 50 ms median, ≤ 80 ms max.

    python bench/tui_tmux.py [--repeat K]

Prints figures only; not a test. Needs tmux.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# key, screen name, what the screen shows once its body is drawn from the snapshot
BOARD = re.compile(r"─ Routes \(match order\)[\s\S]*│ 1   \w")
HELP = re.compile(r"RouteDeck help")
SWITCHES = [
    ("c", "board → crondor", lambda s: re.search(r"─ Crondor ──[\s\S]*│ 1\.0 ", s)),
    ("j", "crondor → jobs", lambda s: re.search(r"─ Jobs ─[\s\S]*│1\.0 ", s)),
    ("b", "jobs → board", lambda s: BOARD.search(s)),
    ("?", "board → help", lambda s: HELP.search(s)),
    ("Escape", "help → board", lambda s: BOARD.search(s) and not HELP.search(s)),
]


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def wait_for(session: str, shown, timeout: float = 30.0) -> float:
    """Seconds until ``shown(pane text)`` holds (the pane polled as fast as tmux answers)."""
    t0 = time.perf_counter()
    while not shown(tmux("capture-pane", "-p", "-t", session)):
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError(f"{session}: the expected screen never showed")
    return time.perf_counter() - t0


def press(session: str, key: str, shown) -> float:
    t0 = time.perf_counter()
    tmux("send-keys", "-t", session, key)
    wait_for(session, shown)
    return time.perf_counter() - t0


def echo_anchor(repeat: int) -> list[float]:
    session = f"rdbench-echo-{uuid.uuid4().hex[:6]}"
    tmux("new-session", "-d", "-s", session, "-x", "132", "-y", "40", "cat")
    try:
        out = []
        for k in range(repeat):
            mark = f"m{k}x"
            out.append(press(session, mark, lambda s, m=mark: m in s))
        return out
    finally:
        tmux("kill-session", "-t", session)


def fmt(xs: list[float]) -> str:
    """The first (a run's first visit: the max was the first ``?``, issue 30), median and max, and
    which one the max was."""
    return (f"first {xs[0] * 1000:6.1f} ms, median {statistics.median(xs) * 1000:6.1f} ms, max {max(xs) * 1000:6.1f} ms"
            f" (#{xs.index(max(xs)) + 1} of n={len(xs)})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tmux is not installed")
    state = tempfile.mkdtemp(prefix="routedeck-bench-tmux-")
    session = f"rdbench-{uuid.uuid4().hex[:6]}"
    cmd = f"cd {ROOT} && {sys.executable} -m tui demo --state-dir {state}/state; sleep 5"
    tmux("new-session", "-d", "-s", session, "-x", "132", "-y", "40", cmd)
    try:
        print(f"demo up, board drawn after {wait_for(session, BOARD.search, timeout=120):.1f} s; load average "
              + " ".join(f"{x:.2f}" for x in os.getloadavg()))
        time.sleep(10)  # the main views are composed off screen after the first paint
        rows: dict[str, list[float]] = {}
        for _ in range(a.repeat):
            for key, name, shown in SWITCHES:
                rows.setdefault(name, []).append(press(session, key, shown))
                time.sleep(0.3)  # the screen settles, as a person reads it
        echo = echo_anchor(a.repeat * 2)
        for name, xs in rows.items():
            print(f"switch {name:<16} {fmt(xs)}")
        every = [x for xs in rows.values() for x in xs]
        print(f"all switches          {fmt(every)}")
        print(f"anchor: tmux echo     {fmt(echo)}")
        # send-keys hands the pane its bytes directly; a key typed into an attached client passes
        # tmux's own escape-time first (tui.shell.driver, README)
        print(f"note: an Esc typed into an attached tmux client first waits tmux's escape-time "
              f"({tmux('show-options', '-sv', 'escape-time').strip()} ms on this server), not in the figures")
        print("load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    finally:
        tmux("kill-session", "-t", session)
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
