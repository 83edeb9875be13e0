"""Reading the routing table out of a :class:`~engine.lang.config.Config` (see engine/router/table.py).

Split from table.py for size; the order of the steps mirrors ``JobRouter::config`` of the last
release with both syntaxes (htcondor.md §1.2, §1.3), and every message quotes HTCondor's own log
line where there is one.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping

from engine import classad as C
from engine.lang import macros as mx
from engine.lang import xform as X
from engine.lang.config import Config, ConfigError, Source
from engine.lang.param import parse_bool, parse_number, split_list
from engine.lang.xform_iter import cut_at_transform
from engine.router import classic as K
from engine.hookrun import MAX_OUTPUT, run_bounded
from engine.gcpause import gc_paused
from engine.router.lints import lint_config_routes, lint_table
from engine.router.table import (
    CLASSIC_KNOBS, JOB_EXPR_ATTRS, ROUTE_PREFIX, TRANSFORM_PREFIX,
    Diagnostic, DisabledRoute, Route, RouterKnobs, RoutingTable, fingerprint,
)

CMD_TIMEOUT = 60.0


def _run_cmd(cmd: str) -> tuple[int, str]:
    """Run ``JOB_ROUTER_ENTRIES_CMD`` (stderr merged into stdout, as ``my_popen`` did), with the
    hooks' bounds: a timeout and an output limit (HTCondor has neither)."""
    ran = run_bounded(shlex.split(cmd), b"", CMD_TIMEOUT, merge_stderr=True)
    if ran.timed_out:
        raise subprocess.TimeoutExpired(cmd, CMD_TIMEOUT)
    if ran.overflow:
        raise subprocess.SubprocessError(f"its output passed the limit of {MAX_OUTPUT} bytes; killed")
    return int(ran.returncode or 0), ran.stdout


