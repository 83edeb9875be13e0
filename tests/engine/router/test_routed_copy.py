"""The routed copy (engine/router/routed_copy.py).

Sources: htcondor.md §1.6 "Building the routed copy" (VanillaToGrid deletes/resets, universe,
GridResource, TransferOutputRemaps, RoutedFromJobId/RoutedBy/RouteName, RoutedToJobId deleted,
EditJobInPlace), §1.3 pipeline (pre-route REQUIREMENTS tested on the dest ad after VanillaToGrid,
one macro set shared, a transform failure fails the routing), §1.2 (no pre/post transforms for
JOB_ROUTER_ENTRIES routes), §6 "Job router: facts" (the same lists).
"""

from __future__ import annotations

import pytest
import random

from engine import classad as C
from engine.lang.config import Config
from engine.router.routed_copy import build_routed_ad, filename_remap_find
from engine.router.loader import load_routing_table
from engine.router.table import RoutingError
from engine.router.routed_copy import CIAttrs

SOURCE = {
    "ClusterId": "12", "procid": "3", "JobUniverse": "5", "JobStatus": "2", "Owner": '"alice"', "User": '"alice@x"',
    "QDate": "100", "GlobalJobId": '"s#12.3#100"', "RemoteUserCpu": "5.0", "NumCkpts": "4", "ExitBySignal": "true",
    "CurrentHosts": "1", "Out": '"job.out"', "Err": '"job.err"', "Cmd": '"/bin/sleep"',
    "TransferOutputRemaps": '"job.out = /home/alice/out/job.out; job.err=/home/alice/err/job.err"',
    "RoutedToJobId": '"7.0"', "StageInStart": "90", "TimerRemove": "5000", "SUBMIT_Iwd": '"/x"',
}


def table(text: str):
    return load_routing_table(Config.from_text(text, "r.conf"))


GRID = ("JOB_ROUTER_NAME = htcondor-ce\nJOB_ROUTER_ROUTE_NAMES = G L\n"
        "JOB_ROUTER_ROUTE_G @=rt\n  REQUIREMENTS true\n  GridResource = \"batch slurm\"\n@rt\n"
        "JOB_ROUTER_ROUTE_L @=rt\n  UNIVERSE 12\n  REQUIREMENTS true\n@rt\n")


def test_vanilla_to_grid_and_router_attributes():
    t = table(GRID)
    ad = build_routed_ad(t, t.route("G"), SOURCE, now=1000, source_id=(12, 3))
    for gone in ("ClusterId", "procid", "User", "QDate", "GlobalJobId", "StageInStart", "TimerRemove", "SUBMIT_Iwd",
                 "CurrentHosts", "TransferOutputRemaps", "RoutedToJobId"):
        assert gone not in ad, gone
    assert (ad["JobStatus"], ad["RemoteUserCpu"], ad["NumCkpts"], ad["ExitBySignal"]) == ("1", "0.0", "0", "false")
    assert (ad["JobUniverse"], ad["Remote_JobUniverse"], ad["GridResource"]) == ("9", "5", '"batch slurm"')
    assert (ad["Out"], ad["Err"]) == ('"/home/alice/out/job.out"', '"/home/alice/err/job.err"')
    assert (ad["RoutedFromJobId"], ad["RoutedBy"], ad["RouteName"]) == ('"12.3"', '"htcondor-ce"', '"G"')
    assert ad["Owner"] == '"alice"' and SOURCE["ClusterId"] == "12"  # the source is not edited


def test_sandboxed_grid_copy_keeps_remaps_and_non_grid_keeps_current_hosts():
    # Source: htcondor.md §1.6 (the routed copy: VanillaToGrid, sandboxed remaps)
    t = table(GRID)
    boxed = build_routed_ad(t, t.route("G"), SOURCE, now=0, source_id=(12, 3), sandboxed=True)
    assert boxed["Out"] == '"job.out"' and "TransferOutputRemaps" in boxed
    local = build_routed_ad(t, t.route("L"), SOURCE, now=0, source_id=(12, 3))
    assert (local["JobUniverse"], local["CurrentHosts"]) == ("12", "1") and "GridResource" not in local
    assert filename_remap_find("a=b;c = /d/e", "c") == "/d/e" and filename_remap_find("a=b", "x") is None


def test_pre_route_requirements_see_the_ad_after_vanilla_to_grid_and_macros_are_shared():
    # §1.3: pre-route REQUIREMENTS match the dest ad (JobUniverse already 9); macros flow
    # pre -> route -> post (HTCondor-CE uses $(TargetUniverse) in a post-route transform).
    t = table("JOB_ROUTER_ROUTE_NAMES = G\nJOB_ROUTER_ROUTE_G @=rt\n  REQUIREMENTS true\n  TargetUniverse = 9\n"
              "  SET FromPre \"$(pre_var)\"\n@rt\n"
              "JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES = IsGrid IsVanilla\n"
              "JOB_ROUTER_TRANSFORM_IsGrid @=x\n  REQUIREMENTS JobUniverse == 9\n  EVALMACRO pre_var strcat(\"u\", JobUniverse)\n@x\n"
              "JOB_ROUTER_TRANSFORM_IsVanilla @=x\n  REQUIREMENTS JobUniverse == 5\n  SET WasVanilla true\n@x\n"
              "JOB_ROUTER_POST_ROUTE_TRANSFORM_NAMES = Post\n"
              "JOB_ROUTER_TRANSFORM_Post @=x\n  SET Target $(TargetUniverse)\n  SET Again \"$(pre_var)\"\n@x\n")
    ad = build_routed_ad(t, t.route("G"), SOURCE, now=0, source_id=(12, 3))
    assert ad["FromPre"] == '"u9"' and "WasVanilla" not in ad
    assert (ad["Target"], ad["Again"]) == ("9", '"u9"')


