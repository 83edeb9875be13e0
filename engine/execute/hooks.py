"""Fetch-work hooks (startd) and job hooks (starter): keywords, stdin, outputs (htcondor.md §4).

HTCondor facts followed, with their places in the source (``htcondor/htcondor``, HEAD):

- Slot keyword (``Resource::getHookKeyword``, ``src/condor_startd.V6/Resource.cpp``):
  ``<slot id>_JOB_HOOK_KEYWORD`` (``slot1_JOB_HOOK_KEYWORD``; knob names are case-insensitive),
  else ``STARTD_JOB_HOOK_KEYWORD``; no keyword, no fetching.
- Starter keyword (``JobHookClientMgr::initialize``, ``src/condor_daemon_core.V6/HookClientMgr.cpp``):
  ``STARTER_JOB_HOOK_KEYWORD`` if set; else the job's ``HookKeyword`` (if it evaluates to a
  string) — HTCondor logs "Ignoring HookKeyword ... because hook not defined" when no
  ``<KW>_HOOK_<type>`` is configured for it, but does **not** clear the keyword, so
  ``STARTER_DEFAULT_JOB_HOOK_KEYWORD`` is then not used and the job runs with no hooks;
  else ``STARTER_DEFAULT_JOB_HOOK_KEYWORD``.
- stdin (``StartdHookMgr.cpp``): FETCH_WORK gets the slot ad (``sPrintAd``); REPLY_FETCH gets the job
  ad, a line ``-----``, the slot ad and, if accepted, ``ClaimId = "<id>"``, with the argument
  ``accept`` or ``reject``; EVICT_CLAIM the claim's job ad, ``-----``, the slot ad and the
  ``ClaimId`` line, no argument. (``sPrintAd`` leaves ``ClaimId`` out of the ads themselves.)
- FETCH_WORK stdout (``FetchClient::hookExited``): each line goes to ``ClassAd::Insert``; one
  bad line drops the whole output ("ignoring invalid hook output") and the fetch completes with
  no job; the exit status is ignored; empty output means no work.
- Starter (``src/condor_starter.V6.1/StarterHookMgr.cpp``): PREPARE_JOB gets the job ad, no
  argument unless ``<KW>_HOOK_PREPARE_JOB_ARGS``; its stdout is read by ``initAdFromString``
  (``compat_classad.cpp``), which stops at the first bad line and keeps the lines before it.
  ``HookStatusCode`` ≥ 0 in the output replaces the exit status unless the hook died on a
  signal (then the status is −signal). Status 0: the output is merged into the job ad; 1–299:
  the job is held, ``HoldReasonCode = 19`` (``HookPrepareJobFailure``), subcode = status;
  ≥ 300 or negative: a shadow exception, the job goes back to Idle. The message is
  ``"<HOOK> (<basename>) failed (<status text>): <HookStatusMessage or <no message>>"``.
  UPDATE_JOB_INFO gets the job ad merged with the update ad, no argument, output ignored.
  JOB_EXIT gets the job exit ad with the argument ``exit``/``hold``/``remove``/``evict``
  (``JobInfoCommunicator::getExitReasonString``), output ignored, waited for up to
  ``<KW>_HOOK_JOB_EXIT_TIMEOUT`` (default 30 s, ``StarterHookMgr::reconfig``).
- Status text (``src/condor_utils/status_string.cpp``): ``exited with status N`` or
  ``died with signal N``; with a ``HookStatusCode``: ``reported status NNN``.

RouteDeck departures: every hook has a timeout (``<KW>_HOOK_<TYPE>_TIMEOUT``, else the
runner's default; HTCondor has none except JOB_EXIT) and an output cap (:mod:`engine.hookrun`);
a hook killed for either counts as killed by SIGKILL. Advisory hooks (REPLY_FETCH, EVICT_CLAIM,
UPDATE_JOB_INFO) run to their end inside the engine step (HTCondor does not wait for them, but
nothing the startd/starter decides depends on them). Programs run only with ``allow_run``
(the demo, or ``--allow-hooks``); otherwise a hook is recorded as *withheld* and treated as not
defined.
"""

from __future__ import annotations

import os
import signal
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from engine.classad import ClassAdError, evaluate, make_ad
from engine.classad_ads import parse_old_ad
from engine.contract.codes import HoldCode
from engine.hookrun import (
    no_barrier,
    knob_text,
    ALLOW_FLAG,
    MAX_OUTPUT,
    HookOutputError,
    HookResult,
    HooksNotAllowed,
    parse_hook_output,
    run_hook,
    sprint_ad,
    validate_hook_path,
)
from engine.execute.argsenv import split_v2

