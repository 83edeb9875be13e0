"""The terminal driver: Textual's Linux driver, with a lone Escape key delivered when its wait ends.

Textual tells the Escape key from the start of an escape sequence (an arrow key, Alt+x) by waiting
``ESCDELAY`` (100 ms by default) for more bytes. Its input thread only looks at that wait when
``select`` returns, and it waits on the terminal 0.1 s at a time: a lone Escape was handed to the
app 100-200 ms after it was pressed, the slowest of the screen keys (Esc closing help, issue 30).
:class:`PromptEscapeDriver` waits on the terminal no longer than the parser's pending wait, so
Escape arrives ``ESCDELAY`` after the press, as Textual means it to; nothing else changes (the
loop below is Textual 8.2.8's ``LinuxDriver.run_input_thread`` with that one difference).
"""

from __future__ import annotations

import selectors
from codecs import getincrementaldecoder
import os

from textual._loop import loop_last
from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

IDLE_WAIT = 0.1  # seconds: Textual's wait on the terminal when no escape sequence is pending
# the Textual whose input loop the one below copies: with any other, Textual's own driver is used
COPIED_FROM = "8.2.8"


def input_wait(timeout_time: float | None, now: float) -> float:
    """Seconds to wait on the terminal: until the parser's pending wait ends (``timeout_time``,
    on ``get_time``'s clock), at most ``IDLE_WAIT``."""
    if timeout_time is None:
        return IDLE_WAIT
    return max(0.0, min(IDLE_WAIT, timeout_time - now))


class PromptEscapeDriver(LinuxDriver):
    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (Textual's, waiting no longer than the parser's
        pending Escape wait)."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)

        fileno = self.fileno
        EVENT_READ = selectors.EVENT_READ

        parser = XTermParser(self._debug)
        feed = parser.feed
        tick = parser.tick

        decode = getincrementaldecoder("utf-8")().decode
        read = os.read

        def process_selector_events(selector_events, final: bool = False) -> None:
            for last, (_selector_key, mask) in loop_last(selector_events):
                if mask & EVENT_READ:
                    unicode_data = decode(read(fileno, 1024 * 4), final=final and last)
                    if not unicode_data:
                        # This can occur if the stdin is piped
                        break
                    for event in feed(unicode_data):
                        self.process_message(event)
            for event in tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process_selector_events(selector.select(input_wait(parser._timeout_time, get_time())))
            selector.unregister(self.fileno)
            process_selector_events(selector.select(IDLE_WAIT), final=True)

        finally:
            selector.close()
            try:
                for event in feed(""):
                    pass
            except (EOFError, ParseError):
                pass


def driver_for(driver: type, version: str) -> type:
    """The driver to run with: :class:`PromptEscapeDriver` in place of Textual's Linux driver when
    Textual is the version its input loop was copied from (``COPIED_FROM``), else ``driver``."""
    return PromptEscapeDriver if driver is LinuxDriver and version == COPIED_FROM else driver
