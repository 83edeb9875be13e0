"""A yes/no question before anything that cannot be taken back (issue 11 item 6).

One dialog for every destructive action: holding, releasing or removing a job (``H``/``L``/``X``
and ``:hold``/``:release``/``:rm``) and discarding unapplied edits in the editor. It names what
it acts on and says what will happen; ``y`` confirms, ``n`` or Esc cancels. Nothing on the
command line skips it (there is no ``--yes``): the question costs one key.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.commands import keymap
from tui.widgets.chrome import titled


class Confirm(ModalScreen[bool]):
    BINDINGS = keymap.CONFIRM
    DEFAULT_CSS = """
    Confirm { align: center middle; }
    Confirm #confirm-box { width: 64; max-width: 100%; height: auto; border: thick $warning;
        background: $surface; padding: 0 1; }
    """

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self.title_text, self.body = title, body

    def compose(self) -> ComposeResult:
        yield titled(Vertical(Static(Text(self.body), id="confirm-text"), id="confirm-box"),
                     self.title_text, "y yes · n / esc no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


JOB_ACTIONS = {
    # command class name → (verb, what happens), wording after condor_hold/release/rm's manual pages
    "HoldJob": ("Hold", "it is put on hold (JobStatus 5) and stays in the queue until released; "
                        "a running job is stopped"),
    "ReleaseJob": ("Release", "it leaves the hold state and becomes idle again (JobStatus 1)"),
    "RemoveJob": ("Remove", "it is removed from the queue (JobStatus 3); this cannot be undone"),
}


def job_question(command) -> tuple[str, str]:
    verb, what = JOB_ACTIONS[type(command).__name__]
    return f"{verb} job {command.job}?", f"{verb} job {command.job}: {what}."
