"""RouteDeck's one keymap: every screen's ``BINDINGS`` come from here, and ``?`` shows this table.

The rules, the same on every screen (issue 11 item 4):

- ``b`` ``j`` ``c`` go to the Board, Jobs and Crondor views (``h`` ``o`` to Hooks and Slots where
  the feed has an execute node), always to the live top screen of
  that view (whatever was opened on top of it is closed). The ``:`` commands of the same views
  are ``:board`` (``:b``), ``:jobs`` (``:j``), ``:cron`` (``:c``).
- ``:`` opens the command line at the bottom, ``ctrl+p`` the palette, ``?`` this help.
- ``esc`` goes back one level: it closes what is open (a filter, a dialog, the command line)
  or leaves a screen that was opened on top of a view; on a view's top screen with nothing
  open it does nothing. ``q`` quits RouteDeck (``:q`` and Ctrl-C too, as in k9s) from any screen; it never means
  "back" (in a dialog it does nothing: answer or Esc first).
- ``space`` pauses and resumes the engine (demo and replay); ``+``/``-`` change the speed.
- In tables: ↑/↓ (also ``k``; ``j`` is Jobs), PgUp/PgDn, Home/End, Enter opens the row.
- ``/`` filters, ``w`` asks why a job is not routed (``l`` lists every idle job's verdict), ``t`` traces its routed ad step by step, ``e`` edits the route's config (``e``
  *views* it in read-only modes), ``H``/``L``/``X`` hold, release, remove a job after a
  confirmation.

- Keys of a control the feed does not offer (``Snapshot.controls``: watch offers none, replay
  pause/speed/step/seek, the demo pause/speed/step/jobs/routes) are hidden from the footer and
  refused with a toast if typed (``RouteDeckApp.check_action``/``on_key``); so are the ``:``
  commands that need one (``tui.commands.palette.Command.control``). ``e`` is "View config" where routes
  cannot be applied.
- The footer always keeps ``q`` ``?`` ``:`` visible and fits the rest (``tui.widgets.footer``).

A binding is written once here; a key that means one thing in one place means it everywhere.
"""

from __future__ import annotations

from textual.binding import Binding

# -- everywhere (the app) --------------------------------------------------------------------
APP = [
    Binding("question_mark", "help", "Help", key_display="?"),
    # priority: taken by the app before the focused widget queues the keys typed after it (they
    # go into the line even when typed in one burst); not while text is being typed (check_action)
    Binding("colon", "command_line", "Command", key_display=":", priority=True),
    Binding("b", "show_routes", "Board"),
    Binding("j", "show_jobs", "Jobs"),
    Binding("c", "show_cron", "Crondor"),
    # the execute node's views: in the footer only where the feed has one (Snapshot.controls
    # "execute"; check_action hides them elsewhere). Hidden everywhere, h/o were found by no one.
    Binding("h", "show_hooks", "Hooks"),
    Binding("o", "show_slots", "Slots"),
    # every idle source job with its verdict (issue 29); hidden from the footer, listed in ? and :ledger
    Binding("l", "show_ledger", "Ledger", show=False),
    Binding("space", "toggle_pause", "Pause/Play"),
    Binding("plus", "speed(2)", "Faster", key_display="+", show=False),
    Binding("minus", "speed(0.5)", "Slower", key_display="-", show=False),
    Binding("q", "quit", "Quit", priority=False),
    # Ctrl-C quits as in k9s (issue 29); not a priority binding, so a focused text box that
    # copies with it (the route editor) keeps it, and Textual's "press ctrl+q" hint is replaced
    Binding("ctrl+c", "quit", "Quit", show=False),
]

