"""The ``:`` command line (k9s style): a prompt docked at the bottom that returns its text.

Design decisions (issue 11 item 1):

- A ``ModalScreen`` so keys typed into it never reach the screen's bindings, but transparent
  and docked at the bottom: the screen behind stays visible and live (the app hands snapshots
  to the top *main* screen under any dialog, ``RouteDeckApp._show``).
- Two rows: the prompt (``:`` and the typed text or a placeholder) and, above it, a hint: the
  help of the command being typed and the completions of the word under the cursor.
- Completion (Tab, or → at the end of the line, accepts the grey inline suggestion) of command
  names and of their arguments: routes, job ids, columns, bookmarks — from the command table
  (``tui.commands.palette.Command.complete``) and the app's latest snapshot (:func:`candidates`).
- History: Up/Down walk the commands run before in this session (``app.command_history``).
- The pre-filled text (the palette's "sort " etc.) is never selected: the first key typed adds
  to it (issue 11 item 2).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import Suggester
from textual.widgets import Input, Label, Static

from engine.contract.codes import JobStatus
from tui.commands import keymap
from tui.commands.palette import COMMANDS, lookup

PLACEHOLDER = "command: board | jobs TEXT | why JOB | sort COLUMN | speed 60 | help   (Tab completes)"
HINTS_SHOWN = 8


def candidates(text: str, words: dict[str, list[str]]) -> tuple[str, list[str]]:
    """(prefix kept, completions of the last word) for ``text`` as typed after ``:``.

    ``words`` maps an argument kind (``tui.commands.palette.Command.complete``) to its values: "route",
    "job", "column", "bookmark". The first word completes to command names and aliases, of the
    commands named in ``words["command"]`` when it is given (those the mode offers).
    """
    head, sep, last = text.rpartition(" ")
    prefix = head + sep
    if not sep:
        offered = words.get("command")  # the commands this mode offers (all when not given)
        shown = [c for c in COMMANDS if offered is None or c.name in offered]
        names = [c.name for c in shown] + [a for c in shown for a in c.aliases if len(a) > 1]
        return "", [n for n in dict.fromkeys(names) if n.startswith(text.lower())]
    command = lookup(text.split(" ", 1)[0])
    if command is None or not command.complete:
        return prefix, []
    nargs = len(head.split()) - 1  # arguments already typed before the last word
    kinds = command.complete.split()
    if nargs >= len(kinds):
        return prefix, []
    pool = words.get(kinds[nargs], [])
    low = last.lower()
    return prefix, [w for w in pool if w.lower().startswith(low)]


def waiting_first(jobs, cron: frozenset[str] = frozenset()) -> list[str]:
    """The job ids ``:why`` completes to, the jobs the question is about first: idle jobs the
    router may still take (not a routed copy, not routed yet, not a crondor job: ``cron`` holds
    their ids, and a job with a DeferralTime waits for its time, not for a route), then every
    other job in the table's order."""
    def waits(j) -> bool:
        return (j.status == JobStatus.IDLE and j.kind != "routed" and j.routed_to is None
                and j.deferral_time is None and j.job not in cron)
    return [j.job for j in jobs if waits(j)] + [j.job for j in jobs if not waits(j)]


class CommandSuggester(Suggester):
    """Grey inline completion: the first candidate of :func:`candidates`."""

    def __init__(self, words) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self.words = words  # a callable: () -> {kind: values}

    async def get_suggestion(self, value: str) -> str | None:
        prefix, found = candidates(value, self.words())
        if not found or not value or value.endswith(" "):
            return None
        return prefix + found[0]


