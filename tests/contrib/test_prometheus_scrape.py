"""A real Prometheus (Debian's ``prometheus`` package) on loopback scrapes two ``routedeck watch
--metrics`` processes over two recordings, and its per-route copies (routed, running, held)
equal ``routedeck replay --at end --json`` of each recording (issue 28 "Real parts and tests").

The recordings: the shipped sample_configs/recordings/demo-3h.job_queue.log (its README.md says
how it was made) and one the demo writes here (seed 2, one virtual hour, ``--state-dir``).
Temporary config and storage, ports chosen free on 127.0.0.1, every process stopped by its own
handle, every wait bounded.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

from tests.helpers.paths import REPO

LOG = str(REPO / "sample_configs/recordings/demo-3h.job_queue.log")
CONFIG = str(REPO / "sample_configs/demo/condor_config")
ROUTEDECK = [sys.executable, "-m", "tui.cli"]


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
    out = subprocess.run([*ROUTEDECK, "replay", log, "--config", CONFIG, "--at", "end", "--json"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return {r["name"]: r for r in json.loads(out.stdout.splitlines()[-1])["routes"]}


@pytest.mark.slow
def test_prometheus_scrapes_two_watchers(tmp_path):
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.skip("prometheus not found: install Debian's `prometheus` package (apt-get install prometheus)")
    second = tmp_path / "ce2"
    made = subprocess.run([*ROUTEDECK, "demo", "--headless", "--max-speed", "--duration", "3600", "--seed", "2",
                           "--state-dir", str(second)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    logs = {"ce1.example.org": LOG, "ce2.example.org": str(second / "job_queue.log")}
    ports = {name: free_port() for name in logs}
    prom_port = free_port()
    procs: list[subprocess.Popen] = []
    try:
        for name, log in logs.items():
            procs.append(subprocess.Popen(
                [*ROUTEDECK, "watch", log, "--config", CONFIG, "--json", "--duration", "120",
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
        # both targets up, each with its routes' series after its log was read whole
        wait_for(server, lambda: len(query(prom_port, "up == 1")) == 2, 60, "both targets up")
        want = {name: replay_end(log) for name, log in logs.items()}
        for name, routes in want.items():
            def routed(name=name):
                got = query(prom_port, f'sum by (route) (routedeck_route_jobs{{schedd="{name}"}})')
                return {r["metric"]["route"]: float(r["value"][1]) for r in got} or None
            got = wait_for(server, routed, 60, f"{name}'s route series")
            assert got == {n: float(r["routed"]) for n, r in routes.items()}, name
            assert sum(got.values()) > 0
            for state in ("running", "held"):
                res = query(prom_port, f'routedeck_route_jobs{{schedd="{name}",state="{state}"}}')
                assert {r["metric"]["route"]: float(r["value"][1]) for r in res} == {
                    n: float(r[state]) for n, r in routes.items()}
            # (whether a route accepts is not compared: watch is live, its clock goes on past the
            # log's last commit and closes the open 600 s window, re-evaluating the throttle, while
            # replay's "end" is the moment of that commit)
            res = query(prom_port, f'routedeck_route_accepting{{schedd="{name}"}}')
            assert {r["metric"]["route"] for r in res} == set(routes)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
