"""The demo's runtime for a screen: the simulation (engine.feeds.demo) on a virtual clock."""

from __future__ import annotations

from engine.launch import metrics
from engine.launch.options import DemoOptions


def demo_runtime(opts: DemoOptions, publish=None):
    """The demo's runtime factory: the simulation on a virtual clock at ``opts.speed``; with
    ``opts.metrics``, its server is one of the runtime's services (started and stopped with it)."""
    from engine.clock import VirtualClock  # noqa: PLC0415 - kept off `routedeck --help`'s start-up
    from engine.feeds.demo import build_demo  # noqa: PLC0415 - kept off `routedeck --help`'s start-up
    from engine.runtime import Runtime  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    kwargs = {"config_dir": opts.config_dir, "seed": opts.seed, "state_dir": opts.state_dir, "speed": opts.speed}
    if opts.classad_routes:
        kwargs["classad_routes"] = True
    engine = build_demo(**kwargs)
    clock = VirtualClock(start=engine.now, speed=opts.speed)
    runtime = Runtime(engine, clock, publish=publish, snapshot_interval=0.25)
    if opts.metrics:
        engine.count_unrouted = True  # routedeck_idle_unrouted_jobs (engine.views.build)
    try:
        metrics.serve(runtime, opts.metrics, opts.name, engine.schedd_name)
    except metrics.MetricsError:
        engine.close()
        raise
    return runtime
