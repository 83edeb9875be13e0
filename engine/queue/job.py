"""``Job``: a view of one job in a :class:`engine.queue.jobqueue.JobQueue` — its proc ad chained to
its cluster ad (htcondor.md §3.1), read without copying; cached by the queue.

:func:`value_as` reads a value as the type a command shows it as (an integer as
``EvaluateAttrInt``, a number, a string); :func:`bad_values` lists the values of a set of jobs
that are not of their type (a string JobStatus, a list RouteName, a word QDate), for the commands
that say so instead of printing ``?`` (engine.cli.args, "What the input decides")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Protocol

from engine.classad_text import integer_of
from engine.contract.codes import JobStatus

from engine.classad import ClassAdError, as_int, evaluate, is_error, is_undefined, make_ad
from engine.queue.records import cluster_key, job_key


class _Queue(Protocol):
    """What a :class:`Job` reads of the queue that holds it (``engine.queue.jobqueue.JobQueue``;
    named here, not imported, so the queue can import this module without a circle)."""

    _ads: dict[str, dict[str, str]]
    _canon: dict[str, str]
    _lower: dict[str, str]
    _gen: int
    _ver: dict[str, int]


JobId = tuple[int, int]
_EMPTY: Mapping[str, str] = MappingProxyType({})


def _int_of(text: str | None) -> int | None:
    """An integer attribute as EvaluateAttrInt reads it: plain digits fast, anything else
    (``2.0``, an expression of literals) through classad2; None when not an integer."""
    value = integer_of(text)  # a literal: the one reader of attribute text (engine.classad_text)
    if value is not None or text is None:
        return value
    try:
        return as_int(evaluate(text))
    except ClassAdError:
        return None



def schedd_status(status: int | None, initial: int | None = None) -> int:
    """The job's status as the schedd has it, from its ``JobStatus`` and ``InitialJobStatus`` (each
    the integer of the chained ad, None when absent or not an integer). The one rule every view
    uses for a job ad without ``JobStatus`` (issue 25 item 8d: watch showed 0, ``queue`` undefined).

    HTCondor (qmgmt.cpp at 7491a145f6, the commit htcondor.md describes): a job ad whose
    ``JobStatus`` cannot be read as an integer gets ``InitialJobStatus``, else ``IDLE`` — at
    startup (``InitJobQueue``: "job %d.%d has no status attribute, setting it to %s", written back
    at the next rotation) and for every new proc ad at commit (the ``initial_status`` assignment
    before the submit transforms). So it is 1 (Idle) unless ``InitialJobStatus`` says otherwise.
    (A Preparing cluster's status reaches the proc through the cluster ad, as the chained lookup
    reads it.)"""
    if status is not None:
        return status
    return initial if initial is not None else int(JobStatus.IDLE)


INTEGER, NUMBER, STRING = "an integer", "a number", "a string"
_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?").fullmatch


def value_as(text: str | None, kind: str) -> Any:
    """The value of ``text`` as ``kind`` (:data:`INTEGER`, :data:`NUMBER`, :data:`STRING`); None
    when there is no text or its value is not of that kind. Literals are read directly; anything
    else is evaluated on its own (a reference to another attribute is undefined, so not a value)."""
    if text is None:
        return None
    if kind == INTEGER:
        return _int_of(text)
    if kind == NUMBER:
        if _NUMBER(text):
            return float(text)
        try:
            v = evaluate(text)
        except ClassAdError:
            return None
        return float(v) if (isinstance(v, (int, float)) and not isinstance(v, bool)  # undefined and error: int-like
                            and not is_undefined(v) and not is_error(v)) else None
    if text[:1] == '"' and text[-1:] == '"' and len(text) >= 2:  # a string literal: read directly
        if text.count('"') == 2:
            return text[1:-1]
        if '"' not in text[1:-1].replace('\\"', ""):
            return text[1:-1].replace('\\"', '"')
    try:
        v = evaluate(text)
    except ClassAdError:
        return None
    return v if isinstance(v, str) else None


@dataclass(frozen=True)
class BadValue:
    """A job's value that is not of the type a command shows it as."""

    job: str
    name: str
    text: str
    kind: str

    def __str__(self) -> str:
        text = self.text if len(self.text) <= 60 else self.text[:60] + "…"
        return f"job {self.job}: {self.name} = {text} is not {self.kind}"


