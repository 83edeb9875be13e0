"""Job policy expressions, as HTCondor's UserPolicy::AnalyzePolicy
(src/condor_utils/user_job_policy.cpp; hold codes from condor_holdcodes.h: JobPolicy 3,
JobPolicyUndefined 5, SystemPolicy 26)."""

from engine.classad import make_ad
from engine.lang.user_policy import SystemPolicy, analyze_exit, analyze_periodic

NOW = 1_700_000_000


def _p(texts, status=1, system=SystemPolicy()):
    return analyze_periodic(make_ad(texts), texts, status, system, NOW)


def test_periodic_hold_fires_with_the_standard_reason():
    d = _p({"PeriodicHold": "NumJobStarts > 2", "NumJobStarts": "3"})
    assert d.action == "hold" and d.code == 3
    assert d.reason == "The job attribute PeriodicHold expression 'NumJobStarts > 2' evaluated to TRUE"


def test_periodic_hold_reason_and_subcode_attributes():
    d = _p({"PeriodicHold": "true", "PeriodicHoldReason": '"too long"', "PeriodicHoldSubCode": "42"})
    assert (d.reason, d.subcode) == ("too long", 42)


def test_undefined_job_expression_holds_with_code_5_but_literal_undefined_does_not():
    d = _p({"PeriodicRemove": "NoSuchAttr > 3"})
    assert d.action == "hold" and d.code == 5 and d.reason.endswith("evaluated to UNDEFINED")
    assert _p({"PeriodicRemove": "undefined"}).action == "none"


def test_order_hold_before_remove_and_release_only_when_held():
    both = {"PeriodicHold": "true", "PeriodicRemove": "true", "PeriodicRelease": "true"}
    assert _p(both, status=1).action == "hold"
    assert _p(both, status=5).action == "release"
    assert _p({"PeriodicRelease": "true"}, status=1).action == "none"


def test_time_uses_the_engine_clock():
    texts = {"PeriodicRemove": "time() - QDate > 3600", "QDate": str(NOW - 4000)}
    assert _p(texts).action == "remove"
    texts["QDate"] = str(NOW - 10)
    assert _p(texts).action == "none"


def test_system_knobs_fire_after_the_job_attribute_and_only_when_true():
    sysp = SystemPolicy(hold="JobRunCount > 5", hold_reason='"ran too often"')
    d = _p({"JobRunCount": "6"}, system=sysp)
    assert (d.action, d.code, d.expr, d.reason) == ("hold", 26, "SYSTEM_PERIODIC_HOLD", "ran too often")
    # undefined system expressions never fire
    assert _p({}, system=SystemPolicy(remove="NoSuchAttr > 1")).action == "none"
    # literal zero disables a knob (UserPolicy::Config)
    knobs = {"SYSTEM_PERIODIC_REMOVE": "false"}
    assert SystemPolicy.from_knobs(knobs.get).remove is None


def test_exit_policy():
    base = {"ExitCode": "1", "ExitBySignal": "false"}
    assert analyze_exit(make_ad(base), base, 2, SystemPolicy(), NOW).action == "remove"  # default
    t = dict(base, OnExitRemove="ExitCode == 0")
    assert analyze_exit(make_ad(t), t, 2, SystemPolicy(), NOW).action == "stay"
    t = dict(base, OnExitHold="ExitCode != 0")
    d = analyze_exit(make_ad(t), t, 2, SystemPolicy(), NOW)
    assert d.action == "hold" and d.code == 3
