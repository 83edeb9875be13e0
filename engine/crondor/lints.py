"""Lints for crondor schedules: what HTCondor does, and what Unix cron would do where different.

Design decisions and invariants:

- Every message names HTCondor's behaviour (htcondor.md §2.2–§2.5) and, where it differs, what
  Unix cron (Vixie cron / cronie, modelled in :mod:`engine.crondor.unixcron`) does.
- Levels: ``error`` when the job would be held, never run, or the schedd would hang; otherwise
  ``warning``. Each lint has a stable ``code`` for tests and screens; the CLI's JSON shows only
  level and message.
- Lints are pure: :func:`lint_schedule` looks at the fields (and, given a zone and a start, at
  the DST changes of the next year); :func:`lint_runs` compares the correct runs with the
  schedd's predicted runs; :func:`lint_deferral` checks window and prep time.
"""

from __future__ import annotations

from dataclasses import dataclass

from .explanation import compress, format_time, month_list, weekday_list
from .fields import ATTRS, DOM, DOW, LIMITS, MONTH, Schedule, atoi, read_token, split_tokens
from .nextrun import _MAX_DAYS_IN, civil, day_mask, month_info, never_fires
from .unixcron import cron_field, cron_item, cron_star
from .zones import get_zone

UNITS = ("minute", "hour", "day of the month", "month", "day of the week")
EVERY = ("every minute", "every hour", "every day", "every month", "every day (no weekday restriction)")


@dataclass(frozen=True)
class Lint:
    level: str  # "warning" | "error"
    code: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"level": self.level, "message": self.message}


def _vals(idx: int, values) -> str:
    if idx == DOW:
        return weekday_list(values) if values else "no day"
    if idx == MONTH:
        return month_list(values) if values else "no month"
    return compress(values) if values else "nothing"


def _token_lints(idx: int, text: str, field_ok: bool, field_values) -> list[Lint]:
    attr, out = ATTRS[idx], []
    fmin, fmax = LIMITS[idx]
    compact = text.replace(" ", "")
    if " " in text.strip():
        out.append(Lint("warning", "spaces", f"{attr} = '{text}': HTCondor removes every space and reads "
                        f"'{compact}'; in a crontab a space separates fields, so Unix cron would misread it."))
    if compact and ("" in compact.split(",")):
        out.append(Lint("warning", "empty-item", f"{attr} = '{text}': HTCondor skips empty list items; "
                        "Unix cron rejects the line."))
    if not compact:
        if idx == DOW:
            out.append(Lint("warning", "empty-field", f"{attr} is empty: HTCondor reads it as no weekday "
                            "restriction; Unix cron rejects an empty field."))
        else:
            out.append(Lint("error", "empty-field", f"{attr} is empty: HTCondor holds the job (code 25, "
                            f"'Invalid cron attribute: '); leave the attribute out to mean {EVERY[idx]}. "
                            "Unix cron rejects an empty field too."))
        return out
    for item in split_tokens(text):
        tok = read_token(item, idx)
        q = f"{attr} item '{item}'"
        if tok.step == 0:
            out.append(Lint("error", "step-zero", f"{q}: a step of 0 makes HTCondor mark the schedule invalid "
                            "with an empty error text, so the hold reason is just 'Invalid cron schedule "
                            "parameters: '. Unix cron rejects step 0 too."))
            continue
        if tok.step < 0:
            out.append(Lint("warning", "negative-step", f"{q}: HTCondor accepts a negative step and tests "
                            f"v % {tok.step} == 0, which acts like /{-tok.step}; Unix cron rejects it."))
        if "." in item:
            out.append(Lint("warning", "dot", f"{q}: HTCondor reads numbers with C atoi, so '.' ends the "
                            f"number ('{item}' counts as {_atoi_text(item)}); Unix cron rejects '.'."))
        if tok.ignored:
            cron = cron_item(item, idx)
            if cron is not None and len(cron) == 7:
                continue  # '*' or '*/1': ignoring it means every day, as in cron
            cron_text = f"reads it as {_vals(idx, cron)}" if cron is not None else "rejects it"
            out.append(Lint("warning", "dow-star-ignored", f"{q}: HTCondor ignores day-of-week items that "
                            f"contain '*', so it adds no day; Unix cron {cron_text}."))
            continue
        if tok.kind == "range":
            before = item.split("/")[0].partition("-")[0]
            reversed_ = tok.lo > tok.hi
            if before == "" and not reversed_:
                out.append(Lint("warning", "open-range", f"{q}: HTCondor reads the missing start as {fmin}, "
                                f"i.e. {tok.lo}-{tok.hi}; Unix cron rejects it."))
            elif not reversed_ and (tok.raw_lo < fmin or tok.raw_hi > fmax):
                out.append(Lint("warning", "clamped-range", f"{q}: HTCondor clamps the range to "
                                f"{tok.lo}-{tok.hi}; Unix cron rejects values outside {fmin}-{fmax}."))
            if reversed_:
                if idx == DOW:
                    tail = " With nothing else listed the job runs on every day." if not field_values else ""
                    out.append(Lint("warning", "reversed-range", f"{q}: a reversed range adds no day in "
                                    f"HTCondor (no wrap-around), and no error is given.{tail} Unix cron "
                                    "rejects a reversed range."))
                else:
                    hold = "" if field_ok else (f" {attr} is then empty and the schedd holds the job: "
                                                f"'Invalid cron attribute: {compact}'.")
                    out.append(Lint("error" if not field_ok else "warning", "reversed-range",
                                    f"{q}: a reversed or open-ended range adds nothing in HTCondor (no "
                                    f"wrap-around).{hold} Unix cron rejects it."))
                continue
        if tok.kind == "single" and tok.raw_lo is not None and not fmin <= tok.raw_lo <= fmax:
            out.append(Lint("warning", "out-of-range", f"{q}: {tok.raw_lo} is outside {fmin}-{fmax}, so "
                            f"HTCondor reads it as {EVERY[idx]}; Unix cron rejects the line."))
        if tok.step != 1:
            _step_lint(out, q, idx, item, tok, field_ok, attr, compact)
    return out