class TableLoader:
    def __init__(self, config: Config, *, allow_cmd: bool = False,
                 cmd_runner: Callable[[str], tuple[int, str]] | None = None) -> None:
        self.cfg = config
        self.allow_cmd = allow_cmd
        self.cmd_runner = cmd_runner or _run_cmd
        self.diags: list[Diagnostic] = []
        self.enabled = True
        self.routes: dict[str, Route] = {}  # lower name -> route, in insertion order
        self.hash_order = K.CondorHashOrder()
        self.disabled: list[DisabledRoute] = []

    # ------------------------------------------------------------------------------ helpers

    def diag(self, level: str, message: str, where: Source | None = None, route: str | None = None) -> None:
        self.diags.append(Diagnostic(level, message, where.file if where else None,
                                     where.line if where and where.line else None, route))

    def loc(self, knob: str) -> Source | None:
        return self.cfg.location(knob)

    def value_loc(self, knob: str, line: int | None) -> Source | None:
        if line is None:
            return self.loc(knob)
        return self.cfg.source_of_value_line(knob, line) or self.loc(knob)

    def get(self, knob: str) -> str | None:
        try:
            return self.cfg.get(knob)
        except ConfigError as exc:
            self.diag("error", f"{knob}: {exc.message}", Source(exc.file, exc.line))
            return None

    # ------------------------------------------------------------------------------ knobs

    def number(self, knob: str, default: float, want_int: bool = True) -> Any:
        """A numeric knob; a value that is not a number is a warning and the default is used
        (``get_int`` would hide it, and would raise on a macro cycle)."""
        text = self.get(knob)
        if text is None or not text.strip():
            return default
        value = parse_number(text, want_int=want_int)
        if value is None:
            self.diag("warning", f"{knob} = {text!r} is not {'an integer' if want_int else 'a number'}; "
                      f"using the default {default}", self.loc(knob))
            return default
        return value

    def flag(self, knob: str, default: bool) -> bool:
        text = self.get(knob)
        if text is None or not text.strip():
            return default
        value = parse_bool(text)
        if value is None:
            self.diag("warning", f"{knob} = {text!r} is not a boolean; using the default {default}", self.loc(knob))
            return default
        return value

    def knobs(self) -> RouterKnobs:
        g, cfg = self.get, self.cfg
        num, flag = self.number, self.flag
        k = RouterKnobs()
        name = g("JOB_ROUTER_NAME")
        if "JOB_ROUTER_NAME" in cfg and not name:
            self.diag("error", "JOB_ROUTER_NAME must not be empty (HTCondor EXCEPTs); using 'jobrouter'",
                      self.loc("JOB_ROUTER_NAME"))
        k.name = name or "jobrouter"
        k.source_job_constraint = g("JOB_ROUTER_SOURCE_JOB_CONSTRAINT")
        if k.source_job_constraint and not C.is_valid_expr(k.source_job_constraint):
            self.diag("error", "JOB_ROUTER_SOURCE_JOB_CONSTRAINT does not parse as a ClassAd expression",
                      self.loc("JOB_ROUTER_SOURCE_JOB_CONSTRAINT"))
        k.max_jobs = num("JOB_ROUTER_MAX_JOBS", -1)
        k.round_robin = flag("JOB_ROUTER_ROUND_ROBIN_SELECTION", False)
        k.release_on_hold = flag("JOB_ROUTER_RELEASE_ON_HOLD", True)
        k.polling_period = num("JOB_ROUTER_POLLING_PERIOD", 10)
        k.hook_keyword = g("JOB_ROUTER_HOOK_KEYWORD")
        k.default_max_jobs = num("JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE", 100)
        k.default_max_idle_jobs = num("JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE", 50)
        k.entries_refresh = num("JOB_ROUTER_ENTRIES_REFRESH", 0)
        k.max_job_mirror_update_lag = num("MAX_JOB_MIRROR_UPDATE_LAG", 600)
        k.periodic_expr_interval = num("PERIODIC_EXPR_INTERVAL", 60)
        k.max_periodic_expr_interval = num("MAX_PERIODIC_EXPR_INTERVAL", 1200)
        k.periodic_expr_timeslice = num("PERIODIC_EXPR_TIMESLICE", 0.01, False)
        k.update_interval = num("UPDATE_INTERVAL", 60)
        k.send_route_idtokens = g("JOB_ROUTER_SEND_ROUTE_IDTOKENS")
        k.schedd1_name, k.schedd1_pool = g("JOB_ROUTER_SCHEDD1_NAME"), g("JOB_ROUTER_SCHEDD1_POOL")
        k.schedd1_job_queue_log = g("JOB_ROUTER_SCHEDD1_JOB_QUEUE_LOG") or g("JOB_QUEUE_LOG")
        k.schedd2_name, k.schedd2_pool = g("JOB_ROUTER_SCHEDD2_NAME"), g("JOB_ROUTER_SCHEDD2_POOL")
        k.schedd2_job_queue_log = g("JOB_ROUTER_SCHEDD2_JOB_QUEUE_LOG")
        k.schedd2_spool = g("JOB_ROUTER_SCHEDD2_SPOOL")
        if "JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES" in cfg:
            k.use_deprecated_entries = flag("JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES", True)
        k.merge_default_ads = flag("MERGE_JOB_ROUTER_DEFAULT_ADS", False)
        return k

    # ------------------------------------------------------------------------------ main

    def load(self) -> RoutingTable:
        knobs = self.knobs()
        allow_empty_req = bool(knobs.source_job_constraint)
        self.load_classic(knobs, allow_empty_req)
        pre = self.load_transforms("JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES")
        post = self.load_transforms("JOB_ROUTER_POST_ROUTE_TRANSFORM_NAMES")
        names_text = self.get("JOB_ROUTER_ROUTE_NAMES")
        listed = [n for n in split_list(names_text) if n.upper() != "NAMES"] if names_text is not None else None
        for name in listed or []:
            self.load_route_knob(name, knobs, allow_empty_req)
        order = self.order(listed)
        self.report_unlisted(listed, knobs, allow_empty_req)
        if not order and self.enabled:
            if listed is None and not self.routes:
                self.diag("warning", "JOB_ROUTER_ROUTE_NAMES is not defined, so job routing will not take place.")
                self.enabled = False
        return RoutingTable(order, self.disabled, pre, post, knobs, self.cfg, self.diags, self.enabled)

    # ------------------------------------------------------------------------------ ClassAd syntax

    def load_classic(self, knobs: RouterKnobs, allow_empty_req: bool) -> None:
        used = [k for k in CLASSIC_KNOBS if k in self.cfg]
        has_defaults = "JOB_ROUTER_DEFAULTS" in self.cfg
        if not used and not has_defaults:
            return
        names = ", ".join((["JOB_ROUTER_DEFAULTS"] if has_defaults else []) + used)
        first = self.loc("JOB_ROUTER_DEFAULTS" if has_defaults else used[0])
        if knobs.use_deprecated_entries is False:
            self.diag("warning", f"{names} defined, but ignored because JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES "
                      "is false (as HTCondor 23.5-24.9 does)", self.loc("JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES"))
            return
        self.diag("info", f"{names}: deprecated ClassAd route syntax, removed in HTCondor 24.10 (ignored there "
                  "with a warning); RouteDeck converts it to transforms — see `routedeck convert`", first)
        defaults = K.parse_defaults(self.get("JOB_ROUTER_DEFAULTS"), knobs.merge_default_ads)
        for p in defaults.problems:
            self.diag(p.level, p.message, self.value_loc("JOB_ROUTER_DEFAULTS", p.line))
        if not defaults.ok:
            self.enabled = False
            return
        for knob, label in (("JOB_ROUTER_ENTRIES_CMD", "cmd"), ("JOB_ROUTER_ENTRIES_FILE", "file"),
                            ("JOB_ROUTER_ENTRIES", "entries")):
            if knob not in self.cfg:
                continue
            text, locate = self.classic_text(knob)
            if text is None:
                continue
            routes, problems = K.parse_entries(text, defaults.ad, label)
            for p in problems:
                self.diag(p.level, f"{knob}: {p.message}", locate(p.line), p.route)
            for cr in routes:
                self.add_classic(cr, knob, locate(cr.line), knobs, allow_empty_req)

    def classic_text(self, knob: str) -> tuple[str | None, Callable[[int | None], Source | None]]:
        value = self.get(knob)
        where = self.loc(knob)
        if knob == "JOB_ROUTER_ENTRIES":
            return value, lambda line: self.value_loc(knob, line)
        if knob == "JOB_ROUTER_ENTRIES_FILE":
            if not value:
                return None, lambda line: where
            try:
                if not stat.S_ISREG(os.stat(value).st_mode):  # a FIFO blocks, /dev/zero never ends
                    raise OSError(0, "Is a directory" if os.path.isdir(value) else "not a regular file")
                with open(value, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError as exc:
                self.diag("error", f"JOB_ROUTER_ENTRIES_FILE: cannot read {value}: {exc.strerror} (HTCondor EXCEPTs)",
                          where)
                self.enabled = False
                return None, lambda line: where
            return text, lambda line: Source(value, line or 1)
        if not value:
            return None, lambda line: where
        if not self.allow_cmd:
            self.diag("warning", f"JOB_ROUTER_ENTRIES_CMD ({value}) was not run: running commands from a config "
                      "needs --allow-cmd (check, route and convert take it); its routes are missing from this table", where)
            return None, lambda line: where
        try:
            status, output = self.cmd_runner(value)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            self.diag("error", f"JOB_ROUTER_ENTRIES_CMD: cannot run {value!r}: {exc} (HTCondor EXCEPTs)", where)
            self.enabled = False
            return None, lambda line: where
        if status != 0:
            self.diag("error", f"JOB_ROUTER_ENTRIES_CMD {value!r} returned non-zero status {status} "
                      "(HTCondor EXCEPTs)", where)
            self.enabled = False
            return None, lambda line: where
        return output, lambda line: Source(f"<output of JOB_ROUTER_ENTRIES_CMD {value}>", line or 1)

    def add_classic(self, cr: K.ClassicRoute, knob: str, where: Source | None, knobs: RouterKnobs,
                    allow_empty_req: bool, single_knob: bool = False) -> None:
        route = self.make_route(cr.name, cr.source_label, where, "classad", cr.transform_text, knobs,
                                allow_empty_req, knob_for_lines=None)
        if route is None:
            return
        route.route_ad = cr.route_ad
        route.classad_requirements = cr.requirements
        route.uses_pre_post = single_knob
        if single_knob:
            self.register(route, where)
            return
        existing = self.routes.get(route.name.lower())
        index = self.hash_order.count  # len(names()), without listing every route for each one
        if existing is not None:
            if cr.override is None:
                self.diag("warning", f"{knob}: two route entries have the same name '{route.name}' "
                          f"({existing.source_label} and {cr.source_label}), so the second one overrides the "
                          "first; set OverrideRoutingEntry in the second to say which one you mean", where, route.name)
            if cr.override is False:
                self.disabled.append(DisabledRoute(route.name, f"OverrideRoutingEntry = false: {existing.source_label} "
                                                   "with the same name is kept", cr.source_label, where, route))
                self.diag("info", f"route {cr.source_label} '{route.name}' ignored: OverrideRoutingEntry is false "
                          f"and {existing.source_label} has the same name", where, route.name)
                return
            old = self.hash_order.lookup(existing.name)
            index = old if old is not None else index
            self.hash_order.remove(existing.name)
            self.disabled.append(DisabledRoute(existing.name, f"replaced by {cr.source_label} with the same name",
                                               existing.source_label, existing.location, existing))
        self.routes[route.name.lower()] = route
        self.hash_order.insert(route.name, index)

    # ------------------------------------------------------------------------------ transform syntax

    def load_transforms(self, names_knob: str) -> list[Any]:
        out: list[Any] = []
        seen: set[str] = set()
        for tag in split_list(self.get(names_knob)):
            if tag.lower() in seen:
                continue
            seen.add(tag.lower())
            knob = TRANSFORM_PREFIX + tag
            text = self.cfg.get_raw(knob)
            if text is None:
                self.diag("error", f"{knob} not found (listed in {names_knob}); HTCondor disables job routing",
                          self.loc(names_knob))
                self.disabled.append(DisabledRoute(knob, f"listed in {names_knob} but not defined: HTCondor "
                                                   "disables ALL job routing", names_knob, self.loc(names_knob)))
                self.enabled = False
                continue
            text = self.cut_at_transform(text, knob, tag)
            try:
                out.append(X.parse_transform(text, name=tag))
                self.report_macro_loops(out[-1], knob, knob, None)
            except X.XformError as exc:
                self.diag("error", f"{knob} load error: {exc.message}; HTCondor disables job routing",
                          self.value_loc(knob, exc.line))
                self.disabled.append(DisabledRoute(knob, f"does not parse ({exc.message}): HTCondor disables ALL "
                                                   "job routing", knob, self.value_loc(knob, exc.line)))
                self.enabled = False
        return out

    def load_route_knob(self, name: str, knobs: RouterKnobs, allow_empty_req: bool) -> None:
        knob = ROUTE_PREFIX + name
        raw = self.cfg.get_raw(knob)
        if raw is None:
            return  # maybe a JOB_ROUTER_ENTRIES route; order() reports it if it is not
        where = self.loc(knob)
        text = raw.lstrip()
        if not text:
            # HTCondor skips an empty knob with a log line (JobRouter::config). A ClassAd route of
            # the same name (JOB_ROUTER_ENTRIES*, parsed earlier) then stays: blanking the knob is
            # how a config keeps its entries from being replaced by an earlier file's transform
            # route — not a problem and not a second, disabled route.
            existing = self.routes.get(name.lower())
            if existing is not None:
                self.diag("info", f"{knob} definition is empty, ignoring: route {existing.name} comes from "
                          f"{existing.source_label}", where, name)
                return
            self.diag("warning", f"{knob} definition is empty, ignoring.", where, name)
            self.disabled.append(DisabledRoute(name, "definition is empty", knob, where))
            return
        if text.startswith("[") or text.startswith("/*"):
            expanded = self.get(knob) or ""
            self.diag("info", f"{knob}: a ClassAd in a JOB_ROUTER_ROUTE_ knob is the deprecated syntax "
                      "(removed in HTCondor 24.10); RouteDeck converts it", where, name)
            cr, problems = K.parse_single_knob(expanded, name)
            for p in problems:
                self.diag(p.level, p.message, self.value_loc(knob, p.line), name)
            if cr is None:
                self.disabled.append(DisabledRoute(name, "ClassAd route does not parse", knob, where))
                return
            self.add_classic(cr, knob, where, knobs, allow_empty_req, single_knob=True)
            return
        route = self.make_route(name, knob, where, "transform", raw, knobs, allow_empty_req, knob_for_lines=knob)
        if route is not None:
            self.register(route, where)

    def register(self, route: Route, where: Source | None) -> None:
        existing = self.routes.get(route.name.lower())
        if existing is not None:
            self.diag("warning", f"while parsing {route.source_label} found and overwrote a route from "
                      f"{existing.source_label} with the same name", where, route.name)
            why = f"replaced by {route.source_label}"
            if existing.syntax == "classad" and not existing.uses_pre_post:
                why = (f"shadowed by {route.source_label} with the same name: HTCondor keeps the later "
                       f"{route.source_label} route and drops this {existing.source_label} one")
            self.disabled.append(DisabledRoute(existing.name, why, existing.source_label, existing.location, existing))
        self.routes[route.name.lower()] = route

    def make_route(self, name: str, label: str, where: Source | None, syntax: str, text: str, knobs: RouterKnobs,
                   allow_empty_req: bool, knob_for_lines: str | None, report: str = "error") -> Route | None:
        text = self.cut_at_transform(text, knob_for_lines or label, name, where)
        try:
            t = X.parse_transform(text)
        except X.XformError as exc:
            at = self.value_loc(knob_for_lines, exc.line) if knob_for_lines else where
            hint = self.requirements_hint(text, exc, knob_for_lines)
            self.diag(report, f"route {name} ({label}) does not parse: {exc.message}{hint}; ignored", at, name)
            if report == "error":
                self.disabled.append(DisabledRoute(name, f"does not parse: {exc.message}", label, where))
            return None
        if knob_for_lines:
            self.report_macro_loops(t, knob_for_lines, f"route {name} ({label})", name)
        # The knob names the route: JobRouter.cpp presets the name before MacroStreamXFormSource::open,
        # which does not override it, and says nothing of a different NAME line (JobRoute::ParseNext
        # tests m_name before setting it; htcondor.md §8). condor_transform_ads writes such lines.
        t.name = name
        route = Route(name, label, where, syntax, t, getattr(t, "requirements", None) or None, config=self.cfg)
        self.read_limits(route, knobs)
        if not route.requirements and not allow_empty_req:
            hint = ""
            if any(s.kind == "assign" and s.attr.lower() == "requirements" for s in getattr(t, "statements", ())):
                hint = " ('REQUIREMENTS = …' assigns a macro; the statement is 'REQUIREMENTS <expr>', without '=')"
            self.diag(report, f"route {name} ({label}): Missing Requirements in job route (allowed only when "
                      f"JOB_ROUTER_SOURCE_JOB_CONSTRAINT is set){hint}; ignored", where, name)
            self.disabled.append(DisabledRoute(name, "missing REQUIREMENTS", label, where, route))
            return None
        return route

    def macro_where(self, knob: str | None, local: Any) -> Callable[[str], str | None]:
        """Where a macro a transform expands is defined: its assignment in the knob (``local``:
        name -> transform line) at its ``file:line``, else the config's definition."""

        def where(name: str) -> str | None:
            line = local.get(name.lower())
            if line is None:
                return self.cfg.where(name)
            src = self.value_loc(knob, line) if knob else None
            return f"{src.file}:{src.line}" if src is not None else f"line {line}"

        return where

    def report_macro_loops(self, t: Any, knob: str, label: str, route: str | None) -> None:
        """A macro loop the transform would expand (``Transform.macro_loops``): an error naming every
        macro of the cycle at its ``file:line``."""
        for loop in t.macro_loops(self.cfg):
            self.diag("error", f"{label}: {mx.loop_message(loop.chain, self.macro_where(knob, loop.local))}; a job "
                      "whose transform reaches it fails to route", self.value_loc(knob, loop.line), route)

    def requirements_hint(self, text: str, exc: Any, knob: str | None) -> str:
        """For ``invalid REQUIREMENTS : $(X)``: HTCondor parses the REQUIREMENTS text as it is, without
        expanding macros (xform_utils.cpp ``MacroStreamXFormSource::open`` → ``setRequirements``),
        so a macro there is never an expression; say what ``$(X)`` holds, or that it is a loop and
        where each of its macros is defined."""
        prefix = "invalid REQUIREMENTS : "
        if not exc.message.startswith(prefix) or not mx.find_macro(exc.message, len(prefix)):
            return ""
        args = exc.message[len(prefix):]
        lines = text.split("\n")
        if 1 <= exc.line <= len(lines):
            lines[exc.line - 1] = ""  # the rest of the route, for the macros it assigns
        try:
            rest = X.parse_transform("\n".join(lines))
        except X.XformError:
            rest = X.parse_transform("")
        lookup, local = rest.static_macros(self.cfg)
        why = "HTCondor parses REQUIREMENTS as written, without expanding macros"
        try:
            value = mx.expand(args, lookup, env=self.cfg.env, errors=[])
        except mx.MacroError as loop:
            return f" ({why}; and {mx.located(loop, self.macro_where(knob, local))})"
        return f" ({why}: {args} would be {value.strip()!r}; write the expression itself)"

    def cut_at_transform(self, text: str, knob: str, name: str, where: Source | None = None) -> str:
        """The text HTCondor loads: ``MacroStreamXFormSource::open`` stops at ``TRANSFORM``."""
        cut = cut_at_transform(text)
        if cut.dropped_lines:
            in_cfg = knob.startswith("JOB_ROUTER_")
            at = self.value_loc(knob, cut.dropped_lines[0]) if in_cfg else where
            stmt = self.value_loc(knob, cut.transform_line) if in_cfg else None
            line = f"line {stmt.line}" if stmt is not None and stmt.line else f"line {cut.transform_line} of the knob"
            self.diag("warning", f"{knob}: HTCondor stops reading at the TRANSFORM statement ({line}), so the "
                      f"{len(cut.dropped_lines)} statement line(s) after it are never applied", at, name)
        return cut.text

    def macro(self, route: Route, name: str, read: Callable[[str], str | None]) -> str | None:
        """A route macro through ``read``, the route's ``Transform.macro_reader`` (the body runs
        once for all the macros ``read_limits`` reads, not once per macro)."""
        try:
            return read(name)
        except (X.XformError, ConfigError, ValueError) as exc:
            why = getattr(exc, "message", None) or str(exc)  # XformError(0, 0, …) would print "line 0:"
            self.diag("warning", f"route {route.name}: cannot expand {name}: {why}", route.location, route.name)
            return None

    def read_limits(self, route: Route, knobs: RouterKnobs) -> None:
        """Route-level macros, read once as ``JobRoute::ParseNext`` does (§1.3 table)."""
        read = route.transform.macro_reader(self.cfg)

        def number(name: str, default: float, want_int: bool) -> float:
            text = self.macro(route, name, read)
            if text is None or not text.strip():
                return default
            value = parse_number(text, want_int=want_int)
            if value is None:
                self.diag("warning", f"route {route.name}: {name} = {text!r} is not a number; using {default}",
                          route.location, route.name)
                return default
            return value

        route.max_jobs = int(number("MaxJobs", knobs.default_max_jobs, True))
        route.max_idle_jobs = int(number("MaxIdleJobs", knobs.default_max_idle_jobs, True))
        route.failure_rate_threshold = float(number("FailureRateThreshold", 0.03, False))
        universe = getattr(route.transform, "universe", None)
        route.target_universe = int(universe) if universe else int(number("TargetUniverse", 9, True))
        if route.target_universe == 9:
            grid = self.macro(route, "GridResource", read)
            if grid is not None:
                grid = grid.strip()
                if len(grid) >= 2 and grid[0] == grid[-1] == '"':
                    grid = grid[1:-1]
            route.grid_resource = grid or None
        for attr, field_name in JOB_EXPR_ATTRS.items():
            setattr(route, field_name, self.macro(route, attr, read) or None)
        send = self.macro(route, "SendIDTokens", read)
        route.send_idtokens = (send if send else '""') if send is not None else knobs.send_route_idtokens

    # ------------------------------------------------------------------------------ order

    def order(self, listed: list[str] | None) -> list[Route]:
        if listed is None:
            names = self.hash_order.names()
            routes = [self.routes[n.lower()] for n in names if n.lower() in self.routes]
            if routes:
                self.diag("info", "Routes will be matched in hashtable order because JOB_ROUTER_ROUTE_NAMES was not "
                          "configured (HTCondor <= 24.9): " + ", ".join(r.name for r in routes))
            return routes
        out: list[Route] = []
        seen: set[str] = set()
        where = self.loc("JOB_ROUTER_ROUTE_NAMES")
        # disabled before this loop; what the loop adds carries a name already in ``seen``
        disabled = {d.name.lower() for d in self.disabled}
        for name in listed:
            low = name.lower()
            if low in seen:
                self.diag("warning", f"route '{name}' is listed twice in JOB_ROUTER_ROUTE_NAMES", where, name)
                continue
            seen.add(low)
            route = self.routes.get(low)
            if route is None:
                if low not in disabled:
                    self.diag("warning", f"route '{name}' from JOB_ROUTER_ROUTE_NAMES not found in the routing table",
                              where, name)
                    self.disabled.append(DisabledRoute(
                        name, f"listed in JOB_ROUTER_ROUTE_NAMES but {ROUTE_PREFIX}{name} is not defined: HTCondor "
                        "skips it", "JOB_ROUTER_ROUTE_NAMES", where))
                continue
            out.append(route)
        for low, route in self.routes.items():
            if low not in seen:
                self.disabled.append(DisabledRoute(route.name, "not in JOB_ROUTER_ROUTE_NAMES", route.source_label,
                                                   route.location, route))
                self.diag("warning", f"route {route.name} ({route.source_label}) is not in JOB_ROUTER_ROUTE_NAMES "
                          "and will be disabled", route.location, route.name)
        return out

    def report_unlisted(self, listed: list[str] | None, knobs: RouterKnobs, allow_empty_req: bool) -> None:
        """``JOB_ROUTER_ROUTE_<X>`` knobs nobody lists: HTCondor never reads them."""
        low_listed = {n.lower() for n in listed or []}
        for knob in self.cfg.with_prefix(ROUTE_PREFIX):
            name = knob[len(ROUTE_PREFIX):]
            if name.upper() == "NAMES" or name.lower() in low_listed:
                continue
            where = self.loc(knob)
            raw = self.cfg.get_raw(knob) or ""
            route = None
            if raw.strip() and not raw.lstrip().startswith(("[", "/*")):
                route = self.make_route(name, knob, where, "transform", raw, knobs, True, knob, report="warning")
            why = ("JOB_ROUTER_ROUTE_NAMES is not defined" if listed is None else "not in JOB_ROUTER_ROUTE_NAMES")
            self.disabled.append(DisabledRoute(name, why, knob, where, route))
            self.diag("warning", f"{knob} is defined but {why}, so the route is disabled", where, name)
        listed_xf = {t.lower() for k in ("JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES", "JOB_ROUTER_POST_ROUTE_TRANSFORM_NAMES")
                     for t in split_list(self.get(k))}
        for knob in self.cfg.with_prefix(TRANSFORM_PREFIX):
            if knob[len(TRANSFORM_PREFIX):].lower() not in listed_xf:
                self.diag("info", f"{knob} is defined but not listed in JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES or "
                          "JOB_ROUTER_POST_ROUTE_TRANSFORM_NAMES, so it is not used", self.loc(knob))


def load_routing_table(
    config: Config,
    *,
    allow_cmd: bool = False,
    previous: RoutingTable | None = None,
    cmd_runner: Callable[[str], tuple[int, str]] | None = None,
) -> RoutingTable:
    """Build the routing table from ``config``; never raises on bad input (see module doc)."""
    with gc_paused():  # a table of 100,000 routes: the collector's full passes cost a third of the load
        table = TableLoader(config, allow_cmd=allow_cmd, cmd_runner=cmd_runner).load()
        table.diagnostics.extend(lint_table(table))
        table.diagnostics.extend(lint_config_routes(table, config))
    table.fingerprint = fingerprint(table)
    if previous is not None:
        # Config errors count too: a file cut in the middle of an @= block loses routes with
        # only a warning from the table. A kept table carries the rejected one's errors, so
        # "previous was good" is kept_previous or no errors of its own.
        config_errors = [d for d in config_diagnostics(config) if d.level == "error"]
        if (table.errors or config_errors) and (previous.kept_previous or not previous.errors):
            kept = replace(previous, diagnostics=config_errors + table.diagnostics + [Diagnostic(
                "info", f"the new routing table has errors; table version {previous.version} stays in force")],
                kept_previous=True)
            return kept
        table.version = previous.version + (0 if table.fingerprint == previous.fingerprint else 1)
    return table


@dataclass(frozen=True)
class Loaded:
    """A configuration and the routing table it defines (:func:`load_config_and_table`)."""

    config: Config
    table: RoutingTable

    @property
    def problems(self) -> list[str]:
        """The config reader's errors, then the routing table's, each ``file:line: …``."""
        return [str(e) for e in self.config.errors] + [str(d) for d in self.table.errors]


def load_config_and_table(
    paths: Iterable[str],
    *,
    env: Mapping[str, str] | None = None,
    allow_cmd: bool = False,
    previous: RoutingTable | None = None,
    edited: Mapping[str, str] | None = None,
) -> Loaded:
    """The one loader of "config + routing table": :meth:`Config.load` of ``paths`` (``env``:
    the environment its ``$ENV()`` and ``_CONDOR_`` overrides read, ``os.environ`` when None;
    ``edited``: path → text read in place of that file, the editor's buffer), then
    :func:`load_routing_table` of it. Never raises on bad input: the problems are in the result."""
    config = Config.load(list(paths), env=env, edited=edited)
    return Loaded(config, load_routing_table(config, allow_cmd=allow_cmd, previous=previous))


def config_diagnostics(cfg: Any) -> list[Diagnostic]:
    """The config reader's errors and warnings as diagnostics (``file:line`` kept)."""
    out = [Diagnostic("error", e.message, e.file, e.line or None) for e in getattr(cfg, "errors", ())]
    out += [Diagnostic("warning", w.message, w.file, w.line or None) for w in getattr(cfg, "warnings", ())]
    return out
