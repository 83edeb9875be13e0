"""The RouteDeck app: the shell around the screens, and the one bridge to the engine.

Design decisions and invariants:

- ``make_app(runtime, mode=..., readonly=...)`` is the only constructor; the CLI and the tests
  both use it (posting's ``make_posting`` habit). ``runtime`` is ``engine.runtime.Runtime`` or
  any object with ``start/send/stop``, ``controls`` and a ``publish`` callback attribute (the tests' fake).
- The engine runs in its runtime; a *thread worker* (``_bridge``) sets the runtime's ``publish``
  callback to :meth:`publish` and starts it; each snapshot is forwarded with ``post_message`` —
  thread-safe and non-blocking, no polling. ``SnapshotArrived`` is replaceable, so a busy UI
  drops stale snapshots instead of queueing them; snapshots are de-duplicated by ``seq``.
- Engine failure is handled in one place, :meth:`engine_failed`: reached from the worker's
  ``StateChanged(ERROR)`` (start failed, bridge died) and from a snapshot whose state is
  ``crashed``. It shows the error in a banner and keeps the last snapshot on screen.
- Toasts come from the events ring: only events with a sequence number above the last one seen,
  so a replaced snapshot loses none; a gap in the numbers is reported, never hidden.
- ``readonly`` refuses every command that changes jobs or the routing table.
- ``Snapshot.controls`` (what the feed offers) decides which keys and ``:`` commands are offered:
  the others are hidden (``check_action``) and refused with a toast if typed (``on_key``).
- ``mode`` is "demo", "replay" or "watch". Replay adds the replay bar and its keys
  (``tui.screens.replay_controls``; the keys are disabled in other modes by ``check_action``);
  watch shows the routes board with the real router's JobRouterLog figures beside RouteDeck's
  (``tui.screens.watch_board``).
- The routing table's files are watched (``tui.files.config_watch``); a change made outside RouteDeck
  is sent to the engine as ``ApplyRoutes``; the engine keeps the last good table if it is broken.
- The UI thread never waits on work (issue 14 item 3): file reads, hashes, lints, what-ifs and
  job scans run in thread workers (the config watcher hashes the files it reports; the route
  detail reads its text and splits the jobs by route in workers; the editor lints on apply in
  one); screens paint from the last snapshot at once and fill in what a worker brings. The main
  views a key reaches are composed off screen after the first paint (:meth:`tui.shell.prewarm.Prewarm._prewarm`),
  so even their first visit only resumes them.
"""

from __future__ import annotations

import os
import time
from typing import Iterable

from textual import on
from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.worker import Worker, WorkerState
from textual.widgets import Input, TextArea

from engine.contract import commands as C
from engine.contract import snapshot as S
from engine.views.rows import EventRing
from tui.commands import keymap
from tui.commands.prompt import CommandLineMixin
from tui.shell.messages import CommandSent, EngineCrashed, EventsSeen, SnapshotArrived
from tui.commands.palette import COMMANDS
from tui.widgets.command_line import waiting_first
from tui.shell.idle_gc import IdleGC
from tui.shell.prewarm import Prewarm
from tui.screens.replay_controls import ReplayControls
from tui.commands.typeahead import TypeAhead
from tui.widgets import scrollbar, strips

TOAST_KINDS = {
    "route-throttled": "warning", "route-unthrottled": "information", "route-released": "information",
    "config-reloaded": "information", "config-rejected": "error", "hook-failed": "error",
}
EVENT_LOG = 2000
GAP_TOAST_EVERY = 30.0  # seconds
MUTATING = (C.HoldJob, C.ReleaseJob, C.RemoveJob, C.ApplyRoutes)
# Actions that need a feed control (``Snapshot.controls``, engine.contract.snapshot.CONTROLS): where the
# feed does not offer it, check_action hides the key and a typed key is refused with a toast.
CONTROL_OF_ACTION = {
    "toggle_pause": "pause", "speed": "speed",
    "hold": "jobs", "release": "jobs", "remove": "jobs",
    "apply": "routes", "undo_apply": "routes",
    "show_hooks": "execute", "show_slots": "execute",
}
CONTROL_NAMES = {"pause": "pause", "speed": "speed change", "step": "stepping", "seek": "seeking",
                 "jobs": "job commands (hold, release, remove)", "routes": "applying routes",
                 "execute": "a Hooks or Slots view (no execute node here)"}


