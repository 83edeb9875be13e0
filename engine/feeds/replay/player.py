"""Replay transport: position, play / pause / step / seek / speed, bookmarks.

Design decisions and invariants:

- The player owns one :class:`~engine.queue.jobqueue.JobQueue` and the index of the last
  applied step (``position``; -1 = nothing applied). After any operation, ``state`` equals the
  state the index gives for ``position`` (``LogIndex.state_at``) — the property the replay
  tests check at random points.
- Time is injected: a :class:`~engine.clock.Clock` (real or manual) drives playing. While
  playing, replay time = anchor replay time + (clock − anchor clock) × speed; every
  :meth:`tick` applies the steps whose time has come. Pause, resume, seek and speed changes
  re-anchor, so replay time is continuous across them. Playing stops at the last step.
- A seek moves forward incrementally when the target is in the same checkpoint segment as (or
  just after) the current position, and otherwise restores the nearest checkpoint: a seek costs
  at most one checkpoint segment of record applications.
- Seeking to a time lands on the last step whose time is ≤ that time (before the first step:
  the empty queue, position -1).
- Bookmarks are names → step indices (RouteDeck's addition; kept in memory, the UI may save
  them). Unnamed bookmarks are called B1, B2, …
- A snapshot's route figures come from :class:`~engine.feeds.replay.stats.RouteHistory` (built
  at the first settle, then bisections; ``routedeck replay`` may swap in an archive window's
  before), its jobs table from :class:`~engine.views.recorded_rows.ReplayRows`, told after
  every move which keys changed (the records applied, or a diff after a restore).
- Settling and showing are apart (issue 26): :meth:`seek`, :meth:`step` and :meth:`tick`
  settle what the snapshot shows (:meth:`advance`: the changes taken into the rows, counts and
  row order); :meth:`snapshot` only reads it. :meth:`move` moves without settling, for a caller
  that settles itself (the replay feed's advance) or reads only the queue (``routedeck why``).
- Commands (``Seek``, ``Step``, ``Pause``, ``Resume``, ``SetSpeed``) arrive through
  :meth:`handle`, the same dataclasses the UI sends for the demo.
"""

from __future__ import annotations

from bisect import bisect_right

from engine.clock import Clock
from engine.feeds.replay.index import LogIndex
from engine.queue.jobqueue import JobQueue
from engine.contract.snapshot import ReplayPosition, Snapshot
from engine.contract.commands import Pause, Resume, Seek, SetSpeed, Step
from engine.queue.timeline import COMMENT
from engine.views import recorded as views
from engine.views.snapshot import View, snapshot_of
from engine.views.recorded_rows import ReplayRows
from engine.feeds.replay.stats import DEFAULT_POLLING_PERIOD, RouteHistory

MAX_SPEED = 1_000_000.0


class ReplayError(ValueError):
    pass


