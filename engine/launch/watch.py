"""Watch's runtime for a screen: a live schedd's log (engine.feeds.watch) followed on the
system clock, woken by the file watcher (engine.queue.filewatch)."""

from __future__ import annotations

import threading

from engine.clock import SystemClock
from engine.feeds.watch.feed import WatchFeed
from engine.feeds.watch.follow import WatchEngine
from engine.feeds.watch.setup import resolve
from engine.launch import metrics
from engine.launch.options import WatchOptions
from engine.runtime import Runtime


class WatchRuntime(Runtime):
    """The watch runtime and the file watcher thread that wakes it, started and stopped together:
    the watcher only wakes the runtime (``WakeUp``), which reads the log on its own thread."""

    def __init__(self, feed: WatchFeed, clock, publish=None, slow_poll: float = 1.0) -> None:
        super().__init__(feed, clock, publish=publish, snapshot_interval=0.25)
        self.waker = feed.waker(self)
        self.slow_poll = slow_poll
        self._watch_stop = threading.Event()
        self._watcher: threading.Thread | None = None

    def start(self) -> "WatchRuntime":
        from engine.queue.filewatch import run_watch  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

        super().start()
        self._watcher = threading.Thread(target=run_watch, args=(self.waker, self._watch_stop),
                                         kwargs={"slow_poll": self.slow_poll}, name="routedeck-watch", daemon=True)
        self._watcher.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._watch_stop.set()
        super().stop(timeout)
        if self._watcher is not None:
            self._watcher.join(timeout)


def watch_runtime(opts: WatchOptions, publish=None) -> WatchRuntime:
    """Watch's runtime factory: the log (and router log) of ``opts`` followed on the log's clock;
    with ``opts.metrics``, its server is one of the runtime's services (started and stopped with it)."""
    setup = resolve(opts.queue_log, list(opts.config), opts.router_log)
    feed = WatchFeed(WatchEngine(setup, SystemClock(), tz=opts.tz), poll_interval=opts.slow_poll)
    runtime = WatchRuntime(feed, SystemClock(), publish=publish, slow_poll=opts.slow_poll)
    if opts.metrics:
        feed.engine.count_unrouted = True  # routedeck_idle_unrouted_jobs
    metrics.serve(runtime, opts.metrics, opts.name, schedd_name(setup))
    return runtime


def schedd_name(setup) -> str:
    """The ``schedd`` label: the config's SCHEDD_NAME, else HTCondor's default, the host's name."""
    import socket  # noqa: PLC0415 - kept off `routedeck --help`'s start-up

    return setup.schedd_name or socket.getfqdn()
