"""What launching each mode takes: typed, frozen options (the CLI turns its parsed arguments into
these, ``engine.cli.<mode>.options``; the TUI and the tests build them directly)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DemoOptions:
    """The embedded demo (``routedeck demo``): its configuration directory (None: the shipped
    sample), the state directory it keeps (None: a temporary one), the workload's seed, virtual
    seconds per real second, the ClassAd-syntax routing table, and ``--metrics``/``--name``."""

    config_dir: str | None = None
    state_dir: str | None = None
    seed: int = 1
    speed: float = 60.0
    classad_routes: bool = False
    metrics: str | None = None  # HOST:PORT of the Prometheus endpoint, None: none
    name: str | None = None  # the metrics' schedd label (None: the demo's schedd name)


@dataclass(frozen=True)
class WatchOptions:
    """A live schedd (``routedeck watch``): its log (None: the config's JOB_QUEUE_LOG / SPOOL),
    the config files, the router's JobRouterLog, the time zone shown, the slowest poll, and
    ``--metrics``/``--name``."""

    queue_log: str | None = None
    config: tuple[str, ...] = ()
    router_log: str | None = None
    tz: str = "UTC"
    slow_poll: float = 1.0
    metrics: str | None = None
    name: str | None = None  # None: the config's SCHEDD_NAME, else the host's name


@dataclass(frozen=True)
class ReplayOptions:
    """A recording (``routedeck replay``): the log or archive, the config files (limits and
    failure rules), the playing speed, the time zone of naive times, and the moment to open at
    (``at`` in any form of engine.feeds.replay.moment, or ``transaction``; neither: the start)."""

    log: str
    config: tuple[str, ...] = ()
    speed: float = 1.0
    tz: str | None = None
    at: str | None = None
    transaction: int | None = None