# -- replay only (disabled and hidden in the other modes) ---------------------------------------
REPLAY = [
    Binding("full_stop", "replay_step(1)", "one transaction forward", key_display=".", show=False),
    Binding("comma", "replay_step(-1)", "one transaction back", key_display=",", show=False),
    Binding("right", "replay_arrow(1)", "forward one transaction (paused)", key_display="→", show=False),
    Binding("left", "replay_arrow(-1)", "back one transaction (paused)", key_display="←", show=False),
    Binding("right_square_bracket", "replay_jump(60)", "+1 min", key_display="]", show=False),
    Binding("left_square_bracket", "replay_jump(-60)", "-1 min", key_display="[", show=False),
    Binding("right_curly_bracket", "replay_jump(600)", "+10 min", key_display="}", show=False),
    Binding("left_curly_bracket", "replay_jump(-600)", "-10 min", key_display="{", show=False),
    Binding("m", "replay_mark", "bookmark this moment", show=False),
    Binding("apostrophe", "replay_bookmarks", "go to a bookmark", key_display="'", show=False),
    # the real router's JobRouterLog at this moment, of an archive recorded with --router-log (issue 27)
    Binding("R", "show_router_log", "real router's log at this moment", show=False),
]

# -- screens -----------------------------------------------------------------------------------
# ``e`` is two bindings: "Edit" where the config can be written, "View" in read-only modes; each
# screen's check_action hides the one that does not apply (tui.screens.base.DeckScreen).
_EDIT = Binding("e", "edit_route", "Edit")
_VIEW = Binding("e", "view_route", "View config")

BOARD = [
    Binding("enter", "open_route", "Open", show=False),
    _EDIT, _VIEW,
    Binding("w", "why_not", "Why not"),
    Binding("slash", "filter", "Filter", key_display="/", priority=True),
    Binding("y", "copy", "Copy name", show=False),
    Binding("escape", "back", "Close filter", show=False),
]

# the board's table: move the column the legend line explains
# Home/End (g/G) go to the first/last row in every table, as in the jobs tables (JOB_TABLE); on
# DataTable they moved a column on the board and a row in Jobs (issue 29). ``<``/``>`` move columns.
ROW_ENDS = [
    Binding("home,g", "scroll_top", "First", show=False),
    Binding("end,G", "scroll_bottom", "Last", show=False),
]

BOARD_TABLE = [
    Binding("less_than_sign", "column(-1)", "Column ←", key_display="<", show=False),
    Binding("greater_than_sign", "column(1)", "Column →", key_display=">", show=False),
    *ROW_ENDS,
]

ROUTE = [
    Binding("escape", "back", "Back"),
    Binding("e", "edit", "Edit"),
    Binding("e", "view", "View config"),
    Binding("w", "why_not", "Why not"),
]

JOBS = [
    Binding("slash", "filter", "Filter", key_display="/", priority=True),
    Binding("s", "cycle_sort", "Sort"),
    Binding("S", "reverse_sort", "Reverse sort", show=False),
    Binding("w", "why_not", "Why not"),
    Binding("t", "trace", "Trace", show=False),
    Binding("x", "chain", "Chain", show=False),
    Binding("y", "copy", "Copy id", show=False),
    Binding("H", "hold", "Hold"),
    Binding("L", "release", "Release"),
    Binding("X", "remove", "Remove"),
    Binding("escape", "back", "Close filter", show=False),
]

JOB_TABLE = [
    Binding("up,k", "cursor(-1)", "Up", key_display="↑ k", show=False),
    Binding("down", "cursor(1)", "Down", key_display="↓", show=False),
    Binding("pageup", "page(-1)", "Page up", show=False),
    Binding("pagedown", "page(1)", "Page down", show=False),
    Binding("home,g", "first", "First", show=False),
    Binding("end,G", "last", "Last", show=False),
    Binding("enter", "select", "Open ad"),
    Binding("less_than_sign", "column(-1)", "Column ←", key_display="<", show=False),
    Binding("greater_than_sign", "column(1)", "Column →", key_display=">", show=False),
]

CRON = [
    Binding("enter", "open_ad", "Open ad"),
    Binding("slash", "filter", "Filter", key_display="/", priority=True),
    Binding("escape", "back", "Close filter", show=False),
]

# The crondor, hooks and slots tables: Enter is the DataTable's select (RowSelected → the
# screen's action), shown in the footer under the screen's name for it. DataTable's own enter
# binding is hidden and, the table having the focus, shadowed the screen's in the footer.
CRON_TABLE = [Binding("enter", "select_cursor", "Open ad"), *ROW_ENDS]
HOOKS_TABLE = [Binding("enter", "select_cursor", "stdin/stdout"), *ROW_ENDS]
SLOTS_TABLE = [Binding("enter", "select_cursor", "Slot's hooks"), *ROW_ENDS]

