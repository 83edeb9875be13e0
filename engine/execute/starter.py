"""The starter: runs one job as a real local process in its own sandbox, on the engine's clock.

Design decisions and invariants:

- Nothing here reads the clock or sleeps: :meth:`Starter.step` takes ``now`` and polls the
  process (``Popen.poll``); a finished process is noticed at the first step after it ended, so
  ``RemoteWallClockTime`` is engine time (start step → exit step).
- Order (``src/condor_starter.V6.1/starter.cpp``, htcondor.md §2.5, §4.3): sandbox and input
  transfer → PREPARE_JOB (waited for) → ``DeferralTime`` check (``Starter::jobWaitUntilExecuteTime``
  via :func:`engine.crondor.deferral.execute_decision`, started at
  :func:`engine.crondor.deferral.start_time`; the job shows Running while it waits) →
  spawn → updates at ``STARTER_INITIAL_UPDATE_INTERVAL`` (8 s, capped at the interval) then every
  ``STARTER_UPDATE_INTERVAL`` (300 s) (``JobInfoCommunicator::startUpdateTimer``), each running
  UPDATE_JOB_INFO → exit → JOB_EXIT (waited for, ``JOB_EXIT`` timeout 30 s) → output transfer →
  final report.
- Sandbox: ``<state dir>/execute/dir_<n>``; the job runs there with ``cwd`` = the sandbox.
  Input files (``TransferInput``, comma list, relative to ``Iwd``) are copied in by base name;
  ``In`` is read from the sandbox copy or ``Iwd``. ``Out``/``Err`` are written in the sandbox
  and copied back to ``Iwd`` with the outputs. Output files (``TransferOutput``; if unset, every
  new top-level file, as HTCondor does) must name files inside the sandbox: an absolute path or
  ``..`` is refused with a message naming the attribute. Without ``Iwd`` nothing is copied back.
- Reports (seed 003): ``JobStatus`` 2 when the starter starts, the update attributes
  (``JobState``, ``JobPid``, ``NumPids``, ``JobStartDate``, ``ImageSize`` KiB, ``ResidentSetSize``,
  ``RemoteUserCpu``, ``RemoteSysCpu``, ``RemoteWallClockTime``) at each update point, and at exit
  ``JobStatus`` 4, ``ExitBySignal``, ``ExitCode`` or ``ExitSignal``/``ExitReason``,
  ``JobDuration`` (``UserProc::PublishUpdateAd``). A hold sets ``JobStatus`` 5 with
  ``HoldReason``/``HoldReasonCode``/``HoldReasonSubCode``; a shadow exception or an eviction sets
  ``JobStatus`` 1.
- The process leads its own session; eviction kills its whole group (SIGKILL).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from engine.classad import evaluate, format_value, make_ad, quote
from engine.contract.codes import HoldCode, JobStatus
from engine.crondor.deferral import Abort, Missed, Start, Wait, execute_decision, start_time
from engine.execute import hooks as hk
from engine.execute.argsenv import ArgsError, job_arguments, job_environment
from engine.hookrun import kill_group

INITIAL_UPDATE_INTERVAL = 8
UPDATE_INTERVAL = 300
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024 if hasattr(os, "sysconf") else 4
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class SandboxError(ValueError):
    """A transfer that would leave the sandbox, or a missing input (names the attribute)."""


@dataclass
class Report:
    """One update from the starter: the attributes as old-syntax text, and why."""

    time: float
    kind: str  # "start", "update", "exit", "hold", "requeue"
    attrs: dict[str, str]


def _values(job: Mapping[str, str], now: float) -> dict[str, Any]:
    ad = make_ad(job)
    return {k: evaluate(k, ad, now=now) for k in job}


def _get(values: Mapping[str, Any], name: str) -> Any:
    for k, v in values.items():
        if k.lower() == name.lower():
            return v
    return None


@dataclass
class Starter:
    job_id: str
    job: dict[str, str]  # the job ad as old-syntax texts; PREPARE_JOB output is merged in
    sandbox: Path
    runner: hk.HookRunner
    config: Any
    report: Callable[[Report], None]
    slot_name: str = "slot1"
    initial_interval: int = INITIAL_UPDATE_INTERVAL
    interval: int = UPDATE_INTERVAL
    phase: str = "new"  # new, waiting, running, done
    proc: subprocess.Popen | None = None
    started: float | None = None
    wait_until: float | None = None
    next_update: float | None = None
    exit_attrs: dict[str, str] = field(default_factory=dict)
    usage: dict[str, str] = field(default_factory=dict)
    keyword: str | None = None
    _files: list[Any] = field(default_factory=list)
    _before: set[str] = field(default_factory=set)

    # -- life cycle -----------------------------------------------------------------------

    def begin(self, now: float) -> None:
        """Set up the sandbox, run PREPARE_JOB, apply the deferral rules, maybe spawn."""
        self.keyword = hk.starter_keyword(self.config, self.job)
        self._emit(now, "start", {"JobStatus": JobStatus.RUNNING.text, "JobCurrentStartDate": str(int(now))})
        try:
            self._transfer_in()
        except (SandboxError, OSError) as exc:
            return self._hold(now, f"Error from starter on {self.slot_name}: {exc}", HoldCode.TransferInputError, 0)
        if self.keyword:
            inv = self.runner.invoke("starter", self.keyword, hk.PREPARE_JOB, self.job_id, hk.sprint_ad(self.job), now,
                                     args=self.runner.hook_args(self.keyword, hk.PREPARE_JOB),
                                     env=self._hook_env(), cwd=str(self.sandbox))
            if inv is not None and inv.result is not None:
                out = hk.prepare_outcome(inv.result)
                inv.parsed, inv.error, inv.decision = out.attrs, out.problem, out.action
                if out.action == "hold":
                    return self._hold(now, out.message, out.hold_code, out.hold_subcode)
                if out.action == "requeue":
                    return self._finish(now, "requeue", {"JobStatus": JobStatus.IDLE.text, "LastHoldReason": quote(out.message)})
                _merge(self.job, out.attrs)
        values = _values(self.job, now)
        if any(k.lower() == "deferraltime" for k in self.job):
            window = _get(values, "DeferralWindow")
            window = window if isinstance(window, int) and not isinstance(window, bool) else 0
            dt = _get(values, "DeferralTime")
            dt = dt if isinstance(dt, int) and not isinstance(dt, bool) else None
            offset = _get(values, "DeferralOffset")
            offset = offset if isinstance(offset, int) and not isinstance(offset, bool) else 0
            decision = execute_decision(dt, window, now, offset, job_id=self.job_id)
            if isinstance(decision, Missed):
                return self._hold(now, decision.hold.reason, decision.hold.code, decision.hold.subcode)
            if isinstance(decision, Abort):
                return self._finish(now, "requeue", {"JobStatus": JobStatus.IDLE.text, "LastHoldReason": quote(decision.message)})
            if isinstance(decision, Wait):
                self.phase, self.wait_until = "waiting", start_time(dt, window, now, offset)  # the timer's whole second
                return
            assert isinstance(decision, Start)
        self._spawn(now)

    def step(self, now: float) -> None:
        if self.phase == "waiting" and self.wait_until is not None and now >= self.wait_until:
            self._spawn(now)
        if self.phase != "running" or self.proc is None:
            return
        code = self.proc.poll()
        if code is None:
            if self.next_update is not None and now >= self.next_update:
                self._periodic(now)
            return
        self._exited(now, code)

    def evict(self, now: float, reason: str = "evict") -> None:
        """Kill the job (preemption, claim eviction); JOB_EXIT runs with ``reason``."""
        if self.phase == "done":
            return
        if self.proc is not None and self.proc.poll() is None:
            kill_group(self.proc)
            self.proc.wait()
        self._close_files()
        attrs = self._exit_ad(now, self.proc.returncode if self.proc else None)
        self._job_exit_hook(now, attrs, reason)
        attrs["JobStatus"] = JobStatus.IDLE.text
        self._finish(now, "requeue", attrs)

    @property
    def done(self) -> bool:
        return self.phase == "done"

    # -- internals ------------------------------------------------------------------------

    def _spawn(self, now: float) -> None:
        values = _values(self.job, now)
        cmd = _get(values, "Cmd")
        if not isinstance(cmd, str) or not cmd:
            return self._hold(now, "job ad has no Cmd", HoldCode.Unspecified, 0)
        iwd = self._iwd(values)
        if not os.path.isabs(cmd):
            cmd = str((iwd or self.sandbox) / cmd)
        try:
            argv = [cmd, *job_arguments(values)]
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "_CONDOR_SCRATCH_DIR": str(self.sandbox),
                   "_CONDOR_SLOT": self.slot_name, **job_environment(values)}
        except ArgsError as exc:
            return self._hold(now, str(exc), HoldCode.Unspecified, 0)
        stdin = self._std(values, "In", "rb", iwd)
        stdout = self._std(values, "Out", "wb", None)
        stderr = self._std(values, "Err", "wb", None)
        if not self.runner.allow_run:
            # The job's program comes from a job ad: like a hook it runs only in the demo or with
            # --allow-hooks (product.md §4). Recorded as a withheld run; the job goes back to idle.
            self.runner.invoke_path("starter", "", "JOB", self.job_id, cmd, "", now, args=argv[1:])
            self._close_files()
            return self._finish(now, "requeue", {"JobStatus": JobStatus.IDLE.text})
        self._before = {p.name for p in self.sandbox.iterdir()}
        self.runner.barrier()  # the queue log's grouped sync first (issue 30)
        try:
            self.proc = subprocess.Popen(argv, cwd=str(self.sandbox), env=env, stdin=stdin, stdout=stdout,
                                         stderr=stderr, start_new_session=True)
        except OSError as exc:
            self._close_files()
            return self._hold(now, f"Failed to execute '{cmd}': {exc.strerror or exc}", 6, exc.errno or 0)
        self.phase, self.started = "running", now
        self.next_update = now + min(self.initial_interval, self.interval)
        self._emit(now, "update", {"JobStatus": JobStatus.RUNNING.text, "JobStartDate": str(int(now)),
                                   "JobPid": str(self.proc.pid), "JobState": '"Running"'})

    def _periodic(self, now: float) -> None:
        attrs = {"JobState": '"Running"', "NumPids": "1", **self._usage(now)}
        if self.proc is not None:
            attrs["JobPid"] = str(self.proc.pid)
        if self.keyword:
            inv = self.runner.invoke("starter", self.keyword, hk.UPDATE_JOB_INFO, self.job_id,
                                     hk.update_stdin(self.job, attrs), now, env=self._hook_env(), cwd=str(self.sandbox))
            if inv is not None:
                inv.decision = "advisory"
        self.next_update = now + self.interval
        self._emit(now, "update", attrs)

    def _exited(self, now: float, code: int) -> None:
        self._close_files()
        attrs = self._exit_ad(now, code)
        self._job_exit_hook(now, attrs, "exit")
        try:
            self._transfer_out(_values(self.job, now))
        except (SandboxError, OSError) as exc:
            return self._hold(now, f"Error from starter on {self.slot_name}: {exc}", HoldCode.TransferOutputError, 0)
        attrs["JobStatus"] = JobStatus.COMPLETED.text
        attrs["CompletionDate"] = str(int(now))
        self._finish(now, "exit", attrs)

    def _exit_ad(self, now: float, code: int | None) -> dict[str, str]:
        attrs = {"JobState": '"Exited"', "NumPids": "0", **self._usage(now)}
        if self.started is not None:
            attrs["JobDuration"] = format_value(float(now - self.started))
        if code is not None and code < 0:
            sig = -code
            attrs.update(ExitBySignal="true", ExitSignal=str(sig),
                         ExitReason=quote(f"died on {_signame(sig)}"))
        elif code is not None:
            attrs.update(ExitBySignal="false", ExitCode=str(code))
        self.exit_attrs = attrs
        return attrs

    def _job_exit_hook(self, now: float, attrs: Mapping[str, str], reason: str) -> None:
        if not self.keyword:
            return
        exit_ad = dict(self.job)
        _merge(exit_ad, attrs)
        inv = self.runner.invoke("starter", self.keyword, hk.JOB_EXIT, self.job_id, hk.sprint_ad(exit_ad), now,
                                 args=(reason,), env=self._hook_env(exit_attrs=attrs), cwd=str(self.sandbox),
                                 timeout=self.runner.hook_timeout(self.keyword, hk.JOB_EXIT, hk.JOB_EXIT_TIMEOUT))
        if inv is not None:
            inv.decision = "waited for; output ignored"

    def _usage(self, now: float) -> dict[str, str]:
        out: dict[str, str] = {}
        if self.started is not None:
            out["RemoteWallClockTime"] = format_value(float(now - self.started))
        if self.proc is not None and self.proc.poll() is None:
            self.usage.update(_proc_usage(self.proc.pid))
        out.update(self.usage)
        return out

    def _hold(self, now: float, reason: str, code: int, subcode: int) -> None:
        self._close_files()
        self._finish(now, "hold", {"JobStatus": JobStatus.HELD.text, "HoldReason": quote(reason),
                                   "HoldReasonCode": str(int(code)), "HoldReasonSubCode": str(subcode)})

    def _finish(self, now: float, kind: str, attrs: dict[str, str]) -> None:
        self.phase = "done"
        self._emit(now, kind, attrs)

    def _emit(self, now: float, kind: str, attrs: dict[str, str]) -> None:
        self.report(Report(now, kind, dict(attrs)))

    def _hook_env(self, exit_attrs: Mapping[str, str] | None = None) -> dict[str, str]:
        """``Starter::PublishToEnv`` (the parts RouteDeck has): scratch dir, slot, exit code."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "_CONDOR_SCRATCH_DIR": str(self.sandbox),
               "_CONDOR_SLOT": self.slot_name}
        if exit_attrs:
            if "ExitCode" in exit_attrs:
                env["_CONDOR_MAINJOB_EXIT_CODE"] = exit_attrs["ExitCode"]
            if "ExitSignal" in exit_attrs:
                env["_CONDOR_MAINJOB_EXIT_SIGNAL"] = exit_attrs["ExitSignal"]
        return env

    def _iwd(self, values: Mapping[str, Any]) -> Path | None:
        iwd = _get(values, "Iwd")
        return Path(iwd) if isinstance(iwd, str) and iwd else None

    def _std(self, values: Mapping[str, Any], attr: str, mode: str, iwd: Path | None):
        name = _get(values, attr)
        if not isinstance(name, str) or not name or name == "/dev/null":
            return subprocess.DEVNULL
        if mode == "rb":
            local = self.sandbox / os.path.basename(name)
            path = local if local.exists() else (Path(name) if os.path.isabs(name) else (iwd or self.sandbox) / name)
        else:
            path = self.sandbox / _inside(name, attr)
        f = open(path, mode)  # closed in _close_files
        self._files.append(f)
        return f

    def _close_files(self) -> None:
        for f in self._files:
            f.close()
        self._files.clear()

    def _transfer_in(self) -> None:
        self.sandbox.mkdir(parents=True, exist_ok=True)
        values = _values(self.job, 0)
        inputs = _get(values, "TransferInput")
        iwd = self._iwd(values)
        for name in _file_list(inputs):
            src = Path(name) if os.path.isabs(name) else (iwd or self.sandbox) / name
            if not src.exists():
                raise SandboxError(f"TransferInput: {src} does not exist")
            dest = self.sandbox / os.path.basename(name.rstrip("/"))
            if src.is_dir():
                shutil.copytree(src, dest, dirs_exist_ok=True)
            else:
                shutil.copy2(src, dest)

    def _transfer_out(self, values: Mapping[str, Any]) -> None:
        iwd = self._iwd(values)
        if iwd is None:
            return
        listed = _get(values, "TransferOutput")
        names = [_inside(n, "TransferOutput") for n in _file_list(listed)] if isinstance(listed, str) else [
            p.name for p in sorted(self.sandbox.iterdir()) if p.name not in self._before and p.is_file()]
        for std in ("Out", "Err"):
            n = _get(values, std)
            if isinstance(n, str) and n and n != "/dev/null":
                names.append(_inside(n, std))
        for n in dict.fromkeys(names):
            src = self.sandbox / n
            if src.is_file():
                dest = iwd / n
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)


