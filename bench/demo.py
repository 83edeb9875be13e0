"""Benchmark: the demo engine at maximum speed — N jobs through 10 routes.

Prints jobs routed per second (wall clock), virtual time covered, and peak memory (ru_maxrss).
Every job is a vanilla job with a VO; route k takes ProcId % 10 == k; each route's site has
enough slots, so the router, schedd, sites and the job_queue.log writer are what is measured.

    python bench/demo.py [--jobs 50000] [--no-fsync]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.feeds.demo import build_demo
from engine.queue.jobqueue import JobAdded

ROUTES = 10


def write_config(d: Path, jobs: int, per_cluster: int) -> None:
    names = " ".join(f"R{k}" for k in range(ROUTES))
    routes = "".join(
        f"""
JOB_ROUTER_ROUTE_R{k} @=jrt
  UNIVERSE grid
  GridResource = batch slurm site{k}.example.org
  MaxJobs = 3000
  MaxIdleJobs = 1500
  REQUIREMENTS (ProcId % {ROUTES}) == {k}
@jrt
""" for k in range(ROUTES))
    (d / "condor_config").write_text(
        f"JOB_ROUTER_NAME = jobrouter\nJOB_ROUTER_SOURCE_JOB_CONSTRAINT = (VO isnt undefined)\n"
        f"JOB_ROUTER_ROUTE_NAMES = {names}\n{routes}")
    sites = "".join(f"""
[[site]]
name = "site{k}"
grid_resources = ["batch slurm site{k}.example.org"]
slots = 3000
start_latency = [1, 5]
runtime = "uniform 60 120"
""" for k in range(ROUTES))
    (d / "sites.toml").write_text(sites)
    clusters = jobs // per_cluster
    (d / "workload.toml").write_text(f"""
[[job]]
name = "bulk"
initial = {clusters}
procs = [{per_cluster}, {per_cluster}]
ad = '''
Owner = "bench"
VO = "bench"
JobUniverse = 5
Cmd = "/bin/true"
RequestMemory = 1000
'''
""")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=50000)
    ap.add_argument("--per-cluster", type=int, default=100)
    ap.add_argument("--no-fsync", action="store_true", help="non-durable commits (no fsync per transaction)")
    ap.add_argument("--max-virtual-hours", type=float, default=48.0)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="routedeck-bench-demo-"))
    write_config(tmp, args.jobs, args.per_cluster)
    t0 = time.perf_counter()
    engine = build_demo(config_dir=tmp, seed=1, state_dir=tmp / "state", durable=not args.no_fsync)
    routed = 0

    def count(ev):
        nonlocal routed
        if isinstance(ev, JobAdded):
            job = engine.queue.get(ev.id)
            if job is not None and job.get("RoutedFromJobId") is not None:
                routed += 1

    engine.queue.subscribe(count)
    built = time.perf_counter()
    start_v = engine.now
    end_v = start_v + args.max_virtual_hours * 3600
    total = (args.jobs // args.per_cluster) * args.per_cluster
    while routed < total and engine.now < end_v:
        engine.step(engine.next_time())
    wall = time.perf_counter() - built
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    log = tmp / "state" / "job_queue.log"
    print(f"jobs submitted        {engine.submitted}")
    print(f"jobs routed           {routed} through {ROUTES} routes")
    print(f"virtual time          {(engine.now - start_v) / 3600:.2f} h in {engine.ticks} router polls")
    print(f"wall time             {wall:.1f} s (setup {built - t0:.1f} s)")
    print(f"jobs routed per s     {routed / wall:.0f}")
    print(f"peak memory (maxrss)  {peak_kb / 1024:.0f} MiB")
    print(f"job_queue.log         {log.stat().st_size / 1e6:.1f} MB ({'non-durable' if args.no_fsync else 'fsync per commit'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
