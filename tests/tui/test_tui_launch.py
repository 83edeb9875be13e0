"""The screen commands' launch (tui/shell/launch.py): what happens before the dashboard takes the terminal."""

from __future__ import annotations

import pytest

import engine.classad
import tui.app
from tests.helpers.paths import REPO
from tui.cli import main


@pytest.mark.parametrize("argv", [["replay", f"{REPO}/tests/data/replay/real_job_submission.log"], ["demo"]])
def test_the_classad_library_is_loaded_before_the_dashboard_takes_the_terminal(monkeypatch, argv):
    """htcondor2 writes its CONDOR_CONFIG warning to stderr when first imported: that must come
    before the screen, not over it (review of s15-at, finding 2), whatever the runtime evaluated."""
    calls: list[str] = []
    real_lib = engine.classad._lib

    class App:
        return_code = 0

        def run(self) -> None:
            calls.append("run")

    def make_app(runtime, **kwargs):
        calls.clear()  # what building the runtime loaded does not count
        return App()

    monkeypatch.setattr(engine.classad, "_lib", lambda: calls.append("load") or real_lib())
    monkeypatch.setattr(tui.app, "make_app", make_app)
    assert main(argv) == 0
    assert calls[:1] == ["load"] and calls[-1:] == ["run"]
