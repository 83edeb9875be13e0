"""``user_policy.policy_ad``: the ad of the attributes a job's policy expressions reach gives
every decision the whole job ad gives (htcondor.md §1.6: the schedd's and the router's periodic
policy, ``AnalyzePolicy``), and is refused (None: the whole ad is used) when a text may reach an
attribute other than by name."""

from __future__ import annotations

import random

import pytest

from engine.classad import make_ad
from engine.lang.user_policy import SystemPolicy, analyze_exit, analyze_periodic, policy_ad, policy_roots

NOW = 1_700_000_000

SYSTEM = SystemPolicy(
    hold="(JobStatus == 2) && (time() - EnteredCurrentStatus > MaxRun)",
    release="(HoldReasonCode =?= 20) && (time() - EnteredCurrentStatus > 1800)",
    remove="(JobStatus == 1) && (JobUniverse == 5) && (time() - QDate > 86400)",
    hold_reason='strcat("ran over ", Limit)', remove_reason='"idle for more than a day"')

# attribute texts a job may have: literals, references to others (one level or more), the clock
TEXTS = {
    "JobStatus": ["1", "2", "5", "ifThenElse(Flag, 2, 1)"],
    "JobUniverse": ["5", "9", "Universe"],
    "Universe": ["5", "9"],
    "QDate": [str(NOW - 90000), str(NOW - 10), "Submitted"],
    "Submitted": [str(NOW - 90000), str(NOW)],
    "EnteredCurrentStatus": [str(NOW - 4000), str(NOW - 10)],
    "MaxRun": ["3600", "Limit * 2", "undefined"],
    "Limit": ["1000", '"x"'],
    "Flag": ["true", "false", "MY.Other"],
    "Other": ["true", "false"],
    "HoldReasonCode": ["20", "3"],
    "PeriodicRemove": ["false", "Flag && (QDate < 5)", "time() - QDate > 100", "OnlyHere == 7"],
    "PeriodicRemoveReason": ['"because"', 'strcat("q=", QDate)'],
    "PeriodicHold": ["false", "Limit > 500"],
    "PeriodicHoldSubCode": ["3", "Limit"],
    "OnExitRemove": ["true", "ExitCode == 0", "Tries > 2"],
    "OnExitHold": ["ExitCode =!= 0 && Flag", "false"],
    "ExitCode": ["0", "1"],
    "Tries": ["1", "3"],
    "OnlyHere": ["7", "Tries + 4"],
    "Unrelated": ["42", "Limit"],
    "CurrentTime": ["17", "Tries"],
}


def random_job(rng: random.Random) -> dict[str, str]:
    return {name: rng.choice(texts) for name, texts in TEXTS.items() if rng.random() < 0.8}


def any_case(job: dict[str, str]):
    """``get(name)`` in any case, as the callers' getters are."""
    low = {k.lower(): v for k, v in job.items()}
    return lambda name: low.get(name.lower())


def test_the_reached_ad_decides_as_the_whole_ad():
    rng = random.Random(7)
    fired = 0
    for _ in range(400):
        job = random_job(rng)
        ad = policy_ad(any_case(job), policy_roots(SYSTEM))
        assert ad is not None
        for status in (1, 2, 5):
            for now in (NOW, None):  # None: a job's own CurrentTime is what time() reads
                whole = analyze_periodic(make_ad(job), job, status, SYSTEM, now)
                assert analyze_periodic(ad, job, status, SYSTEM, now) == whole
                fired += whole.action != "none"
                exit_whole = analyze_exit(make_ad(job), job, status, SYSTEM, now)
                assert analyze_exit(ad, job, status, SYSTEM, now) == exit_whole
    assert fired > 100  # the policies fire on many of the jobs: the decisions compared are not all "none"


def test_only_the_reached_attributes_are_in_the_ad():
    job = {"JobStatus": "1", "JobUniverse": "Universe", "Universe": "5", "QDate": "7", "Unrelated": "42",
           "Other": "1", "PeriodicHold": "Limit > 1", "Limit": "3"}
    remove = SystemPolicy(remove="(JobStatus == 1) && (JobUniverse == 5) && (time() - QDate > 86400)")
    ad = policy_ad(any_case(job), policy_roots(remove))
    assert sorted(k.lower() for k in ad.keys()) == ["jobstatus", "jobuniverse", "limit", "periodichold", "qdate",
                                                    "universe"]


@pytest.mark.parametrize("text", ['eval("Limit") > 1', "size(MY) > 3", "SELF.Limit > 1 || toplevel",
                                  "[a = Limit].a > 1", "Limits[0] > 1", "PARENT =?= undefined"])
def test_a_text_reaching_attributes_otherwise_needs_the_whole_ad(text):
    job = {"JobStatus": "1", "Limit": "3", "Chain": text}
    assert policy_ad(any_case(job), policy_roots(SystemPolicy(hold=text))) is None
    assert policy_ad(any_case(job), policy_roots(SystemPolicy(hold="Chain"))) is None  # through an attribute
    # a scope before a name is a name
    assert policy_ad(any_case(job), policy_roots(SystemPolicy(hold="MY.Limit > 1"))) is not None


@pytest.mark.parametrize("text", ["ImageSize > 100 || CurrentTime.x =?= 1", "ImageSize > 100 || {1}.x =?= 1",
                                  "isUndefined(ifThenElse(ImageSize > 100, 1, 0).x)"])
@pytest.mark.parametrize("through", [False, True])
def test_unknown_references_need_the_whole_ad(text, through):
    """A text whose references classad2 cannot list (``Expr.names`` None) may read anything: the
    whole ad is used, as the schedd evaluates PeriodicHold on the whole job ad (htcondor.md §1.6, §7:
    user_job_policy.cpp). ImageSize 50 does not hold."""
    job = {"JobStatus": "2", "ImageSize": "50", "Odd": text, "PeriodicHold": "Odd" if through else text}
    ad = policy_ad(any_case(job), policy_roots(SystemPolicy()))
    whole = analyze_periodic(make_ad(job), job, 2, SystemPolicy(), NOW)
    assert whole.action == "none"
    assert analyze_periodic(make_ad(job) if ad is None else ad, job, 2, SystemPolicy(), NOW) == whole
