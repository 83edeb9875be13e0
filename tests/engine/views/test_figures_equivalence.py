"""LiveFigures' copy tracking made cheaper (issue 27: the recorder's route counts were ~10 % of a
catch-up) counts exactly as the code it replaced: the old methods are kept here, verbatim, as the
reference, and both run side by side over random sequences of submits of source jobs and routed
copies, status changes (in place and copy-on-write, as ``JobQueue.fork`` writes), route and source
changes, removals and window closes, compared after every step.

The rules counted are those of htcondor.md §1.5 (statistics, "what counts as success or failure",
``AdjustFailureThrottles``), as engine/views/figures.py's docstring states them; this test pins
only that the new path gives what the old one gave."""

from __future__ import annotations

import contextlib
import random

import pytest

from engine.queue.records import is_proc_key
from engine.views import figures as fig
from engine.views.figures import LiveFigures, RouteRule
from engine.views.recorded import literal_str


def _old_source_id(proc, cluster):
    return literal_str(proc.get("RoutedFromJobId") or (cluster or {}).get("RoutedFromJobId"))


class OldLiveFigures(LiveFigures):
    """LiveFigures' tracking as it was before the change (git 651c465, engine/views/figures.py):
    its ``_copy_and_source`` and ``commit``'s scan for new copies, verbatim. What did not change
    is inherited: the copies that left (``_leave``, moved out of ``commit``), the tracking of a new
    one (``_track``, likewise), ``refresh``, ``_current`` and ``_untrack`` — but for the
    ``_source_id`` they call, which ``old_calls`` puts back while this one runs. (``close_until``
    now shares one default ``RouteRule``, a frozen dataclass, where it made one per route.)"""

    def _copy_and_source(self, key):
        ads = self.ads
        proc = ads.get(key)
        if proc is None:
            return None
        cluster = ads.get("0" + key.partition(".")[0] + ".-1")
        text = proc.get("RouteName") or (cluster or {}).get("RouteName")
        if text is None:
            return None
        route = literal_str(text)
        if route is None:
            return None
        src = _old_source_id(proc, cluster)
        source = ads.get(src) if src else None
        src_cluster = ads.get("0" + src.partition(".")[0] + ".-1") if source is not None else None
        return (route, proc, cluster, source, src_cluster), src

    def commit(self, keys, counted=True, time=None):
        copies, ads = self.copies, self.ads
        if not copies.keys().isdisjoint(keys):
            self._leave(keys, time)
        for key in keys:
            if key in copies or key not in ads or not is_proc_key(key):
                continue
            found = self._copy_and_source(key)
            if found is None:
                continue
            self._track(key, found, counted, time)  # (the old loop's tail, moved as it was)


@contextlib.contextmanager
def old_calls():
    """The module's ``_source_id`` as it was, while the reference runs."""
    new = fig._source_id
    fig._source_id = _old_source_id
    try:
        yield
    finally:
        fig._source_id = new


ROUTES = ['"A"', ' "B" ', '"B"', '"C"', '""', "A", '"C\\"x"', "undefined"]  # plain, spaced, empty, bad, escaped, undefined


def state(f: LiveFigures) -> tuple:
    """Everything LiveFigures keeps, with the tracked ad references by identity."""
    copies = {k: (c[0],) + tuple(id(x) if x is not None else None for x in c[1:]) for k, c in f.copies.items()}
    stats = {n: (s.recent_routed, s.recent_succeeded, s.recent_failed, s.throttle, s.stats_begin_time, s.totals)
             for n, s in f.stats.items()}
    return (copies, {k: set(v) for k, v in f.sources.items()}, dict(f.live), dict(f.exit_failed), stats,
            list(f.adjustments), {k: list(v) for k, v in f.history.items()}, list(f.events), f.next_close,
            f.last_close, f.figures(f.last_close or 0.0))


