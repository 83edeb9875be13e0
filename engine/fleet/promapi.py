"""A bounded client of Prometheus's HTTP API: PromQL instant and range queries.

Every request has a timeout and a size bound; every failure is a :class:`PromError` with one
line saying what went wrong (an unreachable server, an HTTP error, an answer that is not
Prometheus's JSON, a query Prometheus refused). Only ``http``/``https`` URLs are taken.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from engine.fleet import TIMEOUT
MAX_BYTES = 32 * 1024 * 1024  # an answer larger than this is refused, not read whole


class PromError(Exception):
    """A one-line reason a query could not be answered."""


def base_url(url: str) -> str:
    """``url`` checked: http(s) with a host; without its trailing slash. Raises ValueError."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an http(s) URL with a host: {url!r} (e.g. http://127.0.0.1:9090)")
    if parts.query or parts.fragment:
        raise ValueError(f"a Prometheus URL has no query or fragment: {url!r}")
    return url.rstrip("/")


class Prometheus:
    """Queries of the Prometheus server at ``url`` (bounded by ``timeout`` and ``max_bytes``)."""

    def __init__(self, url: str, timeout: float = TIMEOUT, max_bytes: int = MAX_BYTES) -> None:
        self.url = base_url(url)
        self.timeout = timeout
        self.max_bytes = max_bytes

    def _get(self, path: str, params: dict[str, str]) -> Any:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as r:
                body = r.read(self.max_bytes + 1)
        except urllib.error.HTTPError as exc:  # Prometheus answers 400/422 with its JSON error
            body = exc.read(self.max_bytes + 1)
            try:
                doc = json.loads(body)
                raise PromError(f"{self.url}: {doc.get('errorType', 'error')}: {doc.get('error', exc.reason)}") from None
            except (ValueError, AttributeError):
                raise PromError(f"{self.url}: HTTP {exc.code} {exc.reason}") from None
        except urllib.error.URLError as exc:
            raise PromError(f"cannot reach {self.url}: {exc.reason}") from None
        except (OSError, ValueError) as exc:  # timeouts, resets, a malformed URL
            raise PromError(f"cannot reach {self.url}: {exc}") from None
        if len(body) > self.max_bytes:
            raise PromError(f"{self.url}: answer larger than {self.max_bytes} bytes")
        try:
            doc = json.loads(body)
        except ValueError:
            raise PromError(f"{self.url}{path}: the answer is not JSON (is this a Prometheus server?)") from None
        if not isinstance(doc, dict) or "status" not in doc:
            raise PromError(f"{self.url}{path}: the answer is not Prometheus's API JSON")
        if doc["status"] != "success":
            raise PromError(f"{self.url}: {doc.get('errorType', 'error')}: {doc.get('error', '')}")
        data = doc.get("data")
        if not isinstance(data, dict) or not isinstance(data.get("result"), list):
            raise PromError(f"{self.url}{path}: the answer has no data.result list")
        return data

    def query(self, expr: str, time: float | None = None) -> list[tuple[dict[str, str], float]]:
        """An instant query whose result is a vector: ``[(labels, value), …]``."""
        params = {"query": expr}
        if time is not None:
            params["time"] = repr(time)
        data = self._get("/api/v1/query", params)
        if data.get("resultType") != "vector":
            raise PromError(f"{self.url}: {expr!r} gave a {data.get('resultType')}, not a vector")
        try:
            return [(dict(s["metric"]), float(s["value"][1])) for s in data["result"]]
        except (KeyError, IndexError, TypeError, ValueError):
            raise PromError(f"{self.url}: a malformed sample in the answer to {expr!r}") from None

    def query_range(self, expr: str, start: float, end: float, step: float
                    ) -> list[tuple[dict[str, str], list[tuple[float, float]]]]:
        """A range query: ``[(labels, [(time, value), …]), …]``."""
        data = self._get("/api/v1/query_range", {"query": expr, "start": repr(start), "end": repr(end),
                                                 "step": repr(step)})
        if data.get("resultType") != "matrix":
            raise PromError(f"{self.url}: {expr!r} gave a {data.get('resultType')}, not a matrix")
        try:
            return [(dict(s["metric"]), [(float(t), float(v)) for t, v in s["values"]]) for s in data["result"]]
        except (KeyError, IndexError, TypeError, ValueError):
            raise PromError(f"{self.url}: a malformed series in the answer to {expr!r}") from None
