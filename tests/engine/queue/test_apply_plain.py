"""``JobQueue.apply_plain`` (the recorder's catch-up, issue 27) leaves a queue exactly as
``apply_quiet`` leaves it with the records ``scan_steps`` makes of the same transaction, and as the
event path (a subscriber) does: the same ads in the same order, attribute spellings, job ids,
kinds, cluster index and highest cluster, before and after a fork."""

from __future__ import annotations

import random

from engine.queue.jobqueue import JobQueue
from engine.queue.steps import PLAIN_FIELDS
from engine.queue.records import plain_record

KEYS = ["1.0", "01.-1", "1.-2", "2.0", "2.1", "02.-1", "0.0", "0.1", "1.-100", "12.3", "012.-1", "x.y"]
NAMES = ["JobStatus", "jobstatus", "Owner", "RouteName", "ClusterId", "NextClusterNum"]
VALUES = ["1", "2", "x y", '"s"']


def _body(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randrange(1, 12)):
        key = rng.choice(KEYS)
        op = rng.choice((101, 102, 103, 103, 103))
        if op == 101:
            lines.append(f"101 {key} {rng.choice(('Job', '(empty)', 'Owner'))} {rng.choice(('Machine', '(empty)'))}")
        elif op == 102:
            lines.append(f"102 {key}")
        else:
            lines.append(f"103 {key} {rng.choice(NAMES)} {rng.choice(VALUES)}")
    return "".join(line + "\n" for line in lines)


def _internals(q: JobQueue) -> tuple:
    return ([(k, q.my_type(k), list(a.items())) for k, a in q.table.items()], dict(q._ids), dict(q._kinds),
            dict(q._lower))


def test_apply_plain_leaves_the_queue_as_apply_quiet_and_the_event_path_do():
    rng = random.Random(12)
    for round_ in range(60):
        plain, quiet, events = JobQueue(), JobQueue(), JobQueue()
        events.subscribe(lambda _ev: None)  # apply_plain then goes through apply_all
        if round_ % 2:  # the running maximum and the cluster index kept up to date, as after a lookup
            for q in (plain, quiet, events):
                q.next_cluster_num()
                q.procs_of(1)
        for step in range(40):
            if step % 13 == 5:  # a fork (the recorder's state checkpoint): later writes copy
                for q in (plain, quiet, events):
                    q.fork()
            fields = PLAIN_FIELDS(_body(rng))
            records = [(103, k, a, v) if o == "3" else plain_record(o, k, a, v) for o, k, a, v in fields]
            plain.apply_plain(fields)
            events.apply_plain(fields)
            quiet.apply_quiet(records)
            assert _internals(plain) == _internals(quiet) == _internals(events), (round_, step, fields)
            # the kept caches: the same as apply_quiet's (the event path may build them at other times)
            assert (plain._max_cluster, plain._by_cluster) == (quiet._max_cluster, quiet._by_cluster)
        assert plain.next_cluster_num() == quiet.next_cluster_num() == events.next_cluster_num()
        procs = [{c: q.procs_of(c) for c in range(20)} for q in (plain, quiet, events)]
        assert procs[0] == procs[1] == procs[2]
