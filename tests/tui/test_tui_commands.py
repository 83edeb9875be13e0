"""``routedeck demo``: one subcommand, owned by the TUI, whose ``--headless`` form is the
runtime's headless demo (product.md §5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tui.shell import launch as commands
from tui.cli import build_parser
import engine.cli.demo as headless
import pytest
from engine.contract import commands as C
from tui.commands.prompt import CommandLineMixin


def test_demo_parses_screen_and_headless_options():
    args = build_parser().parse_args(["demo", "--speed", "120", "--readonly", "--headless", "--json",
                                      "--duration", "5", "--seed", "3"])
    assert args.func is commands.run_demo
    assert (args.speed, args.readonly, args.headless, args.json, args.duration, args.seed) == (120.0, True, True,
                                                                                              True, 5.0, 3)


def test_headless_is_forwarded_to_the_runtime_command(monkeypatch):
    seen = []
    monkeypatch.setattr(headless, "run_headless", lambda args: seen.append(args) or 0)
    args = build_parser().parse_args(["demo", "--headless", "--duration", "1"])
    assert args.func(args) == 0 and seen == [args]


def test_bad_demo_config_is_an_error_not_a_traceback(tmp_path, capsys):
    args = build_parser().parse_args(["demo", "--config-dir", str(tmp_path / "missing")])
    assert args.func(args) == 2
    assert "routedeck demo:" in capsys.readouterr().err


def test_speed_command_refuses_what_the_command_line_refuses():
    """``:speed X`` follows ``--speed``'s rule (issue 25 item 8f): a finite number above 0; ``nan``
    reached the clock (nan <= 0 is false) and stopped its time."""
    class App(CommandLineMixin):
        def __init__(self):
            self.sent = []

        def send(self, command):
            self.sent.append(command)

    app = App()
    for bad in ("nan", "inf", "-5", "0", "fast"):
        with pytest.raises(ValueError, match="speed must be"):
            app.cmd_speed(bad)
    app.cmd_speed("x30")
    assert app.sent == [C.SetSpeed(30.0)]


ROOT = Path(__file__).resolve().parents[2]
ESC_PROBE = """
import os
from tui.cli import main
try:
    main(["cron", "--help"])
except SystemExit:
    pass
from textual import constants
from tui.shell.driver import lone_escape_wait
print(constants.ESCAPE_DELAY, lone_escape_wait(os.environ))
"""


@pytest.mark.parametrize(("given", "waits"), [(None, "0.1 0.01"), ("120", "0.12 None")])
def test_escape_waits_unless_the_environment_sets_escdelay(given, waits):
    """Issue 30: a lone Escape (one that ends a read of the terminal) is Escape after 10 ms, a read
    that ends inside a sequence waits Textual's ESCDELAY (100 ms); an ESCDELAY in the environment is
    Textual's wait for every Escape, as given (tui.shell.driver). `routedeck` no longer sets one."""
    env = {k: v for k, v in os.environ.items() if k != "ESCDELAY"}
    if given is not None:
        env["ESCDELAY"] = given
    out = subprocess.run([sys.executable, "-c", ESC_PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == waits
