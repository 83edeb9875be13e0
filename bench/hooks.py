"""Benchmark: the execute side's costs (issue 12).

1. Hook invocation overhead: a trivial PREPARE_JOB hook (a shell script printing one attribute)
   run through ``HookRunner.invoke`` and ``prepare_outcome`` (path check, spawn, stdin, output
   cap, timeout watch, parse): spawn -> parsed result, median and p95 over ``N`` runs, beside a
   bare ``subprocess.run`` of the same script (what the spawn alone costs on this machine).
2. A 4-slot embedded startd running ``JOBS`` short real jobs (``/bin/true``) pushed as the demo's
   ``startd = true`` site pushes them: jobs/s and the engine thread's share of CPU
   (``time.thread_time`` of the stepping thread / wall time), in two pacings: max speed (the
   engine steps back to back, as ``--max-speed`` does) and paced (1 ms between steps while a job
   runs, roughly what the runtime does at high speed on a real clock).

Run: ``python bench/hooks.py [N] [JOBS]`` (defaults 200, 1000). Prints figures only; not a test.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.execute import hooks as hk
from engine.execute.startd import Startd
from engine.lang.config import Config


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def hook_overhead(tmp: Path, n: int) -> None:
    script = tmp / "prepare.sh"
    script.write_text("#!/bin/sh\necho 'Prepared = true'\n")
    script.chmod(0o755)
    cfg = Config.from_text(f"BENCH_HOOK_PREPARE_JOB = {script}\n")
    runner = hk.HookRunner(cfg, allow_run=True)
    job = hk.sprint_ad({"ClusterId": "1", "ProcId": "0", "Cmd": '"/bin/true"'})
    hooked, bare = [], []
    for i in range(n):
        t0 = time.perf_counter()
        inv = runner.invoke("starter", "BENCH", hk.PREPARE_JOB, "1.0", job, float(i))
        out = hk.prepare_outcome(inv.result)
        hooked.append(time.perf_counter() - t0)
        assert out.attrs.get("Prepared") == "true", out
        t0 = time.perf_counter()
        subprocess.run([str(script)], input=job.encode(), capture_output=True, check=True)
        bare.append(time.perf_counter() - t0)
    ms = 1000.0
    print(f"hook invocation (PREPARE_JOB, trivial script), {n} runs:")
    print(f"  RouteDeck spawn -> parsed result : median {statistics.median(hooked) * ms:6.2f} ms   "
          f"p95 {pct(hooked, 95) * ms:6.2f} ms")
    print(f"  bare subprocess.run             : median {statistics.median(bare) * ms:6.2f} ms   "
          f"p95 {pct(bare, 95) * ms:6.2f} ms")
    print(f"  overhead over the bare spawn    : median {(statistics.median(hooked) - statistics.median(bare)) * ms:+6.2f} ms")


def node_run(tmp: Path, jobs: int, pace: float) -> tuple[float, float, float, int]:
    cfg = Config.from_text("NUM_SLOTS = 4\n")
    state = tmp / f"node-{pace}"
    done: list[str] = []
    startd = Startd(cfg, state, allow_hooks=True, host="bench.test",
                    on_report=lambda rec, rep: done.append(rec.job_id) if rep.kind == "exit" else None)
    ad = {"Cmd": '"/bin/true"', "Requirements": "true"}
    queue = [f"{i}.0" for i in range(1, jobs + 1)]
    now = 0.0
    steps = 0
    wall0, cpu0 = time.perf_counter(), time.thread_time()
    while len(done) < jobs:
        startd.step(now)
        while queue and startd.push(queue[0], dict(ad, ClusterId=queue[0].split(".")[0], ProcId="0"), now):
            queue.pop(0)
        now += 1.0
        steps += 1
        if pace and startd.busy():
            time.sleep(pace)
    wall, cpu = time.perf_counter() - wall0, time.thread_time() - cpu0
    shutil.rmtree(state, ignore_errors=True)
    return jobs / wall, cpu / wall, wall, steps


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    tmp = Path(tempfile.mkdtemp(prefix="routedeck-bench-hooks-"))
    try:
        print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
        hook_overhead(tmp, n)
        print(f"4-slot startd, {jobs} real /bin/true jobs (sandbox, spawn, poll, exit report each):")
        for label, pace in (("max speed (steps back to back)", 0.0), ("paced (1 ms sleep per busy step)", 0.001)):
            rate, share, wall, steps = node_run(tmp, jobs, pace)
            print(f"  {label:34s}: {rate:7.1f} jobs/s  wall {wall:6.2f} s  engine thread CPU "
                  f"{share * 100:5.1f} %  ({steps} steps)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
