"""Replay as an engine for :class:`engine.runtime.Runtime` (the thread the TUI talks to).

The runtime drives an engine through ``now``, ``next_time()``, ``step(t)``, ``snapshot(...)``,
``handle(command)`` and ``emit(...)``, on a clock that never goes backwards (``VirtualClock``);
it handles ``Pause``/``Resume``/``SetSpeed`` itself (through the clock) and ``Step`` by jumping
to ``next_time()``. Design decisions and invariants:

- Clock time and replay time differ by ``offset`` (clock = replay + offset). Playing forward keeps
  the offset; a ``Seek`` (backwards or forwards) changes it so that the clock keeps running
  forward while the replay lands on the requested moment. ``now`` is in clock coordinates, as
  the runtime expects.
- ``next_time()`` is the next transaction's time (in clock coordinates), so the runtime's ``Step``
  applies exactly one transaction. Transactions that share a time (common: a schedd commits
  many per second, and a log without time stamps carries one time over many) are told apart
  by ranking them 1 µs apart on the clock (``keys``); replay time shown is unaffected beyond
  that. At the end ``next_time()`` is ``now + AFTER_END``: never +inf, because the runtime's
  ``Step`` (``:step``) and its maximum speed jump the virtual clock to ``next_time()``, and a
  clock at +inf could never be seeked back; a step there moves time, not the replay.
- The state at any moment is the player's (:class:`~engine.feeds.replay.player.Player`), which keeps
  the invariant "state == index.state_at(position)".
- Bookmark commands are :class:`AddBookmark` / :class:`GotoBookmark` (replay only).
- Playing (or stepping) through a recorded throttle change emits the router's event for it
  (``engine.feeds.replay.stats``), so the events pane and its toasts show them as live; a seek jumps
  over them.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Any, Literal

from engine.contract import commands as C
from engine.contract.feed import NOT_OFFERED, FeedBase, Unavailable, WhyNot
from engine.contract import snapshot as S
from engine.feeds.replay.player import Player, ReplayError
from engine.queue.timeline import SOURCE_NAMES
from engine.views.snapshot import snapshot_of
from engine.views.rows import SNAPSHOT_JOB_EVENTS, EventRing

TIE = 1e-6  # clock seconds between transactions that share a time
AFTER_END = 3600.0  # clock seconds to the next "action" once the last transaction is applied
SEEK_EVENTS = SNAPSHOT_JOB_EVENTS  # router events shown after a jump (the ones just before the new moment)
OWN_EVENT_KINDS = frozenset({"log-problem", "bookmark-added"})  # ours, kept across jumps


class ReplayFeed(FeedBase):
    """A recording played on the runtime's clock (an ``engine.contract.feed.FeedBase``): read-only."""

    controls = frozenset({"pause", "speed", "step", "seek"})

    def __init__(self, player: Player, config_files: tuple[str, ...] = (), routing: Any = None, *,
                 archive: str | None = None, tz: str | None = None) -> None:
        self.player = player
        # a recorder's archive (engine.feeds.replay.archive) read as this log, else None; ``tz``
        # reads its JobRouterLog stamps (router_log)
        self.archive, self.tz = archive, tz
        self._rlog_lines: list | None = None  # the archive's router-log index lines, read once
        self._rlog_cache: dict = {}  # the router-log frames last read (router_log_at's cache)
        self.config_files = tuple(config_files)  # --config: shown read-only by the UI, never written
        # --config's config and routing table as the launcher read them (engine.launch.replay.load_routing)
        self._table = (routing.config, routing.table) if routing is not None else None
        times = player.index.times
        self.keys = array("d")
        prev, rank = None, 0
        for t in times:
            rank = rank + 1 if t == prev else 0
            self.keys.append(t + rank * TIE)
            prev = t
        self.offset = 0.0
        self.now = player.time()
        self.ring = EventRing()
        self.history_upto = 0
        for p in player.index.problems[:50]:
            self.emit(self.now, "log-problem", p.where(player.index.path), "warning")
        self._recent_events(self.now)  # opened at a moment (--at): what led up to it
        self.advance()

    @property
    def end_time(self) -> float:
        """The last transaction's moment in clock coordinates (for ``Runtime(until=...)``)."""
        return (self.keys[-1] if len(self.keys) else self.player.start) + self.offset

    @property
    def replay_time(self) -> float:
        return self.now - self.offset

    def emit(self, time: float, kind: str, message: str, level: str = "info", route: str | None = None,
             job: str | None = None) -> None:
        self.ring.emit(time - self.offset, kind, message, level, route, job)

    def next_time(self) -> float:
        p = self.player
        if p.position >= p.index.steps - 1:
            return self.now + AFTER_END
        return self.keys[p.position + 1] + self.offset

    def step(self, t: float) -> None:
        p = self.player
        target = bisect_right(self.keys, t - self.offset) - 1
        if target > p.position:
            p._go(target)
        if t > self.now:
            self.now = t
        self._played_through(min(self.replay_time, p.end))

    def _played_through(self, upto: float) -> None:
        """Emit the recorded router's events between the last moment played and ``upto``."""
        if upto > self._events_upto:
            for when, kind, message, level, route, job in self.player.history.changes_between(self._events_upto, upto):
                self.emit(when + self.offset, kind, message, level, route, job)
            self._events_upto = upto

    def handle(self, command: Any) -> str | None:
        p = self.player
        try:
            if isinstance(command, C.Seek):
                p.move(step=command.transaction, time=command.time)  # settled below, at the feed's moment
            elif isinstance(command, C.AddBookmark):
                name = p.add_bookmark(command.name)
                self.emit(self.now, "bookmark-added", f"bookmark {name} at transaction {p.position + 1}")
                self.advance()
                return None
            elif isinstance(command, C.GotoBookmark):
                p.goto_bookmark(command.name)
            else:
                return f"{type(command).__name__} is not available in replay"
        except ReplayError as exc:
            return str(exc)
        moment = self.keys[p.position] if p.position >= 0 else p.start
        self.offset = self.now - moment
        self._recent_events(p.time())
        self.advance()
        return None

    def _recent_events(self, upto: float) -> None:
        """After a jump: the events pane shows what the recording's router said up to the new
        moment (its last ``SEEK_EVENTS`` events), as if played there, and the notes of our own
        (log problems, bookmarks); playing on from here emits the next ones."""
        own = [e for e in self.ring.recent() if e.kind in OWN_EVENT_KINDS]
        seq = self.ring.seq
        self.ring = EventRing()
        self.ring.seq = seq  # numbers go on: the dashboard tells new events by their number
        for e in own:
            self.ring.emit(e.time, e.kind, e.message, e.level, e.route, e.job)
        for when, kind, message, level, route, job in self.player.history.changes_between(
                float("-inf"), upto)[-SEEK_EVENTS:]:
            self.emit(when + self.offset, kind, message, level, route, job)
        self._events_upto = upto
        self.history_upto = self.ring.seq  # re-told, not news: no toasts for them

    def job_ad(self, job: str) -> dict[str, str]:
        return self.player.job_ad(job)

    NO_TABLE = "no routing table: open the replay with --config to ask why a job waits"

    def _routing(self) -> tuple[Any, Any]:
        """(config, routing table) of --config, (None, None) without one."""
        from engine.router.loader import load_config_and_table  # noqa: PLC0415 - the ledger and why-not only

        if self.config_files and self._table is None:  # a feed built without its routing (tests)
            loaded = load_config_and_table(self.config_files)
            self._table = (loaded.config, loaded.table)
        return self._table or (None, None)

    def why_not(self, job: str, now: float) -> WhyNot:
        """Why ``job`` waits at this moment: its ledger entry (engine.feeds.replay.why, the same as
        ``routedeck why``), every route's verdict in match order; the routing table is --config's."""
        from engine.feeds.replay.why import replay_ledger  # noqa: PLC0415 - the why-not screen only
        from engine.views.ledger import why_not_of  # noqa: PLC0415 - the why-not screen only

        cfg, table = self._routing()
        entries = replay_ledger(self.player, table, cfg.get, [job]) if table is not None else []
        return why_not_of(table, entries, job, self.NO_TABLE)

    def ledger(self, now: float) -> list:
        """Every idle source job's ledger entry at this moment (the dashboard's ledger screen, the
        entries of ``routedeck why``); LookupError without --config."""
        from engine.feeds.replay.why import replay_ledger  # noqa: PLC0415 - the ledger screen only

        cfg, table = self._routing()
        if table is None:
            raise LookupError(self.NO_TABLE)
        return replay_ledger(self.player, table, cfg.get)

    def router_log(self, now: float) -> dict | None | Literal[Unavailable.NOT_OFFERED]:
        """The archived JobRouterLog at the recorded moment ``now`` (FeedBase.router_log; the
        ``router_log`` of ``replay DIR --at T --json``): NOT_OFFERED for a log, None for an
        archive recorded without ``--router-log``. The archive's index is read once (the replay
        shows the archive as it was opened); a call reads the few router-log frames near ``now``,
        unless the last call read the same ones (kept: a catch-up archives hours in one frame)."""
        if self.archive is None:
            return NOT_OFFERED
        from engine.feeds.replay.archive import router_log_at  # noqa: PLC0415 - the router-log screen only
        from engine.record.archive import Archive  # noqa: PLC0415 - the router-log screen only

        if self._rlog_lines is None:
            self._rlog_lines = [x for x in Archive.open(self.archive, readonly=True).index_lines()
                                if x["kind"] == "rlog"]
        if not self._rlog_lines:
            return None
        return router_log_at(self.archive, now, self.tz, lines=self._rlog_lines, cache=self._rlog_cache)

    def idle(self) -> bool:
        """Build the recording's next seek checkpoint (one interval of records) while the runtime
        waits, so a later seek anywhere re-reads at most one interval (issue 30)."""
        return self.player.index.build_next_checkpoint()

    def advance(self) -> None:
        """Take the moment played to into the rows, counts and route order (the player's settle)
        and keep what :meth:`snapshot` reads in ``settled`` (immutable)."""
        p = self.player
        pos = p.replay_position(min(self.replay_time, p.end))
        source = SOURCE_NAMES[p.step_time_source()] if p.position >= 0 else "start"
        self.settled = (p.settle(pos.time), pos, (S.Diagnostic("info", f"time of this transaction: {source}"),),
                        self.ring.recent(), self.history_upto)

    def snapshot(self, seq: int = 0, *, speed: float = 1.0, paused: bool = False, engine_state: str = "running",
                 clock: str = "virtual", jobs: tuple = (), controls: frozenset[str] | None = None,
                 error: str | None = None) -> S.Snapshot:
        view, pos, diagnostics, events, history_upto = self.settled
        return snapshot_of(
            view, seq=seq, mode="replay", speed=speed, paused=paused, engine_state=engine_state, clock=clock,
            replay=pos, events=events, history_upto=history_upto, config_files=self.config_files,
            diagnostics=diagnostics, tz=self.player.tz, error=error,
            controls=S.CONTROLS if controls is None else controls,
        )
