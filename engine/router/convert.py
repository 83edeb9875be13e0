"""``routedeck convert``: a routing table as transform-syntax config text (ClassAd routes
converted with :func:`engine.router.classic.convert_route_ad`, transform routes copied), for sites
moving to HTCondor >= 24.10 where the ClassAd syntax is gone (htcondor.md §1.2)."""

from __future__ import annotations

from typing import Any

from engine.router.classic import convert_route_ad
from engine.router.loader import load_routing_table

CARRIED_KNOBS = ("JOB_ROUTER_SOURCE_JOB_CONSTRAINT", "JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE",
                 "JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE")


def knob_suffix(name: str, taken: set[str]) -> str:
    """A ``JOB_ROUTER_ROUTE_<suffix>`` for a route name: the suffix *is* the route name in the
    transform syntax, so characters a knob name cannot hold become ``_`` (``Site 1`` → ``Site_1``)."""
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "Route"
    suffix, n = base, 2
    while suffix.lower() in taken or suffix.upper() == "NAMES":
        suffix, n = f"{base}_{n}", n + 1
    taken.add(suffix.lower())
    return suffix


def convert_classic_table(config: Any, *, allow_cmd: bool = False, table: Any = None) -> str:
    """Transform-syntax config text for the enabled routes of ``config``'s routing table: a
    ``JOB_ROUTER_ROUTE_NAMES`` in the effective match order plus one ``JOB_ROUTER_ROUTE_<n> @=``
    block per route (ClassAd routes converted, transform routes copied), loadable on its own."""
    if table is None:
        table = load_routing_table(config, allow_cmd=allow_cmd)
    taken: set[str] = set()
    head = ["# Routing table in the transform syntax (HTCondor >= 8.9.7; the only syntax from 24.10),",
            "# written by `routedeck convert` from: " + ", ".join(getattr(config, "files", []) or ["<config>"]),
            "# Use it in place of JOB_ROUTER_DEFAULTS, JOB_ROUTER_ENTRIES, JOB_ROUTER_ENTRIES_FILE/_CMD."]
    body: list[str] = []
    names: list[str] = []
    classic_entries = [r for r in table.routes if r.syntax == "classad" and not r.uses_pre_post]
    if classic_entries and (table.pre_transforms or table.post_transforms):
        head.append("# NOTE: the pre/post-route transforms of this config were NOT applied to JOB_ROUTER_ENTRIES")
        head.append("# routes; as JOB_ROUTER_ROUTE_<name> routes below they will be.")
    for r in table.routes:
        suffix = knob_suffix(r.name, taken)
        names.append(suffix)
        body.append("")
        if r.syntax == "classad":
            _name, text, _req = convert_route_ad(r.route_ad, forced_name=suffix)
            body.append(f"# from {r.source_label}" + (f" (route \"{r.name}\")" if suffix != r.name else ""))
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
