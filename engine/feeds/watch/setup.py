"""What watch reads, resolved from the command line and the HTCondor config (htcondor.md §3.5).

- Inputs: the queue log path (``--queue-log``, else ``JOB_QUEUE_LOG``, else
  ``$(SPOOL)/job_queue.log`` of the HTCondor config); the routing table from the same config
  files (``CONDOR_CONFIG`` when no ``--config`` is given; ``LOCAL_CONFIG_DIR``/``_FILE`` as the
  config reader follows them); optionally the router's ``JobRouterLog``. Nothing is written
  anywhere: watch is read-only, and an edit target is only ever a file the admin names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from engine.views.figures import DEFAULT_POLLING_PERIOD, route_locations, table_rules
from engine.lang.config import Config
from engine.router.loader import load_routing_table

DEFAULT_CONDOR_CONFIG = "/etc/condor/condor_config"


class WatchError(ValueError):
    pass


@dataclass
class WatchSetup:
    """Everything watch needs, resolved from the command line and the HTCondor config."""

    queue_log: str
    config_files: tuple[str, ...] = ()
    limits: dict[str, tuple[int, int]] | None = None  # route name → (MaxJobs, MaxIdleJobs), table order
    rules: dict | None = None  # route name → engine.views.figures.RouteRule (failure threshold and test)
    locations: dict[str, str] | None = None  # route name → "file:line" of its definition (route detail, editor)
    polling_period: float = DEFAULT_POLLING_PERIOD  # JOB_ROUTER_POLLING_PERIOD
    router_log: str | None = None
    diagnostics: list[str] = field(default_factory=list)
    schedd_name: str | None = None  # the config's SCHEDD_NAME (the metrics' ``schedd`` label); None: unset
    table: Any = None  # the routing table of the config (engine.router.loader), None without a config
    config: Any = None  # the HTCondor config read (engine.lang.config.Config): the why-not's periodic policy


def condor_config_paths(explicit: list[str] | None, env: Mapping[str, str] | None = None) -> list[str]:
    """``--config`` files, else ``CONDOR_CONFIG`` (HTCondor's own rule), else the usual path."""
    if explicit:
        return list(explicit)
    env = os.environ if env is None else env
    path = env.get("CONDOR_CONFIG")
    if path and path.upper() != "ONLY_ENV" and path != os.devnull:  # /dev/null: "no config file"
        return [path]
    return [DEFAULT_CONDOR_CONFIG] if os.path.exists(DEFAULT_CONDOR_CONFIG) else []


def resolve(queue_log: str | None = None, config: list[str] | None = None, router_log: str | None = None,
            env: Mapping[str, str] | None = None) -> WatchSetup:
    """Find the queue log, the routing table's limits and the router log (module docstring)."""
    paths = condor_config_paths(config, env)
    diagnostics: list[str] = []
    limits = rules = table = locations = None
    period = DEFAULT_POLLING_PERIOD
    cfg = None
    schedd_name = None
    if paths:
        cfg = Config.load(paths, env=env)
        diagnostics += [str(e) for e in cfg.errors]
        table = load_routing_table(cfg)
        # no routes in the config: the copies' routes are unknown, not all "unlisted"
        limits, rules, period = table_rules(table)
        limits, rules = limits or None, rules or None
        locations = route_locations(table)
        diagnostics += [str(d) for d in table.errors]
        schedd_name = _expanded(cfg, "SCHEDD_NAME")
    if queue_log is None:
        if cfg is None:
            raise WatchError("no queue log: give --queue-log, or --config / CONDOR_CONFIG for JOB_QUEUE_LOG or SPOOL")
        queue_log = _expanded(cfg, "JOB_QUEUE_LOG")
        if not queue_log:
            spool = _expanded(cfg, "SPOOL")
            if not spool:
                raise WatchError(f"neither JOB_QUEUE_LOG nor SPOOL is set in {', '.join(paths)}")
            queue_log = os.path.join(spool, "job_queue.log")
    return WatchSetup(queue_log=queue_log, config_files=tuple(paths), limits=limits, rules=rules, locations=locations,
                      polling_period=period, router_log=router_log, diagnostics=diagnostics,
                      schedd_name=schedd_name, table=table, config=cfg)


def _expanded(cfg: Any, name: str) -> str | None:
    try:
        value = cfg.get(name)
    except Exception as exc:  # a macro cycle or bad function: say which knob
        raise WatchError(f"{name}: {exc}") from exc
    return value.strip() if value and value.strip() else None

