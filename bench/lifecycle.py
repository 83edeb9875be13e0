"""Life-cycle bench (issue 30): ``replay --reroute`` of the shipped 3-hour recording against a plain
replay of it, and what a routed job's life cycle costs in calls.

1. Wall and CPU time of ``routedeck replay LOG --config CONFIG --json`` (the anchor: a plain replay, which
   routes nothing) and of the same with ``--reroute`` (every recorded source job routed again by
   the demo's engine), each the best of ``--runs``, with the load average beside them.
2. ``--counts``: the re-route once more in this process, its functions wrapped to count calls:
   routed jobs, routed copies built (``build_routed_ad``) and transforms applied,
   queue transactions committed (``JobQueue.apply_all``, one per transaction), ClassAds built
   from attribute texts (``make_ad``) by caller and the attributes they hold, and evaluation ads
   updated in place (``AdMirror.sync``).

    python bench/lifecycle.py [--runs N] [--counts]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG = "sample_configs/recordings/demo-3h.job_queue.log"
CONFIG = "sample_configs/demo/condor_config"
ROUTEDECK = str(Path(sys.executable).with_name("routedeck"))


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of the command (CPU: user + system of the child; on a
    shared machine the steadier figure)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([ROUTEDECK, "replay", LOG, "--config", CONFIG, "--json", *args], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def counts() -> None:
    os.chdir(ROOT)
    here = Path(__file__).resolve().parent  # bench/tui.py is not the tui package
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    from tui.cli import main

    import engine.classad as C
    from engine.lang.xform import Transform
    from engine.queue.jobqueue import JobQueue
    from engine.router import routed_copy
    from engine.router.lifecycle import Lifecycle

    tally: dict[str, int] = {}
    by_caller: dict[str, int] = {}

    def counted(label: str, fn, callers: bool = False):
        def wrapper(*a, **k):
            tally[label] = tally.get(label, 0) + 1
            if label == "make_ad":  # how big the ads built are (a policy's ad holds a few attributes)
                tally["make_ad attributes"] = tally.get("make_ad attributes", 0) + len(a[0])
            if callers:
                f = sys._getframe(1)
                where = f"{Path(f.f_code.co_filename).parent.name}/{Path(f.f_code.co_filename).name}:{f.f_code.co_name}"
                by_caller[where] = by_caller.get(where, 0) + 1
            return fn(*a, **k)
        return wrapper

    make_ad = C.make_ad
    wrapped = counted("make_ad", make_ad, callers=True)
    for mod in list(sys.modules.values()):  # every module that bound make_ad by name
        if getattr(mod, "__name__", "").startswith(("engine", "tui")) and getattr(mod, "make_ad", None) is make_ad:
            mod.make_ad = wrapped
    JobQueue.apply_all = counted("JobQueue.apply_all (commits)", JobQueue.apply_all)
    Transform.apply = counted("Transform.apply", Transform.apply)
    routed_copy.build_routed_ad = counted("build_routed_ad", routed_copy.build_routed_ad)
    Lifecycle.finish_submit = counted("routed jobs (finish_submit)", Lifecycle.finish_submit)
    if hasattr(C, "AdMirror"):
        C.AdMirror.sync = counted("AdMirror.sync (updated in place)", C.AdMirror.sync)
    sys.argv = ["routedeck", "replay", LOG, "--reroute", "--config", CONFIG, "--json"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        with contextlib.suppress(SystemExit):
            main()
    print(f"2. call counts of one re-route, load average {load()}:")
    for label, n in tally.items():
        print(f"   {label:<34} {n:>7,}")
        if label == "make_ad":
            for where, m in sorted(by_caller.items(), key=lambda kv: -kv[1]):
                print(f"      {m:>7,}  from {where}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--counts", action="store_true", help="also the call counts (one more re-route)")
    a = ap.parse_args()
    if a.runs > 0:  # --runs 0: the counts only
        plain = min(timed([]) for _ in range(a.runs))
        print(f"1. plain replay: {plain[0]:.2f} s wall, {plain[1]:.2f} s CPU   (load average {load()})")
        reroute = min(timed(["--reroute"]) for _ in range(a.runs))
        print(f"   replay --reroute: {reroute[0]:.2f} s wall, {reroute[1]:.2f} s CPU = {reroute[0] / plain[0]:.2f}x "
              f"the plain replay by wall, {reroute[1] / plain[1]:.2f}x by CPU   (load average {load()})")
    if a.counts:
        counts()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