def _atoi_text(item: str) -> str:
    return ", ".join(str(atoi(part)) for part in item.split("/")[0].split("-"))


def _step_lint(out, q, idx, item, tok, field_ok, attr, compact) -> None:
    ours = _vals(idx, tok.values)
    cron = cron_item(item, idx)
    rule = f"HTCondor keeps the values v with v % {abs(tok.step)} == 0 (steps count from 0)"
    if cron is None and tok.kind == "single":
        hold = "" if field_ok else f", so the schedd holds the job ('Invalid cron attribute: {compact}')"
        lo = tok.raw_lo if tok.raw_lo is not None else LIMITS[idx][0]
        out.append(Lint("warning" if field_ok else "error", "single-step", f"{q}: {rule}: {ours}{hold}. "
                        "Vixie cron and cronie reject a single value with a step (cronsim reads it as "
                        f"{lo}-{LIMITS[idx][1]}/{abs(tok.step)})."))
    elif cron is not None and set(cron) != set(tok.values):
        out.append(Lint("warning", "step-from-zero", f"{q}: {rule}: {ours}; Unix cron counts from the "
                        f"range start: {_vals(idx, cron)}."))


def _day_rule_lints(s: Schedule) -> list[Lint]:
    out = []
    dom_text, dow_text = s.texts[DOM], s.texts[DOW]
    dows, doms = s.dows, s.doms
    if s.schedd_defect:
        same = "; Unix cron does the same" if cron_star(dom_text) else ""
        out.append(Lint("warning", "weekday-defect", f"Only CronDayOfWeek restricts the day: RouteDeck runs "
                        f"on {weekday_list(dows)} only (the documented rule{same}). "
                        "HTCondor >= 10.3's schedd has a defect (its day list is padded with day 0): once a "
                        "month's last matching weekday has passed it picks the last day of that month, or "
                        "now + 120 s when that day is already over."))
        if not cron_star(dom_text) and cron_field(dow_text, DOW):
            out.append(Lint("warning", "dom-full-explicit", f"CronDayOfMonth = '{dom_text}' covers every "
                            "day, which HTCondor treats like '*' (weekdays only); Unix cron treats an "
                            "explicit day-of-month list as a restriction and ORs it with the weekday: every "
                            "day."))
    if s.day_rule == "union":
        if len(dows) == 7:
            out.append(Lint("warning", "dow-all", "CronDayOfWeek lists all seven days, so with HTCondor's OR "
                            "rule the job runs every day and CronDayOfMonth has no effect (same in Unix cron)."))
        elif cron_star(dom_text) and not cron_star(dow_text):
            out.append(Lint("warning", "dom-star-and", f"CronDayOfMonth = '{dom_text}' is restricted, so "
                            f"HTCondor runs on day {compress(doms)} OR on {weekday_list(dows)}; Unix cron "
                            "ANDs the two because the field starts with '*'."))
        else:
            out.append(Lint("warning", "dom-or-dow", f"Both day fields are restricted: HTCondor runs on day "
                            f"{compress(doms)} of the month OR on {weekday_list(dows)}, not only when both "
                            "match (Unix cron does the same)."))
    if s.day_rule == "dom" and len(doms) < 31:
        if never_fires(s):
            out.append(Lint("error", "never-fires", f"Day {compress(doms)} never occurs in "
                            f"{month_list(s.months)}: the job never runs. HTCondor's schedd recurses without "
                            "end on this schedule (it crashes or hangs); Unix cron silently never runs it."))
        else:
            first = min(doms)
            dead = [m for m in s.months if first > _MAX_DAYS_IN[m]]
            if dead:
                out.append(Lint("warning", "dead-months", f"Day {compress(doms)} does not occur in "
                                f"{month_list(dead)}: no run in those months (HTCondor and Unix cron agree)."))
            if {(m, d) for m in s.months for d in doms if d <= _MAX_DAYS_IN[m]} == {(2, 29)}:
                out.append(Lint("warning", "leap-only", "The only possible date is 29 February: the job "
                                    "runs in leap years only (HTCondor and Unix cron agree)."))
    return out


