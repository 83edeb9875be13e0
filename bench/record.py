"""Recorder bench (issue 27): catch-up speed, archive size, seek cost of ``replay DIR``.

Uses the shipped 3-hour recording (sample_configs/recordings/demo-3h.job_queue.log), repeated
``--days``×8 times end to end in one generation, as one schedd would have written it
(tests/helpers/demo_days.py: times shifted, clusters renumbered, what a copy leaves destroyed
before the next). Prints:

- catch-up: ``routedeck record LOG --archive DIR --once`` as a user runs it (a new process,
  imports included, the project's bytecode compiled as an install has it) over the uncompacted
  log: transactions archived per second of its wall time and of its CPU time (the child's
  rusage), beside an anchor process measured just before and after it (a fixed loop: the
  machine's speed drifts) and the load average. With ``--segment-mb`` other than the command's
  8 MiB the catch-up is ``Recorder.poll`` in a process of its own instead (and says so);
- following: the same log cut into generations (compacted every 20 min of its time, as
  ``TruncateClassAdLog`` does, htcondor.md §3.4) and polled 1,000 transactions at a time;
- archive size against the uncompacted log (target ≤ 0.15×), and peak memory of the recorder
  (tracemalloc) against the archive's length;
- ``state_near`` (one checkpoint + one segment) at random transactions, ``replay DIR --at T
  --json`` at random moments (a window of the archive), and with ``--whole`` ``open_archive``
  (the whole archive as one log: the dashboard and ``--reroute``).

Catch-up runs in a process of its own (its peak RSS is the recorder's); ``--keep DIR`` builds the
log and archive in DIR once and reuses them (30 days: 1.5 GB of log and minutes of catch-up).
``--catchup-only`` prints the catch-up line and stops (a fresh log and archive each run).
``--budget`` prints where a catch-up's CPU goes instead (``_budget``): ``Recorder.poll`` in this
process as it is, without the route counts, without inner state checkpoints, and the cutting
into steps alone (``chunks.chunk_steps``), interleaved rounds, best of each.

    python bench/record.py [--days N] [--segment-mb M] [--memory] [--whole] [--keep DIR] [--moments K]
    python bench/record.py --budget [--days N] [--rounds R]
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import io
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from anchor import ANCHOR, anchor_cpu  # bench/ is on sys.path as the script's directory

from engine.feeds.replay.archive import open_archive, state_near, summarize
from engine.record.archive import Archive
from engine.record.checkpoint import SEGMENT_BYTES
from engine.record.chunks import chunk_steps
from engine.record.recorder import READ_CHUNK, Recorder
from engine.record.report import Report
from tests.helpers.compaction import ScheddLog
from tests.helpers.demo_days import write_long_log
from tui.cli import main as replay_main

DEMO = Path(__file__).resolve().parent.parent / "sample_configs" / "recordings" / "demo-3h.job_queue.log"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=float, default=1.0)
    ap.add_argument("--segment-mb", type=float, default=SEGMENT_BYTES / (1 << 20))
    ap.add_argument("--memory", action="store_true", help="also measure peak memory with tracemalloc "
                    "(a second, slower pass; the recorder's peak RSS is always printed)")
    ap.add_argument("--whole", action="store_true", help="also time open_archive (the whole archive)")
    ap.add_argument("--keep", metavar="DIR", help="build the log and its archive in DIR once and reuse them "
                    "(30 days are 1.5 GB of log and minutes of catch-up)")
    ap.add_argument("--moments", type=int, default=10, help="replay --at moments, spread over the whole range")
    ap.add_argument("--catchup-only", action="store_true", help="only the catch-up line (with a fresh archive)")
    ap.add_argument("--budget", action="store_true", help="where the catch-up's CPU goes (parts switched off)")
    ap.add_argument("--rounds", type=int, default=3, help="--budget: interleaved rounds (best of each part)")
    ap.add_argument("--build", metavar="DIR", help=argparse.SUPPRESS)  # internal: one catch-up, in its own process
    ap.add_argument("--replay-rss", nargs=2, metavar=("DIR", "AT"), help=argparse.SUPPRESS)  # internal
    a = ap.parse_args()
    copies = max(1, round(a.days * 8))
    segment = int(a.segment_mb * (1 << 20))
    if a.build:
        _build(Path(a.build), copies, segment)
        return
    if a.replay_rss:
        _replay_rss(*a.replay_rss)
        return
    if a.budget:
        _budget(copies, a.rounds)
        return
    with contextlib.ExitStack() as stack:
        d = Path(a.keep) if a.keep else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        d.mkdir(parents=True, exist_ok=True)
        built = _built(d, copies, segment)
        if built is None:
            subprocess.run([sys.executable, __file__, "--build", str(d), "--days", str(a.days),
                            "--segment-mb", str(a.segment_mb)], check=True)
            built = _built(d, copies, segment)
            assert built is not None
        else:
            print(f"reusing {d} (built {built['built']}; catch-up figures of that build)")
        if a.catchup_only:
            _catchup_line(built, a)
            return
        _report(d, built, a)

    if copies == 1:  # following with compactions (the demo alone)
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            schedd = ScheddLog(d / "job_queue.log", DEMO.read_bytes())
            rec = Recorder(schedd.path, d / "arch", tz="UTC")
            spent = 0.0
            polls = 0
            step_times = _step_times()
            next_clean = step_times[0] + 1200
            while not schedd.finished:
                schedd.advance(1000)
                if step_times[schedd.done - 1] >= next_clean:
                    schedd.compact()
                    next_clean += 1200
                t = time.perf_counter()
                rec.poll(polls, flush=True)
                spent += time.perf_counter() - t
                polls += 1
            size = sum(f.stat().st_size for f in (d / "arch").iterdir())
            print(f"following ({polls} polls of 1,000 transactions, {schedd.seq - 1} compactions): "
                  f"{schedd.done / spent:,.0f} transactions/s, {spent / polls * 1e3:.0f} ms per poll; archive "
                  f"{size / DEMO.stat().st_size:.3f} x the uncompacted log")


def _built(d: Path, copies: int, segment: int) -> dict | None:
    try:
        b = json.loads((d / "build.json").read_text())
    except (OSError, ValueError):
        return None
    return b if (b["copies"], b["segment"]) == (copies, segment) and (d / "arch").is_dir() else None


ROOT = Path(__file__).resolve().parent.parent


def _compiled() -> None:
    """The project's modules compiled to bytecode, as an install has them (under
    PYTHONDONTWRITEBYTECODE, which this environment sets, every module would otherwise be
    compiled again in every new process: ~0.4 s)."""
    for package in ("engine", "tui"):
        compileall.compile_dir(ROOT / package, quiet=2, workers=1)


def _fresh(cmd: list[str]) -> tuple[float, float, float]:
    """Run ``cmd`` in a new process: (wall, CPU, peak RSS in MB) of that process (its rusage)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, cwd=ROOT)
    _pid, status, ru = os.wait4(p.pid, 0)
    assert status == 0, (cmd, status)
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def _routedeck() -> list[str]:
    """The command a user types: the installed ``routedeck`` script beside this Python, else
    ``python -m tui.cli``."""
    script = Path(sys.executable).parent / "routedeck"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui.cli"]


