"""A fake Prometheus on loopback for the fleet tests: stdlib http.server on an ephemeral port in a
thread, answering /api/v1/query and /api/v1/query_range with the JSON shapes of Prometheus's
HTTP API (https://prometheus.io/docs/prometheus/latest/querying/api/: ``{"status": "success",
"data": {"resultType": "vector", "result": [{"metric": {...}, "value": [t, "v"]}]}}``).

``answers`` maps a PromQL expression to its samples ``[(labels, value), …]`` (instant) or, for
range queries, ``[(labels, [values…]), …]``; an unknown expression gives an empty result, as a
query over series that do not exist does. Use as a context manager; the server is stopped and
its thread joined on exit.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakePrometheus:
    def __init__(self, answers: dict[str, list] | None = None, range_answers: dict[str, list] | None = None) -> None:
        self.answers = answers or {}
        self.range_answers = range_answers or {}
        self.queries: list[str] = []
        self.raw: bytes | None = None  # when set, every answer is this body (a server that is not Prometheus)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a) -> None:
                pass

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                q = urllib.parse.parse_qs(url.query)
                expr = q.get("query", [""])[0]
                fake.queries.append(expr)
                if fake.raw is not None:
                    body, code = fake.raw, 200
                elif url.path == "/api/v1/query":
                    t = float(q.get("time", ["0"])[0])
                    result = [{"metric": labels, "value": [t, repr(float(v))]} for labels, v in fake.answers.get(expr, [])]
                    body, code = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}), 200
                elif url.path == "/api/v1/query_range":
                    start, step = float(q["start"][0]), float(q["step"][0])
                    result = [{"metric": labels, "values": [[start + i * step, repr(float(v))] for i, v in enumerate(vs)]}
                              for labels, vs in fake.range_answers.get(expr, [])]
                    body, code = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}), 200
                else:
                    body, code = json.dumps({"status": "error", "errorType": "not_found", "error": "no such path"}), 404
                data = body if isinstance(body, bytes) else body.encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> "FakePrometheus":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def two_ces() -> tuple[dict, dict]:
    """Answers for two CEs: ce1 up with two routes (one throttled, one full), ce2 down, plus a
    non-RouteDeck target (Prometheus scraping itself) that is not a CE."""
    a = {"instance": "127.0.0.1:9101", "job": "routedeck", "schedd": "ce1.example.org"}
    b = {"instance": "127.0.0.1:9102", "job": "routedeck", "schedd": "ce2.example.org"}
    answers = {
        "last_over_time(routedeck_snapshot_timestamp_seconds[1h])": [(a, 1e9), (b, 1e9)],
        "up": [({"instance": a["instance"], "job": "routedeck"}, 1), ({"instance": b["instance"], "job": "routedeck"}, 0),
               ({"instance": "127.0.0.1:9090", "job": "prometheus"}, 1)],
        "routedeck_snapshot_timestamp_seconds": [(a, 1e9)],
        "routedeck_route_jobs": [({**a, "route": "Site_A", "state": "idle"}, 3), ({**a, "route": "Site_A", "state": "running"}, 5),
                                 ({**a, "route": "Site_A", "state": "held"}, 1), ({**a, "route": "Site_B", "state": "idle"}, 0),
                                 ({**a, "route": "Site_B", "state": "running"}, 2), ({**a, "route": "Site_B", "state": "held"}, 0)],
        "routedeck_route_accepting": [({**a, "route": "Site_A"}, 0), ({**a, "route": "Site_B"}, 1)],
        "routedeck_route_throttled": [({**a, "route": "Site_A"}, 1), ({**a, "route": "Site_B"}, 0)],
        "routedeck_route_full": [({**a, "route": "Site_A"}, 0), ({**a, "route": "Site_B"}, 1)],
        "routedeck_route_max_jobs": [({**a, "route": "Site_A"}, 100), ({**a, "route": "Site_B"}, 2)],
        "routedeck_route_match_order": [({**a, "route": "Site_A"}, 2), ({**a, "route": "Site_B"}, 1)],
        "routedeck_route_window_start_timestamp_seconds": [({**a, "route": "Site_A"}, 1e9 - 200)],
        "routedeck_route_failure_rate": [({**a, "route": "Site_A"}, 0.025)],
        "routedeck_route_failure_rate_threshold": [({**a, "route": "Site_A"}, 0.03), ({**a, "route": "Site_B"}, 0.03)],
        "routedeck_route_throttle_jobs": [({**a, "route": "Site_A"}, 18.6)],
        "round(increase(routedeck_route_jobs_started_total[600s]))": [({**a, "route": "Site_A"}, 12)],
        "round(increase(routedeck_route_jobs_succeeded_total[600s]))": [({**a, "route": "Site_A"}, 0)],
        "round(increase(routedeck_route_jobs_failed_total[600s]))": [({**a, "route": "Site_A"}, 15)],
        "routedeck_idle_unrouted_jobs": [({**a, "reason": "no_match"}, 4), ({**a, "reason": "throttled"}, 2)],
    }
    ranges = {'sum by (instance) (routedeck_route_jobs{state="running"})': [({"instance": a["instance"]}, [1, 4, 7])],
              "routedeck_route_failure_rate": [({**a, "route": "Site_A"}, [0, 0.01, 0.025])]}
    return answers, ranges