def drive(seed: int, rules, counted_every: int) -> None:
    rng = random.Random(seed)
    ads: dict[str, dict[str, str]] = {}
    new, old = LiveFigures(ads, rules, 10), OldLiveFigures(ads, rules, 10)
    t = 1000.0
    new.begin(t)
    with old_calls():
        old.begin(t)
    cluster = 0

    def procs() -> list[str]:
        return [k for k in ads if is_proc_key(k)]

    for step in range(400):
        t += rng.choice([0.0, 1.0, 5.0, 37.0, 300.0])
        op = rng.random()
        keys: set[str] = set()
        destroy: list[str] = []
        if op < 0.25:  # a source job
            cluster += 1
            ads[f"0{cluster}.-1"] = {"Owner": '"u"'}
            ads[f"{cluster}.0"] = {"JobStatus": "1"}
            keys = {f"0{cluster}.-1", f"{cluster}.0"}
        elif op < 0.5:  # a routed copy of some job (the route and source on the cluster ad or the proc ad)
            cluster += 1
            src = rng.choice(procs() + ["999.0"]) if ads else "999.0"
            cad, pad = {}, {"JobStatus": "1"}
            (cad if rng.random() < 0.7 else pad)["RouteName"] = rng.choice(ROUTES)
            if rng.random() < 0.9:
                (cad if rng.random() < 0.7 else pad)["RoutedFromJobId"] = f'"{src}"'
            if rng.random() < 0.9:
                ads[f"0{cluster}.-1"] = cad
            ads[f"{cluster}.0"] = pad
            keys = {f"0{cluster}.-1", f"{cluster}.0"}
        elif op < 0.75 and ads:  # a status change, in place or copy-on-write (a forked queue)
            key = rng.choice(list(ads))
            ad = ads[key] if rng.random() < 0.6 else dict(ads[key])
            ads[key] = ad
            ad["JobStatus"] = str(rng.choice([1, 2, 3, 4, 5]))
            if rng.random() < 0.4:
                ad["ExitCode"] = str(rng.choice([0, 0, 1]))
            if rng.random() < 0.1:
                ad["ExitBySignal"] = rng.choice(["true", "false"])
            if rng.random() < 0.1:
                ad["RouteName"] = rng.choice(ROUTES)
            if rng.random() < 0.05:
                ad["RoutedFromJobId"] = f'"{rng.choice(procs() or ["1.0"])}"'
            keys = {key}
        elif ads:  # removals: a proc, its cluster, or both
            key = rng.choice(procs() or list(ads))
            c = "0" + key.partition(".")[0] + ".-1"
            destroy = [k for k in (key, c) if k in ads and (k == key or rng.random() < 0.7)]
            keys = set(destroy)
        inclusive, told = rng.random() < 0.5, rng.random() < 0.8
        counted = step % counted_every != 0

        def before(f: LiveFigures) -> None:
            f.close_until(t, inclusive=inclusive)
            if destroy:
                f.refresh(destroy)

        def after(f: LiveFigures) -> None:
            f.commit(keys, counted=counted, time=t if told else None)
            if step % 50 == 0:
                f.adopt()

        before(new)
        with old_calls():
            before(old)
        for k in destroy:
            del ads[k]
        after(new)
        with old_calls():
            after(old)
        assert state(new) == state(old), f"seed {seed}, step {step}"
    assert new.copies and new.adjustments  # the sequences do track copies and close windows


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("rules", [None, {"A": RouteRule(0.5, None), "B": RouteRule(0.01, "ExitCode =!= 0")}],
                         ids=["no table", "table"])
def test_live_figures_count_as_the_old_code_on_random_sequences(seed, rules):
    drive(seed, rules, counted_every=7)


def test_text_memo_forgets_when_full(monkeypatch):
    monkeypatch.setattr(fig, "_TEXTS_MAX", 4)
    fig._TEXTS.clear()
    for i in range(10):
        assert fig._text_str(f'"{i}.0"') == f"{i}.0"
        assert len(fig._TEXTS) <= 4
    assert fig._text_str("A") is None and fig._text_str("A") is None  # a bad text: remembered as None