def _build(d: Path, copies: int, segment: int) -> None:
    """The log and its archive in ``d``: the log written one copy at a time, then one catch-up,
    in a new process (its peak RSS is the recorder's; the log is read 1 MiB at a time):
    ``routedeck record LOG --archive DIR --once`` itself, between two anchor runs (module
    docstring), or ``Recorder.poll`` in this (fresh) process when the segments are not the
    command's."""
    (d / "build.json").unlink(missing_ok=True)
    shutil.rmtree(d / "arch", ignore_errors=True)
    size = write_long_log(d / "job_queue.log", copies)
    b = dict(copies=copies, segment=segment, log=size, built=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    if segment == SEGMENT_BYTES:  # the command's segments
        _compiled()
        anchors = [_fresh(ANCHOR)[1] for _ in range(2)]
        load0 = os.getloadavg()[0]
        wall, cpu, rss = _fresh([*_routedeck(), "record", str(d / "job_queue.log"), "--archive", str(d / "arch"),
                                 "--once", "--tz", "UTC"])
        anchors += [_fresh(ANCHOR)[1] for _ in range(2)]
        b.update(command=True, wall=wall, cpu=cpu, rss_mb=rss, anchor=statistics.median(anchors),
                 load=(load0 + os.getloadavg()[0]) / 2)
    else:
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0, c0 = time.perf_counter(), time.process_time()
        Recorder(d / "job_queue.log", d / "arch", tz="UTC", segment_bytes=segment).poll(0, flush=True)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        b.update(command=False, wall=wall, cpu=cpu, load=os.getloadavg()[0],
                 rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, rss_before_mb=rss0 / 1024)
    b["archived"] = Archive.open(d / "arch", readonly=True).meta.next_txn
    (d / "build.json").write_text(json.dumps(b))


def _catchup_line(b: dict, a) -> None:
    n = b["archived"]
    if b.get("command"):
        print(f"catch-up (routedeck record LOG --archive DIR --once --tz UTC: a new process, imports included): "
              f"{n:,} transactions; wall {b['wall']:.2f} s = {n / b['wall']:,.0f} /s, CPU {b['cpu']:.2f} s = "
              f"{n / b['cpu']:,.0f} /s (target >= 50,000/s); anchor (a new process summing 3,000,000 squares, "
              f"median of 2 before and 2 after) CPU {b['anchor']:.3f} s: the catch-up's CPU is "
              f"{b['cpu'] / b['anchor']:.1f}x the anchor; load average {b['load']:.2f}")
        print(f"recorder peak RSS {b['rss_mb']:.0f} MB (the command's process); the log is {b['log'] / 1e6:.0f} MB")
    else:
        print(f"catch-up (Recorder.poll in a process of its own: --segment-mb {a.segment_mb:g} is not the "
              f"command's): {n:,} transactions in {b['wall']:.2f} s = {n / b['wall']:,.0f} /s (target >= 50,000/s); "
              f"CPU {b['cpu']:.2f} s = {n / b['cpu']:,.0f} /s of CPU; load average {b['load']:.2f}")
        print(f"recorder peak RSS {b['rss_mb']:.0f} MB (of which {b['rss_before_mb']:.0f} MB before catch-up: "
              f"imports and writing the log); the log is {b['log'] / 1e6:.0f} MB")


def _cut_only(log: Path) -> None:
    """The log cut into steps as ``Recorder._read_on`` reads it (``READ_CHUNK`` at a time), nothing applied."""
    rep = Report()
    offset = 0
    with open(log, "rb") as fh:
        while True:
            fh.seek(offset)
            data = fh.read(READ_CHUNK)
            end = data.rfind(b"\n") + 1
            last = 0
            for _s, last, *_rest in chunk_steps(data, end, log, rep, offset):
                pass
            if last == 0 or len(data) < READ_CHUNK:
                return
            offset += last


def _budget(copies: int, rounds: int) -> None:
    """Where a catch-up's CPU goes: ``Recorder.poll`` over a fresh archive in this process (imports
    not counted) as the command runs it, then with one part switched off (an upper bound of what
    that part costs: the archive it writes differs), and the cutting into steps alone; rounds
    interleaved (the machine's load drifts), best of each, beside the anchor loop run in each round."""
    def poll(d: Path, no_counts: bool = False, **kw) -> None:
        rec = Recorder(d / "job_queue.log", d / "arch", tz="UTC", **kw)
        if no_counts:
            rec.counts.enabled = False  # RouteCounts.before/after/due then do nothing
        rec.poll(0, flush=True)

    parts = {
        "as the command": lambda d: poll(d),
        "without route counts": lambda d: poll(d, no_counts=True),
        "without inner checkpoints": lambda d: poll(d, checkpoint_bytes=None),
        "cutting into steps only": lambda d: _cut_only(d / "job_queue.log"),
    }
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        write_long_log(d / "job_queue.log", copies)
        best = dict.fromkeys(parts, float("inf"))
        anchors, loads = [], []
        n = 0
        for _ in range(rounds):
            anchors.append(anchor_cpu())
            loads.append(os.getloadavg()[0])
            for name, run in parts.items():
                shutil.rmtree(d / "arch", ignore_errors=True)
                c = time.process_time()
                run(d)
                best[name] = min(best[name], time.process_time() - c)
                if not n:  # the transactions the command archives: those of its first run
                    n = Archive.open(d / "arch", readonly=True).meta.next_txn
    anchor = min(anchors)
    full = best["as the command"]
    print(f"catch-up budget, {copies} x demo-3h ({n:,} transactions), CPU best of {rounds} interleaved rounds "
          f"(in this process, imports not counted); anchor (summing 3,000,000 squares here) best {anchor:.3f} s; "
          f"load average {statistics.mean(loads):.2f}")
    for name, cpu in best.items():
        print(f"  {name:28s} {cpu:6.2f} s = {cpu / anchor:5.1f}x the anchor = {cpu / full:6.1%} of the catch-up"
              f" ({n / cpu:,.0f} transactions/s)")


def _replay_rss(arch: str, at: str) -> None:
    t = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        replay_main(["replay", arch, "--at", at, "--tz", "UTC", "--json"])
    print(json.dumps(dict(rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                          wall=time.perf_counter() - t)))


def _spread(rng: random.Random, lo: float, hi: float, n: int) -> list[float]:
    """``n`` points over [lo, hi]: one at random in each of ``n`` equal parts (the whole range is seen)."""
    w = (hi - lo) / n
    return [lo + w * (k + rng.random()) for k in range(n)]


def _report(d: Path, b: dict, a) -> None:
    arch_dir = d / "arch"
    print(f"log: demo-3h x{b['copies']} ({a.days:g} days): {b['log'] / 1e6:.1f} MB, {b['archived']:,} transactions")
    # wall and CPU: on the shared 2-core machine the wall figure is mostly the other processes'
    # (print it with the load average); CPU time is the recorder's own cost
    _catchup_line(b, a)
    arch = Archive.open(arch_dir, readonly=True)
    size = sum(f.stat().st_size for f in arch_dir.iterdir())
    print(f"archive: {size / 1e6:.2f} MB = {size / b['log']:.3f} x the log (target <= 0.15); "
          f"{len(arch.segments())} segments, index {arch.meta.index_size / 1e3:.0f} kB")
    if a.memory:
        tracemalloc.start()
        rec2 = Recorder(d / "job_queue.log", d / "arch2", tz="UTC", segment_bytes=b["segment"])
        rec2.poll(0, flush=True)
        after, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        shutil.rmtree(d / "arch2", ignore_errors=True)
        print(f"recorder peak memory {peak / 1e6:.0f} MB (tracemalloc; the log is {b['log'] / 1e6:.0f} MB, "
              f"read {READ_CHUNK >> 20} MiB at a time; state after catch-up {after / 1e6:.1f} MB)")
    rng = random.Random(1)
    times = []
    for x in _spread(rng, 0, arch.meta.next_txn - 1, 20):
        t = time.perf_counter()
        state_near(arch_dir, int(x))
        times.append(time.perf_counter() - t)
    print(f"state_near (one checkpoint + one segment), 20 transactions over the whole range: median "
          f"{statistics.median(times) * 1e3:.0f} ms, max {max(times) * 1e3:.0f} ms")
    times, cpus = [], []
    s = summarize(arch_dir, "UTC")
    moments = _spread(rng, s.start, s.end, a.moments)
    for at in moments:  # what `replay DIR --at T --json` costs: a window, a player, the snapshot
        t, c = time.perf_counter(), time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            replay_main(["replay", str(arch_dir), "--at", f"{at:.3f}", "--tz", "UTC", "--json"])
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    worst = moments[times.index(max(times))]
    print(f"replay DIR --at T --json, {len(moments)} moments over the whole range (in this process): median "
          f"{statistics.median(times):.2f} s, max {max(times):.2f} s at +{(worst - s.start) / 3600:.1f} h "
          f"(target <= 1 s); CPU median {statistics.median(cpus):.2f} s, max {max(cpus):.2f} s; "
          f"load average {os.getloadavg()[0]:.2f}")
    out = subprocess.run([sys.executable, __file__, "--replay-rss", str(arch_dir), f"{worst:.3f}"],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out.splitlines()[-1])
    print(f"one replay --at (a new process, at that worst moment): {r['wall']:.2f} s after imports, "
          f"peak RSS {r['rss_mb']:.0f} MB")
    # as a user runs it: `routedeck replay DIR --at T --json`, a new process, imports included, at
    # every moment above; each beside an anchor process (a fixed loop) run just before it, so the
    # figures can be read as ratios on a machine whose speed drifts; bytecode compiled (_compiled)
    _compiled()
    walls, cpus, anchors = [], [], []
    for at in moments:
        anchors.append(_fresh(ANCHOR)[1])
        wall, cpu, _rss = _fresh([sys.executable, "-m", "tui.cli", "replay", str(arch_dir), "--at", f"{at:.3f}",
                                  "--tz", "UTC", "--json"])
        walls.append(wall)
        cpus.append(cpu)
    anchor = statistics.median(anchors)
    print(f"routedeck replay DIR --at T --json as a user runs it (new processes, imports included, bytecode "
          f"compiled; the {len(moments)} moments above): wall median {statistics.median(walls):.2f} s, max "
          f"{max(walls):.2f} s (target <= 1 s); CPU median {statistics.median(cpus):.2f} s, max {max(cpus):.2f} s; "
          f"anchor (a new process summing 3,000,000 squares) CPU median {anchor:.3f} s: CPU median "
          f"{statistics.median(cpus) / anchor:.2f}x, max {max(cpus) / anchor:.2f}x the anchor; load average "
          f"{os.getloadavg()[0]:.2f}")
    if a.whole:
        t = time.perf_counter()
        whole = open_archive(arch_dir, tz="UTC")
        print(f"open_archive (whole archive as one log: the dashboard, --reroute): "
              f"{time.perf_counter() - t:.2f} s, {whole.index.steps:,} steps")


def _step_times():
    from engine.feeds.replay.index import build_index

    return build_index(str(DEMO), tz="UTC").times


if __name__ == "__main__":
    main()
