"""Job Router hooks: keyword, path checks, stdin/stdout contracts, runner (htcondor.md §1.8).

HTCondor facts followed (``JobRouterHookMgr.cpp``, ``hook_utils.cpp``):

- Keyword: the source job's ``HookKeyword``, if it *evaluates to a string* (even ``""``), wins;
  otherwise ``JOB_ROUTER_HOOK_KEYWORD``. No keyword, no hooks. The path knob is
  ``<KEYWORD>_HOOK_<TYPE>``; ``JOB_FINALIZE`` falls back to the old name ``JOB_EXIT``.
- :func:`validate_hook_path` is ``validateHookPath``: the path must ``stat()``, must not be
  world-writable, must have the owner execute bit (``S_IEXEC``), and its directory must not be
  world-writable. A rejected path counts as "not defined" (the rejection is kept in
  :attr:`HookManager.rejections` so the UI can say why a hook never runs).
- stdin: sPrintAd blocks (``Name = value`` lines, old syntax, sorted by name, private
  attributes such as ``ClaimId`` left out), joined with ``"\\n------\\n"``; the translate hook
  first gets the one-line new-syntax route description ``[ Name = "x"; TargetUniverse = 9;
  GridResource = "…" ]``. Hooks get no arguments.
- stdout: split on ``\\n``, empty lines skipped, every other line parsed alone as ``Attr = expr``;
  one bad line rejects the whole output (:func:`parse_hook_output`).
- Exit status: for translate, update and finalize HTCondor looks at ``WEXITSTATUS`` only, which
  is 0 for a process killed by a signal; the cleanup hook explicitly treats "killed by a signal"
  as success. :attr:`HookResult.exit_status` reproduces ``WEXITSTATUS``.

RouteDeck departures (product.md §4 "Hooks"), each visible as an event in the router:

- A **timeout** (``timeout`` seconds, default 60; HTCondor has none). A hook that times out is
  killed and treated as a failure of that hook (translate: routing abandoned; update: status
  check skipped this poll; finalize: reroute; cleanup: a failed attempt).
- **Bounded retries** (``max_attempts``, default 3): a cleanup hook that keeps failing, and a
  translate hook that keeps returning no data, are tried at most that many polls; HTCondor
  retries both forever. After the last attempt cleanup goes on without the hook (with a
  ``hook-failed`` event) and the translate is abandoned (a routing failure).
- **Bounded output**: a hook that writes more than ``max_output`` bytes (default 4 MiB) to
  stdout or stderr is killed and counts as failed like a timeout (HTCondor reads it all). Output
  is read as bytes and decoded as UTF-8 with U+FFFD, so binary output is rejected by the parser
  (with its line number) instead of raising. A timed-out or flooding hook is killed with its
  whole process group (each hook leads its own session), so a shell's children go too; so is
  a background child still holding the hook's stdout 1 s after the hook exited (HTCondor
  would wait for it).
- Hooks run as the **current user**: HTCondor switches to the job owner (``PRIV_USER_FINAL``),
  which needs root; RouteDeck never does.
- The runner is synchronous by default (the result is used in the same poll, as if the hook had
  exited at once). With ``background=True`` hooks run in worker threads and the result is
  picked up on a later poll; while one runs it is not started again (HTCondor's known-hook
  list, without its "1.1 matches 1.10" prefix bug).

Safe by default (product.md §4: opening someone's config or recording must never run a program):

- A :class:`HookManager` runs hook programs only when built with ``allow_run=True``: the demo
  (its own sample config) and the commands given ``--allow-hooks``. Otherwise :meth:`HookManager.run`
  refuses to spawn anything (it raises :class:`HooksNotAllowed`); the router asks
  :attr:`HookManager.allow_run` first and records the hook as *withheld*
  (:meth:`HookManager.withhold`), shown as ``would run: PATH`` in reports and events
  (:meth:`HookUse.line`). What a withheld hook would have decided is unknown, so:
  a job whose TRANSLATE_JOB hook is withheld is **not routed** (it is left alone, never claimed:
  the hook's output would be its routed ad); a withheld UPDATE_JOB_INFO, JOB_FINALIZE or
  JOB_CLEANUP hook is treated as not defined (the router goes on as HTCondor does without it).
- Every hook that ran or would have run is kept in :attr:`HookManager.uses` (type, path, jobs,
  runs) for the reports.

Nothing here reads the clock: the subprocess timeout is the only real-time element.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from engine.classad import evaluate, make_ad
# the generic runner and the rules shared with the startd/starter hooks (engine.execute)
from engine.hookrun import (  # noqa: F401  (re-exported: HookOutputError, PRIVATE_ATTRS, …)
    no_barrier,
    knob_text,
    ALLOW_FLAG,
    EXIT_GRACE,
    MAX_OUTPUT,
    PRIVATE_ATTRS,
    HookOutputError,
    HookResult,
    HooksNotAllowed,
    Ran,
    parse_hook_output,
    run_bounded,
    run_hook,
    sprint_ad,
    validate_hook_path,
)

TRANSLATE = "TRANSLATE_JOB"
UPDATE = "UPDATE_JOB_INFO"
FINALIZE = "JOB_FINALIZE"
EXIT = "JOB_EXIT"  # old name of JOB_FINALIZE
CLEANUP = "JOB_CLEANUP"
HOOK_TYPES = (TRANSLATE, UPDATE, FINALIZE, EXIT, CLEANUP)

SEPARATOR = "\n------\n"



# ------------------------------------------------------------------------------------------
# keyword and path


def hook_keyword(job: Mapping[str, str] | Any, default: str | None) -> str | None:
    """``getHookKeyword``: the job's ``HookKeyword`` if it evaluates to a string, else the knob."""
    if isinstance(job, Mapping):
        if not any(k.lower() == "hookkeyword" for k in job):
            return default or None
        ad = make_ad(job)
    else:
        ad = job
    if "HookKeyword" in ad:
        value = evaluate("HookKeyword", ad)
        if isinstance(value, str):
            return value or None
    return default or None


