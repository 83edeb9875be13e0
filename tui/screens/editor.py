"""The route editor: edit the config file a route came from, with live lint and a what-if.

Design decisions:

- The unit of editing is the *file* the routing table came from (``RouteView.location``), with
  the cursor on the route's definition: a route's text is only meaningful with the file's macros
  and ``JOB_ROUTER_ROUTE_NAMES`` around it, and writing the whole file back avoids re-assembling
  config syntax (either route syntax works, because the file is never re-serialised).
- While typing (debounced 0.3 s) a thread worker parses the text with the engine's config reader
  and router (``tui.engine_api.lint_config``): parse errors with ``file:line``, the router's lints,
  and the removal of a route that still has jobs. The what-if lists per-route changes of the
  route set against the live board.
- Apply = lint (in a thread worker; the lint pane says "checking…" meanwhile) must show no
  error → the diff is shown for confirmation → the file is written
  atomically with a versioned backup (``tui.files.config_files``) → ``ApplyRoutes`` asks the engine to
  switch tables live (the engine keeps counts; a table it rejects stays out of force and is
  reported by a ``config-rejected`` event). Undo (``ctrl+r`` or ``:undo``) writes the previous
  version back the same way.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult, SuspendNotSupported
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from engine.contract.snapshot import Snapshot
from engine.contract.commands import ApplyRoutes
from tui.commands import keymap
from tui.files.config_files import unified_diff, write_with_backup
from tui.engine_api import LintResult, lint_config
from tui.shell.messages import RoutesApplied, RoutesUndone
from tui.text.route_text import split_location
from tui.screens.base import DeckScreen
from tui.widgets.chrome import titled


class ConfirmApply(ModalScreen[bool]):
    BINDINGS = keymap.CONFIRM

    def __init__(self, path: str, diff: str) -> None:
        super().__init__()
        self.path, self.diff = path, diff

    def compose(self) -> ComposeResult:
        yield titled(VerticalScroll(Static(Syntax(self.diff, "diff", theme="ansi_dark"), id="diff"),
                                    id="diff-box", classes="dialog"), f"Apply to {self.path}?", "y apply · n cancel")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def lint_text(result: LintResult | None) -> Text:
    if result is None:
        return Text("checking…", style="dim")
    t = Text()
    errors = [d for d in result.diagnostics if d.level == "error"]
    if not result.diagnostics:
        t.append("no problems found\n", style="green")
    for d in result.diagnostics:
        style = {"error": "bold red", "warning": "yellow"}.get(d.level, "dim")
        where = f"line {d.line}: " if d.line else ""
        t.append(f"{d.level}: ", style=style)
        t.append(f"{where}{d.message}\n")
    if errors:
        t.append(f"\n{len(errors)} error(s): apply is refused until fixed", style="bold red")
    return t


MOVES_SHOWN = 5  # route moves listed in the what-if pane
ATTRS_SHOWN = 6  # attributes listed


def what_if_text(result: LintResult | None, snap: Snapshot | None) -> Text:
    """Route set and order changes, then the what-if (``engine.views.queries.lint.what_if``: the
    migration check's ``compare_tables`` over the idle, not yet routed jobs): jobs per route under
    each table, the jobs that change route (old → new, a few ids), the jobs that keep their route
    with a different routed ad and the attributes that change value."""
    t = Text()
    if result is None or snap is None:
        return Text("…", style="dim")
    if result.route_names is None:
        return Text("what-if needs the router to load the table", style="dim")
    before = [r.name for r in snap.routes]
    after = result.route_names
    counts = {r.name: r for r in snap.routes}
    for name in after:
        if name not in before:
            t.append(f"+ {name}: new route (position {after.index(name) + 1})\n", style="green")
        elif before.index(name) != after.index(name):
            t.append(f"~ {name}: match position {before.index(name) + 1} → {after.index(name) + 1}\n", style="yellow")
    for name in before:
        if name not in after:
            r = counts[name]
            t.append(f"- {name}: removed ({r.routed} routed, {r.idle} idle stay tracked)\n", style="red")
    if not t:
        t.append("route set and match order unchanged\n", style="dim")
    w = result.what_if
    if w is not None:
        t.append(f"\nidle jobs not yet routed: {w.candidates:,}"
                 + (f" (first {w.considered:,} checked)" if w.considered < w.candidates else "") + "\n")
        for name in dict.fromkeys(list(w.before) + list(w.after)):
            a, b = w.before.get(name, 0), w.after.get(name, 0)
            style = "green" if b > a else "red" if b < a else ""
            t.append(f"  {name}: {a} → {b}" + (f" ({b - a:+d})" if a != b else "") + "\n", style=style)
        t.append(f"{w.moved:,} job(s) would change route\n", style="bold" if w.moved else "dim")
        for (a, b), jobs in list(w.moves.items())[:MOVES_SHOWN]:
            t.append(f"  {a or '(not routed)'} → {b or '(not routed)'}: {len(jobs):,}"
                     f" (e.g. {jobs[0]})\n", style="yellow")
        if w.ad_changed:
            t.append(f"{w.ad_changed:,} job(s) keep their route with a different routed ad\n", style="bold")
        if w.attributes:
            t.append("attributes that change value: " + ", ".join(
                f"{a} ({n:,})" for a, n in sorted(w.attributes.items(), key=lambda kv: -kv[1])[:ATTRS_SHOWN])
                + (", …" if len(w.attributes) > ATTRS_SHOWN else "") + "\n", style="yellow")
        if w.approximate:
            t.append("(matched on the job rows' attributes only)\n", style="dim")
    return t


NARROW = 110  # columns: below this the side panes go under the text (app.tcss #editor-main.-narrow)


class EditorScreen(DeckScreen):
    AUTO_FOCUS = "#editor"
    BINDINGS = keymap.EDITOR

    class Linted(Message):
        def __init__(self, generation: int, result: LintResult) -> None:
            super().__init__()
            self.generation, self.result = generation, result

    def __init__(self, route: str | None = None) -> None:
        super().__init__()
        self.route = route
        self.path: str | None = None
        self.line = 1
        self.disk_text = ""
        self.lint: LintResult | None = None
        self._generation = 0
        self._apply_generation = 0
        self._timer = None

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="editor-main"):
            area = TextArea("", id="editor", show_line_numbers=True, soft_wrap=False)
            area.cursor_blink = self.app.blink
            area.read_only = not self.app.can_apply_routes
            yield area
            with Vertical(id="editor-side"):
                yield titled(Static(id="lint"), "Lint")
                yield titled(Static(id="whatif"), "What-if")

    _needs_open = False  # built off screen (RouteDeckApp._prewarm): opened when first shown

    def on_mount(self) -> None:
        if any(self in stack for stack in self.app._screen_stacks.values()):
            self._open()
        else:
            self._needs_open = True
        self._fit(self.app.size.width)
        super().on_mount()

    def on_screen_resume(self) -> None:
        # DeckScreen._on_screen_resume runs too (Textual calls each class's handler in the MRO)
        if self._needs_open:
            self._needs_open = False
            self._open()

    def reopen(self, route: str | None) -> None:
        """Make the kept screen (:func:`editor_screen`) what a new one would be, before it is
        pushed again: the route's file reloaded from disk (edits left unapplied were discarded
        when it was closed), lint and what-if cleared, read-only re-checked (``_open``). The
        generation counters move on rather than back to 0, so a lint or apply check still
        running from the last visit is dropped when it reports, never taken for a new one."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.route = route
        self.lint = None
        self._generation += 1
        self._apply_generation += 1
        self._draw_error = None
        self.query_one("#lint", Static).update(lint_text(None))
        self.query_one("#whatif", Static).update(what_if_text(None, None))
        area = self.query_one(TextArea)
        area.read_only = not self.app.can_apply_routes
        area.cursor_blink = self.app.blink
        self._needs_open = False
        self._open()
        self._fit(self.app.size.width)

    def on_resize(self, event) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        """Below NARROW columns the lint and what-if panes go under the text, side by side, so
        the text gets the whole width (at 80×24 it had ~40 columns beside them)."""
        self.query_one("#editor-main").set_class(width < NARROW, "-narrow")

    def _target(self) -> tuple[str | None, int]:
        snap = self.app.snapshot
        if snap is None:
            return None, 1
        if self.route:
            for r in list(snap.routes) + list(snap.inactive_routes):
                if r.name.lower() == self.route.lower():
                    where = split_location(r.location)
                    if where:
                        return where
        return (snap.config_files[0] if snap.config_files else None), 1

    def _open(self) -> None:
        self.path, self.line = self._target()
        area = self.query_one(TextArea)
        area.border_title = (self.path or "no config file") + (" (read-only)" if not self.app.can_apply_routes else "")
        if self.path is None:
            self._unreadable(area, Text("this engine has no routing-table file to edit", style="red"))
            return
        try:
            self.disk_text = Path(self.path).read_text(encoding="utf-8")
        except OSError as exc:
            self._unreadable(area, Text(f"cannot read {self.path}: {exc.strerror}", style="red"))
            return
        area.load_text(self.disk_text)
        area.cursor_location = (max(0, self.line - 1), 0)
        area.scroll_cursor_visible(center=True, animate=False)
        area.focus()
        self.schedule_lint(0)

    def _unreadable(self, area: TextArea, why: Text) -> None:
        """No file to show: an empty text (a reopened editor must not keep the last file's)."""
        self.disk_text = ""
        if area.text:
            area.load_text("")
        self.query_one("#lint", Static).update(why)

    @property
    def text(self) -> str:
        return self.query_one(TextArea).text

    # -- lint ----------------------------------------------------------------------------------
    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.schedule_lint(0.3)

    def schedule_lint(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._generation += 1
        gen = self._generation
        if delay:
            self._timer = self.set_timer(delay, lambda: self._lint(gen, self.text))
        else:
            self._lint(gen, self.text)

    @work(thread=True, exclusive=True, group="lint")
    def _lint(self, generation: int, text: str) -> None:
        try:
            result = lint_config(text, self.path or "<text>", self.app.snapshot, runtime=self.app.runtime,
                                 base_text=self.disk_text)
        except Exception as exc:  # noqa: BLE001 - a lint crash is shown, never fatal
            from engine.contract.snapshot import Diagnostic  # noqa: PLC0415

            result = LintResult([Diagnostic("error", f"lint failed: {type(exc).__name__}: {exc}")], None)
        self.post_message(self.Linted(generation, result))

    def on_editor_screen_linted(self, event: Linted) -> None:
        if event.generation != self._generation or not self.query("#lint"):
            return  # superseded, or the editor was closed while the lint ran
        self.lint = event.result
        self.query_one("#lint", Static).update(lint_text(self.lint))
        self.query_one("#whatif", Static).update(what_if_text(self.lint, self.app.snapshot))

    def update_body(self, snap: Snapshot) -> None:
        if self.lint is not None:
            self.query_one("#whatif", Static).update(what_if_text(self.lint, snap))

    # -- apply and undo ------------------------------------------------------------------------
    def action_apply(self) -> None:
        if self.app.readonly:
            self.notify("read-only: RouteDeck was started with --readonly", severity="warning")
            return
        if not self.app.offers("routes"):
            self.app.refuse_control("routes")
            return
        if self.path is None:
            return
        # The lint (load every file, build the table, lint) and the read of the file on disk run
        # in a thread worker: the UI says "checking…" and stays live (issue 14 item 3).
        self._apply_generation += 1
        self.query_one("#lint", Static).update(lint_text(None))
        self._check_apply(self._apply_generation, self.text, self.path, self.app.snapshot)

    class ApplyChecked(Message):
        def __init__(self, generation: int, path: str, text: str, result: LintResult, diff: str) -> None:
            super().__init__()
            self.generation, self.path, self.text, self.result, self.diff = generation, path, text, result, diff

    @work(thread=True, exclusive=True, group="apply-lint")
    def _check_apply(self, generation: int, text: str, path: str, snap: Snapshot | None) -> None:
        try:
            result = lint_config(text, path, snap)
        except Exception as exc:  # noqa: BLE001 - a lint crash refuses the apply, never fatal
            from engine.contract.snapshot import Diagnostic  # noqa: PLC0415

            result = LintResult([Diagnostic("error", f"lint failed: {type(exc).__name__}: {exc}")], None)
        diff = ""
        if not any(d.level == "error" for d in result.diagnostics):
            try:
                on_disk = Path(path).read_text(encoding="utf-8")
            except OSError:
                on_disk = ""
            diff = unified_diff(on_disk, text, path)
        self.post_message(self.ApplyChecked(generation, path, text, result, diff))

    def on_editor_screen_apply_checked(self, event: "EditorScreen.ApplyChecked") -> None:
        if event.generation != self._apply_generation or event.path != self.path or not self.query("#lint"):
            return  # superseded by a newer apply, or the editor was closed meanwhile
        result = event.result
        self.lint = result
        self.query_one("#lint", Static).update(lint_text(result))
        errors = [d for d in result.diagnostics if d.level == "error"]
        if errors:
            self.notify(f"not applied: {errors[0]}", severity="error")
            return
        if event.text != self.text:
            self.notify("the text changed while it was being checked; apply again", severity="warning")
            return
        if not event.diff:
            self.notify("no changes to apply")
            return
        text = event.text
        self.app.push_screen(ConfirmApply(self.path, event.diff), lambda yes: yes and self.write(text))

    def write(self, text: str) -> None:
        path = self.path
        self.app.own_writes[path] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        try:
            backup = write_with_backup(path, text)
        except OSError as exc:
            self.notify(f"could not write {path}: {exc}", severity="error")
            return
        self.disk_text = text
        if backup is not None:
            self.app.apply_history.append((path, str(backup)))
        self.app.send(ApplyRoutes(_files_for(self.app.snapshot, path), reason=f"edited in RouteDeck ({Path(path).name})"))
        self.app.post_message(RoutesApplied(path, str(backup) if backup else None))
        self.notify(f"applied: {path}" + (f" (previous version kept as {backup.name})" if backup else ""))

    def action_undo_apply(self) -> None:
        if undo_last_apply(self.app):
            self._open()

    def action_external(self) -> None:
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        suffix = Path(self.path).suffix if self.path else ".conf"
        fd, tmp = tempfile.mkstemp(prefix="routedeck-", suffix=suffix or ".conf")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(self.text)
        try:
            with self.app.suspend():
                status = subprocess.call([*shlex.split(editor), tmp])
            new = Path(tmp).read_text(encoding="utf-8")
        except SuspendNotSupported:
            self.notify("this terminal cannot hand over to $EDITOR; edit here instead", severity="warning")
            return
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            self.notify(f"$EDITOR ({editor}) failed: {exc}", severity="error")
            return
        finally:
            os.unlink(tmp)
        if status != 0:
            self.notify(f"$EDITOR ({editor}) exited with status {status}; edits not taken", severity="warning")
            return
        area = self.query_one(TextArea)
        if new != area.text:
            area.load_text(new)
            self.schedule_lint(0)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("apply", "undo_apply", "external"):
            return self.app.can_apply_routes  # read-only: not advertised (apply would refuse anyway)
        return super().check_action(action, parameters)

    def action_close(self) -> None:
        """Esc: leave; with unapplied edits, ask first (they are lost otherwise)."""
        if self.path and self.app.can_apply_routes and self.text != self.disk_text:
            from tui.screens.confirm import Confirm  # noqa: PLC0415

            self.app.push_screen(
                Confirm("Discard unapplied edits?",
                        f"{self.path} has edits that were not applied (ctrl+s applies them). "
                        "Leave the editor and discard them?"),
                lambda yes: yes and self._leave())
            return
        self._leave()

    def _leave(self) -> None:
        if self.app.screen is self:
            self.app.pop_screen()


def editor_screen(app, route: str | None) -> EditorScreen:
    """The editor to push: the one kept since its first open, reset (:meth:`EditorScreen.reopen`),
    else a new one, kept. Building it (compose, the TextArea, style, the footer's keys) was most of
    board → editor (issue 14 item 3: 45-79 ms on every open). It is installed on the app so that
    Textual keeps it when popped (the route screens' way: ``route_detail_screen``). If the kept
    one is already on a stack (``:edit`` typed in the editor), a fresh, unkept one is returned."""
    kept: EditorScreen | None = getattr(app, "_editor_screen", None)
    if kept is not None and any(kept in stack for stack in app._screen_stacks.values()):
        return EditorScreen(route)
    if kept is None:
        kept = app._editor_screen = EditorScreen(route)
        app.install_screen(kept, f"editor:{id(kept)}")
        return kept  # mounted when pushed (or built off screen first): opened when shown
    if not kept.is_mounted:
        kept.route = route  # still being built off screen: opened when shown
        return kept
    kept.reopen(route)
    return kept


def _files_for(snap: Snapshot | None, path: str) -> tuple[str, ...]:
    files = tuple(snap.config_files) if snap is not None and snap.config_files else ()
    return files if path in files else files + (path,) if files else (path,)


def undo_last_apply(app) -> bool:
    """Write back the version saved before the last apply and switch the engine to it."""
    if app.readonly:
        app.notify("read-only: RouteDeck was started with --readonly", severity="warning")
        return False
    if not app.apply_history:
        app.notify("nothing to undo: no routing-table change was applied in this session", severity="warning")
        return False
    path, backup = app.apply_history.pop()
    try:
        previous = Path(backup).read_text(encoding="utf-8")
        app.own_writes[path] = hashlib.sha256(previous.encode("utf-8")).hexdigest()
        write_with_backup(path, previous)
    except OSError as exc:
        app.notify(f"undo failed: {exc}", severity="error")
        return False
    app.send(ApplyRoutes(_files_for(app.snapshot, path), reason="undo in RouteDeck"))
    app.post_message(RoutesUndone(path, backup))
    app.notify(f"restored {path} from {Path(backup).name}")
    return True
