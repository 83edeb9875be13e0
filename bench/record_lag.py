"""Recorder lag bench (issue 27: "following a live log adds <= 100 ms of lag at the demo's x600").

Runs ``routedeck demo --headless --speed S --state-dir D`` (the demo writing a real job_queue.log)
and ``routedeck record D/job_queue.log --archive D/arch`` following it, each in its own process,
and watches both from this one:

- a transaction's *commit* is when its ``106`` line is first seen in the log (the writer
  flushes each commit to the file; this process looks every ``--tick`` seconds, so a commit
  is seen up to one tick late and the lag below is low by up to one tick);
- it is *archived* when ``DIR/recorder.json`` (the recorder's checkpoint, written after the
  frame and its index lines are fsynced: what ``record --status`` and ``replay DIR`` read)
  names a log offset at or past the end of its ``106`` line.

Prints the lag per transaction (median, p95, max), the transactions seen and archived, the
archive's size against the log's (``record --status``'s ratio), the recorder's CPU, and the load
average. Anchors measured in the same run: one fsync of 4 kB in the archive's directory (a
flush does four) and a fixed Python loop (CPU speed).

    python bench/record_lag.py [--speed 600] [--seconds 60] [--flush F] [--interval I] [--tick 0.002]
                               [--record-arg ARG ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _anchor_cpu() -> float:
    """Seconds of a fixed Python loop (the machine's speed now)."""
    t = time.perf_counter()
    x = 0
    for i in range(2_000_000):
        x += i & 7
    return time.perf_counter() - t


def _anchor_fsync(d: Path, n: int = 20) -> float:
    """Median seconds of one write + fsync of 4 kB in ``d``."""
    times = []
    with open(d / "fsync.anchor", "ab") as fh:
        for _ in range(n):
            t = time.perf_counter()
            fh.write(b"x" * 4096)
            fh.flush()
            os.fsync(fh.fileno())
            times.append(time.perf_counter() - t)
    (d / "fsync.anchor").unlink()
    return statistics.median(times)


def _cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--speed", type=float, default=600)
    ap.add_argument("--seconds", type=float, default=60, help="real seconds of demo measured")
    ap.add_argument("--warmup", type=float, default=2,
                    help="real seconds after the recorder's first checkpoint (its imports and catch-up) before measuring")
    ap.add_argument("--flush", type=float, help="routedeck record --flush (default: its own)")
    ap.add_argument("--interval", type=float, help="routedeck record --interval (default: its own)")
    ap.add_argument("--tick", type=float, default=0.002, help="seconds between this process's looks")
    ap.add_argument("--record-arg", action="append", default=[], help="one more argument for routedeck record")
    ap.add_argument("--record-with", metavar="SCRIPT", help="run the recorder as `python SCRIPT record ...` "
                    "(an instrumented entry point); its stderr is printed whole")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (printed)")
    ap.add_argument("--worst", type=int, default=0, metavar="N",
                    help="also print the N largest lags with their commit time (time.perf_counter: the system's "
                         "monotonic clock, to set beside an instrumented recorder's own times)")
    a = ap.parse_args()

    d = Path(tempfile.mkdtemp(prefix="record_lag."))
    log, arch = d / "job_queue.log", d / "arch"
    exe = [sys.executable, "-m", "tui.cli"] if not shutil.which("routedeck") else [shutil.which("routedeck")]
    fsync_anchor = _anchor_fsync(d)
    cpu_anchor = _anchor_cpu()
    load0 = os.getloadavg()
    duration = a.warmup + a.seconds + 150  # stopped when measured
    demo = subprocess.Popen([*exe, "demo", "--headless", "--speed", f"{a.speed:g}", "--duration", f"{duration:g}",
                             "--state-dir", str(d)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    while not log.exists():
        if demo.poll() is not None:
            sys.exit(f"the demo exited: {demo.stderr.read().decode()}")
        time.sleep(0.01)
    rec_exe = [sys.executable, a.record_with] if a.record_with else exe
    rec_cmd = [*rec_exe, "record", str(log), "--archive", str(arch)]
    if a.flush is not None:
        rec_cmd += ["--flush", f"{a.flush:g}"]
    if a.interval is not None:
        rec_cmd += ["--interval", f"{a.interval:g}"]
    rec_cmd += a.record_arg
    rec = subprocess.Popen(rec_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    ck = arch / "recorder.json"

    seen_off = 0  # bytes of the log looked at
    tail = b""  # an incomplete last line
    commits: list[tuple[int, float]] = []  # (end offset of a 106 line, first seen), not archived yet
    lags: list[float] = []
    worst: dict[float, tuple[float, float]] = {}  # checkpoint seen: its largest lag, that commit's time
    ck_stamp = None
    archived_off = -1
    inode = None
    t_start = time.perf_counter()
    inf = float("inf")
    measure_from = measure_to = inf  # set at the recorder's first checkpoint (after its imports and catch-up)
    flushes = 0
    seen = 0
    try:
        with open(log, "rb") as fh:
            inode = os.fstat(fh.fileno()).st_ino
            while True:
                now = time.perf_counter()
                if now >= measure_to + 2 and not commits or now >= measure_to + 10:
                    break
                if now - t_start > 120 and measure_from == inf:
                    sys.exit(f"the recorder wrote no checkpoint in 120 s: {rec.stderr.read().decode()}")
                # the log: new complete lines, the 106s among them
                fh.seek(seen_off)
                data = fh.read()
                if data:
                    buf = tail + data
                    base = seen_off - len(tail)
                    end = buf.rfind(b"\n") + 1
                    if now < measure_to:
                        i = 0
                        while True:
                            j = buf.find(b"106", i, end)
                            if j < 0:
                                break
                            if j == 0 or buf[j - 1] == 10:
                                k = buf.find(b"\n", j) + 1
                                if now >= measure_from:
                                    commits.append((base + k, now))
                                    seen += 1
                                i = k
                            else:
                                i = j + 3
                    tail = buf[end:]
                    seen_off += len(data)
                # the recorder's checkpoint
                try:
                    st = os.stat(ck)
                    stamp = (st.st_mtime_ns, st.st_ino, st.st_size)
                except FileNotFoundError:
                    stamp = None
                if stamp is not None and stamp != ck_stamp:
                    ck_stamp = stamp
                    try:
                        meta = json.loads(ck.read_text())
                    except (OSError, ValueError):
                        meta = None
                    if meta and meta.get("log"):
                        off = meta["log"]["offset"]
                        if measure_from == inf:
                            measure_from = time.perf_counter() + a.warmup
                            measure_to = measure_from + a.seconds
                        if off != archived_off:
                            flushes += 1
                            archived_off = off
                            t = time.perf_counter()
                            k = 0
                            while k < len(commits) and commits[k][0] <= off:
                                lags.append(t - commits[k][1])
                                if a.worst and t - commits[k][1] > worst.get(t, (0.0,))[0]:
                                    worst[t] = (t - commits[k][1], commits[k][1])
                                k += 1
                            del commits[:k]
                if os.stat(log).st_ino != inode:
                    print("the log was replaced (a compaction): measuring stops there")
                    break
                time.sleep(a.tick)
    finally:
        rec_cpu = _cpu(rec.pid)
        demo.send_signal(signal.SIGINT)
        rec.send_signal(signal.SIGTERM)
        try:
            demo.wait(10)
        except subprocess.TimeoutExpired:
            demo.kill()
        try:
            rec.wait(10)
        except subprocess.TimeoutExpired:
            rec.kill()
    load1 = os.getloadavg()
    size = sum(f.stat().st_size for f in arch.iterdir() if f.is_file())
    meta = json.loads(ck.read_text())
    err = rec.stderr.read().decode().strip()
    print(f"record_lag: demo x{a.speed:g}, {a.seconds:g} s measured after {a.warmup:g} s; "
          f"routedeck record {' '.join(rec_cmd[len(rec_exe) + 4:]) or '(defaults)'}")
    print(f"load average {load0[0]:.2f} before, {load1[0]:.2f} after; anchors: fsync 4 kB {fsync_anchor * 1e3:.2f} ms, "
          f"python loop {cpu_anchor * 1e3:.0f} ms")
    if lags:
        print(f"lag commit -> archived, {len(lags):,} transactions ({len(lags) / a.seconds:,.0f}/s) in {flushes} "
              f"checkpoints: median {statistics.median(lags) * 1e3:.1f} ms, p95 {_pct(lags, 0.95) * 1e3:.1f} ms, "
              f"max {max(lags) * 1e3:.1f} ms (target <= 100 ms); {len(commits)} seen but not archived by the end")
    else:
        print(f"no transaction archived ({seen} seen)")
    print(f"archive {size:,} bytes for {meta['raw_total']:,} bytes of log = {size / max(1, meta['raw_total']):.3f}x "
          f"({meta['next_txn']:,} transactions); recorder CPU {rec_cpu:.1f} s in {time.perf_counter() - t_start:.0f} s")
    index = arch / f"index-{meta['index']}.jsonl"
    frames = [x for x in map(json.loads, index.read_bytes()[: meta["index_size"]].splitlines())
              if x["kind"] == "frame"]
    span = (meta["last_time"] - meta["first_time"]) / 86400 if frames and meta["first_time"] is not None else 0
    if span > 0:  # each write is a frame and an index line: replay DIR reads the whole index
        per_day = len(frames) / span
        print(f"index: {len(frames):,} frames over {span * 24:.1f} h of the log's time (the demo ran at "
              f"x{span * 86400 / (time.perf_counter() - t_start):,.0f} of its x{a.speed:g}) = {per_day:,.0f} a day "
              f"(30 days: {30 * per_day:,.0f} index lines, {30 * per_day * meta['index_size'] / max(1, len(frames)) / 1e6:.1f} MB)")
    if worst:
        top = sorted(((lag, c, t) for t, (lag, c) in worst.items()), reverse=True)[: a.worst]
        print("largest lag of the checkpoints with the largest (ms: commit seen -> archived, perf_counter s):",
              ", ".join(f"{lag * 1e3:.0f}: {c:.3f} -> {t:.3f}" for lag, c, t in top))
    if err:
        print("recorder stderr:", err if a.record_with else err[-500:])
    if a.keep:
        print(f"kept {d}")
    else:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