FETCH_WORK = "FETCH_WORK"
REPLY_FETCH = "REPLY_FETCH"
EVICT_CLAIM = "EVICT_CLAIM"
PREPARE_JOB = "PREPARE_JOB"
UPDATE_JOB_INFO = "UPDATE_JOB_INFO"
JOB_EXIT = "JOB_EXIT"
STARTD_HOOKS = (FETCH_WORK, REPLY_FETCH, EVICT_CLAIM)
STARTER_HOOKS = (PREPARE_JOB, UPDATE_JOB_INFO, JOB_EXIT)
# getHookTypeString (src/condor_utils/enum_utils.cpp): every type a keyword may define
ALL_HOOK_TYPES = ("FETCH_WORK", "REPLY_FETCH", "REPLY_CLAIM", "EVICT_CLAIM", "PREPARE_JOB",
                  "PREPARE_JOB_BEFORE_TRANSFER", "UPDATE_JOB_INFO", "JOB_EXIT", "TRANSLATE_JOB",
                  "JOB_CLEANUP", "JOB_FINALIZE", "SHADOW_PREPARE_JOB")
DELIM = "-----\n"  # StartdHookMgr: "TODO-fetch: better delimiter?"
JOB_EXIT_TIMEOUT = 30
DEFAULT_TIMEOUT = 60.0
MAX_INVOCATIONS = 2000  # invocations kept for the Hooks screen (oldest dropped)


_knob = knob_text  # engine.hookrun.knob_text: one reading of hook knobs


def slot_keyword(config: Any, slot_name: str) -> str | None:
    """``Resource::getHookKeyword``: ``<slot>_JOB_HOOK_KEYWORD`` else ``STARTD_JOB_HOOK_KEYWORD``."""
    return _knob(config, f"{slot_name}_JOB_HOOK_KEYWORD") or _knob(config, "STARTD_JOB_HOOK_KEYWORD")


def job_hook_keyword(job: Mapping[str, str]) -> str | None:
    """The job's ``HookKeyword`` when it evaluates to a non-empty string."""
    for k, text in job.items():
        if k.lower() == "hookkeyword":
            ad = make_ad({k: text})
            value = evaluate(k, ad)
            return value if isinstance(value, str) and value else None
    return None


def starter_keyword(config: Any, job: Mapping[str, str]) -> str | None:
    """``JobHookClientMgr::initialize`` with prefix ``STARTER`` (module docstring)."""
    forced = _knob(config, "STARTER_JOB_HOOK_KEYWORD")
    if forced:
        return forced
    from_job = job_hook_keyword(job)
    if from_job:
        # configured or not, the job's keyword stays (HookClientMgr.cpp never clears it)
        return from_job
    return _knob(config, "STARTER_DEFAULT_JOB_HOOK_KEYWORD")


def keyword_defines_any(config: Any, keyword: str) -> bool:
    return any(_knob(config, f"{keyword}_HOOK_{t}") for t in ALL_HOOK_TYPES)


# ------------------------------------------------------------------------------------------
# stdin


def claim_line(claim_id: str) -> str:
    return f'ClaimId = "{claim_id}"\n'


def fetch_stdin(slot: Mapping[str, str]) -> str:
    return sprint_ad(slot)


def reply_fetch_stdin(job: Mapping[str, str], slot: Mapping[str, str], claim_id: str | None) -> str:
    return sprint_ad(job) + DELIM + sprint_ad(slot) + (claim_line(claim_id) if claim_id else "")


def evict_claim_stdin(job: Mapping[str, str], slot: Mapping[str, str], claim_id: str) -> str:
    return sprint_ad(job) + DELIM + sprint_ad(slot) + claim_line(claim_id)


def update_stdin(job: Mapping[str, str], update: Mapping[str, str]) -> str:
    merged = dict(job)
    low = {k.lower(): k for k in merged}
    for k, v in update.items():
        merged.pop(low.get(k.lower(), k), None)
        merged[k] = v
    return sprint_ad(merged)


# ------------------------------------------------------------------------------------------
# stdout


def fetch_output(text: str, source: str = "FETCH_WORK stdout") -> dict[str, str]:
    """The fetched job ad ({} = no work). Raises :class:`HookOutputError` naming the bad line."""
    if not text:
        return {}
    return parse_hook_output(text, source)


