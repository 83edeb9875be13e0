"""``JobTable`` measures its column widths from per-row value lengths kept per row object
(tui/widgets/job_table.py ``_value_lengths``, issue 14 item 3): the kept lengths must always be
those of the cells as drawn, including the columns that change without the row changing (time in
status, with the clock; a source job's route, through its routed copy) and after a zone change.
"""

from __future__ import annotations

import dataclasses

from engine.contract.snapshot import JobRow
from tui.widgets.job_table import JobTable


def _row(job, **kw) -> JobRow:
    base = dict(job=job, status=1, owner="alice", route=None, kind="plain", routed_to=None, routed_from=None,
                qdate=1_700_000_000, entered_status=1_700_000_000, cmd="/bin/sleep")
    base.update(kw)
    return JobRow(**base)


def _check(table: JobTable) -> None:
    for i in range(len(table.model)):
        r = table.model.row(i)
        assert table._value_lengths(r) == [len(v) for v in table.values(r)], r


def test_kept_lengths_follow_clock_copies_and_zone():
    table = JobTable()
    source = _row("1.0", kind="source", routed_to="2.0")
    rows = (source, _row("3.0", status=5, hold_reason="a long hold reason here"), _row("4.0", owner="b" * 30))
    table.model.set_rows(rows, 1)
    table.now = 1_700_000_005.0
    _check(table)
    table.now = 1_700_000_000.0 + 3 * 86400  # "5s" -> a day count: the since column grows
    _check(table)
    # the routed copy appears in a new tuple: the (unchanged) source row now shows its route
    copy = _row("2.0", kind="routed", routed_from="1.0", route="a_much_longer_route_name")
    table.model.set_rows(rows + (copy,), 2)
    assert table.model.route_of(source) == "a_much_longer_route_name"
    _check(table)
    table.tz = "America/Chicago"
    _check(table)
    # a changed job is a new row object: measured afresh, not from the old one's lengths
    held = dataclasses.replace(rows[1], hold_reason="x" * 80)
    table.model.set_rows((source, held, rows[2], copy), 3)
    _check(table)


def test_widths_from_kept_lengths_match_a_fresh_measure():
    """The widths laid out with kept lengths equal those of a table measuring from scratch."""
    rows = tuple(_row(f"{i}.0", owner="u" * (i % 17 + 1), cmd="c" * (i % 40)) for i in range(700))
    warm, fresh = JobTable(), JobTable()
    for v, now in ((1, 1_700_000_010.0), (2, 1_700_090_000.0)):
        for t in (warm, fresh):
            t.now = now
            t.model.set_rows(rows[: 600 + v], v)
        if v == 2:
            fresh._lengths.clear()
        warm._layout()
        fresh._layout()
        assert warm.widths == fresh.widths