def _screen(name: str) -> Screen:
    if name == "routes":
        from tui.screens.routes import RoutesScreen  # noqa: PLC0415

        return RoutesScreen()
    if name == "jobs":
        from tui.screens.jobs import JobsScreen  # noqa: PLC0415

        return JobsScreen()
    if name == "hooks":
        from tui.screens.hooks import HooksScreen  # noqa: PLC0415

        return HooksScreen()
    if name == "slots":
        from tui.screens.slots import SlotsScreen  # noqa: PLC0415

        return SlotsScreen()
    from tui.screens.cron import CronScreen  # noqa: PLC0415

    return CronScreen()


class RouteDeckApp(IdleGC, TypeAhead, Prewarm, ReplayControls, CommandLineMixin, App):
    CSS_PATH = "app.tcss"
    TITLE = "RouteDeck"
    BINDINGS = [*keymap.APP, *keymap.REPLAY]  # the one keymap (tui.commands.keymap); ? shows it

    # The other main views are built in the background after the first snapshot (tui.shell.prewarm).
    # Off only in Pilot tests that do not test it (tests/conftest.py): there it was ~17% of a test's CPU.
    prewarm_at_start = True

    MODES = {"routes": lambda: _screen("routes"), "jobs": lambda: _screen("jobs"), "cron": lambda: _screen("cron"),
             "hooks": lambda: _screen("hooks"), "slots": lambda: _screen("slots")}

    def __init__(self, runtime, *, mode: str = "demo", readonly: bool = False, blink: bool = True,
                 watch_files: bool = True) -> None:
        super().__init__()
        scrollbar.install()  # every scrollbar draws whole cells, no partial-block thumb ends
        strips.install()  # a line dropped is freed at once, not by a full GC collection
        self.runtime = runtime
        self.mode = mode
        self.readonly = readonly
        self.blink = blink
        self.watch_files = watch_files
        self.snapshot: S.Snapshot | None = None
        self.engine_error: str | None = None
        self.last_event_seq = 0
        self.apply_history: list[tuple[str, str]] = []  # (config path, backup path), newest last
        # Every event seen, in order: the snapshot's ring is short, the board shows more history.
        # The events seen, in the engine's two rings (engine.views.rows.EventRing): per-job events
        # (thousands an hour at speed) cannot push throttles and config lines out of the board's
        # Events pane, as one shared 2,000-entry log did after a virtual hour or two (issue 29).
        self.event_log = EventRing(job_ring=EVENT_LOG, notable_ring=EVENT_LOG)
        self._history_upto = 0  # Snapshot.history_upto last seen: it grows at each replay jump
        self.missed_events = 0
        self._gap_toasted = -GAP_TOAST_EVERY
        self.own_writes: dict[str, str] = {}  # path -> digest of what RouteDeck's editor wrote
        self._watching: tuple[str, ...] = ()
        self.bookmarks: list[tuple[str, int, float]] = []  # replay: (name, transaction, time)
        self.command_history: list[str] = []  # the ``:`` line's Up/Down
        self._job_ids: tuple[int, list[str], list[str]] = (-1, [], [])  # (jobs_version, ids, why's order)
        self.last_hook_seq = 0  # the newest hook invocation seen (failure toasts: tui.screens.hooks)
        if mode == "watch":
            self._modes["routes"] = _watch_board

    def get_driver_class(self):
        """Textual's driver, but on a Linux terminal the one that hands a lone Escape over when its
        wait ends, not up to 100 ms later (tui.shell.driver; issue 30)."""
        import textual  # noqa: PLC0415

        from tui.shell.driver import driver_for  # noqa: PLC0415

        return driver_for(super().get_driver_class(), textual.__version__)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "command_line" and isinstance(self.focused, (Input, TextArea)):
            return False  # ":" typed into a text box (filter, editor) is text: the key goes to it
        replay = self.replay_check_action(action)
        if replay is not None:
            return replay
        if not self.offers_action(action):
            return False
        return super().check_action(action, parameters)

    # -- what the feed offers (Snapshot.controls) ---------------------------------------------
    @property
    def controls(self) -> frozenset[str]:
        """The controls the feed offers: the latest snapshot's, else the runtime's
        (``engine.runtime.Runtime.controls``)."""
        if self.snapshot is not None:
            return self.snapshot.controls
        return self.runtime.controls

    def offers(self, control: str) -> bool:
        return not control or control in self.controls

    def offers_action(self, action: str) -> bool:
        return self.offers(CONTROL_OF_ACTION.get(action, ""))

    @property
    def can_apply_routes(self) -> bool:
        """The editor may write and apply: not --readonly and the feed takes ``ApplyRoutes``."""
        return not self.readonly and self.offers("routes")

    def refuse_control(self, control: str) -> None:
        self.notify(f"{CONTROL_NAMES.get(control, control)} is not available in {self.mode} mode",
                    severity="warning")

    def on_key(self, event) -> None:
        """A key whose action the feed does not offer was hidden by check_action and so reached
        here unhandled: say why nothing happens instead of ignoring it."""
        for namespace, bindings in self.screen._modal_binding_chain:
            for binding in bindings.key_to_bindings.get(event.key, ()):
                action = binding.action.split("(")[0].removeprefix("app.").removeprefix("screen.")
                control = CONTROL_OF_ACTION.get(action)
                if control and not self.offers(control):
                    event.stop()
                    self.refuse_control(control)
                    return

    def run_command_line(self, text: str | None) -> None:
        from tui.commands.palette import lookup  # noqa: PLC0415

        word, _, arg = (text or "").strip().lstrip(":").partition(" ")
        command = lookup(word) if word else None
        if command is not None and not self.offers(command.control):
            self.refuse_control(command.control)
            return
        if not self.replay_command(word, arg.strip()):
            super().run_command_line(text)

    def on_mount(self) -> None:
        self.switch_mode("routes")
        self.run_worker(self._bridge, thread=True, name="engine", exclusive=True, exit_on_error=False)

    # -- engine bridge (runs in a thread) -------------------------------------------------------
    def publish(self, snap: S.Snapshot) -> None:
        """Callback for the runtime: safe from any thread."""
        self.post_message(SnapshotArrived(snap))

    def _bridge(self) -> None:
        """Start the runtime with :meth:`publish` as its callback, then wait until cancelled.

        No polling: every snapshot (a crash included: the runtime publishes a ``crashed`` one)
        arrives through ``publish`` → ``post_message``. A runtime that fails to start raises
        here, which ends the worker in ERROR (:meth:`engine_failed`)."""
        from textual.worker import get_current_worker  # noqa: PLC0415

        worker = get_current_worker()
        self.runtime.publish = self.publish
        try:
            self.runtime.start()
            worker.cancelled_event.wait()
        finally:
            if worker.is_cancelled:
                self.runtime.stop()

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name == "engine" and event.state == WorkerState.ERROR:
            err = event.worker.error
            self.engine_failed(f"{type(err).__name__}: {err}" if err else "unknown error")

    def engine_failed(self, error: str) -> None:
        """The one place an engine failure is handled: banner, toast, last snapshot kept."""
        if self.engine_error == error:
            return
        from tui.widgets.chrome import error_summary  # noqa: PLC0415

        self.engine_error = error
        self.post_message(EngineCrashed(error))
        self.notify(error_summary(error), title="engine stopped", severity="error", timeout=10)
        self._show(self.snapshot)

    # -- snapshots ------------------------------------------------------------------------------
    def on_snapshot_arrived(self, message: SnapshotArrived) -> None:
        snap = message.snapshot
        if self.snapshot is not None and snap.seq <= self.snapshot.seq and snap.engine_state != "crashed":
            return
        first = self.snapshot is None
        if snap.engine_state == "crashed":
            # keep the last good figures; the crash snapshot only carries the error
            if self.snapshot is None:
                self.snapshot = snap
            self.engine_failed(snap.error or "the engine crashed")
            return
        controls_changed = self.snapshot is None or self.snapshot.controls != snap.controls
        self.snapshot = snap
        if controls_changed:
            self.refresh_bindings()  # the footer shows only what the feed offers
        self._toast_events(snap, quiet=first)
        self._toast_hook_failures(snap, quiet=first)
        self._show(snap)
        if first and self.prewarm_at_start:
            self.call_after_refresh(self._prewarm_start)
        if self.watch_files and snap.config_files and snap.config_files != self._watching:
            self._watching = snap.config_files
            self.run_worker(lambda: self._watch(snap.config_files), thread=True, name="config-watch",
                            group="config-watch", exclusive=True, exit_on_error=False)

    def _watch(self, files: tuple[str, ...]) -> None:
        from textual.worker import get_current_worker  # noqa: PLC0415

        from tui.files.config_watch import watch_config  # noqa: PLC0415

        watch_config(self, files, get_current_worker())

    def on_config_files_changed(self, message) -> None:
        """A config file changed on disk: have the engine load it (it keeps the last good table).
        The files' digests were taken in the watcher's thread (``tui.files.config_watch``)."""
        digests = dict(zip(message.files, message.digests))
        changed = [f for f in message.files if f not in digests or self.own_writes.get(f) != digests[f]]
        if self.mode == "replay":
            return  # replay's --config is only shown; the recorded router's table does not change
        if not changed or self.engine_error or self.snapshot is None:
            return
        names = ", ".join(os.path.basename(f) for f in changed)
        # Not subject to --readonly: following the file is watching, not changing anything.
        self.runtime.send(C.ApplyRoutes(self.snapshot.config_files, reason=f"changed on disk ({names})"))
        self.post_message(CommandSent(C.ApplyRoutes(self.snapshot.config_files, reason=f"changed on disk ({names})")))

    def _show(self, snap: S.Snapshot | None) -> None:
        """Hand ``snap`` to the top main screen, also under a dialog or the ``:`` line, so what
        shows behind them stays live; a screen with only a header (why-not) gets its header."""
        from textual.screen import ModalScreen  # noqa: PLC0415

        from tui.widgets.chrome import StatusHeader  # noqa: PLC0415

        if snap is not None and self.mode == "replay":
            self.replay_snapshot_seen(snap)
        for screen in reversed(self.screen_stack):
            show = getattr(screen, "show_snapshot", None)
            if show is not None:
                show(snap)
                if self.mode == "replay":
                    self.show_replay_bar(screen)
                return
            for header in screen.query(StatusHeader):
                header.show(snap, self.readonly)
            if not isinstance(screen, ModalScreen):
                return

    def _toast_events(self, snap: S.Snapshot, quiet: bool) -> None:
        if snap.history_upto > self._history_upto:
            # A replay jump: the feed re-tells what the recording's router said up to the new
            # moment and its own notes (bookmarks), newly numbered. The log starts again from
            # them, or every seek added the bookmark line and the history once more (issue 29).
            self._history_upto = snap.history_upto
            self.event_log = EventRing(job_ring=EVENT_LOG, notable_ring=EVENT_LOG)
        new = [e for e in snap.events if e.seq > self.last_event_seq]
        if not new:
            return
        missed = 0
        history = snap.history_upto  # re-told after a replay jump: logged, never toasted nor "missed"
        if not quiet and self.last_event_seq and new[0].seq > self.last_event_seq + 1 and new[0].seq > history:
            missed = new[0].seq - self.last_event_seq - 1
            self.missed_events += missed
            now = time.monotonic()
            # At high speed the engine can outrun its event ring between two snapshots; say so,
            # but at most every GAP_TOAST_EVERY seconds (the count keeps adding up meanwhile).
            if now - self._gap_toasted >= GAP_TOAST_EVERY:
                self._gap_toasted = now
                self.notify(f"{self.missed_events} engine events were not shown (more than the snapshot's "
                            "event ring holds between two snapshots)", severity="warning")
                self.missed_events = 0
        self.last_event_seq = new[-1].seq
        for e in new:
            self.event_log.record(e)
        self.post_message(EventsSeen(tuple(e.kind for e in new), missed))
        if quiet:
            return
        for e in new:
            if e.seq <= history:
                continue
            severity = TOAST_KINDS.get(e.kind)
            if severity is None and e.level == "error":
                severity = "error"
            if severity:
                self.notify(e.message, title=e.kind.replace("-", " "), severity=severity)

    def _toast_hook_failures(self, snap: S.Snapshot, quiet: bool) -> None:
        """A toast per hook invocation that failed since the last snapshot (a few, then a count);
        none for those already there when the dashboard opened."""
        from tui.screens.hooks import MAX_TOASTS, failure_toast, new_failures  # noqa: PLC0415

        self.last_hook_seq, failed = new_failures(snap, self.last_hook_seq)
        if quiet or not failed:
            return
        for h in failed[:MAX_TOASTS]:
            self.notify(failure_toast(h), title="hook failed", severity="error")
        if len(failed) > MAX_TOASTS:
            self.notify(f"{len(failed) - MAX_TOASTS} more hook failures (h: Hooks, filter 'failed')",
                        title="hook failed", severity="error")

    # -- commands to the engine -----------------------------------------------------------------
    def send(self, command: object) -> bool:
        if self.readonly and isinstance(command, MUTATING):
            self.notify("read-only: RouteDeck was started with --readonly", severity="warning")
            return False
        if self.engine_error:
            self.notify("the engine has stopped; command not sent", severity="warning")
            return False
        self.runtime.send(command)
        self.post_message(CommandSent(command))
        return True

    def confirm_job_command(self, command: C.HoldJob | C.ReleaseJob | C.RemoveJob) -> None:
        """Ask (naming the job and what will happen), then send and say so (issue 11 item 6)."""
        from tui.screens.confirm import Confirm, job_question  # noqa: PLC0415

        if self.readonly:
            self.notify("read-only: RouteDeck was started with --readonly", severity="warning")
            return
        title, body = job_question(command)
        verb = title.split()[0].lower()

        def answered(yes: bool | None) -> None:
            if not yes:
                self.notify(f"job {command.job} not {verb}ed" if verb != "remove" else
                            f"job {command.job} not removed", severity="information")
            elif self.send(command):
                self.notify(f"{verb} sent for job {command.job}", title=f"{verb} job")

        self.push_screen(Confirm(title, body), answered)

    def completion_words(self) -> dict[str, list[str]]:
        """What the ``:`` line completes arguments from (tui.widgets.command_line.candidates)."""
        from tui.widgets.job_model import COLUMN_KEYS  # noqa: PLC0415

        snap = self.snapshot
        words: dict[str, list[str]] = {
            "column": list(COLUMN_KEYS), "order": ["desc", "asc"], "seek": ["start", "end"],
            "bookmark": [b[0] for b in self.bookmarks],
            "command": [c.name for c in COMMANDS if self.offers(c.control)]}
        if snap is not None:
            words["route"] = list(dict.fromkeys(r.name for r in snap.routes + snap.inactive_routes))
            if self._job_ids[0] != snap.jobs_version or not self._job_ids[1]:
                self._job_ids = (snap.jobs_version, [j.job for j in snap.jobs], waiting_first(
                    snap.jobs, frozenset(c.job for c in snap.cron_jobs)))
            words["job"] = self._job_ids[1]
            words["waiting"] = self._job_ids[2]
        return words

    def action_toggle_pause(self) -> None:
        paused = self.snapshot.paused if self.snapshot else False
        self.send(C.Resume() if paused else C.Pause())

    def action_speed(self, factor: float) -> None:
        current = self.snapshot.speed if self.snapshot else 1.0
        self.send(C.SetSpeed(max(0.125, min(10_000.0, current * factor))))

    # -- navigation -----------------------------------------------------------------------------
    def _go(self, name: str) -> Screen:
        """Switch to a main view's top screen (one Textual mode each, so each keeps its state):
        whatever was opened on top of it (a route, a why-not, a dialog) is closed, so ``b``
        ``j`` ``c`` always land on the live view (issue 11 item 3)."""
        if self.current_mode != name:
            self.switch_mode(name)
        while len(self.screen_stack) > 1:
            self.pop_screen()
        return self.screen_stack[0]

    def action_show_routes(self) -> None:
        self._go("routes")

    def action_show_jobs(self) -> None:
        self.show_jobs()

    def show_jobs(self, filter_text: str | None = None, where: str | None = None):
        screen = self._go("jobs")
        if filter_text is not None:
            screen.set_filter(filter_text)
        if where is not None:
            screen.set_constraint(where)
        return screen

    def action_show_cron(self) -> None:
        self._go("cron")

    def action_show_hooks(self) -> None:
        self.show_hooks()

    def show_hooks(self, filter_text: str | None = None):
        screen = self._go("hooks")
        if filter_text is not None:
            screen.set_filter(filter_text)
        return screen

    def action_show_slots(self) -> None:
        self._go("slots")

    def open_route(self, name: str) -> None:
        from tui.screens.route_detail import route_detail_screen  # noqa: PLC0415

        self.push_screen(route_detail_screen(self, name))

    def open_editor(self, route: str | None = None) -> None:
        from tui.screens.editor import editor_screen  # noqa: PLC0415

        self.push_screen(editor_screen(self, route))

    def open_why_not(self, job: str) -> None:
        from tui.screens.whynot import WhyNotScreen  # noqa: PLC0415

        self.push_screen(WhyNotScreen(job))

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen, help_screen  # noqa: PLC0415

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(help_screen(self))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for c in COMMANDS:
            if not self.offers(c.control):
                continue  # the feed does not offer it (Snapshot.controls)
            if c.arg and not c.arg.startswith("["):
                # needs an argument: open the command line pre-filled
                yield SystemCommand(f":{c.name} {c.arg}", c.help,
                                    lambda c=c: self.action_command_line(f"{c.name} "))
            else:
                yield SystemCommand(f":{c.name}", c.help, lambda c=c: self.run_command_line(c.name))

    def on_unmount(self) -> None:
        self.idle_gc_stop()  # the GC thresholds are process-wide
        try:
            self.runtime.stop()
        except Exception:  # noqa: BLE001 - shutting down; nothing left to tell
            pass


def _watch_board() -> Screen:
    from tui.screens.watch_board import WatchRoutesScreen  # noqa: PLC0415

    return WatchRoutesScreen()


def make_app(runtime, *, mode: str = "demo", readonly: bool = False, blink: bool = True,
             watch_files: bool = True) -> RouteDeckApp:
    return RouteDeckApp(runtime, mode=mode, readonly=readonly, blink=blink, watch_files=watch_files)
