"""The embedded execute node as the UI sees it: ``SlotRow`` per slot, ``HookRow`` per hook run.

One builder for both consumers: :func:`execute_views` feeds the demo's snapshot
(``engine.views.build``), and so ``--json`` and the Hooks/Slots screens show the same rows.

Invariants:

- Built only from the startd's state at ``now``: its slots (State/Activity, the claim, the
  fetch timer of ``Resource::tryFetchWork``, htcondor.md §4.2) and its ``HookRunner``'s
  invocations (fetch-work, starter and Startd Cron hooks all run through it).
- Every invocation gets a ``seq`` from 1 that never changes: :class:`HookIndex` holds the
  invocations it has numbered (strong references, so an ``id`` is never reused while it maps
  it), and the runner's bounded deque dropping old ones does not renumber the rest.
- A row is built once, when its invocation is first seen: hooks run to their end inside an
  engine step, and the startd/starter/cron fill ``error`` and ``decision`` in the same step
  (``engine.execute.hooks`` docstring), so an invocation a snapshot sees is final. At most
  ``hooks.MAX_INVOCATIONS`` rows; stdin/stdout are shared strings, not copies.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Callable

from engine.contract import snapshot as S
from engine.execute.hooks import Invocation
from engine.execute.startd import Slot, Startd


def slot_row(startd: Startd, slot: Slot) -> S.SlotRow:
    claim = slot.claim
    return S.SlotRow(
        name=slot.full_name, slot_id=slot.slot_id, state=slot.state, activity=slot.activity,
        keyword=slot.keyword, job=claim.job_id if claim is not None else None,
        claim=None if claim is None else ("fetched" if claim.fetched else "pushed"),
        last_fetch=slot.last_fetch_completed, next_fetch=slot.next_fetch_at, next_why=slot.why_next,
        fetch_delay=slot.next_fetch_delay, cron_attrs=MappingProxyType(dict(slot.extra)),
        cron_why=tuple(slot.cron_why))


def failure_of(inv: Invocation) -> str | None:
    """What went wrong, for the failure toast and the Hooks screen's mark: a program that could
    not start, timed out, flooded its output, died on a signal or exited non-zero, or output the
    engine could not use (``Invocation.error``). A withheld run (no ``--allow-hooks``) is not a
    failure. HTCondor ignores FETCH_WORK's exit status (``FetchClient::hookExited``), but an
    operator debugging a hook still wants to see it."""
    r = inv.result
    if r is None:
        return None
    if r.error is not None:
        return f"could not run: {r.error}"
    if r.timed_out:
        return "timed out and was killed"
    if r.overflow:
        return f"flooded its {r.overflow} and was killed"
    if r.returncode is not None and r.returncode < 0:
        return f"killed by signal {-r.returncode}"
    if r.returncode:
        return f"exited with status {r.returncode}"
    if inv.error:
        return inv.error
    return None


def hook_row(inv: Invocation, seq: int, shown: Callable[[str], str] = str) -> S.HookRow:
    """``shown``: how a path is named in the row (the demo's staged hook copies → the user's)."""
    r = inv.result
    failure, error = failure_of(inv), inv.error
    return S.HookRow(
        seq=seq, family=inv.family, keyword=inv.keyword, hook=inv.hook, target=inv.target, path=shown(inv.path),
        args=tuple(inv.args), started=inv.started, duration=None if r is None else r.elapsed,
        exit=None if r is None else r.returncode,
        ended="withheld (needs --allow-hooks)" if r is None else shown(_ended(r.describe(), r.path)),
        withheld=r is None, stdout_bytes=len(r.stdout.encode("utf-8", "surrogateescape")) if r else 0,
        parsed=MappingProxyType(dict(inv.parsed or {})), error=shown(error) if error else error,
        decision=inv.decision, failure=shown(failure) if failure else failure, stdin=inv.stdin,
        stdout=r.stdout if r else "", stderr=r.stderr if r else "")


def _ended(text: str, path: str) -> str:
    """``HookResult.describe`` without the path in front (the row shows the path already)."""
    return text[len(path) + 1:] if text.startswith(path + " ") else text


class HookIndex:
    """Numbers a runner's invocations once, in order, and builds each one's row once (module
    docstring): a snapshot builds rows for the new invocations only, plus one pass of lookups over
    the kept ones (the runner keeps a bounded number)."""

    def __init__(self, shown: Callable[[str], str] = str) -> None:
        self.seen: list[tuple[Invocation, S.HookRow]] = []
        self.count = 0
        self.shown = shown  # how paths are named in the rows (hook_row)

    def rows(self, invocations: Any) -> tuple[S.HookRow, ...]:
        known = {id(inv): row for inv, row in self.seen}
        numbered: list[tuple[Invocation, S.HookRow]] = []
        for inv in list(invocations):
            row = known.get(id(inv))
            if row is None:
                self.count += 1
                row = hook_row(inv, self.count, self.shown)
            numbered.append((inv, row))
        self.seen = numbered
        return tuple(row for _inv, row in numbered)


def execute_views(startd: Startd | None, index: HookIndex | None = None) -> tuple[tuple[S.SlotRow, ...],
                                                                                  tuple[S.HookRow, ...]]:
    """(slots, hooks) of an execute node; ((), ()) without one. Pass the same ``index`` for
    every snapshot of one feed so invocation numbers stay stable."""
    if startd is None:
        return (), ()
    index = index if index is not None else HookIndex()
    return tuple(slot_row(startd, s) for s in startd.slots), index.rows(startd.runner.invocations)