def _dst_lints(s: Schedule, zone, after: float) -> list[Lint]:
    z = get_zone(zone)
    out: list[Lint] = []
    for t, ob, oa in z.transitions_between(int(after), int(after) + 366 * 86400)[:4]:
        lo, hi = t + min(ob, oa), t + max(ob, oa)  # wall seconds affected
        hits = [w for w in range(lo - lo % 60, hi, 60) if w >= lo and _wall_matches(s, w)]
        if not hits or ("dst-gap" if oa > ob else "dst-repeat") in {lint.code for lint in out}:
            continue  # one lint per kind is enough
        y, mo, d = civil(hits[0] // 86400)
        when = f"{y:04d}-{mo:02d}-{d:02d} {hits[0] % 86400 // 3600:02d}:{hits[0] % 3600 // 60:02d}"
        if oa > ob:
            moved = format_time(hits[0] - ob, z)
            out.append(Lint("warning", "dst-gap", f"{when} does not exist in {z.name} (clocks jump forward): "
                            f"HTCondor (glibc mktime) runs it at {moved}; Unix cron (cronie) runs jobs of a "
                            "skipped hour right after the jump."))
        else:
            out.append(Lint("warning", "dst-repeat", f"{when} happens twice in {z.name} (clocks go back): "
                            "HTCondor runs it once; RouteDeck uses the first occurrence, while a real schedd "
                            "(glibc mktime) can pick either, depending on its previous mktime call, and falls "
                            "back to now + 120 s when it starts inside the repeated hour. Unix cron (cronie) "
                            "also runs it once."))
    return out


def _wall_matches(s: Schedule, wall: int) -> bool:
    days, sec = divmod(wall, 86400)
    y, mo, d = civil(days)
    if not (s.month_mask >> mo) & 1:
        return False
    _base, first, dim = month_info(y, mo)
    return bool((day_mask(s, first, dim) >> d) & 1 and (s.hour_mask >> (sec // 3600)) & 1
                and (s.minute_mask >> (sec % 3600 // 60)) & 1)


def lint_schedule(s: Schedule, zone=None, after: float | None = None, non_string: tuple[str, ...] = ()) -> list[Lint]:
    """Field and day-rule lints; DST lints too when ``after`` is given."""
    out: list[Lint] = []
    for attr in non_string:
        idx = ATTRS.index(attr)
        out.append(Lint("warning", "non-string", f"{attr} is not a string: HTCondor reads it as '*' "
                        f"({EVERY[idx]}); quote it (the cron_* submit commands write strings)."))
    for f in s.fields:
        if f.bad_chars:
            letters = any(c.isalpha() for c in f.text or "")
            cron = ("Unix cron accepts names such as MON or JAN here; use numbers (Sunday = 0 or 7)."
                    if letters and f.idx in (MONTH, DOW) and cron_field(f.text, f.idx) is not None
                    else "Unix cron rejects it too.")
            out.append(Lint("error", "bad-chars", f"{ATTRS[f.idx]} = '{f.text}': HTCondor allows only digits, "
                            f"spaces and , - / * . so the schedd holds the job (code 25, '{f.error}'). {cron}"))
        elif f.text is not None:
            out.extend(_token_lints(f.idx, f.text, f.ok, f.values))
    if s.valid:
        out.extend(_day_rule_lints(s))
        if after is not None and get_zone(zone).has_transitions:
            out.extend(_dst_lints(s, zone, after))
    return out


def lint_runs(runs: list[int], schedd: list, zone=None, schedd_interval: int = 300) -> list[Lint]:
    """Where the schedd's chain (``ScheddRun`` list) first differs from the correct one."""
    out = []
    for k, (ours, theirs) in enumerate(zip(runs, schedd)):
        if ours != theirs.time:
            why = " (its now + 120 s fallback: the time it computed was already past)" if theirs.fallback else ""
            out.append(Lint("warning", "schedd-differs", f"Run {k + 1}: a real HTCondor >= 10.3 schedd would set "
                            f"DeferralTime to {format_time(theirs.time, zone)}{why}, not "
                            f"{format_time(ours, zone)}."))
            break
    gaps = [b - a for a, b in zip(runs, runs[1:])]
    if gaps and min(gaps) < schedd_interval:
        out.append(Lint("warning", "one-instance", f"Runs can be {min(gaps)} s apart, less than ScheddInterval "
                        f"({schedd_interval} s): HTCondor runs one instance of a job at a time and computes "
                        "the next DeferralTime only when the job is idle again, so runs that come while it "
                        "waits or runs are skipped; Unix cron would start overlapping copies."))
    return out


def lint_deferral(window: int, prep_time: int, schedd_interval: int = 300) -> list[Lint]:
    out = []
    if window == 0 and prep_time > 300:
        out.append(Lint("warning", "window-zero-long-prep", f"DeferralWindow is 0 with DeferralPrepTime "
                        f"{prep_time}: the job can be matched up to {prep_time + schedd_interval} s early and "
                        "holds its slot while it waits, and if it starts even 1 s after DeferralTime the "
                        "starter puts it on hold (code 20, 'Job missed deferred execution time'). Set "
                        "cron_window. Unix cron has no window: it never holds a late job."))
    return out
