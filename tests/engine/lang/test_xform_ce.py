"""HTCondor-CE's transforms (tests/data/config/ce-head/01-ce-router-defaults.conf) applied to
CE job ads the way the router does it: pre-route transforms, the route, then post-route
transforms, each only if its REQUIREMENTS match the ad at that moment, all sharing one macro set
(htcondor.md §1.3 "The transform pipeline", §5 HTCondor-CE).

The job ads are constructed for RouteDeck: a pilot job as a factory submits it to a CE (Condor-C:
vanilla universe, AuthToken* attributes, xcount/maxMemory/maxWallTime/queue requests).
The expected values are what the comments in the CE file say each transform does.
"""

from __future__ import annotations

import pytest

from tests.helpers.paths import TESTS
from engine.lang.config import Config
from engine.lang.param import split_list
from engine.lang.xform import MacroSet, parse_transform

CE = TESTS / "data" / "config" / "ce-head"


@pytest.fixture(scope="module")
def ce():
    cfg = Config.load([CE], env={})
    assert cfg.errors == []

    def xf(kind: str, names_knob: str):
        return [parse_transform(cfg.get_raw(f"JOB_ROUTER_{kind}_{n}"), n) for n in split_list(cfg.get(names_knob))]

    pre = xf("TRANSFORM", "JOB_ROUTER_PRE_ROUTE_TRANSFORM_NAMES")
    post = xf("TRANSFORM", "JOB_ROUTER_POST_ROUTE_TRANSFORM_NAMES")
    route = xf("ROUTE", "JOB_ROUTER_ROUTE_NAMES")[0]
    return cfg, pre, route, post


def route_job(ce, ad: dict[str, str], now: float = 1_700_000_000):
    cfg, pre, route, post = ce
    macros = MacroSet()
    applied, warnings = [], []
    for step in [*pre, route, *post]:
        if step is route or step.matches(ad, now=now):
            warnings += step.apply(ad, macros=macros, config=cfg, now=now)
            applied.append(step.name)
    return applied, warnings, macros


def pilot(**extra: str) -> dict[str, str]:
    ad = {
        "ClusterId": "42", "ProcId": "0", "JobUniverse": "5", "JobStatus": "1", "Owner": '"cmspilot"',
        "Requirements": "true", "RequestCpus": "1", "RequestMemory": "2048", "Environment": '"FOO=1"',
        "PeriodicRemove": "JobStatus == 5", "TotalSubmitProcs": "1",
        "AuthTokenSubject": '"pilot@cms"', "AuthTokenIssuer": '"https://cms-auth.example"',
        "AuthTokenId": '"abc"', "AuthTokenGroups": '"/cms"',
    }
    ad.update(extra)
    return ad


def test_ordinary_pilot(ce):
    ad = pilot(xcount="8", maxMemory="16000", maxWallTime="2880", queue='"cms"')
    applied, warnings, macros = route_job(ce, ad)
    assert warnings == []
    # Gpus needs RequestGpus, OnExitHold needs minWalltime: both skipped
    assert applied == ["Base", "Cleanup", "OrigRequests", "Condor_Pool", "WholeNode", "Cpus", "Memory",
                       "Queue", "BatchRuntime", "CERequirements"]
    assert ad["RoutedJob"] == "true"
    assert ad["Requirements"] == "(RequestGpus ?: 0) >= (TARGET.Gpus ?: 0)"  # Requirements was "true"
    assert "PeriodicRemove" not in ad and "TotalSubmitProcs" not in ad
    assert not any(k.startswith("AuthToken") for k in ad)
    assert ad["orig_AuthTokenSubject"] == '"pilot@cms"' and ad["orig_AuthTokenGroups"] == '"/cms"'
    assert ad["orig_environment"] == '"FOO=1"'
    assert macros["TargetUniverse"] == "5" and macros["test_want_whole_node"] == "false"
    assert ad["RequestCpus"] == "8" and ad["remote_SMPGranularity"] == "8" and ad["remote_NodeNumber"] == "8"
    assert ad["JobIsRunning"] == "(JobStatus =!= 1) && (JobStatus =!= 5)"
    assert ad["RequestMemory"] == "16000" and ad["JobMemory"] == "RequestMemory"
    assert ad["BatchQueue"] == '"cms"'
    assert ad["BatchRuntime"] == str(60 * 2880)
    assert ad["CondorCE"] == "1" and ad["CERequirements"] == '"CondorCE"'
    assert "JOB_GLIDEIN_Cpus" not in ad


