"""``JobTable`` measures its column widths from per-row value lengths kept per row object
(tui/widgets/job_table.py ``_most_lengths``, issue 14 item 3): the lengths must always be those
of the cells as drawn, including the columns that change without the row changing (time in
status, with the clock; a source job's route, through its routed copy) and after a zone change.
The time in status is measured from the rows' extreme times, not row by row (issue 30).
"""

from __future__ import annotations

import dataclasses
import random

from engine.contract.snapshot import JobRow
from tui.widgets import job_table
from tui.widgets.job_table import JobTable


def _row(job, **kw) -> JobRow:
    base = dict(job=job, status=1, owner="alice", route=None, kind="plain", routed_to=None, routed_from=None,
                qdate=1_700_000_000, entered_status=1_700_000_000, cmd="/bin/sleep")
    base.update(kw)
    return JobRow(**base)


def _drawn(table: JobTable, rows) -> list[int]:
    """The longest cell of each column over ``rows``, every cell written out."""
    return [max(col) for col in zip(*([len(v) for v in table.values(r)] for r in rows))]


def _check(table: JobTable) -> None:
    rows = [table.model.row(i) for i in range(len(table.model))]
    for r in rows:
        assert table._most_lengths([r]) == _drawn(table, [r]), r
    assert table._most_lengths(rows) == _drawn(table, rows)  # measured
    assert table._most_lengths(rows) == _drawn(table, rows)  # kept


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


def test_since_length_from_the_extreme_times_is_the_longest_drawn():
    """Under a day either way the length of a time in status grows with its size; past a day
    (``1d0h`` after ``23h59m59s``) or with times on both sides of zero it is still the longest."""
    rng = random.Random(30)
    table = JobTable()
    table.now = 1_700_000_000.5
    spans = (9, 59, 599, 3599, 86_399, 86_401, 10 * 86_400)
    for _ in range(400):
        rows = [_row(f"{i}.0", entered_status=int(table.now - rng.uniform(-rng.choice(spans), rng.choice(spans))))
                for i in range(rng.randint(1, 6))]
        assert table._most_lengths(rows) == _drawn(table, rows), [r.entered_status for r in rows]


def test_a_new_jobs_tuple_is_measured_without_writing_every_row(monkeypatch):
    """Laying out a new tuple of 600 rows writes no queue date and at most two times in status
    (issue 30: the jobs screen re-measured 500 rows on every return to it), and gives the widths
    of a row-by-row measure."""
    rows = tuple(_row(f"{i}.0", owner="u" * (i % 17 + 1), entered_status=1_700_000_000 - 37 * i) for i in range(600))
    table = JobTable()
    table.now = 1_700_000_010.0
    calls = {"month_day": 0, "duration": 0}

    def counted(name, fn):
        def call(*a):
            calls[name] += 1
            return fn(*a)
        return call

    monkeypatch.setattr(job_table, "month_day", counted("month_day", job_table.month_day))
    monkeypatch.setattr(job_table, "duration", counted("duration", job_table.duration))
    table.model.set_rows(rows, 1)
    table._layout()
    assert calls == {"month_day": 0, "duration": 2}
    sample = list(rows[:job_table.SAMPLE + 1])  # the first SAMPLE rows and the one on screen
    assert table._most_lengths(sample) == _drawn(table, sample)
