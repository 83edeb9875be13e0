"""Random job_queue.log recordings for the replay tests, with their expected states.

Written for RouteDeck's tests (not third-party data). The format follows htcondor.md §3.1/§3.2:
``105 ``/``106 `` with trailing spaces, ``106 # <ISO local time>`` comments, cluster keys with a
leading zero, values as old-ClassAd text. The expected state after each step is computed here
from the generator's own operations (dicts, no parsing), independently of engine.feeds.replay.
"""

from __future__ import annotations

import random
from datetime import datetime, timezone

T0 = 1795300000  # 2026-11-21 UTC


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds")


class Recording:
    def __init__(self, seed: int, steps: int = 300, comments: bool = True) -> None:
        self.rng = random.Random(seed)
        self.lines: list[str] = ["107 1 CreationTimestamp %d" % T0]
        self.states: list[dict] = []  # expected {key: (mytype, {name: value})} after each step
        self.times: list[float] = []
        ads: dict[str, tuple[str, dict]] = {}
        t = float(T0)
        next_cluster = 1
        jobs: list[str] = []
        for i in range(steps):
            rng = self.rng
            t += rng.choice([0, 0.5, 3, 60, 600])
            ops: list[tuple] = []
            if rng.random() < 0.3 or not jobs:
                c = next_cluster
                next_cluster += 1
                ops.append((103, "0.0", "NextClusterNum", str(next_cluster)))
                ops.append((101, "0%d.-1" % c, "Job", None))
                ops.append((103, "0%d.-1" % c, "QDate", str(int(t))))
                ops.append((103, "0%d.-1" % c, "Owner", '"u%d"' % rng.randrange(3)))
                if rng.random() < 0.4:
                    ops.append((103, "0%d.-1" % c, "RouteName", '"R%d"' % rng.randrange(3)))
                for p in range(rng.randrange(1, 4)):
                    key = "%d.%d" % (c, p)
                    ops.append((101, key, "Job", None))
                    ops.append((103, key, "ProcId", str(p)))
                    ops.append((103, key, "JobStatus", "1"))
                    jobs.append(key)
            for _ in range(rng.randrange(0, 4)):
                if not jobs:
                    break
                key = rng.choice(jobs)
                r = rng.random()
                if r < 0.6:
                    ops.append((103, key, "JobStatus", str(rng.choice([1, 2, 2, 4, 5]))))
                    ops.append((103, key, "EnteredCurrentStatus", str(int(t))))
                elif r < 0.7:
                    ops.append((104, key, "EnteredCurrentStatus", None))
                elif r < 0.8:
                    ops.append((103, key, "Note", '"x  y\\" z"'))
                else:
                    ops.append((102, key, None, None))
                    jobs.remove(key)
            if rng.random() < 0.05:
                ops.append((103, "9999.0", "Ghost", "1"))  # unknown key: ignored (§3.5 consumer)
            outside = bool(ops) and i > 0 and rng.random() < 0.1 and self.lines[-1].startswith("106")
            if not outside:
                self.lines.append("105 ")
            touched = set()
            for op, key, name, value in ops:
                self.lines.append(_render(op, key, name, value))
                _apply(ads, op, key, name, value)
                touched.add(key)
            if not outside:
                self.lines.append("106 # %s" % _iso(t) if comments else "106 ")
            # a copy of each ad this step wrote; the others are the step before's copies (the
            # states are only read): copying every ad at every step was most of this class's CPU
            before = self.states[-1] if self.states else {}
            self.states.append({k: before[k] if k in before and k not in touched else (m, dict(a))
                                for k, (m, a) in ads.items()})
            self.times.append(t)

    def text(self, torn: bool = False) -> str:
        out = "\n".join(self.lines) + "\n"
        if torn:  # an open transaction and a torn line at the end: neither is a step (§3.3)
            out += "105 \n103 1.0 JobStatus 3\n103 1.0 Torn"
        return out


def _render(op, key, name, value) -> str:
    if op == 101:
        return "101 %s %s Machine" % (key, name)
    if op == 102:
        return "102 %s" % key
    if op == 103:
        return "103 %s %s %s" % (key, name, value)
    return "104 %s %s" % (key, name)


def _apply(ads, op, key, name, value) -> None:
    if op == 101:
        ads.setdefault(key, (name, {}))
    elif op == 102:
        ads.pop(key, None)
    elif key in ads:
        if op == 103:
            ads[key][1][name] = value
        else:
            ads[key][1].pop(name, None)


def as_expected(state) -> dict:
    """A replay state (a JobQueue) in the Recording.states form."""
    return state.snapshot_state()
