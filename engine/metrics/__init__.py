"""Prometheus metrics of a feed's last published snapshot (issue 28; README "Monitoring").

:mod:`engine.metrics.collector` turns a snapshot into metric families, :mod:`engine.metrics.record`
a recorder's figures (``routedeck record --metrics``); :mod:`engine.metrics.server` renders them
once per published state with prometheus_client's encoders and serves the bytes for ``--metrics
HOST:PORT``. This package reads snapshots and the recorder's figures only: it never imports a
feed, the router or the runtime.
"""
