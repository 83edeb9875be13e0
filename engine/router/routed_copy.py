"""Building the routed copy of a job (htcondor.md §1.6 "Building the routed copy", §1.3 pipeline).

Order, as ``FinishSubmitJob`` / ``JobRoute::ApplyRoutingJobEdits``:

1. a copy of the source ad (attribute texts);
2. unless the route edits in place: ``VanillaToGrid`` — delete the identity/accounting attributes,
   reset the counters, ``JobUniverse`` = target universe and ``Remote_JobUniverse`` = the old
   universe expression; for the grid universe delete ``CurrentHosts``, set the route's
   ``GridResource`` and, when not sandboxed, undo ``TransferOutputRemaps`` for ``Out``/``Err``;
3. the pre-route transforms in order, each only if its ``REQUIREMENTS`` matches the ad *as it is
   then* (after VanillaToGrid); 4. the route's transform; 5. the post-route transforms likewise —
   all sharing one macro set, so ``$(TargetUniverse)`` and pre-route EVALMACROs are visible later.
   Pre/post transforms are skipped for ``JOB_ROUTER_ENTRIES*`` routes (§1.2: they had the
   defaults ad instead);
6. ``RoutedFromJobId``, ``RoutedBy``, ``RouteName`` added, ``RoutedToJobId`` deleted. An
   edit-in-place route gets none of these: the edited source job must stay routable (§1.6
   "EditJobInPlace"), which ``RoutedBy`` would prevent.

Attribute names are case-insensitive (an existing key keeps its spelling when it is replaced).
A transform failure raises :class:`~engine.router.table.RoutingError`; the router counts it as a
routing failure. An attribute name the schedd refuses (HTCondor's transform inserts it) raises
:class:`~engine.router.table.SubmitRejected`: the router reports a failed submit. Nothing here reads the clock: ``now`` is passed in.
"""

from __future__ import annotations

from typing import Any, Iterable

from engine import classad as C
from engine.lang import xform as X
from engine.router.table import Route, RoutingError, RoutingTable, SubmitRejected

VANILLA_TO_GRID_DELETE = (
    "ClusterId", "ProcId", "BufferBlockSize", "BufferSize", "CondorPlatform", "CondorVersion", "CoreSize",
    "GlobalJobId", "User", "OsUser", "QDate", "RemoteWallClockTime", "LastRemoteWallClockTime", "ServerTime",
    "AutoClusterId", "AutoClusterAttrs", "TotalSubmitProcs", "StageInFinish", "StageInStart", "UserLog",
    "UserLogUseXML", "DAGManNodesLog", "DAGManNodesMask", "TimerRemove", "SUBMIT_Iwd",
)
VANILLA_TO_GRID_RESET = (
    ("JobStatus", "1"), ("RemoteUserCpu", "0.0"), ("RemoteSysCpu", "0.0"), ("ExitStatus", "0"),
    ("CompletionDate", "0"), ("NumCkpts", "0"), ("NumRestarts", "0"), ("NumSystemHolds", "0"),
    ("CommittedTime", "0"), ("CommittedSlotTime", "0"), ("CumulativeSlotTime", "0"), ("TotalSuspensions", "0"),
    ("LastSuspensionTime", "0"), ("CumulativeSuspensionTime", "0"), ("CommittedSuspensionTime", "0"),
    ("ExitBySignal", "false"),
)
GRID_UNIVERSE = 9
# the two lists with each name's lower case, for CIAttrs.delete_all / set_all
_DELETE_LOWER = tuple((n, n.lower()) for n in VANILLA_TO_GRID_DELETE)
_RESET_LOWER = tuple((n, n.lower(), t) for n, t in VANILLA_TO_GRID_RESET)


