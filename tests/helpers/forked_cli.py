"""``routedeck`` commands in processes forked from one that has imported them already.

A kill test (tests/engine/feeds/test_demo_faults.py) starts ``routedeck demo`` twenty times and
kills each with SIGKILL. In a new interpreter each start spent ~0.7 s of CPU importing and warming
up before its first step, about half of what a run did before its kill. Here a server process
(``python -m tests.helpers.forked_cli WARM_ARGV``, started by ``Forks``) runs the warm-up command
once (its output thrown away), then for each request forks a child that runs ``tui.cli.main(argv)``
with its stdout on a FIFO of the test's; the test reads it and kills the child as it killed the
``routedeck`` process. The child is a process of its own running the command's code, so a kill
leaves what a kill of the command leaves; what it shares with the server is what the server's
imports and its warm-up run left in memory (the warm-up's own state directory is another).

Protocol on the server's stdin/stdout, one line each: the test sends ``{"argv": [...], "stdout":
FIFO}``, the server answers the child's pid, then, once the child has ended (killed or not), its
wait status.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO

from tests.helpers.paths import REPO

START_TIMEOUT = 60  # seconds a forked command has to write its first line


def _child(argv: list[str], stdout: str) -> None:
    """In the forked child: stdout on the FIFO (block-buffered, as a pipe makes it), stdin and
    stderr on /dev/null, then the command."""
    code = 1
    try:
        out = os.open(stdout, os.O_WRONLY)  # first: the test is waiting to open the reading end
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(out, 1)
        os.dup2(null, 0)
        os.dup2(null, 2)
        from tui.cli import main  # noqa: PLC0415 - imported by the server already

        code = main(argv)
        sys.stdout.flush()
    finally:
        os._exit(code)


def serve(warm_argv: list[str]) -> None:
    from tui.cli import main  # noqa: PLC0415 - the server's one import of the commands

    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
        main(warm_argv)  # imports (and first uses) what the command imports (and uses)
    for line in sys.stdin:
        req = json.loads(line)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            _child(req["argv"], req["stdout"])
        print(pid, flush=True)
        _, status = os.waitpid(pid, 0)
        print(status, flush=True)


class Forks:
    """The test's side: ``start(argv)`` -> (pid, the child's stdout); ``reap()`` after the kill;
    ``close()`` ends the server (its CPU, and its children's, then count as the test's)."""

    def __init__(self, tmp: Path, warm_argv: list[str]) -> None:
        self.tmp = tmp
        self.n = 0
        self.server = subprocess.Popen(
            [sys.executable, "-m", "tests.helpers.forked_cli", json.dumps(warm_argv)], cwd=REPO,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def start(self, argv: list[str]) -> tuple[int, IO[str]]:
        self.n += 1
        fifo = self.tmp / f"stdout-{self.n}"
        os.mkfifo(fifo)
        self.server.stdin.write(json.dumps({"argv": argv, "stdout": str(fifo)}) + "\n")
        self.server.stdin.flush()
        pid = int(self.server.stdout.readline())
        # opened without blocking and waited for with a bound: a child that died before it opened
        # its end fails the test instead of hanging it (on Linux a FIFO's reading end is not ready
        # before a writer has opened it)
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        if not select.select([fd], [], [], START_TIMEOUT)[0]:
            os.close(fd)
            self.kill(pid)
            raise TimeoutError(f"the forked {' '.join(argv[:1])} wrote nothing in {START_TIMEOUT} s")
        os.set_blocking(fd, True)
        return pid, os.fdopen(fd)

    def kill(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    def reap(self) -> int:
        """The child's wait status (the server waited for it)."""
        return int(self.server.stdout.readline())

    def close(self) -> None:
        self.server.stdin.close()
        try:
            self.server.wait(30)
        except subprocess.TimeoutExpired:
            self.server.kill()  # its children were each waited for (serve)
            self.server.wait(5)
        self.server.stdout.close()


if __name__ == "__main__":
    serve(json.loads(sys.argv[1]))
