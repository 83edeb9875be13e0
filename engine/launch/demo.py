"""The demo's runtime for a screen: the simulation (engine.feeds.demo) on a virtual clock."""

from __future__ import annotations

import argparse

from engine.launch import metrics as metrics_opt


def demo_runtime(args: argparse.Namespace, publish=None):
    """The demo's runtime factory: the simulation on a virtual clock at ``--speed``."""
    from engine.clock import VirtualClock  # noqa: PLC0415 - kept off `routedeck --help`'s start-up
    from engine.feeds.demo import build_demo  # noqa: PLC0415 - kept off `routedeck --help`'s start-up
    from engine.runtime import Runtime  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    kwargs = {"config_dir": args.config_dir, "seed": args.seed, "state_dir": args.state_dir, "speed": args.speed}
    if getattr(args, "classad_routes", False):
        kwargs["classad_routes"] = True
    engine = build_demo(**kwargs)
    clock = VirtualClock(start=engine.now, speed=args.speed)
    runtime = Runtime(engine, clock, publish=publish, snapshot_interval=0.25)
    srv = metrics_opt.server(args, runtime.latest, engine.schedd_name)
    if srv is not None:
        engine.count_unrouted = True  # routedeck_idle_unrouted_jobs (engine.views.build)
        if why := metrics_opt.started(srv):  # listening before the screen opens (stopped with the runtime)
            engine.close()
            raise metrics_opt.MetricsError(why)
        runtime.services.append(srv)
    return runtime