# ------------------------------------------------------------------------------------------
# stdin builders and stdout parser


def _new_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def route_description(name: str, target_universe: int, grid_resource: str | None) -> str:
    """``JobRoute::RouteDescription``: the one-line new-syntax route ad (HTCONDOR-646)."""
    parts = [f"Name = {_new_quote(name)}", f"TargetUniverse = {int(target_universe)}"]
    if grid_resource:
        parts.append(f"GridResource = {_new_quote(grid_resource)}")
    return "[ " + "; ".join(parts) + " ]"


def translate_stdin(route_info: str, src: Mapping[str, str]) -> str:
    return route_info + SEPARATOR + sprint_ad(src)


def update_stdin(dest: Mapping[str, str]) -> str:
    return sprint_ad(dest)


def finalize_stdin(src: Mapping[str, str], dest: Mapping[str, str]) -> str:
    # sPrintAd ends with a newline, so an empty line precedes the dashes (htcondor.md §1.8)
    return sprint_ad(src) + SEPARATOR + sprint_ad(dest)


def cleanup_stdin(dest: Mapping[str, str]) -> str:
    return sprint_ad(dest)


# ------------------------------------------------------------------------------------------
# results and what each hook's result means


@dataclass(frozen=True)
class Outcome:
    """What the router does with a finished hook: ``action`` plus attributes or a message."""

    action: str
    attrs: Mapping[str, str] = field(default_factory=dict)
    message: str = ""


def translate_outcome(r: HookResult) -> Outcome:
    """TranslateClient::hookExited: output replaces the dest ad; no output: run again; else abandon."""
    if r.unfinished:
        return Outcome("failed", message=r.describe())
    if r.stdout and r.exit_status == 0:
        try:
            return Outcome("replace", parse_hook_output(r.stdout, f"{r.path} stdout"))
        except HookOutputError as exc:
            return Outcome("failed", message=f"invalid hook output: {exc}")
    if r.exit_status == 0:
        return Outcome("no-data", message=f"{r.path} returned no data")
    return Outcome("failed", message=f"{r.describe()}; output ignored")