class Player:
    def __init__(self, index: LogIndex, clock: Clock, speed: float = 1.0,
                 limits: dict | None = None, tz: str = "UTC", rules: dict | None = None,
                 polling_period: float = DEFAULT_POLLING_PERIOD, jobs: bool = True,
                 collect_events: bool = True) -> None:
        """``jobs`` False: its views have no jobs table (``views.view_of``; a headless snapshot
        without its jobs), which is then never built. ``collect_events`` False: its history keeps no router
        events (``RouteHistory``; only the dashboard's feed shows them)."""
        if speed <= 0:
            raise ReplayError(f"speed must be positive, not {speed}")
        self.index = index
        self.clock = clock
        self.speed = float(speed)
        self.limits = limits
        self.locations: dict[str, str] | None = None  # route → "file:line" of --config (make_player)
        self.tz = tz
        self.position = -1
        self.state = JobQueue()
        self.paused = True
        self.bookmarks: dict[str, int] = {}
        self.version = 0  # bumped whenever the state changes (Snapshot.jobs_version)
        self.rows = ReplayRows(self.state.table)  # the jobs table, rebuilt only for changed jobs
        self.jobs = jobs
        self.history = RouteHistory(index, rules, polling_period, tz, collect_events=collect_events)
        self.marks: tuple = ()  # an archive's generations and gaps (ReplayMark), shown on the replay bar
        self.route_order: list[str] = []  # recorded routes in the order first shown (stable rows)
        self._anchor_clock = clock.now()
        self._anchor_time = self.start

    # ------------------------------------------------------------------ positions and times
    @property
    def start(self) -> float:
        return self.index.times[0] if self.index.steps else (self.index.creation_timestamp or 0.0)

    @property
    def end(self) -> float:
        return self.index.times[-1] if self.index.steps else self.start

    def time(self) -> float:
        """Replay time now: continuous while playing, the step's time while paused."""
        if not self.paused:
            return min(self.end, self._anchor_time + (self.clock.now() - self._anchor_clock) * self.speed)
        return self.index.times[self.position] if self.position >= 0 else self.start

    def replay_position(self, time: float | None = None) -> ReplayPosition:
        """Where the replay is; ``time`` (default: :meth:`time`) the moment shown."""
        return ReplayPosition(
            transaction=self.position, transactions=self.index.steps, time=self.time() if time is None else time,
            start=self.start, end=self.end, times_inferred=not self.index.has_comments, marks=self.marks,
        )

    def step_time_source(self, step: int | None = None) -> int:
        """How the time of ``step`` (default: current) was found: timeline.COMMENT/SET/CARRIED."""
        step = self.position if step is None else step
        return self.index.sources[step] if step >= 0 else COMMENT

    # ------------------------------------------------------------------ moving
    def _anchor(self, replay_time: float) -> None:
        self._anchor_clock = self.clock.now()
        self._anchor_time = replay_time

    def _go(self, step: int) -> None:
        step = max(-1, min(step, self.index.steps - 1))
        if step == self.position:
            return
        cps = self.index.plan
        # (step 0 of an index with a head has no text to apply: from before it, take checkpoint 0)
        if (self.position < step and (self.position >= 0 or self.index.head is None)
                and bisect_right(cps, step) <= bisect_right(cps, self.position) + 1):
            touched: set[str] = set()
            self.index.advance(self.state, self.position, step,
                               lambda records: touched.update(r[1] for r in records))
            self.rows.touched(touched)
        else:
            old = self.state.table
            self.state = self._restored(step)
            self.rows.restored(old, self.state.table)
        self.position = step
        self.version += 1

    def _restored(self, step: int) -> JobQueue:
        """A fresh state after ``step``: from the index's checkpoints, or — on an archive window's
        index (a ``head``: ``routedeck replay DIR --at``), before its route history has run —
        from that history's one pass, which applies the same steps anyway (not twice)."""
        history = self.history
        if self.index.head is not None and history.index is self.index:
            state = history.state_after(step)
            if state is not None:
                return state
        return self.index.state_at(step)

    def seek(self, step: int | None = None, time: float | None = None) -> int:
        """Move to ``step`` or ``time`` (:meth:`move`) and settle what :meth:`snapshot` shows there."""
        self.move(step=step, time=time)
        self.advance()
        return self.position

    def move(self, step: int | None = None, time: float | None = None) -> int:
        """Move to ``step`` (a transaction) or ``time`` without settling: for a caller that settles
        itself (the replay feed's advance) or reads only the queue (``routedeck why``)."""
        if (step is None) == (time is None):
            raise ReplayError("seek needs exactly one of a step (transaction) or a time")
        if time is not None:
            step = self.index.step_at_time(time)
            target_time = max(time, self.start)
        else:
            if step < -1 or step >= self.index.steps:
                raise ReplayError(f"transaction {step} is outside -1..{self.index.steps - 1}")
            target_time = self.index.times[step] if step >= 0 else self.start
        self._go(step)
        self._anchor(min(target_time, self.end))
        return self.position

    def step(self, count: int = 1) -> int:
        """Move ``count`` steps (negative: back); pauses, as a media player does."""
        self.paused = True
        self._go(self.position + count)
        self._anchor(self.time())
        self.advance()
        return self.position

    def pause(self) -> None:
        if not self.paused:
            t = self.time()
            self.paused = True
            self._anchor(t)

    def resume(self) -> None:
        if self.paused and self.position < self.index.steps - 1:
            t = self.time()
            self.paused = False
            self._anchor(t)

    def set_speed(self, speed: float) -> None:
        if not speed > 0:
            raise ReplayError(f"speed must be positive, not {speed}")
        t = self.time()
        self.speed = min(float(speed), MAX_SPEED)
        self._anchor(t)

    def tick(self) -> bool:
        """Apply the steps that are due at the clock's time; True if the state changed."""
        if self.paused:
            return False
        t = self.time()
        target = self.index.step_at_time(t)
        changed = target > self.position
        if changed:
            self._go(target)
        if self.position >= self.index.steps - 1:
            self.paused = True
            self._anchor(self.end)
        if changed:
            self.advance()
        return changed

    def seconds_to_next(self) -> float | None:
        """Clock seconds until the next step is due while playing (None when paused or at end)."""
        if self.paused or self.position >= self.index.steps - 1:
            return None
        due = self.index.times[self.position + 1]
        return max(0.0, (due - self.time()) / self.speed)

    def handle(self, command: object) -> bool:
        """Apply one UI command; False if it is not a replay command."""
        if isinstance(command, Seek):
            self.seek(step=command.transaction, time=command.time)
        elif isinstance(command, Step):
            self.step(command.count)
        elif isinstance(command, Pause):
            self.pause()
        elif isinstance(command, Resume):
            self.resume()
        elif isinstance(command, SetSpeed):
            self.set_speed(command.speed)
        else:
            return False
        return True

    # ------------------------------------------------------------------ bookmarks
    def add_bookmark(self, name: str | None = None, step: int | None = None) -> str:
        if name is None:
            n = len(self.bookmarks) + 1
            while f"B{n}" in self.bookmarks:
                n += 1
            name = f"B{n}"
        self.bookmarks[name] = self.position if step is None else step
        return name

    def remove_bookmark(self, name: str) -> None:
        self.bookmarks.pop(name, None)

    def goto_bookmark(self, name: str) -> int:
        if name not in self.bookmarks:
            raise ReplayError(f"no bookmark named {name!r}")
        return self.seek(step=self.bookmarks[name])

    def bookmark_list(self) -> list[tuple[str, int, float]]:
        """(name, step, time) in step order."""
        return sorted(((n, s, self.index.times[s] if s >= 0 else self.start)
                       for n, s in self.bookmarks.items()), key=lambda b: (b[1], b[0]))

    # ------------------------------------------------------------------ views
    def job_ad(self, job: str) -> dict[str, str]:
        """The effective ad (cluster + proc attribute texts) of ``job`` ("c.p") at this moment."""
        j = self.state.get(job)
        return j.attrs if j is not None else {}

    def advance(self, time: float | None = None) -> None:
        """Take this moment's changes into the rows, counts and row order (every move but the bare
        :meth:`move` does; the feed's advance through :meth:`settle`). ``time`` (default:
        :meth:`time`) dates the route figures that name routes."""
        t = self.time() if time is None else time
        views.take(self.state.table, rows=self.rows, route_order=self.route_order,
                   figures=self.history.figures(self.position, t), jobs=self.jobs)

    def _shown(self, t: float) -> dict:
        """What a view of this moment at replay time ``t`` is made of, beside the queue."""
        return dict(rows=self.rows, time=t, limits=self.limits, jobs_version=self.version, tz=self.tz,
                    figures=self.history.figures(self.position, t), route_order=self.route_order,
                    deferral=lambda job: self.history.deferral_at(job, t), locations=self.locations, jobs=self.jobs)

    def view(self, time: float | None = None) -> View:
        """The view of what the last :meth:`advance` settled, its route figures at ``time``
        (default: :meth:`time`): a read, which changes nothing."""
        return views.view_of(self.state.table, **self._shown(self.time() if time is None else time))

    def settle(self, time: float | None = None) -> View:
        """:meth:`advance`, then :meth:`view` (the replay feed's advance)."""
        return views.settle(self.state.table, **self._shown(self.time() if time is None else time))

    def snapshot(self, seq: int = 0, with_jobs: bool = True, time: float | None = None) -> Snapshot:
        """The recorded queue as the last move settled it (the headless ``replay``), its route
        figures at ``time`` (default: :meth:`time`): a read, which changes nothing."""
        return snapshot_of(self.view(time), seq=seq, mode="replay", speed=self.speed, paused=self.paused,
                           replay=self.replay_position(), with_jobs=with_jobs, tz=self.tz)