def bad_values(jobs: Iterable["Job"], kinds: Mapping[str, str]) -> list[BadValue]:
    """Every value of ``jobs`` named in ``kinds`` (attribute → kind) that is there and not of its
    kind, in job order then ``kinds`` order. A missing attribute is not a bad value."""
    out = []
    for job in jobs:
        for name, kind in kinds.items():
            text = job.get(name)
            if text is not None and value_as(text, kind) is None:
                out.append(BadValue(job.key, name, text, kind))
    return out


class Job:
    """A view of one job: its proc ad chained to its cluster ad. Cheap; cached by the queue."""

    __slots__ = ("_q", "id", "key", "_ckey", "_ad", "_stamp")

    def __init__(self, queue: _Queue, jid: JobId) -> None:
        self._q = queue
        self.id = jid
        self.key = job_key(*jid)
        self._ckey = cluster_key(jid[0])
        self._ad: Any = None
        self._stamp: tuple[int, int, int] | None = None

    def __repr__(self) -> str:
        return f"Job({self.key})"

    @property
    def proc_attrs(self) -> Mapping[str, str]:
        return MappingProxyType(self._q._ads.get(self.key, {}))

    @property
    def cluster_attrs(self) -> Mapping[str, str]:
        return MappingProxyType(self._q._ads.get(self._ckey, {}))

    def proc_texts(self) -> Mapping[str, str]:
        """The proc ad itself, without a read-only wrapper: for hot read-only loops (the routing
        scan). Callers must not change it; it is the queue's own dict (empty when absent)."""
        return self._q._ads.get(self.key, _EMPTY)

    def get(self, name: str) -> str | None:
        """Value text of ``name`` (any case); the proc ad wins over the cluster ad."""
        q = self._q
        n = q._canon.get(name) or q._lower.get(name.lower())
        if n is None:
            return None
        v = q._ads.get(self.key, _EMPTY).get(n)
        if v is None:
            v = q._ads.get(self._ckey, _EMPTY).get(n)
        return v

    @property
    def attrs(self) -> dict[str, str]:
        """The effective ad as {name: text}: cluster attributes overlaid by proc attributes."""
        out = dict(self._q._ads.get(self._ckey, _EMPTY))
        out.update(self._q._ads.get(self.key, _EMPTY))
        return out

    def cluster_stamp(self) -> tuple[Any, int, int]:
        """(queue, generation, version of the cluster ad): equal for two calls only while the
        cluster ad's texts are the same (the stamp ``classad`` uses, for the cluster part)."""
        q = self._q
        return (q, q._gen, q._ver.get(self._ckey, 0))

    @property
    def status(self) -> int | None:
        """``JobStatus`` as written (EvaluateAttrInt); None when absent or not an integer."""
        return _int_of(self.get("JobStatus"))

    @property
    def schedd_status(self) -> int:
        """The status the schedd gives the job (:func:`schedd_status`): what every view shows."""
        status = self.status
        return status if status is not None else schedd_status(None, _int_of(self.get("InitialJobStatus")))

    def classad(self) -> Any:
        """The effective ad as a classad2 ad (``engine.classad.make_ad``), rebuilt only after a
        change to the proc or cluster ad."""
        q = self._q
        stamp = (q._gen, q._ver.get(self.key, 0), q._ver.get(self._ckey, 0))
        if self._stamp != stamp:
            self._ad = make_ad(self.attrs)
            self._stamp = stamp
        return self._ad
