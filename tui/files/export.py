"""Export what a screen shows: its table as CSV or JSON, the whole screen as SVG (Textual's
screenshot), and the selected job id or route name to the clipboard.

A screen that has a table offers ``table_export() -> Table`` (its header titles and the rows as
the user sees them: filter and sort applied, every row, not just those on screen) and
``selected_id() -> str | None``. The ``:export``, ``:screenshot`` and ``:copy`` commands call
:func:`export_table`, :func:`save_svg` and :func:`copy_selected`.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import IntEnum
from types import MappingProxyType

from engine.contract.codes import JobStatus


@dataclass(frozen=True)
class Table:
    name: str  # "routes", "jobs", "cron": the default file name's stem
    columns: list[str]
    rows: list[list[str]]  # as the cells show them (CSV)
    records: list[dict] | None = field(default=None)  # the same rows as data (JSON): see records_of


def _plain(value):
    """A snapshot value as JSON data: numbers stay numbers, an enum code is its number."""
    if isinstance(value, IntEnum):
        return int(value)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, (dict, MappingProxyType)):
        return {str(k): _plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return value


def records_of(rows) -> list[dict]:
    """The shown rows (the snapshot's own ``JobRow``/``RouteView``/… in the shown order) as JSON
    objects with the snapshot's field names and values: counts and rates as numbers, times as
    epoch seconds, absent values as null. ``:export-json`` wrote the display strings ("46/150",
    "4m53s", "—"), which a script must parse back (issue 29)."""
    out = []
    for r in rows:
        rec = _plain(r)
        status = rec.get("status")
        if isinstance(status, int) and status in JobStatus._value2member_map_:
            rec["status_name"] = JobStatus(status).display  # the name beside the code, as --json gives it
        out.append(rec)
    return out


def to_csv(table: Table) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(table.columns)
    w.writerows(table.rows)
    return out.getvalue()


def to_json(table: Table) -> str:
    """The rows as data (``Table.records``); a table without them as objects keyed by the header
    titles (an empty title becomes ``"flag"``)."""
    if table.records is not None:
        return json.dumps(table.records, indent=1, ensure_ascii=False) + "\n"
    keys = [c or "flag" for c in table.columns]
    return json.dumps([dict(zip(keys, row)) for row in table.rows], indent=1, ensure_ascii=False) + "\n"


def default_path(name: str, ext: str, when: float | None) -> str:
    stamp = datetime.fromtimestamp(when or 0, timezone.utc).strftime("%Y%m%d-%H%M%S")
    return os.path.abspath(f"routedeck-{name}-{stamp}.{ext}")


def parse_args(arg: str) -> tuple[str, str | None]:
    """``[csv|json] [PATH]``; a PATH ending in .json means JSON."""
    words = arg.split()
    fmt = "csv"
    if words and words[0].lower() in ("csv", "json"):
        fmt = words.pop(0).lower()
    path = " ".join(words) or None
    if path and path.lower().endswith(".json") and not arg.lower().startswith("csv"):
        fmt = "json"
    if len(words) > 1 and not path:
        raise ValueError("usage: :export [csv|json] [PATH]")
    return fmt, path


def export_table(app, arg: str) -> str:
    """Write the shown table; returns the path written. Raises ValueError when there is none."""
    fmt, path = parse_args(arg)
    fn = getattr(app.screen, "table_export", None)
    if fn is None:
        raise ValueError("this screen has no table to export (board, jobs, crondor, a route's jobs)")
    table = fn()
    snap = app.snapshot
    path = os.path.abspath(os.path.expanduser(path)) if path else default_path(
        table.name, fmt, snap.time if snap is not None else None)
    text = to_json(table) if fmt == "json" else to_csv(table)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def save_svg(app, arg: str) -> str:
    """The screen as SVG (``App.save_screenshot``); returns the path."""
    path = arg.strip()
    snap = app.snapshot
    if not path:
        path = default_path("screen", "svg", snap.time if snap is not None else None)
    path = os.path.abspath(os.path.expanduser(path))
    folder, name = os.path.split(path)
    if not os.path.isdir(folder):
        raise ValueError(f"no such directory: {folder}")
    return app.save_screenshot(filename=name, path=folder)


def copy_selected(app) -> str:
    """Copy the selected job id or route name; returns what was copied."""
    fn = getattr(app.screen, "selected_id", None)
    value = fn() if fn is not None else None
    if not value:
        raise ValueError("nothing selected to copy (a job or a route)")
    app.copy_to_clipboard(value)
    return value