class CIAttrs:
    """Case-insensitive edits on a {name: text} dict, keeping the existing spelling."""

    def __init__(self, attrs: dict[str, str]) -> None:
        self.attrs = attrs
        # lower-case name -> its spelling in ``attrs``, kept in step by ``set``/``delete``; None
        # when two spellings of one name are present (a hook's output may have both): then
        # ``key`` scans, finding the first in the dict's order (``_scan``, the oracle of
        # test_ci_attrs_index_matches_scan). Edits made to ``attrs`` behind this object's back
        # are not seen: make a new CIAttrs after them.
        index = {k.lower(): k for k in reversed(attrs)}
        self._index: dict[str, str] | None = index if len(index) == len(attrs) else None

    def _scan(self, name: str) -> str | None:
        low = name.lower()
        return next((k for k in self.attrs if k.lower() == low), None)

    def key(self, name: str) -> str | None:
        if self._index is None:
            return self._scan(name)
        return self._index.get(name.lower())

    def get(self, name: str) -> str | None:
        k = self.key(name)
        return None if k is None else self.attrs[k]

    def set(self, name: str, text: str) -> None:
        k = self.key(name)
        if k is None:
            k = name
            if self._index is not None:
                self._index[name.lower()] = name
        self.attrs[k] = text

    def delete(self, name: str) -> None:
        k = self.key(name)
        if k is not None:
            del self.attrs[k]
            if self._index is not None:
                del self._index[k.lower()]

    def delete_all(self, names: Iterable[tuple[str, str]]) -> None:
        """``delete`` of each (name, its lower case), in order, one call for all."""
        index, attrs = self._index, self.attrs
        if index is None:
            for name, _low in names:
                self.delete(name)
            return
        for _name, low in names:
            k = index.pop(low, None)  # the index holds k.lower() == low
            if k is not None:
                del attrs[k]

    def set_all(self, items: Iterable[tuple[str, str, str]]) -> None:
        """``set`` of each (name, its lower case, text), in order, one call for all."""
        index, attrs = self._index, self.attrs
        if index is None:
            for name, _low, text in items:
                self.set(name, text)
            return
        for name, low, text in items:
            k = index.get(low)
            if k is None:
                k = index[low] = name
            attrs[k] = text

    def string(self, name: str) -> str | None:
        text = self.get(name)
        if text is None:
            return None
        try:
            value = C.evaluate(C.parse_expr(text), my=C.make_ad(self.attrs))
        except C.ClassAdError:
            return None
        return value if isinstance(value, str) else None


def filename_remap_find(remaps: str, filename: str) -> str | None:
    """``filename_remap_find``: ``name = path`` pairs separated by ``;``, exact name match."""
    for item in remaps.split(";"):
        src, eq, dst = item.partition("=")
        if eq and src.strip() == filename:
            return dst.strip()
    return None


def vanilla_to_grid(attrs: dict[str, str], target_universe: int, grid_resource: str | None,
                    sandboxed: bool) -> None:
    """``VanillaToGrid::vanillaToGrid`` on attribute texts (htcondor.md §1.6)."""
    ad = CIAttrs(attrs)
    old_universe = ad.get("JobUniverse")
    if old_universe is None:
        raise RoutingError("VanillaToGrid: job ad lacks universe", step="VanillaToGrid")
    ad.delete_all(_DELETE_LOWER)
    ad.set_all(_RESET_LOWER)
    ad.set("JobUniverse", str(target_universe))
    ad.set("Remote_JobUniverse", old_universe)
    if target_universe != GRID_UNIVERSE:
        return
    ad.delete("CurrentHosts")
    if grid_resource:
        ad.set("GridResource", C.quote(grid_resource))
    remaps = ad.string("TransferOutputRemaps")
    if sandboxed or not remaps:
        return
    ad.delete("TransferOutputRemaps")
    for attr in ("Out", "Err"):
        filename = ad.string(attr)
        if filename is not None:
            remapped = filename_remap_find(remaps, filename)
            if remapped is not None:
                ad.set(attr, C.quote(remapped))


def _apply(transform: Any, dest: dict[str, str], step: str, route: Route, mset: Any, table: RoutingTable,
           now: float | None, warnings: list[str] | None, trace: Any = None,
           rejected: list[str] | None = None) -> None:
    if trace is not None:
        trace.begin(step, getattr(transform, "name", "") or route.name, dest, None)
    try:
        found = transform.apply(dest, macros=mset, config=table.config, now=now, router=True,
                                observer=trace.statement if trace is not None else None, rejected=rejected)
    except X.XformError as exc:
        if trace is not None:
            trace.failed(exc.message)
        raise RoutingError(f"{step} {getattr(transform, 'name', '')}: {exc.message}", route.name, step) from None
    if warnings is not None:
        warnings.extend(f"{step} {getattr(transform, 'name', '')}: {w}" for w in found or [])