def init_ad_from_string(text: str, source: str = "hook output") -> tuple[dict[str, str], str | None]:
    """``initAdFromString``: line by line; the first bad line stops the parse (earlier lines kept).
    Returns the attributes and the problem (None when every line parsed)."""
    out: dict[str, str] = {}
    for n, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line:
            continue
        try:
            out.update(parse_old_ad(line, source) if not line.startswith("#") else _bad(line))
        except ClassAdError as exc:
            return out, f"{source}:{n}: {str(exc).split(': ', 1)[-1]}"
    return out, None


def _bad(line: str) -> dict[str, str]:
    raise ClassAdError(f"x: not an 'Attr = expr' line: {line[:100]}", line)


@dataclass(frozen=True)
class PrepareOutcome:
    """What the starter does after PREPARE_JOB: ``run`` (merge ``attrs``), ``hold`` or ``requeue``."""

    action: str
    status: int
    message: str
    attrs: Mapping[str, str] = field(default_factory=dict)
    hold_code: int = 0
    hold_subcode: int = 0
    problem: str | None = None  # a bad output line (the lines before it were used)


def status_text(r: HookResult) -> str:
    sig = _signal_of(r)
    if sig is not None:
        return f"died with signal {sig}"
    return f"exited with status {r.exit_status}"


def _signal_of(r: HookResult) -> int | None:
    if r.timed_out or r.overflow:
        return int(signal.SIGKILL)
    if r.returncode is not None and r.returncode < 0:
        return -r.returncode
    return None


def prepare_outcome(r: HookResult, hook: str = PREPARE_JOB) -> PrepareOutcome:
    """``HookPrepareJobClient::hookExited`` (module docstring)."""
    base = os.path.basename(r.path)
    if r.error is not None:  # could not spawn: notifyStarterError(..., HookPrepareJobFailure, 0)
        return PrepareOutcome("hold", 0, f"failed to execute {hook} ({r.path})", hold_code=HoldCode.HookPrepareJobFailure)
    attrs, problem = init_ad_from_string(r.stdout, f"{r.path} stdout")
    text = status_text(r)
    sig = _signal_of(r)
    if sig is not None:
        hook_status = -sig
    else:
        hook_status = r.exit_status
        reported = _int_attr(attrs, "HookStatusCode")
        if reported is not None and reported >= 0:
            hook_status = reported
            text = f"reported status {hook_status:03d}"
    msg_attr = _str_attr(attrs, "HookStatusMessage")
    message = f"{hook} ({base}) {'failed' if hook_status else 'succeeded'} ({text}): {msg_attr or '<no message>'}"
    if hook_status == 0:
        return PrepareOutcome("run", 0, message, attrs, problem=problem)
    if 0 < hook_status < 300:
        return PrepareOutcome("hold", hook_status, message, hold_code=HoldCode.HookPrepareJobFailure,
                              hold_subcode=hook_status, problem=problem)
    return PrepareOutcome("requeue", hook_status, message, problem=problem)


def _lookup(attrs: Mapping[str, str], name: str) -> Any:
    for k, v in attrs.items():
        if k.lower() == name.lower():
            return evaluate(k, make_ad({k: v}))
    return None


def _int_attr(attrs: Mapping[str, str], name: str) -> int | None:
    v = _lookup(attrs, name)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str_attr(attrs: Mapping[str, str], name: str) -> str | None:
    v = _lookup(attrs, name)
    return v if isinstance(v, str) else None


# ------------------------------------------------------------------------------------------
# running and recording


@dataclass
class Invocation:
    """One hook run (or withheld run), as the Hooks screen and ``hook run`` show it."""

    family: str  # "fetch" (startd), "starter", "cron"
    keyword: str
    hook: str
    target: str  # slot name or job id or cron job name
    path: str
    args: tuple[str, ...]
    stdin: str
    started: float  # engine time
    result: HookResult | None = None  # None: withheld
    parsed: Mapping[str, str] | None = None
    error: str | None = None
    decision: str = ""

    @property
    def withheld(self) -> bool:
        return self.result is None

    def summary(self) -> str:
        if self.result is None:
            return f"would run: {self.path} (not run: needs {ALLOW_FLAG})"
        return self.result.describe()

    def to_json(self) -> dict[str, Any]:
        r = self.result
        return {"family": self.family, "keyword": self.keyword, "hook": self.hook, "target": self.target,
                "path": self.path, "args": list(self.args), "started": self.started,
                "withheld": r is None, "exit": None if r is None else r.returncode,
                "timed_out": bool(r and r.timed_out), "overflow": r.overflow if r else None,
                "stdout_bytes": len(r.stdout.encode()) if r else 0, "parsed": dict(self.parsed or {}),
                "error": self.error, "decision": self.decision}


