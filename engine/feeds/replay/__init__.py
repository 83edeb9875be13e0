"""Replay of a recorded ``job_queue.log`` (product.md §2 "replay").

``index`` reads a log once (steps, times, copy-on-write checkpoints); ``timeline`` dates each
step; ``player`` moves through it (play/pause/step/seek/speed, bookmarks); ``views`` turns a queue
state into the UI's snapshot; ``feed`` runs a player under ``engine.runtime.Runtime``;
``reroute`` feeds the recorded source jobs through the router with another table; ``stats``
rebuilds the routes' recent figures and failure-rate throttle from the recorded copies;
``rows`` keeps the jobs table, rebuilding only changed jobs (the demo's ``RowIndex``).
"""
