"""The demo's state directory: ``job_queue.log`` (the foundation's writer) and ``history``.

``open_state(dir)`` is the schedd's startup for the demo: create a fresh log, or load an existing
one with the owner's rules (a torn tail or an unfinished transaction is discarded, htcondor.md
§3.3) and report the engine time to resume at — the time of the last committed transaction
(its ``106 # <time>`` comment), or, for a log without comments, the latest time attribute of
the jobs in it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.queue.jobqueue import JobQueue
from engine.queue import records as R
from engine.queue.writer import open_queue

TIME_ATTRS = ("QDate", "EnteredCurrentStatus", "JobCurrentStartDate", "CompletionDate")


def last_commit_time(path: Path) -> float | None:
    """Time of the last ``106 #`` comment in the file (only whole lines count)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    end = data.rfind(b"\n") + 1  # ignore an unterminated last line
    pos = data.rfind(b"\n106 #", 0, end)
    if pos < 0:
        return None
    line_end = data.find(b"\n", pos + 1)
    return R.commit_time(data[pos + 6: line_end].decode("utf-8", "replace"))


def latest_job_time(queue: JobQueue) -> float | None:
    best = None
    for job in queue:
        for name in TIME_ATTRS:
            v = job.get(name)
            try:
                t = float(v) if v is not None else None
            except ValueError:
                t = None
            if t is not None and (best is None or t > best):
                best = t
    return best


def open_state(state_dir: str | Path | None, start: float, durable: bool = True
               ) -> tuple[JobQueue, Any, float | None, Path | None]:
    """(queue, writer, resume time or None for a fresh start, history path)."""
    if state_dir is None:
        return JobQueue(), None, None, None
    d = Path(state_dir)
    d.mkdir(parents=True, exist_ok=True)
    log = d / "job_queue.log"
    existed = log.exists() and log.stat().st_size > 0
    resume = last_commit_time(log) if existed else None
    queue, _problems = open_queue(log, now=start if resume is None else resume, durable=durable)
    if existed and resume is None:
        resume = latest_job_time(queue)
    return queue, queue.writer, resume if existed else None, d / "history"
