"""Queries beyond snapshots — why-not, full job ads, constraints, routing-table lint and what-if,
the transform trace — shared by the TUI's screens (through ``tui.engine_api``) and the headless
commands, one module per concern: :mod:`.whynot`, :mod:`.ads`, :mod:`.lint`, :mod:`.trace`
(:mod:`.access` reads the engine for them).

They use the router's ``why_not``, the config reader and ``load_routing_table``, through the
runtime's or feed's API when it is there, and otherwise say plainly what is unavailable —
never a crash of the caller. Slow calls (ClassAd constraints over 100,000 jobs) are meant to be
run from a thread worker by the caller.

Engine state (router, queue) belongs to the engine thread: with a runtime that offers
``query(fn, timeout)`` (``engine.runtime.Runtime``) every read here runs on that thread between
two steps; full ads are fetched in batches of :data:`.ads.AD_BATCH` per query. Objects without
``query`` (test fakes) are read directly, as before.
"""
