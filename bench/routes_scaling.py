"""Benchmark: routing tables of 1,000 to 100,000 routes (issue 25 item 6).

For each size, the table of bench/router.py (transform routes whose REQUIREMENTS test the job's
VO, memory and desired sites, all different) written as config files of at most 16 MiB (the
config reader's limit per file), prints, best of ``--repeat`` (wall and CPU seconds):

1. ``routedeck check -q`` on those files, in this process (``engine.cli.check.run``): config
   read, table load, lints, the summary;
2. the lints alone on the loaded table (``engine.router.lints.lint_table``), and the shadowing
   lint within them (``lint_shadowing``, the step that compared every route with every earlier
   one before issue 25: 35 s on 20,000 routes);
3. the router's umbrella string over every route (``candidates.umbrella_core``: built once per
   poll by ``route``, ``watch --once`` and the demo; it kept its terms in a list);
4. ``routedeck route`` of two jobs, or ``--jobs`` (``tui.cli.main``, in this process: config
   read, table load with its lints, then the jobs), alternately one taken by an early route and
   one whose ``DESIRED_Sites`` names a route near the end (every route before it is evaluated).
   From about 400 routes no job is a candidate: the umbrella is too deep to evaluate, in HTCondor
   too (engine/router/candidates.py ``Umbrella``); the jobs are still explained one by one.

``--tables`` adds two tables that were quadratic in other steps: ``macros`` (every route assigns
a macro nothing uses: the unused-macro lint searched the whole table's text per macro) and
``classad`` (the routes as ``JOB_ROUTER_ENTRIES``: the loader listed the whole hash table for
each entry and counted lines from the top for each).

Target: growth with the routes (10k -> 100k about x10), ``check -q`` on 100,000 routes in seconds
(≤ 10 s of CPU on a 2-core machine). Under load, compare the CPU figures: wall time counts the
other processes too.

    python bench/routes_scaling.py [--sizes 1000 10000 100000] [--repeat 1] [--jobs 2] [--tables transform macros classad]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from router import routes_config

from engine.cli import check
from engine.lang.config import Config
from engine.router.candidates import umbrella_core
from engine.router.lints import lint_shadowing, lint_table
from engine.router.loader import load_routing_table
from tui.cli import main as cli_main

MAX_FILE = 12 << 20  # under the config reader's 16 MiB per file


def table_text(kind: str, n: int) -> str:
    if kind == "transform":
        return routes_config(n, None, None)
    names = [f"Site{i}" for i in range(n)]
    if kind == "macros":
        out = ["JOB_ROUTER_ROUTE_NAMES = " + " ".join(names)]
        for i, name in enumerate(names):
            out += [f"JOB_ROUTER_ROUTE_{name} @=rt", f'  REQUIREMENTS VO == "vo{i}"',
                    f'  GridResource = "batch slurm site{i}"', f"  default_mem{i} = {i}", "@rt"]
        return "\n".join(out) + "\n"
    entries = "\n".join(f'  [ Name = "{name}"; GridResource = "batch slurm site{i}"; '
                        f'Requirements = (TARGET.VO == "vo{i}"); ]' for i, name in enumerate(names))
    return f"JOB_ROUTER_ENTRIES @=jre\n{entries}\n@jre\n"


def write_files(text: str, where: Path) -> list[str]:
    """``text`` as config files under ``MAX_FILE`` each, cut between knobs (a line that starts one)."""
    files, chunk, size = [], [], 0
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        starts = line.startswith("JOB_ROUTER_") and i > 0
        if starts and size + len(line) > MAX_FILE and chunk:
            files.append(chunk)
            chunk, size = [], 0
        chunk.append(line)
        size += len(line)
    files.append(chunk)
    paths = []
    for k, lines_k in enumerate(files):
        p = where / f"routes-{k:02d}.conf"
        p.write_text("".join(lines_k))
        paths.append(str(p))
    return paths


def jobs_text(kind: str, n: int, jobs: int = 2) -> str:
    """``jobs`` idle jobs for ``route``, alternately one an early route takes and one only a route
    near the end takes."""
    base = 'ProcId = 0\nJobStatus = 1\nWantJobRouter = true\nOwner = "bench"\nJobUniverse = 5\n'
    last = n - 7 if kind == "transform" else n - 1
    ads = [f'ClusterId = {c + 1}\n{base}VO = "vo7"\nRequestMemory = 1024\n' if c % 2 == 0 else
           f'ClusterId = {c + 1}\n{base}VO = "vo{last % 10}"\nRequestMemory = 1024\nDESIRED_Sites = "site{last}"\n'
           for c in range(jobs)]
    return "\n".join(ads)


def route_run(files: list[str], jobs: str) -> str:
    argv = ["route", *[a for f in files for a in ("--config", f)], "--jobads", jobs, "--now", "1700000000"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli_main(argv)
    return out.getvalue()


def timed(fn, repeat: int) -> tuple[float, float, object]:
    """Best wall and best CPU seconds of ``repeat`` runs, and the last result."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="job ads given to route (its cost per job shows with more)")
    ap.add_argument("--tables", nargs="+", default=["transform"], choices=["transform", "macros", "classad"])
    a = ap.parse_args()
    print(f"{'table':<10} {'routes':>8}  {'check -q wall/CPU':>19}  {'lints wall/CPU':>17}  "
          f"{'shadowing':>10}  {'umbrella':>9}  {'route wall/CPU':>17}  load")
    for kind in a.tables:
        for n in a.sizes:
            with tempfile.TemporaryDirectory(prefix="routedeck-bench-routes-") as d:
                files = write_files(table_text(kind, n), Path(d))
                args = SimpleNamespace(configs=files, allow_cmd=False, quiet=True)
                cw, cc, _ = timed(lambda: check.run(args, io.StringIO()), a.repeat)
                table = load_routing_table(Config.load(files))
                assert len(table.routes) == n and not table.errors, table.errors[:3]
                lw, lc, _ = timed(lambda: lint_table(table), a.repeat)
                sw, _, _ = timed(lambda: lint_shadowing(table), a.repeat)
                reqs = [r.requirements for r in table.routes]
                uw, _, _ = timed(lambda: umbrella_core(table.knobs.source_job_constraint, reqs), a.repeat)
                table = reqs = None  # freed before the route run loads its own table
                jobs = Path(d) / "jobs.ad"
                jobs.write_text(jobs_text(kind, n, a.jobs))
                rw, rc, routed = timed(lambda: route_run(files, str(jobs)), a.repeat)
                assert routed.count("\t") >= 2, routed
            print(f"{kind:<10} {n:>8,}  {cw:8.2f} /{cc:7.2f} s  {lw:7.2f} /{lc:6.2f} s  {sw:8.2f} s  {uw:7.3f} s  "
                  f"{rw:7.2f} /{rc:6.2f} s  {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
