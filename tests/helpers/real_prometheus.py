"""A real Prometheus (Debian's ``prometheus`` package) on loopback scraping two ``routedeck watch
--metrics`` processes over two recordings (issue 28 "Real parts and tests"), for the tests that
need one (tests/contrib/test_prometheus_scrape.py, tests/engine/fleet/test_fleet_prometheus.py).

The recordings: the shipped sample_configs/recordings/demo-3h.job_queue.log (its README.md says
how it was made) and one the demo writes (seed 2, one virtual hour, ``--state-dir``).
Temporary config and storage, ports chosen free on 127.0.0.1, every process stopped by its own
handle, every wait bounded.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

from tests.helpers.paths import REPO

LOG = str(REPO / "sample_configs/recordings/demo-3h.job_queue.log")
CONFIG = str(REPO / "sample_configs/demo/condor_config")
ROUTEDECK = [sys.executable, "-m", "tui.cli"]
SKIP = "prometheus not found: install Debian's `prometheus` package (apt-get install prometheus)"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def query(port: int, expr: str) -> list[dict]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    got = get_json(url)
    assert got["status"] == "success", got
    return got["data"]["result"]


def wait_for(server: subprocess.Popen, pred, seconds: float, what: str):
    """Poll ``pred`` until true, waiting on the Prometheus process between tries (so one that
    exits is said at once, with its status)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            got = pred()
        except OSError:
            got = None
        if got:
            return got
        try:
            status = server.wait(timeout=0.25)
        except subprocess.TimeoutExpired:
            continue
        pytest.fail(f"prometheus exited with status {status} while waiting for {what}")
    pytest.fail(f"timed out after {seconds} s waiting for {what}")


def replay_end(log: str) -> dict[str, dict]:
    """``routedeck replay LOG --at end --json``'s routes by name."""
    out = subprocess.run([*ROUTEDECK, "replay", log, "--config", CONFIG, "--at", "end", "--json"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return {r["name"]: r for r in json.loads(out.stdout.splitlines()[-1])["routes"]}


def second_recording(tmp_path: Path) -> str:
    """The demo's recording of one virtual hour (seed 2) in ``tmp_path/ce2``."""
    second = tmp_path / "ce2"
    made = subprocess.run([*ROUTEDECK, "demo", "--headless", "--max-speed", "--duration", "3600", "--seed", "2",
                           "--state-dir", str(second)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    return str(second / "job_queue.log")


@dataclass
class Fleet:
    port: int  # Prometheus's
    server: subprocess.Popen
    logs: dict[str, str]  # schedd name -> recording
    targets: dict[str, str]  # schedd name -> instance (host:port of its --metrics)
    want: dict[str, dict[str, dict]]  # schedd name -> replay_end(its recording)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextlib.contextmanager
def two_watchers(tmp_path: Path, duration: float = 600) -> Iterator[Fleet]:
    """Prometheus scraping ``watch --metrics`` over the two recordings, both targets up; every
    process stopped (by its own handle) on exit. Skips, naming the package, without prometheus.
    Built once per test process (the ``prometheus_fleet`` fixture of tests/conftest.py) and only
    queried by the tests that share it; ``duration`` bounds the watchers' life if a run is cut."""
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.skip(SKIP)
    logs = {"ce1.example.org": LOG, "ce2.example.org": second_recording(tmp_path)}
    ports = {name: free_port() for name in logs}
    prom_port = free_port()
    procs: list[subprocess.Popen] = []
    try:
        for name, log in logs.items():
            procs.append(subprocess.Popen(
                [*ROUTEDECK, "watch", log, "--config", CONFIG, "--json", "--duration", str(duration),
                 "--metrics", f"127.0.0.1:{ports[name]}", "--name", name],
                cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        cfg = tmp_path / "prometheus.yml"
        cfg.write_text(json.dumps({  # YAML is a superset of JSON
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "scrape_configs": [{"job_name": "routedeck", "static_configs": [
                {"targets": [f"127.0.0.1:{p}" for p in ports.values()]}]}]}))
        server = subprocess.Popen(
            [prometheus, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'data'}",
             f"--web.listen-address=127.0.0.1:{prom_port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(server)
        want = {name: replay_end(log) for name, log in logs.items()}
        wait_for(server, lambda: len(query(prom_port, "up == 1")) == 2, 60, "both targets up")
        yield Fleet(prom_port, server, logs, {n: f"127.0.0.1:{p}" for n, p in ports.items()}, want)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