def _optional(transforms: list[Any], dest: dict[str, str], step: str, route: Route, mset: Any,
              table: RoutingTable, now: float | None, warnings: list[str] | None, trace: Any = None,
              rejected: list[str] | None = None) -> None:
    for t in transforms:
        if getattr(t, "requirements", None) and not t.matches(C.make_ad(dest), now=now, macros=mset,
                                                            config=table.config):
            if trace is not None:
                trace.begin(step, t.name, dest, f"not applied: its REQUIREMENTS {t.requirements} are not true")
            continue
        _apply(t, dest, step, route, mset, table, now, warnings, trace, rejected)


def new_macro_set(route: Route) -> Any:
    """The macro set shared by one routing attempt's transforms."""
    return X.MacroSet()


def job_flags(route: Route, job_ad: Any, now: float | None) -> dict[str, bool]:
    """``build_routed_ad``'s ``sandboxed`` and ``edit_in_place`` for a job (its ClassAd): the
    route's JobShouldBeSandboxed and EditJobInPlace evaluated against it."""
    return {"sandboxed": route.eval_job_expr("JobShouldBeSandboxed", job_ad, now),
            "edit_in_place": route.eval_job_expr("EditJobInPlace", job_ad, now)}


def build_routed_ad(table: RoutingTable, route: Route, source_attrs: dict[str, str], *, now: float | None,
                    source_id: tuple[int, int], sandboxed: bool = False,
                    edit_in_place: bool | None = None, warnings: list[str] | None = None,
                    trace: Any = None) -> dict[str, str]:
    """The routed copy of a job (or, for an edit-in-place route, the edited source ad).
    ``edit_in_place`` None: evaluate the route's EditJobInPlace against the source. Transform
    warnings (e.g. a SET whose expression does not parse) are appended to ``warnings``.
    ``trace``: an ``engine.router.trace.Tracer`` told of every step and statement."""
    dest = dict(source_attrs)
    if edit_in_place is None:
        edit_in_place = route.eval_job_expr("EditJobInPlace", C.make_ad(source_attrs), now)
    if trace is not None:
        trace.block("VanillaToGrid", route.name, dest, "not applied: EditJobInPlace" if edit_in_place else None)
    if not edit_in_place:
        vanilla_to_grid(dest, route.target_universe, route.grid_resource, sandboxed)
    mset = new_macro_set(route)
    rejected: list[str] = []
    if route.uses_pre_post:
        _optional(table.pre_transforms, dest, "pre-route transform", route, mset, table, now, warnings, trace, rejected)
    _apply(route.transform, dest, "route", route, mset, table, now, warnings, trace, rejected)
    if route.uses_pre_post:
        _optional(table.post_transforms, dest, "post-route transform", route, mset, table, now, warnings, trace,
                  rejected)
    if rejected:
        # the transform inserted these names; the schedd's SetAttribute refuses the first one
        # (qmgmt.cpp IsValidAttrName -> -1), so the submit (or the in-place edit) fails
        bad = rejected[0]
        raise SubmitRejected(f"the schedd rejects attribute name {bad!r} (invalid attribute name, set by the "
                             f"route's transforms; qmgmt.cpp IsValidAttrName)", route.name, "submit")
    if edit_in_place:
        return dest
    if trace is not None:
        trace.block("router attributes", route.name, dest, None)
    ad = CIAttrs(dest)
    cluster, proc = source_id
    ad.set("RoutedFromJobId", C.quote(f"{cluster}.{proc}"))
    ad.set("RoutedBy", C.quote(table.knobs.name))
    ad.set("RouteName", C.quote(route.name))
    ad.delete("RoutedToJobId")
    if trace is not None:
        trace.end(dest)
    return dest
