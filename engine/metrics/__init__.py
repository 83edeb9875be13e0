"""Prometheus metrics of a feed's last published snapshot (issue 28; README "Monitoring").

:mod:`engine.metrics.collector` turns a snapshot into metric families; :mod:`engine.metrics.server`
serves them with prometheus_client's HTTP server for ``--metrics HOST:PORT``. This package reads
snapshots only (engine.contract): it never imports a feed, the router or the runtime.
"""
