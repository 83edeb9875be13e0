"""The terminal driver (tui.shell.driver): a lone Escape is handed over when Textual's ESCDELAY
wait ends, not at the input thread's next 0.1 s look (issue 30: Esc closing help took 100-200 ms)."""

from __future__ import annotations

import os
import threading
import time

import pytest
from textual import constants, events
from textual.drivers.linux_driver import LinuxDriver

from tests.helpers.tui_fixtures import FakeRuntime
from tui.app import make_app
from tui.shell.driver import (COPIED_FROM, IDLE_WAIT, LONE_ESCAPE_WAIT, PromptEscapeDriver, driver_for,
                              escape_deadline, input_wait, lone_escape_wait, paste_open)



def test_the_input_wait_ends_with_the_parsers_pending_wait():
    assert input_wait(None, 5.0) == IDLE_WAIT  # nothing pending: Textual's own 0.1 s
    assert abs(input_wait(5.03, 5.0) - 0.03) < 1e-9  # an Escape pending: only until its wait ends
    assert input_wait(4.9, 5.0) == 0.0  # already over: look now
    assert input_wait(9.0, 5.0) == IDLE_WAIT


def test_the_app_uses_it_on_a_linux_terminal():
    assert make_app(FakeRuntime()).driver_class is PromptEscapeDriver


@pytest.mark.anyio
async def test_keys_and_a_lone_escape_come_through_the_input_thread(monkeypatch):
    """The driver's input loop on a pipe, with Textual's own ESCDELAY: the keys typed come out in
    order, the lone Escape as ``escape`` once its wait is over, an arrow key as one key (a manual
    check of the loop; no timing asserted)."""
    monkeypatch.delenv("ESCDELAY", raising=False)
    assert _keys_from(b"j\x1b", b"\x1b[A", expect=3, wait=30) == ["j", "escape", "up"]


def test_the_copied_loop_runs_only_over_the_textual_it_was_copied_from():
    """Another Textual (an upgrade past the pin) runs with its own Linux driver, not a copy of an
    older input loop; other drivers are never replaced."""
    assert driver_for(LinuxDriver, COPIED_FROM) is PromptEscapeDriver
    assert driver_for(LinuxDriver, "9.0.0") is LinuxDriver
    assert driver_for(object, COPIED_FROM) is object


def test_a_lone_escape_ending_a_read_waits_the_short_wait():
    """Issue 30: an Escape byte that one read returned alone, outside a bracketed paste, is the Esc
    key LONE_ESCAPE_WAIT after the read; any other read that ends with an Escape or inside a sequence
    keeps Textual's wait, and ESCDELAY in the environment keeps Textual's wait for every Escape."""
    now, textual_wait = 5.0, 5.0 + 0.1
    assert escape_deadline("\x1b", textual_wait, now, LONE_ESCAPE_WAIT) == now + LONE_ESCAPE_WAIT
    assert escape_deadline("\x1b[", textual_wait, now, LONE_ESCAPE_WAIT) == textual_wait  # more is coming
    assert escape_deadline("j", None, now, LONE_ESCAPE_WAIT) is None  # nothing pending
    assert escape_deadline("\x1b", textual_wait, now, None) == textual_wait
    # an Escape that ends a longer read (a paste's end marker or a mouse report cut after it, keys
    # typed faster than the loop reads) or comes alone inside a paste keeps Textual's wait
    assert escape_deadline("j\x1b", textual_wait, now, LONE_ESCAPE_WAIT) == textual_wait
    assert escape_deadline("\x1b[200~hello\x1b", textual_wait, now, LONE_ESCAPE_WAIT) == textual_wait
    assert escape_deadline("\x1b", textual_wait, now, LONE_ESCAPE_WAIT, in_paste=True) == textual_wait
    assert paste_open("\x1b[200~hello", False) and paste_open("more text", True)
    assert not paste_open("\x1b[200~hi\x1b[201~j", False) and not paste_open("x\x1b[201~", True)
    assert not paste_open("j", False)
    assert lone_escape_wait({}) == LONE_ESCAPE_WAIT
    assert lone_escape_wait({"ESCDELAY": "100"}) is None


def _typed(monkeypatch, escdelay_env: str | None, *writes: bytes, expect: int) -> list[str]:
    """The keys the driver's input loop makes of ``writes`` (one write each, 0.3 s apart) on a pipe,
    with Textual's ESCDELAY at 30 s, once ``expect`` keys came out (or 20 s passed)."""
    monkeypatch.setattr(constants, "ESCAPE_DELAY", 30.0)
    if escdelay_env is None:
        monkeypatch.delenv("ESCDELAY", raising=False)
    else:
        monkeypatch.setenv("ESCDELAY", escdelay_env)
    return _keys_from(*writes, expect=expect, wait=20)


def _keys_from(*writes: bytes, expect: int, wait: float) -> list[str]:
    """The keys the driver's input loop makes of ``writes`` on a pipe (one write each, 0.3 s apart),
    once ``expect`` keys came out (or ``wait`` seconds passed)."""
    read_end, write_end = os.pipe()
    driver = PromptEscapeDriver(make_app(FakeRuntime()))
    driver.fileno = read_end
    got: list[str] = []
    driver.process_message = lambda m: got.append(m.key) if isinstance(m, events.Key) else None
    thread = threading.Thread(target=driver.run_input_thread, daemon=True)
    thread.start()
    try:
        for data in writes:
            os.write(write_end, data)
            time.sleep(0.3)
        deadline = time.monotonic() + wait
        while len(got) < expect and time.monotonic() < deadline:
            time.sleep(0.01)
        return got
    finally:
        driver.exit_event.set()
        thread.join(5)
        os.close(write_end)
        os.close(read_end)


@pytest.mark.anyio
async def test_a_lone_escape_does_not_wait_escdelay(monkeypatch):
    """Issue 30: with Textual's ESCDELAY at 30 s, a lone Escape still comes out (after
    LONE_ESCAPE_WAIT; the old loop waited the 30 s), and an arrow key whose bytes a read splits
    inside the sequence is still one key."""
    assert _typed(monkeypatch, None, b"\x1b", expect=1) == ["escape"]
    assert _typed(monkeypatch, None, b"\x1b[", b"A", expect=1) == ["up"]


@pytest.mark.anyio
async def test_escdelay_in_the_environment_is_the_wait_for_every_escape(monkeypatch):
    """A link that splits an arrow key after its Escape byte: ESCDELAY in the environment makes the
    driver wait Textual's delay for that Escape too, so the key stays one key."""
    assert _typed(monkeypatch, "30000", b"\x1b", b"[A", expect=1) == ["up"]