class CommandLine(ModalScreen[str | None]):
    BINDINGS = keymap.COMMAND_LINE
    AUTO_FOCUS = "#command-input"
    DEFAULT_CSS = """
    CommandLine { align: left bottom; background: transparent; }
    CommandLine #command-bar { dock: bottom; height: 2; width: 100%; }
    CommandLine #command-hint { height: 1; width: 100%; background: $panel-darken-1; color: $text-muted;
        padding: 0 1; }
    CommandLine #command-row { height: 1; width: 100%; background: $panel; }
    CommandLine #command-prompt { width: 2; padding: 0 0 0 1; color: $accent; text-style: bold; }
    """

    def __init__(self, value: str = "", blink: bool = True, history: list[str] | None = None,
                 words=None) -> None:
        super().__init__()
        self._value = value
        self._blink = blink
        self.history = history if history is not None else []
        self._at = len(self.history)  # history position; len = the line being typed
        self._typed = value
        self._words = words or (lambda: {})

    def compose(self) -> ComposeResult:
        with Vertical(id="command-bar"):
            yield Static(id="command-hint")
            with Horizontal(id="command-row"):
                yield Label(":", id="command-prompt")
                yield Input(value=self._value, placeholder=PLACEHOLDER, id="command-input",
                            select_on_focus=False, suggester=CommandSuggester(self._words))

    @property
    def input(self) -> Input:
        return self.query_one("#command-input", Input)

    def on_mount(self) -> None:
        box = self.input
        box.cursor_blink = self._blink
        box.focus()
        box.cursor_position = len(box.value)
        self._hint(box.value)

    def on_input_changed(self, event: Input.Changed) -> None:
        self._hint(event.value)

    def _hint(self, value: str) -> None:
        t = Text()
        word = value.strip().split(" ", 1)[0] if value.strip() else ""
        command = lookup(word) if word else None
        if command is not None:
            t.append(f":{command.name} {command.arg}".rstrip(), style="bold")
            t.append(f"  {command.help}")
        prefix, found = candidates(value, self._words()) if value else ("", [])
        if found and (command is None or value.endswith(" ") or " " in value):
            shown = found[:HINTS_SHOWN]
            if command is not None:
                t.append("  · ")
            t.append("  ".join(shown), style="cyan")
            if len(found) > HINTS_SHOWN:
                t.append(f"  … {len(found) - HINTS_SHOWN} more", style="dim")
        elif not value:
            t.append("Tab completes · ↑/↓ history · Enter runs · Esc cancels", style="dim")
        self.query_one("#command-hint", Static).update(t)

    def action_complete(self) -> None:
        """Tab: one candidate completes the word; several complete their longest common prefix,
        as a shell does; Tab again, with nothing typed in between, cycles through the candidates
        (zsh's menu completion), and back to what was typed after the last."""
        box = self.input
        cycle = self._cycle
        if cycle is not None and box.value == cycle[3]:
            prefix, found, at, _shown = cycle
            at = (at + 1) % (len(found) + 1)
            new = prefix + found[at] if at < len(found) else prefix + self._cycle_typed
            self._cycle = (prefix, found, at, new)
            box.value = new
            box.cursor_position = len(new)
            return
        prefix, found = candidates(box.value, self._words())
        if not found:
            return
        if len(found) == 1:
            new = prefix + found[0] + " "
        else:  # the longest common prefix, as a shell does
            common = found[0]
            for f in found[1:]:
                while not f.lower().startswith(common.lower()):
                    common = common[:-1]
            new = prefix + common
        if len(new) >= len(box.value):
            box.value = new
            box.cursor_position = len(new)
        if len(found) > 1:  # the next Tab starts the cycle
            self._cycle_typed = box.value[len(prefix):]
            self._cycle = (prefix, found, -1, box.value)

    _cycle: tuple[str, list[str], int, str] | None = None  # (prefix, candidates, index shown, value shown)
    _cycle_typed = ""

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        if self._at == len(self.history):
            self._typed = self.input.value
        self._at = max(0, min(len(self.history), self._at + step))
        value = self._typed if self._at == len(self.history) else self.history[self._at]
        box = self.input
        box.value = value
        box.cursor_position = len(value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        if value and (not self.history or self.history[-1] != value):
            self.history.append(value)
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
