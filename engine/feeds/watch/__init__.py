"""Watch mode: follow a live schedd's ``job_queue.log`` and show it as the routes board sees it
(product.md §2 "watch", §5).

``setup`` resolves what watch reads (the queue log, the config's routing table, the router log);
``follow`` is the watched schedd: it follows the log into a queue and keeps the router's figures
and the crondor rebuilt from it (``WatchEngine``); ``pace`` measures how fast the log's own clock
runs; ``reported`` attaches the real router's JobRouterLog figures to the routes; ``feed`` runs it
all under ``engine.runtime.Runtime`` (``WatchFeed``) and wakes it when the log changes.
"""
