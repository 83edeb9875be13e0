"""Queries beyond snapshots — why-not, full job ads, constraints, routing-table lint and what-if,
the transform trace, the archived JobRouterLog — shared by the TUI's screens (through ``tui.engine_api``) and the headless
commands, one module per concern: :mod:`.whynot`, :mod:`.ads`, :mod:`.lint`, :mod:`.trace`
and :mod:`.routerlog` (:mod:`.access` reads the engine for them).

Each reads the feed through its typed abilities (``engine.contract.feed.FeedBase``: ``why_not``,
``why_not_candidate``, ``job_ad``, ``deferral_time``, ``table``, ``router_log``), whose defaults say "not offered";
then the query says plainly what is unavailable, or falls back on the snapshot's rows — never a
crash of the caller. Slow calls (ClassAd constraints over 100,000 jobs) are meant to be run from a
thread worker by the caller.

Engine state (router, queue) belongs to the engine thread: every read here is a function of the
feed run on that thread between two steps by the runtime's ``query(fn, timeout)``
(``engine.runtime.Runtime``; the tests' fakes run it directly); full ads are fetched in batches of
:data:`.ads.AD_BATCH` per query.
"""
