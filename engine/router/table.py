"""The Job Router's routing table, loaded from HTCondor configuration (both route syntaxes).

Design decisions and invariants (htcondor.md §1.1–1.4, product.md §4 "Routing table"):

- One table, one code path: ClassAd routes (``JOB_ROUTER_DEFAULTS`` + ``JOB_ROUTER_ENTRIES`` /
  ``_FILE`` / ``_CMD``, or a ClassAd in ``JOB_ROUTER_ROUTE_<name>``) are converted to transform
  text on load (:mod:`engine.router.classic`) and every route carries a parsed ``Transform``.
  Each syntax keeps its own *matching* rule (:meth:`Route.matches`): ClassAd routes evaluate the
  route ad's ``Requirements`` with the route ad as MY and the job as TARGET (unqualified names
  fall back to the other ad); transform routes evaluate ``REQUIREMENTS`` with the job as MY and
  no TARGET.
- Parse order as HTCondor 24.x: ``_CMD``, ``_FILE``, ``JOB_ROUTER_ENTRIES``, then the
  ``JOB_ROUTER_ROUTE_<name>`` knobs of ``JOB_ROUTER_ROUTE_NAMES``; a later route with the same
  (case-insensitive) name replaces an earlier one (``OverrideRoutingEntry`` among ClassAd entries).
  Route bodies are read unexpanded (``get_raw``) and expanded when a job is transformed; ClassAd
  text is expanded at load, as ``param()`` did.
- With ``JOB_ROUTER_ROUTE_NAMES`` only the listed routes are enabled, in list order; without it
  ClassAd routes are matched in HTCondor's hash-table order (emulated) and ``JOB_ROUTER_ROUTE_*``
  knobs are not read at all.
- Both syntaxes load by default (RouteDeck is not limited to ≥ 24.10); an explicit
  ``JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES = false`` is honoured as HTCondor 23.5–24.9 did.
  ``JOB_ROUTER_ENTRIES_CMD`` runs only with ``allow_cmd=True``.
- Nothing is silently dropped: every listed-but-undefined, defined-but-unlisted, empty, or
  unparsable route is a :class:`Diagnostic` with file and line and, where a route exists, a
  :class:`DisabledRoute`. Loading never raises on bad input.
- A table with errors (its own or the config reader's) does not replace a good one: given
  ``previous`` (a table without errors, or one already kept), the previous routes stay in force
  and the new diagnostics are attached (``kept_previous``), again and again until a clean load.
  Without ``previous`` the table is used as HTCondor would use it (bad routes left out; routing
  disabled where HTCondor disables it: broken defaults, missing/broken pre/post transforms).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from engine import classad as C
from engine.lang.config import Config, Source

ROUTE_PREFIX = "JOB_ROUTER_ROUTE_"
TRANSFORM_PREFIX = "JOB_ROUTER_TRANSFORM_"
CLASSIC_KNOBS = ("JOB_ROUTER_ENTRIES_FILE", "JOB_ROUTER_ENTRIES_CMD", "JOB_ROUTER_ENTRIES")
JOB_EXPR_ATTRS = {
    "JobFailureTest": "job_failure_test",
    "JobShouldBeSandboxed": "job_should_be_sandboxed",
    "EditJobInPlace": "edit_job_in_place",
    "UseSharedX509UserProxy": "use_shared_x509_user_proxy",
    "SharedX509UserProxy": "shared_x509_user_proxy",
}


class RoutingError(Exception):
    """Building a routed copy failed (a transform error); the router counts it as a failure."""

    def __init__(self, message: str, route: str | None = None, step: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.route = route
        self.step = step


class SubmitRejected(RoutingError):
    """The routed copy was built but the schedd would refuse it (an attribute name that fails
    qmgmt.cpp ``IsValidAttrName``): the router reports a failed submit."""


@dataclass(frozen=True)
class Diagnostic:
    level: str  # "error" | "warning" | "info"
    message: str
    file: str | None = None
    line: int | None = None
    route: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line else (self.file or "")
        return f"{where}: {self.level}: {self.message}" if where else f"{self.level}: {self.message}"


@dataclass
class Route:
    """One enabled (or disabled but parsed) route. Limits are read once, at load (§1.3 table)."""

    name: str
    source_label: str
    location: Source | None
    syntax: str  # "transform" | "classad"
    transform: Any  # engine.lang.xform.Transform
    requirements: str | None  # transform-side REQUIREMENTS text (converted for ClassAd routes)
    max_jobs: int = 100
    max_idle_jobs: int = 50
    failure_rate_threshold: float = 0.03
    target_universe: int = 9
    grid_resource: str | None = None
    job_failure_test: str | None = None
    job_should_be_sandboxed: str | None = None
    edit_job_in_place: str | None = None
    use_shared_x509_user_proxy: str | None = None
    shared_x509_user_proxy: str | None = None
    send_idtokens: str | None = None
    route_ad: Any = None  # ClassAd syntax only: the merged route ad (MY when matching)
    classad_requirements: str | None = None  # ClassAd syntax only: the route ad's Requirements
    uses_pre_post: bool = True  # False for JOB_ROUTER_ENTRIES* routes (they had the defaults ad)
    config: Config | None = field(default=None, repr=False)

    def matches(self, job_ad: Any, now: float | None = None) -> bool:
        """Does the job match this route, by this route's syntax (htcondor.md §1.2, §1.4)?"""
        if self.syntax == "classad" and self.route_ad is not None:
            if not self.classad_requirements:
                return True
            value = C.evaluate(_expr(self.classad_requirements), my=self.route_ad, target=job_ad, now=now)
            return C.is_true(value)
        if not self.requirements:
            return True
        return bool(self.transform.matches(job_ad, now=now, config=self.config))

    def eval_job_expr(self, attr: str, job_ad: Any, now: float | None = None) -> bool:
        """``JobFailureTest`` & co: anything but true (undefined included) is false (§1.4)."""
        if self.syntax == "classad" and self.route_ad is not None:
            if not any(k.lower() == attr.lower() for k in self.route_ad.keys()):
                return False
            return C.is_true(C.evaluate(_expr(attr), my=self.route_ad, target=job_ad, now=now))
        text = getattr(self, JOB_EXPR_ATTRS.get(attr, ""), None) if attr in JOB_EXPR_ATTRS else None
        if not text:
            return False
        try:
            return C.is_true(C.evaluate(_expr(text), my=job_ad, now=now))
        except C.ClassAdError:
            return False


