"""The terminal driver: Textual's Linux driver, with a lone Escape key delivered when its wait ends.

Textual tells the Escape key from the start of an escape sequence (an arrow key, Alt+x) by waiting
``ESCDELAY`` (100 ms by default) for more bytes. Its input thread only looks at that wait when
``select`` returns, and it waits on the terminal 0.1 s at a time: a lone Escape was handed to the
app 100-200 ms after it was pressed, the slowest of the screen keys (Esc closing help, issue 30).
:class:`PromptEscapeDriver` waits on the terminal no longer than the parser's pending wait, so
Escape arrives when that wait ends, as Textual means it to.

The wait itself (issue 30: Esc still carried 50 ms): a terminal writes a key's escape sequence in
one write, so the bytes of an arrow key come out of one read together; a key typed alone comes out
of a read of its own. A read that returned the Escape byte alone, outside a bracketed paste, is the
Esc key after ``LONE_ESCAPE_WAIT`` (10 ms: tmux's own ``escape-time`` default since tmux 3.5, for
the same question about the same bytes; crossterm takes such an Escape at once when no more input
is waiting). Any other read that ends with an Escape (a paste's end marker or a mouse report cut
after its first byte, keys typed faster than the loop reads them) and a read that ends inside a
sequence (``ESC [``) wait ``ESCDELAY`` for the rest, as Textual does. Where a link does split one
write (a serial line, an odd proxy), ``ESCDELAY`` set in the environment turns the short wait off:
Textual's wait, as given, for every Escape (README). Nothing else changes: the loop below is Textual
8.2.8's ``LinuxDriver.run_input_thread`` with these two differences.
"""

from __future__ import annotations

import selectors
from codecs import getincrementaldecoder
import os

from textual._loop import loop_last
from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import BRACKETED_PASTE_END, BRACKETED_PASTE_START, XTermParser
from textual.drivers.linux_driver import LinuxDriver

IDLE_WAIT = 0.1  # seconds: Textual's wait on the terminal when no escape sequence is pending
LONE_ESCAPE_WAIT = 0.010  # seconds: the wait after an Escape byte that ends a read (see above)
ESC = "\x1b"
# the Textual whose input loop the one below copies: with any other, Textual's own driver is used
COPIED_FROM = "8.2.8"


def input_wait(timeout_time: float | None, now: float) -> float:
    """Seconds to wait on the terminal: until the parser's pending wait ends (``timeout_time``,
    on ``get_time``'s clock), at most ``IDLE_WAIT``."""
    if timeout_time is None:
        return IDLE_WAIT
    return max(0.0, min(IDLE_WAIT, timeout_time - now))


def lone_escape_wait(environ) -> float | None:
    """The wait after an Escape byte that ends a read: ``LONE_ESCAPE_WAIT``, or None (Textual's
    ``ESCDELAY`` for every Escape) when the environment sets ``ESCDELAY``."""
    return None if "ESCDELAY" in environ else LONE_ESCAPE_WAIT


def escape_deadline(data: str, pending: float | None, now: float, lone_wait: float | None,
                    in_paste: bool = False) -> float | None:
    """The parser's pending wait (``pending``, on ``get_time``'s clock; None: nothing pending) once
    ``data``, one read of the terminal, was fed to it: when the read was the Escape byte alone and
    no bracketed paste is open (``in_paste``: :func:`paste_open`), the wait it started ends
    ``lone_wait`` after ``now``; anything else keeps Textual's wait."""
    if pending is None or lone_wait is None or in_paste or data != ESC:
        return pending
    return min(pending, now + lone_wait)


def paste_open(data: str, was_open: bool) -> bool:
    """Whether a bracketed paste is still open after the read ``data`` (``was_open``: before it):
    its last paste marker tells, else it stays as it was."""
    start, end = data.rfind(BRACKETED_PASTE_START), data.rfind(BRACKETED_PASTE_END)
    if start == end:  # neither (-1 both)
        return was_open
    return start > end


class PromptEscapeDriver(LinuxDriver):
    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (Textual's, waiting no longer than the parser's
        pending Escape wait, and ``LONE_ESCAPE_WAIT`` after a lone Escape)."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)

        fileno = self.fileno
        EVENT_READ = selectors.EVENT_READ

        parser = XTermParser(self._debug)
        feed = parser.feed
        tick = parser.tick

        decode = getincrementaldecoder("utf-8")().decode
        read = os.read
        lone_wait = lone_escape_wait(os.environ)
        pasting = [False]  # a bracketed paste open after the reads so far (paste_open)

        def process_selector_events(selector_events, final: bool = False) -> None:
            for last, (_selector_key, mask) in loop_last(selector_events):
                if mask & EVENT_READ:
                    unicode_data = decode(read(fileno, 1024 * 4), final=final and last)
                    if not unicode_data:
                        # This can occur if the stdin is piped
                        break
                    for event in feed(unicode_data):
                        self.process_message(event)
                    parser._timeout_time = escape_deadline(unicode_data, parser._timeout_time, get_time(), lone_wait,
                                                           pasting[0])
                    pasting[0] = paste_open(unicode_data, pasting[0])
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