def update_outcome(r: HookResult) -> Outcome:
    """StatusClient::hookExited: merge (minus MyType/TargetType), plain check, skip, or remove."""
    if r.unfinished:
        return Outcome("skip", message=r.describe())
    if r.stdout and r.exit_status == 0:
        try:
            attrs = parse_hook_output(r.stdout, f"{r.path} stdout")
        except HookOutputError as exc:
            return Outcome("remove", message=f"invalid hook output, job status NOT updated: {exc}")
        attrs = {k: v for k, v in attrs.items() if k.lower() not in ("mytype", "targettype")}
        return Outcome("merge", attrs)
    if r.exit_status == 0:
        return Outcome("no-data")
    return Outcome("skip", message=f"{r.describe()}; output ignored, status check skipped")


def finalize_outcome(r: HookResult) -> Outcome:
    """ExitClient::hookExited: output updates the source; non-zero exit or bad output: reroute."""
    if r.unfinished:
        return Outcome("reroute", message=r.describe())
    attrs: dict[str, str] = {}
    if r.stdout and r.exit_status == 0:
        try:
            attrs = parse_hook_output(r.stdout, f"{r.path} stdout")
        except HookOutputError as exc:
            return Outcome("reroute", message=f"invalid hook output: {exc}")
    if r.exit_status != 0:
        return Outcome("reroute", message=f"{r.describe()}; output ignored")
    return Outcome("finalize", attrs)


def cleanup_outcome(r: HookResult) -> Outcome:
    """CleanupClient::hookExited: exit 0 or killed by a signal finishes cleanup; else retry."""
    if r.unfinished:
        return Outcome("retry", message=r.describe())
    if r.signaled or r.returncode == 0:
        return Outcome("done")
    return Outcome("retry", message=r.describe())


@dataclass
class HookUse:
    """One hook program as a report shows it: ran (how often, for which jobs) or would run."""

    hook_type: str
    path: str
    ran: bool
    jobs: set[str] = field(default_factory=set)
    runs: int = 0

    def line(self) -> str:
        jobs = f"{len(self.jobs)} job{'s' if len(self.jobs) != 1 else ''}"
        if self.ran:
            return f"ran: {self.path} ({self.hook_type}, {self.runs} runs for {jobs})"
        return f"would run: {self.path} ({self.hook_type}, {jobs}; not run: needs {ALLOW_FLAG})"

    def to_json(self) -> dict[str, Any]:
        return {"hook": self.hook_type, "path": self.path, "ran": self.ran, "jobs": len(self.jobs),
                "runs": self.runs}


def withheld_reason(path: str) -> str:
    """Why a job with a withheld translate hook is not routed (why-not, route, reports)."""
    return (f"its translate hook would run: {path} (not run: needs {ALLOW_FLAG}; what the hook would "
            f"make of the job is unknown, so it is not routed)")


# ------------------------------------------------------------------------------------------
# the manager: knobs, paths, running


