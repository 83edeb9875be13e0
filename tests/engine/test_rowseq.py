"""The chunked jobs table (engine.rowseq) against plain tuples and sorted lists (issue 14 item 2).

- ``RowSeq`` behaves as the tuple of its items: len, indexing (negative too), slices, iteration,
  reversed, ``in``, ``index``, ``count``, equality and hash.
- ``ChunkedRows`` after random inserts, removes and replaces equals the sorted list (the oracle),
  every sequence it handed out earlier is unchanged by later changes, and a change replaces only
  the chunks it touched (the others are the same objects: a snapshot costs what changed).
- ``RowIndex`` (the demo's and the replay's jobs table) kept from random queue events equals the
  old code path: every job's row, sorted by job id.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, strategies as st

from engine.queue.jobqueue import JobAdded, JobChanged, JobRemoved, QueueReloaded
from engine.queue.records import job_order
from engine.rowseq import ChunkedRows, RowSeq
from engine.views.build import RowIndex, _row

@given(st.lists(st.lists(st.integers(0, 9), max_size=6), max_size=8), st.data())
def test_rowseq_is_its_tuple(chunks, data):
    seq = RowSeq(tuple(c) for c in chunks)
    flat = tuple(x for c in chunks for x in c)
    assert len(seq) == len(flat) and tuple(seq) == flat and list(reversed(seq)) == list(reversed(flat))
    assert seq == flat and flat == seq and seq == list(flat) and hash(seq) == hash(flat)
    assert seq != flat + (1,) and seq == RowSeq.of(flat, 3) and bool(seq) == bool(flat)
    for i in range(-len(flat) - 2, len(flat) + 2):
        if -len(flat) <= i < len(flat):
            assert seq[i] == flat[i]
        else:
            with pytest.raises(IndexError):
                seq[i]
    start = data.draw(st.none() | st.integers(-12, 12))
    stop = data.draw(st.none() | st.integers(-12, 12))
    step = data.draw(st.none() | st.sampled_from([1, 2, -1, -3]))
    assert seq[start:stop:step] == flat[start:stop:step]
    assert isinstance(seq[start:stop:step], tuple)
    for x in range(11):
        assert (x in seq) == (x in flat) and seq.count(x) == flat.count(x)
        if x in flat:
            assert seq.index(x) == flat.index(x)


def _key(item: tuple[int, int]) -> int:
    return item[0]


@pytest.mark.parametrize("seed", range(12))
def test_chunked_rows_equal_the_sorted_list_and_never_change_once_handed_out(seed):
    rnd = random.Random(seed)
    size = rnd.choice([1, 2, 4, 8])
    rows = ChunkedRows(_key, size)
    oracle: list[tuple[int, int]] = []  # (sort key, serial): equal keys keep their arrival order
    serial = 0
    handed: list[tuple[RowSeq, tuple]] = []
    for _ in range(60):
        if rnd.random() < 0.05:
            oracle = sorted(oracle)
            rows.reset(oracle)
        for _ in range(rnd.randint(0, 12)):
            op = rnd.random()
            if op < 0.5 or not oracle:
                serial += 1
                item = (rnd.randint(0, 40), serial)
                rows.insert(item)
                at = max((i + 1 for i, o in enumerate(oracle) if o[0] <= item[0]), default=0)
                oracle.insert(at, item)
            elif op < 0.75:
                item = oracle.pop(rnd.randrange(len(oracle)))
                rows.remove(item)
            else:
                i = rnd.randrange(len(oracle))
                serial += 1
                new = (oracle[i][0], serial)
                rows.replace(oracle[i], new)
                oracle[i] = new
        seq = rows.freeze()
        assert tuple(seq) == tuple(oracle)
        assert all(0 < len(c) <= 2 * size for c in seq.chunks)
        handed.append((seq, tuple(oracle)))
    for seq, then in handed:  # later changes left every earlier sequence as it was
        assert tuple(seq) == then and len(seq) == len(then)


def test_a_change_replaces_only_the_chunks_it_touches():
    rows = ChunkedRows(_key, 8)
    items = [(k, 0) for k in range(0, 800, 2)]
    rows.reset(items)
    before = rows.freeze()
    rows.insert((401, 1))  # the middle of the table
    rows.remove(items[5])  # near its start (the item itself: items are found by identity)
    after = rows.freeze()
    assert rows.freeze() is after  # nothing changed since: the same sequence
    shared = set(map(id, before.chunks)) & set(map(id, after.chunks))
    assert len(after.chunks) - len(shared) == 2 and len(before.chunks) - len(shared) == 2
    assert tuple(after) == tuple(sorted([(k, 0) for k in range(0, 800, 2) if k != 10] + [(401, 1)]))


class _Store:
    """A JobSource (engine.views.build) over a dict of ads: no crondor, no live router."""

    def __init__(self) -> None:
        self.ads: dict[str, dict[str, str]] = {}
        self.jobs_version = 0

    def job_keys(self):
        return self.ads

    def attrs(self, job: str):
        return self.ads.get(job)

    def deferral(self, job: str):
        return None

    def tracked_route(self, job: str):
        return None


def _ad(rnd: random.Random) -> dict[str, str]:
    return {"JobStatus": str(rnd.choice([1, 2, 4, 5])), "Owner": '"u%d"' % rnd.randrange(5), "QDate": "1"}


@pytest.mark.parametrize("seed", range(8))
def test_row_index_kept_from_events_equals_the_sorted_rows(seed):
    rnd = random.Random(seed)
    eng = _Store()
    index = RowIndex(eng, chunk=rnd.choice([2, 4, 16]))
    handed = []
    clusters = 1
    for step in range(50):
        changes = rnd.choice([1, 3, 10, 40]) if step % 17 else 200  # some steps re-sort in bulk
        for _ in range(changes):
            op = rnd.random()
            if op < 0.45 or not eng.ads:
                if rnd.random() < 0.3:
                    clusters += 1
                key = f"{rnd.randint(1, clusters)}.{rnd.randint(0, 30)}"
                event = JobChanged if key in eng.ads else JobAdded
                eng.ads[key] = _ad(rnd)
            elif op < 0.7:
                key = rnd.choice(list(eng.ads))
                del eng.ads[key]
                event = JobRemoved
            else:
                key = rnd.choice(list(eng.ads))
                eng.ads[key] = _ad(rnd)
                event = JobChanged
            c, _, p = key.partition(".")
            index.on_event(event((c, p), frozenset()) if event is JobChanged else event((c, p)))
        if step == 30:
            index.on_event(QueueReloaded())
        eng.jobs_version += 1
        table = index.table()
        oracle = [_row(eng, k) for k in sorted(eng.ads, key=job_order)]
        assert table == tuple(oracle) and isinstance(table, RowSeq)
        assert index.status_counts == {s: n for s in {r.status for r in oracle}
                                       if (n := sum(r.status == s for r in oracle))}
        handed.append((table, tuple(table)))
    for table, then in handed:
        assert tuple(table) == then


@given(st.lists(st.integers(0, 30), max_size=60), st.sampled_from([1, 2, 4]), st.integers(-2, 33))
def test_first_at_is_bisect_left_over_the_keys(keys, size, k):
    rows = ChunkedRows(_key, size)
    rows.reset(sorted((x, i) for i, x in enumerate(keys)))
    seq = rows.freeze()
    assert seq.first_at(k) == sum(1 for x in keys if x < k)
    with pytest.raises(TypeError):
        RowSeq.of(tuple(seq)).first_at(k)  # a sequence that does not know its order


@given(st.lists(st.integers(0, 30), max_size=60), st.sampled_from([1, 2, 4]), st.integers(-2, 33),
       st.integers(0, 60))
def test_find_is_the_first_matching_item_among_those_of_its_key(keys, size, k, tag):
    rows = ChunkedRows(_key, size)
    rows.reset(sorted((x, i) for i, x in enumerate(keys)))
    seq = rows.freeze()
    items = tuple(seq)
    want = next((i for i, item in enumerate(items) if item == (k, tag)), None)
    assert seq.find(k, lambda item: item[1] == tag) == want
