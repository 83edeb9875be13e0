"""The one hook runner: path checks, bounded run, stdin/stdout forms shared by every hook family.

Used by the Job Router's hooks (:mod:`engine.router.hooks`), by ``JOB_ROUTER_ENTRIES_CMD`` and by
the startd/starter fetch-work hooks and daemon ClassAd hooks (:mod:`engine.execute`).

HTCondor facts followed (``src/condor_utils/hook_utils.cpp``, ``compat_classad.cpp``):

- :func:`validate_hook_path` is ``validateHookPath``: the path must ``stat()``, must not be
  world-writable, must have the owner execute bit, and its directory must not be world-writable.
- :func:`sprint_ad` is ``sPrintAd``: sorted ``Name = value`` lines, private attributes
  (``ClaimId`` …) left out.
- :func:`parse_hook_output` is a loop of ``ClassAd::Insert(line)`` that rejects the whole output
  on the first bad line (router hooks, ``FETCH_WORK``).

RouteDeck departures (product.md §4 "Hooks"): every run has a timeout and an output cap; a hook
that passes either is killed with its whole process group (it leads its own session), and so is
a background child still holding its stdout ``EXIT_GRACE`` seconds after it exited. Output is
read as bytes and decoded as UTF-8 with U+FFFD.

Safety: nothing here decides *whether* a program may run; callers hold an ``allow_run`` flag and
raise :class:`HooksNotAllowed` (``--allow-hooks``, :data:`ALLOW_FLAG`) before calling
:func:`run_bounded`. Nothing here reads the clock: the subprocess timeout is the only real-time
element.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import threading
from dataclasses import dataclass
from typing import Sequence
from typing import Any, Mapping

from engine.classad import ClassAdError, format_ad
from engine.classad_ads import parse_old_ad
from engine.clock import stopwatch

MAX_OUTPUT = 4 << 20  # bytes kept of a hook's stdout (and of its stderr); more kills it
EXIT_GRACE = 1.0  # seconds a hook's pipes may stay open after it exited before its group is killed

# ClassAdAttributeIsPrivateV1 (compat_classad.cpp); sPrintAd leaves these out.
PRIVATE_ATTRS = frozenset(
    a.lower() for a in ("Capability", "ChildClaimIds", "ClaimId", "ClaimIdList", "ClaimIds", "PairedClaimId", "TransferKey")
)


class HookOutputError(ValueError):
    """Hook stdout that HTCondor would reject (names the bad line)."""


class HooksNotAllowed(RuntimeError):
    """A hook program was about to be spawned by a manager built without ``allow_run``."""


ALLOW_FLAG = "--allow-hooks"  # the command-line flag that lets hook programs run (named in messages)


def validate_hook_path(knob: str, path: str) -> str | None:
    """``validateHookPath``: None when usable, else HTCondor's error text."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return (
            f"ERROR: invalid path specified for {knob} ({path}): stat() failed with errno "
            f"{exc.errno} ({exc.strerror})"
        )
    if st.st_mode & stat.S_IWOTH:
        return f"ERROR: path specified for {knob} ({path}) is world-writable! Refusing to use."
    if not st.st_mode & stat.S_IEXEC:
        return f"ERROR: path specified for {knob} ({path}) is not executable."
    directory = os.path.dirname(path) or "."
    try:
        dst = os.stat(directory)
    except OSError:
        dst = None
    if dst is not None and dst.st_mode & stat.S_IWOTH:
        return (
            f"ERROR: path specified for {knob} ({path}) is a world-writable directory "
            f"({directory})! Refusing to use."
        )
    return None


def sprint_ad(attrs: Mapping[str, str]) -> str:
    """sPrintAd: sorted ``Name = value`` lines, private attributes excluded."""
    return format_ad({k: v for k, v in attrs.items() if k.lower() not in PRIVATE_ATTRS})


def parse_hook_output(text: str, source: str = "hook output") -> dict[str, str]:
    """Each non-empty line alone as ``Attr = expr`` (ClassAd::Insert); any bad line rejects all."""
    out: dict[str, str] = {}
    for n, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        if raw.lstrip().startswith("#"):  # Insert() does not accept comments
            raise HookOutputError(f"{source}:{n}: not an 'Attr = expr' line: {_short(repr(raw))}")
        try:
            out.update(parse_old_ad(raw, source))
        except ClassAdError as exc:
            raise HookOutputError(f"{source}:{n}: {_short(str(exc).split(': ', 1)[-1])}") from None
    return out


