"""HTCondor's job_queue.log: records, the owner's and the follower's reading rules, the writer.

``records`` (format and keys), ``reader`` (fast load, falling back to ``reference``), ``writer``
(append, commit, compaction), ``follower`` (the router's incremental rules), ``watch`` (the only
module here that waits: wakes a follower on file changes). See each module's docstring.
"""
