"""Objects a test process keeps to its end, moved out of the cyclic GC's full collections.

A full (generation-2) collection scans every tracked object alive. In a test process that is
the imported modules (Textual, Rich, the engine, hypothesis ...) and the big fixtures kept per
process (the frozen demo engine of tests.helpers.demo_fixture): each of the ~25 full collections
of a TUI test file scanned them again (tests/tui/test_tui_app.py + test_tui_readable.py: 6.1 s of 38 s CPU in generation 2).
``gc.freeze()`` after a collection moves what is alive to the permanent generation, as the app
itself does with its start-up heap (tui.shell.prewarm.freeze_startup_heap). What is frozen is
never freed (a cycle in it that dies stays); the app's idle collector gives everything back
(``gc.unfreeze``) when it exits after freezing (tui.shell.idle_gc). No object's content changes:
only which objects a full collection looks at.
"""

from __future__ import annotations

import gc


def keep_for_the_process() -> None:
    """What is alive now lives to the process's end: collect once, then freeze it."""
    gc.collect()
    gc.freeze()