def _expr(text: str) -> Any:
    return C.parse_expr(text)


@dataclass
class DisabledRoute:
    name: str
    reason: str
    source_label: str
    location: Source | None = None
    route: Route | None = None


@dataclass
class RouterKnobs:
    """Router-wide knobs with HTCondor's defaults (htcondor.md §1.3, §6 "Defaults")."""

    name: str = "jobrouter"
    source_job_constraint: str | None = None
    max_jobs: int = -1
    round_robin: bool = False
    release_on_hold: bool = True
    polling_period: int = 10
    hook_keyword: str | None = None
    default_max_jobs: int = 100
    default_max_idle_jobs: int = 50
    entries_refresh: int = 0
    max_job_mirror_update_lag: int = 600
    periodic_expr_interval: int = 60
    max_periodic_expr_interval: int = 1200
    periodic_expr_timeslice: float = 0.01
    update_interval: int = 60
    send_route_idtokens: str | None = None
    schedd1_name: str | None = None
    schedd1_pool: str | None = None
    schedd1_job_queue_log: str | None = None
    schedd2_name: str | None = None
    schedd2_pool: str | None = None
    schedd2_job_queue_log: str | None = None
    schedd2_spool: str | None = None
    use_deprecated_entries: bool | None = None  # None = unset (RouteDeck then loads them)
    merge_default_ads: bool = False


@dataclass
class RoutingTable:
    routes: list[Route]
    disabled: list[DisabledRoute]
    pre_transforms: list[Any]
    post_transforms: list[Any]
    knobs: RouterKnobs
    config: Config
    diagnostics: list[Diagnostic]
    routing_enabled: bool
    version: int = 1
    fingerprint: str = ""
    kept_previous: bool = False
    # lower-case name -> first route of that name, for ``route``; rebuilt when ``routes`` is
    # another list or another length (the router asks once per job event: a scan of 100,000
    # routes each time would make a poll grow with jobs x routes)
    _by_name: tuple[Any, int, dict[str, Route]] | None = field(default=None, init=False, repr=False, compare=False)

    def route(self, name: str) -> Route | None:
        index = self._by_name
        if index is None or index[0] is not self.routes or index[1] != len(self.routes):
            names: dict[str, Route] = {}
            for r in self.routes:
                names.setdefault(r.name.lower(), r)
            index = self._by_name = (self.routes, len(self.routes), names)
        return index[2].get(name.lower())

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level == "warning"]


def fingerprint(table: RoutingTable) -> str:
    """A digest of everything that decides routing: knobs, route texts and limits, transforms."""
    h = hashlib.sha256()
    h.update(repr(table.knobs).encode())
    h.update(repr(table.routing_enabled).encode())
    for r in table.routes:
        h.update(repr((r.name, r.syntax, r.source_label, getattr(r.transform, "text", ""), r.requirements,
                       r.classad_requirements, r.max_jobs, r.max_idle_jobs, r.failure_rate_threshold,
                       r.target_universe, r.grid_resource, r.uses_pre_post)).encode())
    for t in list(table.pre_transforms) + ["|"] + list(table.post_transforms):
        h.update(repr((getattr(t, "name", t), getattr(t, "text", ""))).encode())
    h.update(repr(sorted(d.name.lower() for d in table.disabled)).encode())
    return h.hexdigest()[:16]
