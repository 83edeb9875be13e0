"""Log-verdict bench (issue 30): what ``replay``/``why`` spend on the schedd's verdict on the log
after the index's pass (``engine.cli.replay.log_status``), on the shipped 3-hour recording.

- anchor: the index's pass itself (``build_index``), measured in the same run;
- ``from the index``: the verdict read from the bytes that pass kept (``log_status(..., index=)``:
  ``steps.first_corrupt`` over them; what the commands do now);
- ``read again``: the log read and loaded again with the schedd's rules (``load_log``; what they
  did before, and still do when a line may be refused).

CPU time (``time.process_time``), best of ``--runs``, the load average beside it.

    python bench/log_verdict.py [--runs N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
from pathlib import Path

from anchor import best_cpu  # bench/ is on sys.path as the script's directory
from engine.cli.replay import log_status
from engine.feeds.replay.index import build_index
from engine.queue.reader import load_log

LOG = Path(__file__).resolve().parent.parent / "sample_configs/recordings/demo-3h.job_queue.log"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    runs = ap.parse_args().runs
    path = str(LOG)
    index = build_index(path)
    anchor = best_cpu(lambda: build_index(path), runs)
    with contextlib.redirect_stderr(io.StringIO()):
        assert log_status(path, index=index) == 0
        now = best_cpu(lambda: log_status(path, index=index), runs)
    before = best_cpu(lambda: load_log(path, validate=False), runs)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"anchor: the index's pass {anchor * 1e3:.1f} ms CPU   (load average {load})")
    print(f"verdict from the index: {now * 1e3:.1f} ms CPU = {now / anchor:.2f}x the anchor")
    print(f"verdict read again (load_log): {before * 1e3:.1f} ms CPU = {before / anchor:.2f}x the anchor")


if __name__ == "__main__":
    main()
