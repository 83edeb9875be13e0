"""Reading the engine for the queries: every read is a function of the feed
(:class:`engine.contract.feed.FeedBase`, whose members say what it offers) run on the engine thread
by ``Runtime.query``."""

from __future__ import annotations

from typing import Callable, Protocol, TypeVar

from engine.contract.feed import FeedBase

QUERY_TIMEOUT = 5.0  # seconds a screen waits for the engine thread to answer

T = TypeVar("T")


class Queries(Protocol):
    """What the queries need of a runtime (``engine.runtime.Runtime``, the tests' fakes):
    ``fn(feed)`` run on the engine thread between two steps, its result or its exception."""

    def query(self, fn: Callable[[FeedBase], T], timeout: float | None = ...) -> T: ...


def feed_ad(feed: FeedBase, job: str) -> dict[str, str] | None:
    """One job's full ad from the feed, None when it offers none or has no such job."""
    ad = feed.job_ad(job)
    return dict(ad) if ad else None


def ask(runtime: Queries, fn: Callable[[FeedBase], T]) -> T:
    """``fn(feed)`` on the engine thread, waiting at most :data:`QUERY_TIMEOUT`."""
    return runtime.query(fn, timeout=QUERY_TIMEOUT)