def _short(text: str, limit: int = 160) -> str:
    """A message quotes at most ``limit`` characters of a (possibly huge, binary) hook line."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"


@dataclass(frozen=True)
class HookResult:
    hook_type: str
    path: str
    returncode: int | None  # subprocess returncode (negative = killed by that signal); None on timeout
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None  # could not start (OSError text)
    overflow: str | None = None  # "stdout"/"stderr": that pipe passed the size limit, hook killed
    elapsed: float | None = None  # real seconds from spawn to end (reported only; engine.clock.stopwatch)

    @property
    def unfinished(self) -> bool:
        """Did not run to its own end (not started, timed out, killed for flooding a pipe)."""
        return self.timed_out or self.error is not None or self.overflow is not None

    @property
    def signaled(self) -> bool:
        return self.timed_out or (self.returncode is not None and self.returncode < 0)

    @property
    def exit_status(self) -> int:
        """``WEXITSTATUS``: 0 for a signal death, 127-like 1 when the hook could not start."""
        if self.error is not None:
            return 1
        if self.signaled or self.overflow:
            return 0
        return int(self.returncode or 0)

    def describe(self) -> str:
        if self.error:
            return f"could not run {self.path}: {self.error}"
        if self.timed_out:
            return f"{self.path} timed out and was killed"
        if self.overflow:
            return f"{self.path} wrote more than the output limit to its {self.overflow} and was killed"
        if self.returncode is not None and self.returncode < 0:
            return f"{self.path} was killed by signal {-self.returncode}"
        return f"{self.path} exited with status {self.returncode}"




def run_hook(hook_type: str, path: str, stdin: str, timeout: float, max_output: int = MAX_OUTPUT,
             args: Sequence[str] = (), env: Mapping[str, str] | None = None, cwd: str | None = None,
             argv0: str | None = None) -> HookResult:
    """Run one hook program (the caller has checked ``allow_run``) and describe how it ended."""
    argv = [argv0 or path, *args]
    took = stopwatch()
    try:
        ran = run_bounded(argv, stdin.encode("utf-8", "surrogateescape"), timeout, max_output, env=env, cwd=cwd,
                          executable=path if argv0 else None)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        return HookResult(hook_type, path, None, error=str(exc), elapsed=took())
    if ran.overflow:
        return HookResult(hook_type, path, None, ran.stdout, ran.stderr, overflow=ran.overflow, elapsed=took())
    if ran.timed_out:
        return HookResult(hook_type, path, None, ran.stdout, ran.stderr, timed_out=True, elapsed=took())
    return HookResult(hook_type, path, ran.returncode, ran.stdout, ran.stderr, elapsed=took())


# ------------------------------------------------------------------------------------------
# bounded capture (HTCondor reads all of a hook's output; a flood must not exhaust memory)


@dataclass(frozen=True)
class Ran:
    returncode: int | None  # None when killed for a timeout or a flood
    stdout: str  # decoded as UTF-8 with U+FFFD: binary output cannot raise
    stderr: str
    timed_out: bool = False
    overflow: str | None = None  # "stdout" / "stderr"


def run_bounded(argv: list[str], stdin: bytes, timeout: float, max_output: int = MAX_OUTPUT,
                merge_stderr: bool = False, env: Mapping[str, str] | None = None,
                cwd: str | None = None, executable: str | None = None) -> Ran:
    """Run ``argv`` in its own session with bounded time and output (used for every hook and for
    ``JOB_ROUTER_ENTRIES_CMD``); ``env`` replaces the environment when given; ``executable``
    runs that program with ``argv[0]`` as given (cron jobs get their name as argv[0]). Raises
    OSError/ValueError only when it cannot start."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, start_new_session=True,
                            env=dict(env) if env is not None else None, cwd=cwd,
                            executable=executable)
    readers = [_Capture(proc.stdout, max_output, proc)]
    if not merge_stderr:
        readers.append(_Capture(proc.stderr, max_output, proc))
    feeder = threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True)
    for t in (feeder, *readers):
        t.start()
    # A timer kills the group at the timeout while this thread blocks in wait(): Popen.wait(timeout)
    # polls with a doubling sleep (0.5 ms .. 50 ms), which made a 1 ms hook cost ~5 ms
    # (bench/hooks.py); a blocking wait returns as soon as the hook exits.
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        kill_group(proc)

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        proc.wait()
    finally:
        timer.cancel()
    timed_out = expired.is_set()
    for t in readers:
        t.join(timeout=EXIT_GRACE)
        if t.is_alive():  # it exited but a child of it still holds the pipe open
            kill_group(proc)
            t.join(timeout=EXIT_GRACE)
    feeder.join(timeout=EXIT_GRACE)
    out = readers[0]
    err = readers[1] if len(readers) > 1 else None
    overflow = "stdout" if out.overflow else "stderr" if err is not None and err.overflow else None
    return Ran(None if (timed_out or overflow) else proc.returncode, out.text(), err.text() if err else "",
               timed_out and not overflow, overflow)


class _Capture(threading.Thread):
    """Reads one pipe into memory up to ``limit`` bytes; past it, kills the hook's group."""

    def __init__(self, pipe: Any, limit: int, proc: subprocess.Popen) -> None:
        super().__init__(daemon=True)
        self.pipe, self.limit, self.proc = pipe, limit, proc
        self.buf = bytearray()
        self.overflow = False

    def run(self) -> None:
        try:
            while chunk := self.pipe.read1(65536):
                if len(self.buf) + len(chunk) > self.limit:
                    self.overflow = True
                    kill_group(self.proc)
                    break
                self.buf += chunk
        except (OSError, ValueError):
            pass
        finally:
            self.pipe.close()

    def text(self) -> str:
        return bytes(self.buf).decode("utf-8", "replace")


def _feed(pipe: Any, data: bytes) -> None:
    try:
        pipe.write(data)
    except (OSError, ValueError):  # the hook exited without reading its stdin
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the hook and whatever it started (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        try:
            proc.kill()
        except OSError:
            pass


def knob_text(config: Any, name: str) -> str | None:
    """A hook knob's value, stripped; None when unset, empty or unreadable (``config`` needs
    ``get(name)``): HTCondor's param() of a hook path or keyword."""
    try:
        value = config.get(name)
    except Exception:  # noqa: BLE001 - a knob that does not expand is treated as unset
        value = None
    if value is None:
        return None
    value = str(value).strip()
    return value or None


def no_barrier() -> None:
    """The default ``barrier`` of the hook runners (engine.router.hooks, engine.execute.hooks): no
    queue log whose grouped sync must reach the disk before a program starts (issue 30)."""

