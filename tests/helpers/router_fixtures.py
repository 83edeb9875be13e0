"""Shared helpers for the router runtime tests: queues, jobs, a schedd's moves, tables.

A routed copy's status only changes because the destination queue changes; these helpers do
what a schedd would do to it (start it, complete it, hold it, remove it, let it leave).
"""

from __future__ import annotations

from types import SimpleNamespace

from engine.classad import evaluate, is_true, quote
from engine.queue.jobqueue import JobQueue
from engine.router.router import JobRouter
from engine.router.table import Route, RouterKnobs, RoutingTable

T0 = 1_700_000_000.0


class _Transform:
    """Stands in for the transform engine: matching only (REQUIREMENTS with the job as MY)."""

    def __init__(self, requirements):
        self.requirements = requirements
        self.text = requirements or ""

    def matches(self, job_ad, now=None, config=None):
        if not self.requirements:
            return True
        return is_true(evaluate(self.requirements, my=job_ad, now=now))


def route(name, requirements="true", **kw):
    return Route(name=name, source_label=f"JOB_ROUTER_ROUTE_{name}", location=None, syntax="transform",
                 transform=_Transform(requirements), requirements=requirements, **kw)


class KnobConfig:
    """``NAME = value`` lines; ``get`` is case-insensitive like ``engine.lang.config.Config.get``."""

    def __init__(self, text=""):
        self._d = {}
        for line in text.splitlines():
            if "=" in line and not line.lstrip().startswith("#"):
                k, _, v = line.partition("=")
                self._d[k.strip().upper()] = v.strip()

    def get(self, name, default=None):
        return self._d.get(name.upper(), default)


def table(routes, config_text="", **knobs):
    cfg = KnobConfig(config_text)
    return RoutingTable(routes=list(routes), disabled=[], pre_transforms=[], post_transforms=[],
                        knobs=RouterKnobs(**knobs), config=cfg, diagnostics=[], routing_enabled=True)


VANILLA_TO_GRID_DELETES = ("ClusterId", "ProcId", "GlobalJobId", "User", "QDate", "StageInFinish", "StageInStart")


def build(tbl, rt, src, *, now, source_id, sandboxed, edit_in_place=False):
    """A small stand-in for routed_copy.build_routed_ad (VanillaToGrid essentials + router attrs)."""
    ad = dict(src)
    if edit_in_place:
        ad["EditedBy"] = quote(rt.name)
        return ad
    for a in VANILLA_TO_GRID_DELETES:
        ad.pop(a, None)
    ad["JobStatus"] = "1"
    ad["Remote_JobUniverse"] = src.get("JobUniverse", "5")
    ad["JobUniverse"] = str(rt.target_universe)
    if rt.grid_resource:
        ad["GridResource"] = quote(rt.grid_resource)
    ad["RoutedFromJobId"] = quote("%d.%d" % source_id)
    ad["RoutedBy"] = quote(tbl.knobs.name)
    ad["RouteName"] = quote(rt.name)
    ad.pop("RoutedToJobId", None)
    return ad


def submit(q, n=1, now=T0, **attrs):
    """Submit a cluster of ``n`` idle vanilla jobs; attrs are old-syntax texts (per-proc callables ok)."""
    keys = []
    with q.transaction(now=now) as t:
        c = t.new_cluster()
        base = {"Owner": '"alice"', "JobUniverse": "5", "Cmd": '"/bin/sleep"', "QDate": str(int(now))}
        for name, text in base.items():
            t.set_attribute((c, -1), name, text)
        for i in range(n):
            _, p = t.new_proc(c)
            t.set_attribute((c, p), "ProcId", str(p))
            t.set_attribute((c, p), "ClusterId", str(c))
            t.set_attribute((c, p), "JobStatus", "1")
            for name, text in attrs.items():
                t.set_attribute((c, p), name, text(p) if callable(text) else text)
            keys.append(f"{c}.{p}")
    return keys


def schedd_set(q, key, now=T0, **attrs):
    with q.transaction(now=now) as t:
        for name, text in attrs.items():
            if text is None:
                t.delete_attribute(key, name)
            else:
                t.set_attribute(key, name, str(text))


def schedd_destroy(q, key, now=T0):
    with q.transaction(now=now) as t:
        t.destroy(key)


def make_router(tbl, src=None, dst=None, now=T0, **kw):
    src = src if src is not None else JobQueue()
    r = JobRouter(tbl, src, dst, now=now, build=build, **kw)
    return r, src, r.dst_q


def get(q, key, name):
    job = q.get(key)
    return None if job is None else job.get(name)


def kinds(router):
    return [e.kind for e in router.drain_events()]


ns = SimpleNamespace


def outcomes(events):
    """{source job: outcome} from the job-retired events in ``events``."""
    return {e.job: e.outcome for e in events if e.kind == "job-retired"}


# A good two-route transform table (A for alice, B for the rest): the last good state that the
# hostile-input tests break and expect kept.
TWO_ROUTES = """\
JOB_ROUTER_ROUTE_NAMES = A B
JOB_ROUTER_ROUTE_A @=jrt
  UNIVERSE 5
  REQUIREMENTS Owner == "alice"
@jrt
JOB_ROUTER_ROUTE_B @=jrt
  UNIVERSE 5
  REQUIREMENTS true
@jrt
"""