def test_entries_routes_skip_pre_and_post_transforms():
    # §1.2: pre/post-route transforms apply only to JOB_ROUTER_ROUTE_<name> routes.
    t = table('JOB_ROUTER_ENTRIES = [ Name = "e"; Requirements = true; TargetUniverse = 5; ]\n'
              "JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES = P\nJOB_ROUTER_TRANSFORM_P @=x\n  SET Pre 1\n@x\n")
    ad = build_routed_ad(t, t.route("e"), SOURCE, now=0, source_id=(12, 3))
    assert "Pre" not in ad and ad["RouteName"] == '"e"'


def test_transform_failure_raises_routing_error_and_warnings_are_collected():
    # §1.3: a transform failure makes the routing attempt fail; an invalid SET is only logged.
    t = table("JOB_ROUTER_ROUTE_NAMES = Bad Warn\nJOB_ROUTER_ROUTE_Bad @=rt\n  REQUIREMENTS true\n  error : no way\n@rt\n"
              "JOB_ROUTER_ROUTE_Warn @=rt\n  REQUIREMENTS true\n  EVALSET X 1 +\n  SET Y 2\n@rt\n")
    with pytest.raises(RoutingError) as err:
        build_routed_ad(t, t.route("Bad"), SOURCE, now=0, source_id=(12, 3))
    assert err.value.route == "Bad" and "no way" in err.value.message
    warnings: list[str] = []
    ad = build_routed_ad(t, t.route("Warn"), SOURCE, now=0, source_id=(12, 3), warnings=warnings)
    assert ad["Y"] == "2" and "X" not in ad and any("EVALSET X" in w for w in warnings)
    with pytest.raises(RoutingError):
        build_routed_ad(t, t.route("Warn"), {"Owner": '"a"'}, now=0, source_id=(1, 0))  # no JobUniverse


def test_edit_job_in_place_skips_vanilla_to_grid_and_router_attributes():
    # §1.6 EditJobInPlace: no VanillaToGrid; evaluated against the source job (MY = job).
    t = table("JOB_ROUTER_ROUTE_NAMES = E\nJOB_ROUTER_ROUTE_E @=rt\n  REQUIREMENTS true\n"
              "  EditJobInPlace = Owner == \"alice\"\n  SET Edited true\n@rt\n")
    r = t.route("E")
    assert r.eval_job_expr("EditJobInPlace", C.make_ad(SOURCE))
    ad = build_routed_ad(t, r, SOURCE, now=0, source_id=(12, 3))
    assert ad["Edited"] == "true" and ad["ClusterId"] == "12" and ad["JobUniverse"] == "5"
    assert "RoutedBy" not in ad and ad["RoutedToJobId"] == '"7.0"'
    bob = dict(SOURCE, Owner='"bob"')
    assert build_routed_ad(t, r, bob, now=0, source_id=(12, 3))["RoutedBy"] == '"jobrouter"'


def test_ci_attrs_index_matches_scan():
    """VanillaToGrid edits attributes case-insensitively, keeping the existing spelling
    (htcondor.md §1.6; ClassAd names are case-insensitive): CIAttrs' name index gives what the
    linear scan (the oracle, ``_scan`` on a twin dict) gives, for random sets and deletes,
    with and without two spellings of one name in the starting ad."""
    names = ["Foo", "foo", "FOO", "Bar", "bar", "JobUniverse", "x"]
    rnd = random.Random(14)
    for start in ({"Foo": "1", "Bar": "2"}, {"Foo": "1", "foo": "2", "x": "3"}, {}):
        fast, slow = CIAttrs(dict(start)), CIAttrs(dict(start))
        slow.key = slow._scan  # type: ignore[method-assign]
        for _ in range(200):
            name = rnd.choice(names)
            op = rnd.random()
            if op < 0.4:
                fast.set(name, str(op))
                slow.set(name, str(op))
            elif op < 0.7:
                fast.delete(name)
                slow.delete(name)
            assert fast.get(name) == slow.get(name) and fast.key(name) == slow.key(name)
            assert list(fast.attrs.items()) == list(slow.attrs.items())


def test_ci_attrs_delete_all_set_all_are_delete_set_in_a_loop():
    """VanillaToGrid's batch edits (htcondor.md §1.6) give what ``delete``/``set`` one name at a
    time give: the same dict, in the same order, and the same index afterwards, for random runs
    of names in any spelling, with and without two spellings of one name in the starting ad."""
    names = ["Foo", "foo", "FOO", "Bar", "bar", "JobUniverse", "x"]
    rnd = random.Random(30)
    for start in ({"Foo": "1", "Bar": "2"}, {"Foo": "1", "foo": "2", "x": "3"}, {}):
        batch, loop = CIAttrs(dict(start)), CIAttrs(dict(start))
        for _ in range(100):
            run = [rnd.choice(names) for _ in range(rnd.randrange(5))]
            if rnd.random() < 0.5:
                batch.delete_all([(n, n.lower()) for n in run])
                for n in run:
                    loop.delete(n)
            else:
                batch.set_all([(n, n.lower(), str(i)) for i, n in enumerate(run)])
                for i, n in enumerate(run):
                    loop.set(n, str(i))
            assert list(batch.attrs.items()) == list(loop.attrs.items())
            assert all(batch.key(n) == loop.key(n) for n in names)
