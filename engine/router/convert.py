"""``routedeck convert``: a routing table as transform-syntax config text (ClassAd routes
converted with :func:`engine.router.classic.convert_route_ad`, transform routes copied), for sites
moving to HTCondor >= 24.10 where the ClassAd syntax is gone (htcondor.md §1.2)."""

from __future__ import annotations

import re
from typing import Any

from engine.router.classic import convert_route_ad
from engine.router.loader import load_routing_table

CARRIED_KNOBS = ("JOB_ROUTER_SOURCE_JOB_CONSTRAINT", "JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE",
                 "JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE")


_NOT_ATTR_CHAR = re.compile(r"[^A-Za-z0-9_]")


def knob_tag(name: str) -> str:
    """``cleanStringForUseAsAttr(name)`` with its defaults (src/condor_utils/classad_helpers.cpp,
    ``chReplace = 0``): every character outside ``[A-Za-z0-9_]`` is removed (not replaced), leading
    digits stay, the result may be empty. ``condor_transform_ads -convert:file`` names each
    converted route's knob ``JOB_ROUTER_ROUTE_<tag>`` (transform_ads.cpp ``ConvertJobRouterRoutes``),
    and a 25.x router names the route after its knob (htcondor.md §8): ``Analysis Queue`` →
    ``AnalysisQueue``."""
    return _NOT_ATTR_CHAR.sub("", name)


def knob_suffix(name: str, taken: set[str]) -> str:
    """The ``JOB_ROUTER_ROUTE_<suffix>`` of a route: :func:`knob_tag` of its name, as HTCondor's
    converter writes it. Where HTCondor would write a broken or clashing knob, RouteDeck does not:
    an empty tag becomes ``Route`` (HTCondor writes ``JOB_ROUTER_ROUTE_ @=jre``), and a tag taken
    already (case-insensitively, as config knob names are) or ``NAMES`` gets ``_2``, ``_3``, …
    (HTCondor writes the same knob twice, so the later route replaces the earlier one)."""
    base = knob_tag(name) or "Route"
    suffix, n = base, 2
    while suffix.lower() in taken or suffix.upper() == "NAMES":
        suffix, n = f"{base}_{n}", n + 1
    taken.add(suffix.lower())
    return suffix


def knob_names(table: Any) -> dict[str, str]:
    """Route name → the knob suffix ``convert`` gives it, for every enabled route of ``table`` in
    its match order (the order clashes are numbered in). The conversion's own name mapping: the
    migration check (``route --compare``) pairs renamed routes with it."""
    taken: set[str] = set()
    return {r.name: knob_suffix(r.name, taken) for r in table.routes}


def convert_classic_table(config: Any, *, allow_cmd: bool = False, table: Any = None) -> str:
    """Transform-syntax config text for the enabled routes of ``config``'s routing table: a
    ``JOB_ROUTER_ROUTE_NAMES`` in the effective match order plus one ``JOB_ROUTER_ROUTE_<n> @=``
    block per route (ClassAd routes converted, transform routes copied), loadable on its own."""
    if table is None:
        table = load_routing_table(config, allow_cmd=allow_cmd)
    head = ["# Routing table in the transform syntax (HTCondor >= 8.9.7; the only syntax from 24.10),",
            "# written by `routedeck convert` from: " + ", ".join(getattr(config, "files", []) or ["<config>"]),
            "# Use it in place of JOB_ROUTER_DEFAULTS, JOB_ROUTER_ENTRIES, JOB_ROUTER_ENTRIES_FILE/_CMD."]
    body: list[str] = []
    names: list[str] = []
    classic_entries = [r for r in table.routes if r.syntax == "classad" and not r.uses_pre_post]
    if classic_entries and (table.pre_transforms or table.post_transforms):
        head.append("# NOTE: the pre/post-route transforms of this config were NOT applied to JOB_ROUTER_ENTRIES")
        head.append("# routes; as JOB_ROUTER_ROUTE_<name> routes below they will be.")
    suffixes = knob_names(table)
    for r in table.routes:
        suffix = suffixes[r.name]
        names.append(suffix)
        body.append("")
        if r.syntax == "classad":
            # transform_ads.cpp: "if the name matches the tag, clear the name so that text of the
            # route doesn't have a NAME statement"; otherwise the body keeps NAME <the route's Name>
            # (which the router ignores: the knob names the route).
            name, text, _req = convert_route_ad(r.route_ad)
            if not name or name == suffix:
                _name, text, _req = convert_route_ad(r.route_ad, forced_name="")
            body.append(f"# from {r.source_label}" + (f" (route \"{r.name}\")" if suffix != r.name else ""))
            if not name:
                body.append("# condor_transform_ads -convert:file writes no route without a Name; "
                            f"RouteDeck keeps this one as {suffix}")
        else:
            text = getattr(r.transform, "text", "")
            body.append(f"# copied from {r.source_label}")
        body.append(f"JOB_ROUTER_ROUTE_{suffix} @=jrt")
        body.extend("  " + line if line.strip() else "" for line in text.rstrip("\n").split("\n")
                    if line.strip() and not line.lstrip().startswith("#"))
        body.append("@jrt")
    for d in table.disabled:
        head.append(f"# not converted: {d.name} ({d.source_label}): {d.reason}")
    for diag in table.diagnostics:
        if diag.level == "error":
            head.append(f"# ERROR in the input: {diag}")
    if "JOB_ROUTER_ROUTE_NAMES" not in config and table.routes:
        head.append("# The input had no JOB_ROUTER_ROUTE_NAMES: the order below is HTCondor's hash-table order.")
    carried = []
    for knob in CARRIED_KNOBS:
        try:
            value = config.get(knob) if knob in config else None
        except Exception:  # noqa: BLE001  (a bad macro was reported by the table load)
            value = None
        if value:
            carried.append(f"{knob} = {value}")
    if carried:
        body = ["", "# carried over from the input (the routes rely on them)"] + carried + body
    if not table.routes:
        head.append("# no enabled routes: JOB_ROUTER_ROUTE_NAMES is left empty")
    return "\n".join(head + ["", "JOB_ROUTER_ROUTE_NAMES = " + " ".join(names)] + body) + "\n"
