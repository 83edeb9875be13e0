"""The ``:`` command line's handlers, one ``cmd_<name>`` per command of ``tui.commands.palette``.

A mixin of :class:`tui.app.RouteDeckApp` (kept apart so the app module stays about the shell).
Handlers raise ``ValueError``/``LookupError`` for bad arguments; the dispatcher shows those as
an error toast naming the command.
"""

from __future__ import annotations

import math
import shlex

from engine.contract import commands as C
from tui.commands.palette import lookup


class CommandLineMixin:
    def action_command_line(self, value: str = "") -> None:
        from tui.widgets.command_line import CommandLine  # noqa: PLC0415

        self.push_screen(CommandLine(value, blink=self.blink, history=self.command_history,
                                     words=self.completion_words), self.run_command_line)

    def run_command_line(self, text: str | None) -> None:
        if not text or not text.strip():
            return
        text = text.strip().lstrip(":")
        word, _, arg = text.partition(" ")
        command = lookup(word)
        if command is None:
            self.notify(f"unknown command {word!r}; ? lists them", severity="error")
            return
        try:
            getattr(self, f"cmd_{command.name.replace('-', '_')}")(arg.strip())
        except (ValueError, LookupError) as exc:
            self.notify(f":{command.name}: {exc}", severity="error")

    def cmd_board(self, arg: str) -> None:
        self._go("routes")

    def cmd_jobs(self, arg: str) -> None:
        self.show_jobs(filter_text=arg if arg else None)

    def cmd_cron(self, arg: str) -> None:
        self._go("cron")

    def cmd_hooks(self, arg: str) -> None:
        self.show_hooks(arg if arg else None)

    def cmd_slots(self, arg: str) -> None:
        self._go("slots")

    def cmd_edit(self, arg: str) -> None:
        self.open_editor(arg or None)

    def cmd_why(self, arg: str) -> None:
        if not arg:
            raise ValueError("which job? e.g. :why 123.0")
        self.open_why_not(arg)

    def cmd_ledger(self, arg: str) -> None:
        self.action_show_ledger()

    def action_show_ledger(self) -> None:
        from tui.screens.ledger import LedgerScreen  # noqa: PLC0415

        if not isinstance(self.screen, LedgerScreen):
            self.push_screen(LedgerScreen())

    def cmd_routerlog(self, arg: str) -> None:
        self.action_show_router_log()

    def action_show_router_log(self) -> None:
        from tui.screens.router_log import RouterLogScreen  # noqa: PLC0415

        if not isinstance(self.screen, RouterLogScreen):
            self.push_screen(RouterLogScreen())

    def cmd_trace(self, arg: str) -> None:
        if not arg:
            raise ValueError("which job? e.g. :trace 123.0")
        self.open_trace(arg)

    def cmd_chain(self, arg: str) -> None:
        self.open_chain(arg or None)

    def open_chain(self, job: str | None) -> None:
        from tui.screens.chain import ChainScreen  # noqa: PLC0415

        self.push_screen(ChainScreen(job))

    def open_trace(self, job: str) -> None:
        from tui.screens.trace import TraceScreen  # noqa: PLC0415

        self.push_screen(TraceScreen(job))

    def cmd_where(self, arg: str) -> None:
        self.show_jobs(where=arg)

    def cmd_sort(self, arg: str) -> None:
        parts = arg.split()
        if not parts:
            raise ValueError("which column?")
        screen = self.show_jobs()
        screen.sort_by(parts[0], reverse=len(parts) > 1 and parts[1].startswith("desc"))

    def cmd_pause(self, arg: str) -> None:
        self.send(C.Pause())

    def cmd_resume(self, arg: str) -> None:
        self.send(C.Resume())

    def cmd_step(self, arg: str) -> None:
        self.send(C.Step(int(arg) if arg else 1))

    def cmd_speed(self, arg: str) -> None:
        try:
            value = float(arg.lstrip("x×"))
        except ValueError:
            raise ValueError(f"speed must be a number, not {arg!r}") from None
        if not math.isfinite(value) or value <= 0:  # --speed's rule (engine.cli.args.positive)
            raise ValueError(f"speed must be a finite number above 0, not {arg!r}")
        self.send(C.SetSpeed(value))

    def cmd_hold(self, arg: str) -> None:
        self.confirm_job_command(C.HoldJob(self._job_arg(arg)))

    def cmd_release(self, arg: str) -> None:
        self.confirm_job_command(C.ReleaseJob(self._job_arg(arg)))

    def cmd_rm(self, arg: str) -> None:
        self.confirm_job_command(C.RemoveJob(self._job_arg(arg)))

    def _job_arg(self, arg: str) -> str:
        job = shlex.split(arg)[0] if arg else ""
        if not job:
            raise ValueError("which job? e.g. 123.0")
        return job if "." in job else f"{job}.0"

    def cmd_export(self, arg: str) -> None:  # tui.files.export does the work
        from tui.files.export import export_table  # noqa: PLC0415

        self.notify(f"saved {export_table(self, arg)}")

    def cmd_export_json(self, arg: str) -> None:
        self.cmd_export(f"json {arg}".strip())

    def cmd_screenshot(self, arg: str) -> None:
        from tui.files.export import save_svg  # noqa: PLC0415

        self.notify(f"saved {save_svg(self, arg)}")

    def cmd_copy(self, arg: str) -> None:
        from tui.files.export import copy_selected  # noqa: PLC0415

        self.notify(f"copied {copy_selected(self)}")

    def cmd_undo(self, arg: str) -> None:
        from tui.screens.editor import undo_last_apply  # noqa: PLC0415

        undo_last_apply(self)

    def cmd_error(self, arg: str) -> None:
        from tui.screens.help import TextScreen  # noqa: PLC0415

        if not self.engine_error:
            raise ValueError("the engine is running; no error to show")
        self.push_screen(TextScreen("engine error", self.engine_error))

    def cmd_help(self, arg: str) -> None:
        self.action_help()

    def cmd_quit(self, arg: str) -> None:
        self.exit()