class HookRunner:
    """Looks up ``<KEYWORD>_HOOK_<TYPE>`` paths (checked like ``validateHookPath``) and runs them
    through :func:`engine.hookrun.run_hook`, keeping every invocation."""

    def __init__(self, config: Any, *, allow_run: bool = False, timeout: float = DEFAULT_TIMEOUT,
                 max_output: int = MAX_OUTPUT) -> None:
        self.config = config
        self.allow_run = bool(allow_run)
        # called before a hook or a job's program is spawned: the queue log's pending grouped sync
        # (QueueLogWriter.barrier, issue 30) reaches the disk before a program sees a commit
        self.barrier: Callable[[], None] = no_barrier
        self.timeout = timeout
        self.max_output = max_output
        self.rejections: dict[str, str] = {}
        self.invocations: deque[Invocation] = deque(maxlen=MAX_INVOCATIONS)
        self._paths: dict[tuple[str, str], str | None] = {}

    def path(self, keyword: str | None, hook: str) -> str | None:
        if not keyword:
            return None
        key = (keyword.upper(), hook)
        if key not in self._paths:
            knob = f"{keyword}_HOOK_{hook}"
            value = _knob(self.config, knob)
            if value is not None:
                problem = validate_hook_path(knob, value)
                if problem:
                    self.rejections[knob] = problem
                    value = None
            self._paths[key] = value
        return self._paths[key]

    def hook_timeout(self, keyword: str, hook: str, default: float | None = None) -> float:
        """``<KW>_HOOK_<TYPE>_TIMEOUT`` (``HookClientMgr::getHookTimeout``), else ``default``."""
        text = _knob(self.config, f"{keyword}_HOOK_{hook}_TIMEOUT")
        try:
            if text is not None and int(text) > 0:
                return float(int(text))
        except ValueError:
            pass
        return float(default if default is not None else self.timeout)

    def hook_args(self, keyword: str, hook: str) -> tuple[str, ...]:
        """``<KW>_HOOK_<TYPE>_ARGS`` in V2 raw syntax (HTCondor reads it for PREPARE_JOB only)."""
        text = _knob(self.config, f"{keyword}_HOOK_{hook}_ARGS")
        return tuple(split_v2(text, f"{keyword}_HOOK_{hook}_ARGS")) if text else ()

    def invoke(self, family: str, keyword: str, hook: str, target: str, stdin: str, now: float,
               args: Sequence[str] = (), env: Mapping[str, str] | None = None, timeout: float | None = None,
               cwd: str | None = None) -> Invocation | None:
        """Run the keyword's hook; None when it is not defined. A withheld run (no ``allow_run``)
        is recorded and returned with ``result`` None."""
        path = self.path(keyword, hook)
        if path is None:
            return None
        return self.invoke_path(family, keyword, hook, target, path, stdin, now, args=args, env=env,
                                timeout=timeout if timeout is not None else self.hook_timeout(keyword, hook), cwd=cwd)

    def invoke_path(self, family: str, keyword: str, hook: str, target: str, path: str, stdin: str, now: float,
                    args: Sequence[str] = (), env: Mapping[str, str] | None = None, timeout: float | None = None,
                    cwd: str | None = None, argv0: str | None = None) -> Invocation:
        """Run an already checked ``path`` (daemon ClassAd hooks name theirs in their own knob);
        recorded like :meth:`invoke`, withheld without ``allow_run``."""
        inv = Invocation(family, keyword, hook, target, path, tuple(args), stdin, now)
        self.invocations.append(inv)
        if not self.allow_run:
            return inv
        inv.result = self._spawn(hook, path, stdin, args, env, cwd,
                                 timeout if timeout is not None else self.timeout, argv0)
        return inv

    def _spawn(self, hook: str, path: str, stdin: str, args: Sequence[str], env, cwd, timeout: float,
               argv0: str | None = None) -> HookResult:
        if not self.allow_run:  # the one place an execute-side hook is spawned: refuse here too
            raise HooksNotAllowed(f"{hook} hook {path} not run: needs {ALLOW_FLAG}")
        self.barrier()
        return run_hook(hook, path, stdin, timeout, self.max_output, args=args, env=env, cwd=cwd, argv0=argv0)


__all__ = ["HookOutputError", "HookResult", "HookRunner", "Invocation", "PrepareOutcome", "fetch_output",
           "init_ad_from_string", "prepare_outcome", "slot_keyword", "starter_keyword"]
