"""The fleet board: many CEs read from Prometheus's HTTP API (issue 28, ``routedeck fleet``).

``promapi`` is a bounded client of ``/api/v1/query`` and ``/api/v1/query_range`` (stdlib urllib);
``board`` turns the answers into one row per CE with its routes. No Textual here.
"""

TIMEOUT = 10.0  # seconds per request (engine.fleet.promapi); here so a parser can show it without urllib