HOOKS = [
    Binding("enter", "open_io", "stdin/stdout"),
    Binding("slash", "filter", "Filter", key_display="/", priority=True),
    Binding("escape", "back", "Close filter", show=False),
]

SLOTS = [
    Binding("enter", "open_hooks", "Slot's hooks"),
]

WHY_NOT = [
    Binding("escape", "app.pop_screen", "Back"),
    Binding("r", "refresh_checks", "Re-check"),
    Binding("t", "trace", "Trace"),
]

LEDGER = [
    Binding("escape", "app.pop_screen", "Back"),
    Binding("r", "refresh_ledger", "Re-read"),
    Binding("w", "why_not", "Why not", show=False),
]
LEDGER_TABLE = [Binding("enter", "select_cursor", "Why not"), *ROW_ENDS]

ROUTER_LOG = [
    Binding("escape", "app.pop_screen", "Back"),
    Binding("r", "refresh_router_log", "Re-read"),
]

CHAIN = [
    Binding("escape", "app.pop_screen", "Back"),
    Binding("r", "refresh_chain", "Re-read"),
]

TRACE = [
    Binding("escape", "app.pop_screen", "Back"),
    Binding("r", "retrace", "Re-trace"),
    Binding("x", "expand", "Fold/unfold"),
    Binding("w", "why_not", "Why not"),
]

AD = [
    Binding("escape,enter", "close", "Close"),
    Binding("slash", "search", "Search", key_display="/", priority=True),
    Binding("n", "next_match", "Next match"),
    Binding("y", "copy_value", "Copy value"),
    Binding("Y", "copy_job", "Copy job id"),
    Binding("w", "why_not", "Why not"),
    Binding("t", "trace", "Trace", show=False),
    Binding("x", "chain", "Chain", show=False),
]

EDITOR = [
    Binding("ctrl+s", "apply", "Apply"),
    Binding("ctrl+r", "undo_apply", "Undo apply"),
    Binding("ctrl+o", "external", "$EDITOR"),
    Binding("escape", "close", "Close"),
]

CONFIRM = [
    Binding("y", "answer(True)", "Yes"),
    Binding("n,escape", "answer(False)", "No"),
]

DIALOG = [Binding("escape", "dismiss", "Close")]
HELP = [Binding("escape,question_mark", "dismiss", "Close")]
PICKER = [Binding("escape", "dismiss_none", "Cancel")]

COMMAND_LINE = [
    Binding("escape", "cancel", "Cancel"),
    Binding("tab", "complete", "Complete", show=False),
    Binding("up", "history(-1)", "Previous", show=False),
    Binding("down", "history(1)", "Next", show=False),
]

# What ``?`` lists, in this order.
SECTIONS: tuple[tuple[str, list[Binding]], ...] = (
    ("Everywhere", APP),
    ("Replay", REPLAY),
    ("Routes board", BOARD),
    ("Board table", BOARD_TABLE),
    ("Route", ROUTE),
    ("Jobs", JOBS),
    ("Job tables", JOB_TABLE),
    ("Job ad", AD),
    ("Why not routed", WHY_NOT),
    ("Ledger (every idle source job)", LEDGER),
    ("Ledger table", LEDGER_TABLE),
    ("Router log (replay of an archive)", ROUTER_LOG),
    ("Transform trace", TRACE),
    ("Chain (source → copy → grid)", CHAIN),
    ("Crondor", CRON),
    ("Hooks (execute node)", HOOKS),
    ("Slots (execute node)", SLOTS),
    ("Route editor", EDITOR),
    ("Confirmation", CONFIRM),
    (": command line", COMMAND_LINE),
)

_NAMES = {"question_mark": "?", "colon": ":", "slash": "/", "plus": "+", "minus": "-", "escape": "esc"}


def key_label(b: Binding) -> str:
    if b.key_display:
        return b.key_display
    return ", ".join(_NAMES.get(k, k) for k in b.key.split(","))


def rows(bindings: list[Binding]) -> list[tuple[str, str]]:
    """(key, what it does) for ``?``, one row per binding."""
    return [(key_label(b), b.description or b.action) for b in bindings]