def test_whole_node_gpu_pilot_sees_route_macro(ce):
    # WholeNode evaluates "$(MY.WantWholeNode:False) && $(TargetUniverse)==5": TargetUniverse is
    # set by the route body, so this only works because the macro set is shared.
    # Source: htcondor.md §1.3 (pre/route/post share one macro set; HTCondor-CE uses $(TargetUniverse)); tests/data/config/ce-head
    ad = pilot(WantWholeNode="true", RequestGpus="2", Requirements="TARGET.HasGPU")
    applied, warnings, macros = route_job(ce, ad)
    assert warnings == []
    assert "Gpus" in applied and macros["test_want_whole_node"] == "true"
    assert ad["Requirements"] == "TARGET.HasGPU"  # not "true", so Base leaves it alone
    assert ad["WholeNodes"] == "true"  # COPY WantWholeNode WholeNodes
    assert ad["JOB_GLIDEIN_Cpus"] == '"$$([TotalCpus ?: JobCpus])"'  # $$() is not expanded
    assert ad["JobIsRunning"] == "(JobStatus =!= 1) && (JobStatus =!= 5) && GlideinCpusIsGood"  # $(MY.JobIsRunning)
    assert ad["OriginalCpus"] == "1" and ad["RequestCpus"] == "TARGET.TotalCpus ?: JobCpus"
    assert ad["OriginalGPUs"] == "2" and ad["JOB_GLIDEIN_GPUs"] == '"$$([TotalGPUs ?: JobGPUs])"'
    assert ad["OriginalMemory"] == "2000" and ad["remote_OriginalMemory"] == "2000"  # default_maxMemory 2000
    assert ad["BatchQueue"] == '""'  # no queue and no default_queue
    assert ad["BatchRuntime"] == str(60 * 4320)  # ROUTED_JOB_MAX_TIME from the config


def test_on_exit_hold_and_existing_batch_values(ce):
    # Source: the comments of tests/data/config/ce-head/01-ce-router-defaults.conf (shared/data/real/htcondor__htcondor-ce)
    ad = pilot(minWalltime="60", OnExitHold="ExitCode =!= 0", BatchRuntime="3600", BatchQueue='"short"',
               default_CERequirements='"Walltime"')
    applied, warnings, _ = route_job(ce, ad)
    assert warnings == []
    assert "Queue" not in applied  # REQUIREMENTS BatchQueue is undefined
    assert ad["BatchQueue"] == '"short"' and ad["BatchRuntime"] == "3600"  # orig_BatchRuntime branch
    assert ad["orig_OnExitHold"] == "ExitCode =!= 0"
    assert ad["OnExitHold"] == "(orig_OnExitHold ?: false) || CondorCE_OnExitHold"
    assert ad["CondorCE_OnExitHoldReason"].startswith('IfThenElse(CondorCE_OnExitHold ?: false,"The job\'s wall clock')
    assert "minimum specified by the job (60) min" in ad["CondorCE_OnExitHoldReason"]  # $(MY.minWalltime)
    assert ad["CERequirements"] == '"Walltime,CondorCE"'


def test_uid_accounting_group_transform_parses(ce):
    # Source: tests/data/config/ce-head/01-ce-router-defaults.conf (shared/data/real/htcondor__htcondor-ce)
    cfg = ce[0]
    xf = parse_transform(cfg.get_raw("JOB_ROUTER_TRANSFORM_x509AcctGroup"))
    assert [s.keyword for s in xf.statements if s.kind == "action"] == ["EVALMACRO", "EVALSET", "EVALSET",
                                                                       "EVALMACRO", "EVALSET", "EVALSET"]
