"""The Prometheus series of ``routedeck record --metrics`` (issue 28): the recorder's own figures.

:func:`record_families` turns one :class:`engine.record.status.RecorderFigures` (taken after each
poll by the record loop) into metric families, served by :class:`engine.metrics.server.MetricsServer`
like a feed's snapshot (rendered once per poll's figures). Every series carries ``schedd``; a
figure the recorder does not know (the archive not open after a failure, no log followed yet) has
no series. The lag is ``routedeck record --status``'s (engine.record.status.log_lag): the
archive's newest transaction against the clock, and the bytes of the log's current generation
not archived yet (read, or still waiting for the next write).
"""

from __future__ import annotations

from prometheus_client.core import Metric

from engine.metrics.collector import family
from engine.record.status import RecorderFigures

def record_families(fig: RecorderFigures, schedd: str) -> list[Metric]:
    """The families of ``fig`` (their names and help in engine.metrics.collector.METRICS)."""
    out: list[Metric] = []

    def put(name: str, value: float | None) -> None:
        if value is not None:
            f = family(name, ["schedd"])
            f.add_metric([schedd], value)
            out.append(f)

    put("routedeck_record_transactions_archived_total", fig.archived)
    put("routedeck_record_errors_total", fig.errors)
    put("routedeck_record_failing", 1.0 if fig.failing else 0.0)
    put("routedeck_record_archive_size_bytes", fig.size)
    put("routedeck_record_archive_segments", fig.segments)
    put("routedeck_record_pending_bytes", fig.pending_bytes)
    put("routedeck_record_last_transaction_timestamp_seconds", fig.last_transaction)
    lag = fig.lag
    if lag is not None:
        put("routedeck_record_lag_seconds", lag["seconds"])
        put("routedeck_record_behind_bytes", lag.get("bytes"))
        put("routedeck_record_following", 1.0 if lag["state"] == "following" else 0.0)
    return out