def _merge(job: dict[str, str], attrs: Mapping[str, str]) -> None:
    low = {k.lower(): k for k in job}
    for k, v in attrs.items():
        job.pop(low.get(k.lower(), k), None)
        job[k] = v


def _file_list(value: Any) -> list[str]:
    if not isinstance(value, str):
        return []
    return [w.strip() for w in value.split(",") if w.strip()]


def _inside(name: str, attr: str) -> str:
    """A path that stays inside the sandbox, or :class:`SandboxError` naming the attribute."""
    p = Path(name)
    if p.is_absolute() or ".." in p.parts:
        raise SandboxError(f"{attr}: {name!r} leaves the job's sandbox (absolute or '..' paths are refused)")
    return str(p)


def _signame(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def _proc_usage(pid: int) -> dict[str, str]:
    """ImageSize/ResidentSetSize (KiB) and CPU seconds from /proc (Linux); {} elsewhere."""
    out: dict[str, str] = {}
    try:
        with open(f"/proc/{pid}/statm") as f:
            size, resident = (int(x) for x in f.read().split()[:2])
        out["ImageSize"] = str(size * PAGE_KIB)
        out["ResidentSetSize"] = str(resident * PAGE_KIB)
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out["RemoteUserCpu"] = format_value(int(fields[11]) / CLK_TCK)
        out["RemoteSysCpu"] = format_value(int(fields[12]) / CLK_TCK)
    except (OSError, ValueError, IndexError):
        pass
    return out
