"""Replay mode's controls, a mixin of :class:`tui.app.RouteDeckApp` (product.md §6 replay bar).

Keys (``tui.commands.keymap.REPLAY``; active only in replay mode, see
:meth:`ReplayControls.replay_check_action`): space play/pause (the app's pause key), ``.``/``,`` one transaction forward/back (pausing first, as a media player does),
→/← the same while paused, ``]``/``[`` ±1 min, ``}``/``{`` ±10 min, ``m`` bookmark here, ``'``
pick a bookmark, ``R`` the real router's log at this moment (tui.screens.router_log); ``+``/``-`` are the app's speed keys. Command line: ``:seek TIME|+SECONDS|#N``,
``:mark [NAME]``, ``:bookmark NAME``.

Design decisions:

- Everything goes to the engine as commands (``Seek``, ``Step``, ``Pause``/``Resume``,
  ``AddBookmark``/``GotoBookmark``); the screen never moves the player itself, so what the bar
  shows is always the engine's position from the latest snapshot.
- Stepping back is a ``Seek`` to the previous transaction (the runtime's ``Step`` only goes
  forward).
- Relative jumps accumulate from the *requested* position: ``}`` ``}`` ``}`` is +30 min even
  when pressed faster than snapshots arrive, and even though a seek lands on the last
  transaction at or before the requested time (issue 11 item 5). The request stays the base
  until the replay has landed (a snapshot at or before it) and then played past it; stepping,
  a transaction seek or a bookmark drop it.
- The app keeps its own list of bookmarks (name, transaction, time at the moment ``m`` was
  pressed) for the bar and the picker; the engine keeps the same names → positions.
"""

from __future__ import annotations


from engine.contract import commands as C
from engine.contract import snapshot as S
from tui.commands import keymap

REPLAY_ACTIONS = frozenset({"replay_step", "replay_arrow", "replay_jump", "replay_mark", "replay_bookmarks",
                            "show_router_log"})
REPLAY_BINDINGS = keymap.REPLAY  # space (play/pause) is the app's one pause key, in every mode


class ReplayControls:
    """Needs ``self.mode``, ``self.snapshot``, ``self.send``, ``self.notify``, ``self.push_screen``."""

    def replay_check_action(self, action: str) -> bool | None:
        """None = not a replay action; False hides and disables it outside replay mode."""
        if action not in REPLAY_ACTIONS:
            return None
        return self.mode == "replay"

    def _replay_pos(self) -> S.ReplayPosition | None:
        snap = self.snapshot
        return snap.replay if snap is not None else None

    _seek_target: float | None = None  # the last requested time of a relative jump
    _seek_landed = False

    def replay_snapshot_seen(self, snap: S.Snapshot) -> None:
        """Called for each new snapshot: drop the requested jump base once played past it."""
        if self._seek_target is None or snap.replay is None:
            return
        if snap.replay.time <= self._seek_target:
            self._seek_landed = True
        elif self._seek_landed:
            self._seek_target = None

    def _seek_to(self, command: C.Seek) -> None:
        self._seek_target = command.time
        self._seek_landed = False
        self.send(command)

    def action_replay_step(self, n: int) -> None:
        self._seek_target = None
        pos = self._replay_pos()
        if pos is None:
            return
        if self.snapshot is not None and not self.snapshot.paused:
            self.send(C.Pause())
        if n > 0:
            if pos.transaction + n > pos.transactions - 1:
                # the runtime's Step would jump the clock to the feed's next_time() = +inf
                self.notify("at the last transaction of the recording", severity="warning")
                return
            self.send(C.Step(n))
        else:
            self.send(C.Seek(transaction=max(-1, pos.transaction + n)))

    def action_replay_arrow(self, n: int) -> None:
        if self.snapshot is not None and self.snapshot.paused:
            self.action_replay_step(n)

    def action_replay_jump(self, seconds: float) -> None:
        pos = self._replay_pos()
        if pos is not None:
            base = self._seek_target if self._seek_target is not None else pos.time
            self._seek_to(C.Seek(time=min(pos.end, max(pos.start - 1, base + seconds))))

    def add_replay_bookmark(self, name: str | None = None) -> str | None:

        pos = self._replay_pos()
        if pos is None:
            return None
        if not name:
            taken = {b[0] for b in self.bookmarks}
            n = len(self.bookmarks) + 1
            while f"B{n}" in taken:
                n += 1
            name = f"B{n}"
        self.bookmarks = [b for b in self.bookmarks if b[0] != name] + [(name, pos.transaction, pos.time)]
        self.send(C.AddBookmark(name))
        self.notify(f"bookmark {name} at transaction {pos.transaction + 1}", title="bookmark")
        return name

    def action_replay_mark(self) -> None:
        self.add_replay_bookmark()

    def goto_replay_bookmark(self, name: str | None) -> None:

        if not name:
            return
        if name not in {b[0] for b in self.bookmarks}:
            raise LookupError(f"no bookmark named {name!r}")
        self._seek_target = None
        self.send(C.GotoBookmark(name))

    def action_replay_bookmarks(self) -> None:
        from tui.screens.replay_bookmarks import BookmarkPicker  # noqa: PLC0415

        if not self.bookmarks:
            self.notify("no bookmarks yet: m marks the current moment", severity="warning")
            return
        tz = self.snapshot.tz if self.snapshot else "UTC"
        self.push_screen(BookmarkPicker(self.bookmarks, tz), self.goto_replay_bookmark)

    def replay_command(self, word: str, arg: str) -> bool:
        """``:seek`` / ``:mark`` / ``:bookmark``; False when ``word`` is none of them."""
        from tui.widgets.replay_bar import parse_seek  # noqa: PLC0415

        if word not in ("seek", "mark", "bookmark"):
            return False
        try:
            if self.mode != "replay":
                raise ValueError("only in replay mode (routedeck replay LOG)")
            if word == "seek":
                self._seek_to(parse_seek(arg, self.snapshot))
            elif word == "mark":
                self.add_replay_bookmark(arg or None)
            else:
                self.goto_replay_bookmark(arg)
        except (ValueError, LookupError) as exc:
            self.notify(f":{word}: {exc}", severity="error")
        return True

    def show_replay_bar(self, screen) -> None:
        """Give a main screen its replay bar (above the footer) and redraw it."""
        from textual.widgets import Footer  # noqa: PLC0415

        from tui.widgets.replay_bar import ReplayBar  # noqa: PLC0415

        bars = screen.query(ReplayBar)
        if bars:
            bars.first().show(self.snapshot, self.bookmarks)
            return
        footers = screen.query(Footer)
        if footers:
            screen.mount(ReplayBar(id="replay-bar"), before=footers.first())
