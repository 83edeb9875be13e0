"""The real ``routedeck demo`` in a real terminal (tmux): start it, wait, capture the screen,
check the routes board shows live counts, type into the ``:`` line, open the editor, quit — exit status 0 and the
terminal restored (alternate screen left, canonical mode and echo back on).

Needs tmux (``apt-get install -y tmux``; CI installs it in ``.ci/run``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest
from tests.helpers.paths import REPO

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None,
                                                   reason="tmux is not installed (apt-get install -y tmux)")]
ROOT = REPO
TIMEOUT = 90.0  # seconds per wait; a loaded 2-core machine is slow to start Python + the engine


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def _capture(session: str) -> str:
    return _tmux("capture-pane", "-p", "-t", session)


def _wait_for(session: str, pattern: str, timeout: float = TIMEOUT) -> re.Match:
    end = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < end:
        screen = _capture(session)
        m = re.search(pattern, screen, re.MULTILINE)
        if m:
            return m
        time.sleep(0.25)
    raise AssertionError(f"{pattern!r} never appeared; last screen:\n{screen}")


def test_demo_in_tmux(tmp_path):
    conf = tmp_path / "demo"
    shutil.copytree(ROOT / "sample_configs" / "demo", conf)
    session = f"rdtest-{uuid.uuid4().hex[:8]}"
    script = tmp_path / "run.sh"
    script.write_text(
        "#!/bin/sh\n"
        f"cd {ROOT}\n"
        f"{sys.executable} -m tui demo --speed 120 --config-dir {conf} --state-dir {tmp_path / 'state'}\n"
        'echo "EXIT=$?"\n'
        "stty -a | tr ' ;' '\\n\\n' | grep -E '^-?(icanon|echo)$' | tr '\\n' ' '; echo\n"
        "echo DONE; sleep 60\n"
    )
    script.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "36", str(script)],
                   check=True, env=env)
    try:
        _wait_for(session, r"Routes \(match order\)")
        # live counts: CMS_T2's routed gauge (after its state, throttle and failure figures) moves above 0
        m = _wait_for(session, r"CMS_T2\s.*?\s([1-9]\d*)/150")
        assert int(m.group(1)) > 0
        screen = _capture(session)
        assert "engine running" in screen and "BlackHole" in screen and "Overflow" in screen
        # live: the virtual clock in the header moves on between captures
        clock = re.compile(r"virtual (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
        first = clock.search(screen).group(1)
        _wait_for(session, r"virtual (?!" + re.escape(first) + r")\d{4}-")
        # the : line (issue 11 item 1): typed text is on screen, at the bottom, with its help,
        # and the board behind it keeps moving while it is open
        _tmux("send-keys", "-t", session, ":")
        _wait_for(session, r"^ :\s*$|command: board")
        _tmux("send-keys", "-t", session, "-l", "speed 12")
        # the command's help and the typed text are drawn in the same refresh, but a capture can fall between
        # the two rows' writes on a loaded machine: wait for both
        _wait_for(session, r":speed X.*\n :speed 12\s*$")
        lines = _capture(session).rstrip("\n").split("\n")
        assert lines[-1].startswith(" :speed 12"), lines[-3:]  # the last row of the terminal
        assert ":speed X" in lines[-2]  # the command's help just above it
        behind = clock.search(_capture(session)).group(1)
        _wait_for(session, r"virtual (?!" + re.escape(behind) + r")\d{4}-")  # live behind the prompt
        _tmux("send-keys", "-t", session, "Escape")  # cancel: nothing run
        _wait_for(session, r"e Edit")
        _tmux("send-keys", "-t", session, "e")  # open the editor on the selected (first) route
        _wait_for(session, r"JOB_ROUTER_ROUTE_CMS_T2 @=jrt")
        _wait_for(session, r"Lint")
        _tmux("send-keys", "-t", session, "Escape")
        _wait_for(session, r"Routes \(match order\)")
        _tmux("send-keys", "-t", session, "q")
        _wait_for(session, r"^DONE")
        screen = _capture(session)
        assert "EXIT=0" in screen
        modes = re.search(r"^((?:-?(?:icanon|echo) ?)+)$", screen, re.MULTILINE)
        assert modes and set(modes.group(1).split()) == {"icanon", "echo"}, screen  # not -icanon/-echo
        assert "Routes (match order)" not in screen  # the alternate screen was left
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