class HookManager:
    """Finds and runs the hooks of one keyword set. ``config`` needs ``get(name) -> str|None``."""

    def __init__(
        self,
        config: Any,
        default_keyword: str | None = None,
        *,
        timeout: float = 60.0,
        max_attempts: int = 3,
        background: bool = False,
        max_output: int = MAX_OUTPUT,
        allow_run: bool = False,
    ) -> None:
        self.config = config
        self.allow_run = bool(allow_run)  # False: no hook program is ever spawned (module docstring)
        # called on the engine thread before a hook is handed to the pool: the queue log's pending
        # grouped sync (QueueLogWriter.barrier, issue 30) reaches the disk before a hook sees a commit
        self.barrier: Callable[[], None] = no_barrier
        self.uses: dict[tuple[str, str], HookUse] = {}  # (hook type, path) -> what ran / would run
        self.max_output = max_output
        self.default_keyword = default_keyword or None
        self.timeout = timeout
        self.max_attempts = max(1, int(max_attempts))
        self.background = background
        self.rejections: dict[str, str] = {}  # knob -> why the path was refused
        self._unreported: list[str] = []  # rejections not yet taken as events
        self._paths: dict[tuple[str, str], str | None] = {}
        self._defined: dict[str, bool] = {}  # hook type -> any knob defines it (defines_any)
        self._running: dict[tuple[str, str], Future] = {}
        self._pool: ThreadPoolExecutor | None = None

    def keyword(self, src: Mapping[str, str] | Any) -> str | None:
        return hook_keyword(src, self.default_keyword)

    def _knob_value(self, knob: str) -> str | None:
        return knob_text(self.config, knob)

    def path(self, hook_type: str, keyword: str | None) -> str | None:
        """The validated path of ``<KEYWORD>_HOOK_<TYPE>`` (FINALIZE falls back to JOB_EXIT)."""
        if not keyword:
            return None
        if hook_type == FINALIZE:
            return self._path(FINALIZE, keyword) or self._path(EXIT, keyword)
        return self._path(hook_type, keyword)

    def _path(self, hook_type: str, keyword: str) -> str | None:
        key = (keyword.upper(), hook_type)
        if key not in self._paths:
            knob = f"{keyword}_HOOK_{hook_type}"
            value = self._knob_value(knob)
            if value is not None:
                problem = validate_hook_path(knob, value)
                if problem:
                    self.rejections[knob] = problem
                    self._unreported.append(problem)
                    value = None
            self._paths[key] = value
        return self._paths[key]

    def take_rejections(self) -> list[str]:
        """Path rejections found since the last call (each knob is checked once per manager)."""
        out, self._unreported = self._unreported, []
        return out

    def defines_any(self, hook_type: str) -> bool:
        """Whether any ``<KEYWORD>_HOOK_<TYPE>`` knob is set at all (so no job can have this hook
        when False); True when the config cannot list its names."""
        names = getattr(self.config, "names", None)
        if names is None:
            return True
        cached = self._defined.get(hook_type)
        if cached is None:
            suffix = f"_HOOK_{hook_type}".lower()
            cached = self._defined[hook_type] = any(n.lower().endswith(suffix) for n in names())
        return cached

    def job_keyword(self, job: Any) -> str | None:
        """The keyword of a queue job (``get``/``attrs``) without building its ad when it has no
        ``HookKeyword`` (the common case)."""
        if job.get("HookKeyword") is None:
            return self.default_keyword
        return hook_keyword(job.attrs, self.default_keyword)

    def withhold(self, hook_type: str, path: str, job_key: str) -> bool:
        """Record that ``path`` would run for ``job_key`` but may not; True the first time this
        program is withheld (the router reports it once)."""
        use = self.uses.get((hook_type, path))
        first = use is None
        if first:
            use = self.uses[(hook_type, path)] = HookUse(hook_type, path, ran=False)
        use.jobs.add(job_key)
        return first

    def report(self) -> list[HookUse]:
        """Every hook program that ran or would have run, in the order first met."""
        return list(self.uses.values())

    def run(self, job_key: str, hook_type: str, path: str, stdin: str) -> HookResult | None:
        """Run (or collect) a hook for one job. None = still running (background mode).
        Raises :class:`HooksNotAllowed` unless the manager was built with ``allow_run=True``."""
        key = (job_key, hook_type)
        fut = self._running.get(key)
        if fut is not None:
            if not fut.done():
                return None
            del self._running[key]
            return fut.result()
        if not self.allow_run:
            self.withhold(hook_type, path, job_key)
            raise HooksNotAllowed(f"{hook_type} hook {path} not run: needs {ALLOW_FLAG}")
        use = self.uses.get((hook_type, path))
        if use is None:
            use = self.uses[(hook_type, path)] = HookUse(hook_type, path, ran=True)
        use.ran = True
        use.runs += 1
        use.jobs.add(job_key)
        self.barrier()  # on the engine thread, before the hook can see a commit's effect
        if not self.background:
            return self._execute(hook_type, path, stdin)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="routedeck-hook")
        self._running[key] = self._pool.submit(self._execute, hook_type, path, stdin)
        return None

    def running(self, job_key: str, hook_type: str) -> bool:
        return (job_key, hook_type) in self._running

    def _execute(self, hook_type: str, path: str, stdin: str) -> HookResult:
        if not self.allow_run:  # the one place a hook is spawned: refuse here too
            raise HooksNotAllowed(f"{hook_type} hook {path} not run: needs {ALLOW_FLAG}")
        return run_hook(hook_type, path, stdin, self.timeout, self.max_output)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


