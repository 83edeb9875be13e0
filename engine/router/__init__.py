"""The Job Router: routing table, routed copies, candidate choice, throttles, hooks.

Modules (htcondor.md §1): ``table``/``loader`` (the routing table from HTCondor config, both
route syntaxes), ``classic`` (the ClassAd route syntax and its conversion to transforms),
``lints`` (checks for ``routedeck check`` and the route editor), ``routed_copy`` (building the
routed copy of a job, §1.6); the runtime (``router``, ``throttle``, ``hooks``, ``whynot``, …)
builds on :class:`engine.router.table.RoutingTable`.
"""
