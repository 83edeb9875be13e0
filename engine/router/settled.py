"""The tracked jobs a router poll would skip, kept apart (``JobRouter.poll``).

A poll skips a SUBMITTED job that has seen its routed copy and has nothing left to push
(``dirty``) unless its source or its copy changed since the last poll. Most tracked jobs are
such jobs most of the time; :class:`Settled` keeps them apart from the others, so a poll visits
the others and the jobs the changed keys name, in the order the jobs were tracked, instead of
looking at every tracked job. The poll still applies its own skip test to each job it visits,
so the set only has to hold every job that test would not skip.

Invariants:

- A job enters as unsettled when it is tracked (:meth:`added`) and is filed again after each of
  its visits (:meth:`note`): settled when it is SUBMITTED, has seen its copy and has nothing
  dirty. What makes a job unsettled (its state, ``saw_dest``, ``dirty``) changes only in its own
  steps, during its visit; elsewhere the router only pushes what is dirty (the source policy),
  which clears ``dirty``. So a settled job stays settled until its next visit.
- ``seq`` numbers the jobs in the order they were tracked, which is ``JobRouter.jobs``' order
  (a key is tracked again only after it was forgotten).
- The route counts of the settled jobs (``route_name``, ``is_running``, ``is_held``, which also
  change only in a job's own steps) are kept as they are filed, so the poll's recount adds up
  only the unsettled jobs (:meth:`counts`).
- :meth:`holds`: the two files hold as many jobs as are tracked and ``jobs`` (a :class:`Tracked`)
  was written only by the router since the last poll that visited every job. A job tracked,
  replaced or forgotten another way (a test or a restore editing ``jobs``, or a plain dict put
  in its place) makes the next poll visit every job (:meth:`renumber`).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from engine.router.lifecycle import RoutedJob, State, _NotedDict

_SEQ = attrgetter("seq")
_SUBMITTED = State.SUBMITTED
_RETIRED = State.RETIRED


def in_order(jobs: Any) -> list[RoutedJob]:
    """The tracked jobs in poll order (by their ``seq``)."""
    return sorted(jobs, key=_SEQ)


class Tracked(_NotedDict):
    """``JobRouter.jobs`` (source key -> RoutedJob). The router writes it with dict's own
    methods (``dict.__setitem__(jobs, ...)``, ``dict.pop(jobs, ...)``: each job it tracks is
    filed by :meth:`Settled.added`, each it forgets by :meth:`Settled.note`); a write through
    any other call sets ``edited``, so :meth:`Settled.holds` is False until a poll visited
    every job again."""

    __slots__ = ("edited",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.edited = False

    def _changed(self) -> None:
        self.edited = True


class Settled:
    """The settled and unsettled tracked jobs of one router (module docstring)."""

    def __init__(self) -> None:
        self.settled: dict[str, RoutedJob] = {}  # source key -> job
        self.unsettled: dict[str, RoutedJob] = {}
        self.dest: dict[str, str] = {}  # a settled job's routed copy key -> its source key
        # the settled jobs' route counts: route name -> [jobs, running, held], and each job's part
        self.counted: dict[str, list[int]] = {}
        self.part: dict[str, tuple[str, bool, bool]] = {}
        self.seq = 0
        self.valid = False  # False until a poll visited every job (renumber)
        # keys of the jobs tracked, visited or whose copy (SrcAttrs) was edited since the source
        # policy pass took them (SourcePolicy._periodic_jobs)
        self.touched: set[str] = set()

    def added(self, job: RoutedJob) -> None:
        """``job`` is tracked from now on (after every job tracked before it)."""
        self.seq += 1
        job.seq = self.seq
        self._unsettle(job.src_key)
        self.unsettled[job.src_key] = job
        self.touched.add(job.src_key)
        job.src.watch, job.src.key = self.touched, job.src_key  # its edits are noted (SrcAttrs)

    def holds(self, jobs: dict[str, RoutedJob]) -> bool:
        return (self.valid and type(jobs) is Tracked and not jobs.edited
                and len(self.settled) + len(self.unsettled) == len(jobs))

    def renumber(self, jobs: list[RoutedJob]) -> None:
        """A poll visits every job of ``jobs`` (``JobRouter.jobs``' order, a :class:`Tracked`
        whose ``edited`` the router clears) and notes each."""
        self.settled.clear()
        self.dest.clear()
        self.counted.clear()
        self.part.clear()
        self.unsettled = {}
        for i, job in enumerate(jobs, 1):
            job.seq = i
            self.unsettled[job.src_key] = job
            job.src.watch, job.src.key = self.touched, job.src_key
        self.seq = len(jobs)
        self.valid = True

    def to_visit(self, jobs: dict[str, RoutedJob], changed: set[str]) -> list[RoutedJob]:
        """The unsettled jobs and those whose source or copy key is in ``changed``, in order."""
        visit = {key: job for key, job in self.unsettled.items() if jobs.get(key) is job}
        dest = self.dest
        for key in changed:
            job = jobs.get(key)
            if job is not None:
                visit[key] = job
            src = dest.get(key)
            if src is not None:
                job = jobs.get(src)
                if job is not None:
                    visit[src] = job
        return in_order(visit.values())

    def note(self, job: RoutedJob, jobs: dict[str, RoutedJob]) -> None:
        """File ``job`` after its visit (forgotten, settled or not)."""
        key = job.src_key
        self.touched.add(key)
        if jobs.get(key) is not job:  # forgotten in this visit
            if self.unsettled.get(key) is job:
                del self.unsettled[key]
            if self.settled.get(key) is job:
                self._unsettle(key)
            return
        if job.state is _SUBMITTED and job.saw_dest and not job.dirty:
            part = (job.route_name, job.is_running, job.is_held)
            if self.settled.get(key) is not job:
                self._unsettle(key)
                self.unsettled.pop(key, None)
                self.settled[key] = job
                if job.dest_key is not None:
                    self.dest[job.dest_key] = key
                self._count(part, 1)
                self.part[key] = part
            elif self.part[key] != part:  # its visit changed what it counts
                self._count(self.part[key], -1)
                self._count(part, 1)
                self.part[key] = part
            return
        self._unsettle(key)
        self.unsettled[key] = job

    def counts(self, jobs: dict[str, RoutedJob]) -> dict[str, list[int]]:
        """Route name (as the jobs spell it) -> [jobs, running, held] of every tracked job; only
        when :meth:`holds`."""
        out = {name: list(c) for name, c in self.counted.items()}
        return tally(out, [job for key, job in self.unsettled.items() if jobs.get(key) is job])

    def retired(self, jobs: dict[str, RoutedJob]) -> int:
        """How many tracked jobs are RETIRED (none is settled); only when :meth:`holds`."""
        retired = _RETIRED
        return sum(1 for key, job in self.unsettled.items() if job.state is retired and jobs.get(key) is job)

    def _count(self, part: tuple[str, bool, bool], sign: int) -> None:
        name, running, held = part
        if not name:
            return
        c = self.counted.get(name)
        if c is None:
            c = self.counted[name] = [0, 0, 0]
        c[0] += sign
        c[1] += sign * running
        c[2] += sign * held
        if c[0] == 0:
            del self.counted[name]

    def _unsettle(self, key: str) -> None:
        old = self.settled.pop(key, None)
        if old is None:
            return
        if old.dest_key is not None and self.dest.get(old.dest_key) == key:
            del self.dest[old.dest_key]
        self._count(self.part.pop(key), -1)


def tally(counts: dict[str, list[int]], jobs: Any) -> dict[str, list[int]]:
    """Add ``jobs`` to ``counts``: route name as the jobs spell it -> [jobs, running, held]."""
    for job in jobs:
        name = job.route_name
        if name:
            c = counts.get(name)
            if c is None:
                c = counts[name] = [0, 0, 0]
            c[0] += 1
            if job.is_running:
                c[1] += 1
            if job.is_held:
                c[2] += 1
    return counts
